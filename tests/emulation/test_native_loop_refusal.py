"""Programs whose packet flow the C loop does not run (clone, resubmit, recirculate,
digest, log_msg) keep the Python packet path in a switch process, with the native
pipeline and one line saying why; the others go to the C loop."""

from __future__ import annotations

import pytest

from netweft.emulation.native.build import compiler
from netweft.emulation.process import switch_process
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4, compile_p4_source
from netweft.p4.programs import program

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

_CLONING = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> x; }
struct hs { h_t h; }
struct m_t { bit<8> y; }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; clone(CloneType.I2E, 5); log_msg("cloned"); }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_a_cloning_program_keeps_the_python_packet_path_saying_why(capsys):
    sw = SoftSwitch(compile_p4_source(_CLONING, "loop_cloning.p4"), backend="c")
    assert sw.backend == "c"
    assert not switch_process._runs_native(sw)
    assert not switch_process._runs_native(sw)      # said once
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "loop_cloning.p4" in ln]
    assert len(lines) == 1
    assert "clone/resubmit/recirculate" in lines[0] and "log_msg" in lines[0]


def test_a_forwarding_program_runs_in_the_c_loop():
    sw = SoftSwitch(compile_p4(str(program("basic_forward"))), backend="c")
    assert switch_process._runs_native(sw)
    assert not switch_process._runs_native(SoftSwitch(compile_p4(str(program("basic_forward"))),
                                                      backend="python"))
