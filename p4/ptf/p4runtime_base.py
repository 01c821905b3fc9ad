"""The base of netweft's PTF suites: a P4Runtime session and the program under test.

Each test connects to the switch as its primary controller with p4runtime-shell,
pushes the program named by the test parameters (SetForwardingPipelineConfig, so
every test starts from empty tables and zeroed registers) and writes entries as
any P4Runtime controller would.  Packets go through PTF's data plane
(``ptf.testutils``).  Nothing here is netweft-specific: the same suites run
against ``simple_switch_grpc`` given p4c's output instead of netweft-p4c's.

Test parameters (``ptf --test-params="k='v';..."``):
    p4info    P4Info file (text format) of the program
    config    device config: netweft-p4c's ``-o`` file, or p4c-bm2-ss's JSON for BMv2
    grpcaddr  the switch's P4Runtime address (default 127.0.0.1:9559)
    device_id P4Runtime device id (default 0)
"""

from __future__ import annotations

import p4runtime_sh.shell as sh
import ptf
from ptf import testutils
from ptf.base_tests import BaseTest

# The suites need this many data-plane ports (PTF port numbers = switch port numbers).
PORTS_NEEDED = 4


class P4RuntimeTest(BaseTest):
    """A test with a fresh pipeline of the program under test; no runTest (not a test)."""

    def __init_subclass__(cls, **kwargs) -> None:
        # PTF files a test under its module's group by appending to cls._groups; an
        # inherited list would put a suite's reused tests in the other suite's group too.
        super().__init_subclass__(**kwargs)
        cls._groups = []

    def setUp(self) -> None:
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        params = testutils.test_params_get()
        for name in ("p4info", "config"):
            if name not in params:
                self.fail(f"test parameter {name!r} missing (--test-params=\"{name}='FILE'\")")
        self.ports = sorted(port for (_device, port) in ptf.config["port_map"])
        if len(self.ports) < PORTS_NEEDED:
            self.fail(f"the suites need {PORTS_NEEDED} ports (--interface N@IFACE), "
                      f"got {len(self.ports)}")
        try:
            sh.setup(device_id=int(params.get("device_id", 0)),
                     grpc_addr=params.get("grpcaddr", "127.0.0.1:9559"),
                     election_id=(0, 1), verbose=False,
                     config=sh.FwdPipeConfig(params["p4info"], params["config"]))
        except SystemExit:   # p4runtime-shell exits when the config is refused
            self.fail("SetForwardingPipelineConfig failed (p4runtime-shell's log says why)")
        # a cleanup runs even when a subclass's setUp fails after this (tearDown would not)
        self.addCleanup(sh.teardown)
        self.dataplane.flush()

    # -- entries, as a P4Runtime controller writes them --------------------------------

    def table_add(self, table: str, match: dict[str, str], action: str,
                  params: dict[str, str | int] | None = None, priority: int | None = None
                  ) -> None:
        """Insert one entry of ``table`` (values in p4runtime-shell's notation)."""
        entry = sh.TableEntry(table)(action=action)
        for field, value in match.items():
            entry.match[field] = str(value)
        for name, value in (params or {}).items():
            entry.action[name] = str(value)
        if priority is not None:
            entry.priority = priority
        entry.insert()

    def table_set_default(self, table: str, action: str,
                          params: dict[str, str | int] | None = None) -> None:
        """Replace ``table``'s default action (MODIFY of the default entry)."""
        entry = sh.TableEntry(table)(action=action, is_default=True)
        for name, value in (params or {}).items():
            entry.action[name] = str(value)
        entry.modify()

    def multicast_group(self, group_id: int, replicas: list[tuple[int, int]]) -> None:
        """A packet replication group of ``(port, rid)`` replicas, deleted again when the
        test ends.

        The deletion is for BMv2: ``simple_switch_grpc`` keeps its replication engine's
        groups across SetForwardingPipelineConfig while its P4Runtime server forgets
        them, so the next test's group of the same id would get these replicas on top
        of its own (every copy twice). P4Runtime clears them with the pipeline, as
        netweft-switch does; docs/bmv2-differences.md."""
        group = sh.MulticastGroupEntry(group_id)
        for port, rid in replicas:
            group.add(port, rid)
        group.insert()
        self.addCleanup(group.delete)

    def counter_packets(self, counter: str, index: int) -> int:
        """Packets counted at ``counter[index]``."""
        entry = sh.CounterEntry(counter)
        entry.index = index
        return sum(e.data.packet_count for e in entry.read())
