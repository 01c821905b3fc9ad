"""The fabric experiments' testbed: ``testbed/topologies/fabric-leaf-spine.yaml`` running
fabric.p4, configured by the fabric controller, with the helpers every experiment needs
(reconfigure, switch counters, P4 counters, host programs)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from p4.v1 import p4runtime_pb2

from netweft.emulation.network import Network
from netweft.emulation.process.control import send_command
from netweft.emulation.v1model.names import resolve_name
from netweft.testbed.control.entity_encoder import EntityEncoder
from netweft.testbed.control.fabric.controller import configure_fabric
from netweft.testbed.control.fabric.graph import FabricGraph, graph_from_network
from netweft.testbed.control.fabric.installer import InstallReport
from netweft.testbed.control.fabric.settings import FabricSettings
from netweft.testbed.control.p4runtime_session import SwitchSession
from netweft.testbed.topology import Topology, load_topology

TOPOLOGY = Path(__file__).resolve().parents[1] / "topologies" / "fabric-leaf-spine.yaml"
HOSTS = [sys.executable, "-m", "netweft.testbed.experiments.fabric_hosts"]
ELECTION_ID = 10   # above a user's netweft fabric install (default 1)


class FabricTestbed:
    """A started leaf-spine with fabric.p4 on every switch; ``with`` stops it."""

    def __init__(self, out_dir: Path, pcap_switches: tuple[str, ...] = (),
                 topology: Path | Topology = TOPOLOGY) -> None:
        self.out_dir = out_dir
        if not isinstance(topology, Topology):
            topology = load_topology(topology)
        self.net: Network = topology.build(out_dir, pcaps=False)
        for name in pcap_switches:
            self.net.switch(name).pcap_dir = out_dir / "pcaps"
        self.graph: FabricGraph = graph_from_network(self.net)
        self.addresses = {s.name: s.grpc_address for s in self.net.switches}
        self._readers: dict[str, tuple[SwitchSession, EntityEncoder]] = {}

    def __enter__(self) -> FabricTestbed:
        self.net.start()
        try:
            self.configure(FabricSettings())
        except BaseException:
            self.net.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for session, _ in self._readers.values():
            session.close()
        self._readers.clear()
        self.net.stop()

    def configure(self, settings: FabricSettings) -> list[InstallReport]:
        return configure_fabric(self.graph, self.addresses, settings, election_id=ELECTION_ID)

    def control(self, switch: str, line: str) -> str:
        return send_command(self.net.switch(switch).control, line, timeout=10)

    def counters(self, switch: str) -> dict[str, int]:
        """The switch process's counters (``rx_portN``, ``tx_portN``, drops, ...)."""
        return json.loads(self.control(switch, "counters"))

    def settle(self, switches: tuple[str, ...] = ("leaf1", "leaf2", "spine1", "spine2"),
               quiet_s: float = 0.3, limit_s: float = 20.0) -> None:
        """Wait until the switches have forwarded what they hold: their port counters stay
        still for ``quiet_s`` (a switch process on a loaded machine lags behind the
        senders; reading its counters earlier misses what is still in its sockets)."""
        deadline = time.monotonic() + limit_s
        last = None
        while time.monotonic() < deadline:
            now = [self.counters(s) for s in switches]
            if now == last:
                return
            last = now
            time.sleep(quiet_s)

    def p4_counter(self, switch: str, name: str) -> dict[int, tuple[int, int]]:
        """A P4 counter's non-zero cells (index: packets, bytes), read over P4Runtime."""
        if switch not in self._readers:   # one session per switch: its role's primary
            session = SwitchSession(switch, self.addresses[switch],
                                    election_id=ELECTION_ID + 1, role="netweft-bench")
            self._readers[switch] = (session, EntityEncoder(session.p4info()))
        session, encoder = self._readers[switch]
        counters = {c.preamble.name: c for c in encoder.p4info.counters}
        counter = counters[resolve_name(name, counters, "counter")]
        read = p4runtime_pb2.Entity()
        read.counter_entry.counter_id = counter.preamble.id
        cells = {}
        for entity in session.read(read):
            entry = entity.counter_entry
            if entry.data.packet_count or entry.data.byte_count:
                cells[entry.index.index] = (entry.data.packet_count, entry.data.byte_count)
        return cells

    def start(self, host: str, *args: str) -> subprocess.Popen:
        """A role of :mod:`netweft.testbed.experiments.fabric_hosts` on ``host`` (stdout piped)."""
        return self.net.host(host).popen(*HOSTS, *args, stdout=subprocess.PIPE, text=True,
                                         start_new_session=True)

    def ip(self, host: str) -> str:
        return self.net.host(host).ip_address
