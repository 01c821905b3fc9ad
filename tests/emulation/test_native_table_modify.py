"""A P4Runtime MODIFY on the native back end changes the entry the C code runs."""

import pytest


@pytest.mark.parametrize("backend", ["c", "python"])
def test_a_p4runtime_modify_reaches_the_table_packets_use(backend):
    """P4Runtime's MODIFY (here through simple_switch_CLI's table_modify) changes the
    entry the pipeline runs, also on the native back end, whose entries live in C
    (the C loop of a switch process reads those)."""
    from pathlib import Path

    from netweft.emulation.p4runtime.command_list import session_for
    from netweft.emulation.switch import SoftSwitch
    from netweft.p4.compiler import compile_p4

    program = Path(__file__).parent / "programs" / "cpu_port.p4"
    switch = SoftSwitch(compile_p4(str(program)), backend=backend)
    session = session_for(switch)
    session.execute("table_add CpuIngress.forward CpuIngress.set_port 1 => 2")
    frame = bytes.fromhex("ffffffffffff0200000000aa4321" + "00" * 46)
    assert [port for port, _ in switch.process(1, frame)] == [2]
    session.execute("table_modify CpuIngress.forward CpuIngress.set_port 0 3")
    assert [port for port, _ in switch.process(1, frame)] == [3]
