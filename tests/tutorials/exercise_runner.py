"""What the p4lang tutorials' ``run_exercise.py`` does, written for netweft's tests.

From an exercise's ``topology.json`` it builds a Mininet network (Debian's
Mininet) whose links are ``TCLink``s with the topology's latency and
bandwidth, picks the switch class by the executable's name as the tutorials'
``p4runtime_switch.py`` does (``grpc`` in the name: the P4Runtime class,
else the Thrift one), starts every switch with the command line BMv2's
``simple_switch_grpc`` gets there, programs each switch from its
``sX-runtime.json`` over P4Runtime (``tests/p4runtime/tutorial_controller.py``,
plain grpc as ``p4runtime_lib``) and runs the hosts' commands.  No tutorials
file is used.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import text_format
from mininet.link import TCLink
from mininet.net import Mininet
from mininet.node import Host, Switch
from mininet.topo import Topo
from p4.config.v1 import p4info_pb2

from tests.p4runtime.tutorial_controller import Controller

START_TIMEOUT_S = 60


def free_port() -> int:
    """A TCP port no one listens on now (the switches' gRPC ports)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


class ExerciseHost(Host):
    """The tutorials' P4Host: its interface is ``eth0``, offloads and IPv6 off."""

    def config(self, **params: Any) -> Any:
        result = super().config(**params)
        self.defaultIntf().rename("eth0")
        for off in ("rx", "tx", "sg"):
            self.cmd(f"ethtool --offload eth0 {off} off")
        self.cmd("sysctl -w net.ipv6.conf.all.disable_ipv6=1")
        return result


class ThriftSwitch(Switch):
    """The class ``run_exercise.py`` takes for a name without ``grpc``: it waits for a
    Thrift port, which netweft never opens (so only its choice is tested)."""

    def start(self, controllers: Any) -> None:
        raise RuntimeError(f"{self.name}: a Thrift switch; netweft serves P4Runtime only")


class P4RuntimeSwitch(Switch):
    """simple_switch_grpc's command line, as the tutorials' P4RuntimeSwitch builds it."""

    def __init__(self, name: str, sw_path: str, json_path: str, grpc_port: int,
                 device_id: int, log_file: str, pcap_dir: str, thrift_port: int,
                 cpu_port: int | None = None, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self.sw_path, self.json_path, self.grpc_port = sw_path, json_path, grpc_port
        self.device_id, self.log_file, self.pcap_dir = device_id, log_file, pcap_dir
        self.thrift_port, self.cpu_port = thrift_port, cpu_port
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        args = [self.sw_path]
        for port, intf in self.intfs.items():
            if not intf.IP():
                args += ["-i", f"{port}@{intf.name}"]
        args += ["--pcap", self.pcap_dir, "--nanolog", f"ipc:///tmp/bm-{self.device_id}-log.ipc",
                 "--device-id", str(self.device_id), self.json_path, "--log-console",
                 "--thrift-port", str(self.thrift_port),
                 "--", "--grpc-server-addr", f"0.0.0.0:{self.grpc_port}"]
        if self.cpu_port is not None:
            args += ["--cpu-port", str(self.cpu_port)]
        return args

    def start(self, controllers: Any) -> None:
        with open(self.log_file, "w") as log:
            self.process = subprocess.Popen(self.command(), stdout=log,
                                            stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not listening(self.grpc_port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"P4 switch {self.name} did not start correctly: "
                                   + Path(self.log_file).read_text()[-2000:])
            time.sleep(0.2)

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 - Mininet's name
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        super().stop(deleteIntfs)


def switch_class(sw_path: str) -> type[Switch]:
    """``run_exercise.py``'s choice: the P4Runtime class only if ``grpc`` is in the name."""
    return P4RuntimeSwitch if "grpc" in sw_path else ThriftSwitch


def _port(node: str) -> tuple[str, int]:
    name, port = node.split("-")
    return name, int(port[1:])


def _latency(value: Any) -> str:
    return value if isinstance(value, str) else f"{value}ms"


@dataclass
class Exercise:
    """One exercise run: the network, its switches' gRPC addresses, the P4Info."""

    folder: Path
    sw_path: str
    json_path: Path
    p4info_path: Path
    work: Path
    net: Mininet | None = None
    grpc_ports: dict[str, int] = field(default_factory=dict)
    device_ids: dict[str, int] = field(default_factory=dict)

    @property
    def topology(self) -> dict[str, Any]:
        return json.loads((self.folder / "topology.json").read_text())

    @property
    def p4info(self) -> p4info_pb2.P4Info:
        return text_format.Parse(self.p4info_path.read_text(), p4info_pb2.P4Info())

    def build(self) -> Mininet:
        topo_json = self.topology
        logs, pcaps = self.work / "logs", self.work / "pcaps"
        logs.mkdir(exist_ok=True)
        pcaps.mkdir(exist_ok=True)
        topo = Topo()
        cls = switch_class(self.sw_path)
        for i, (name, params) in enumerate(sorted(topo_json["switches"].items())):
            self.grpc_ports[name], self.device_ids[name] = free_port(), i
            opts: dict[str, Any] = {"cls": cls}
            if cls is P4RuntimeSwitch:
                opts.update(sw_path=self.sw_path, json_path=str(self.json_path),
                            grpc_port=self.grpc_ports[name], device_id=i,
                            log_file=str(logs / f"{name}.log"), pcap_dir=str(pcaps),
                            thrift_port=9090 + i, cpu_port=params.get("cpu_port"))
            topo.addSwitch(name, **opts)
        for name, params in topo_json["hosts"].items():
            topo.addHost(name, ip=params["ip"], mac=params["mac"], cls=ExerciseHost)
        for link in topo_json["links"]:
            a, b = sorted(link[:2])
            opts = {}
            if len(link) > 2:
                opts["delay"] = _latency(link[2])
            if len(link) > 3:
                opts["bw"] = link[3]
            if a[0] == "h":
                sw, port = _port(b)
                topo.addLink(a, sw, port2=port, cls=TCLink, **opts)
            else:
                (sa, pa), (sb, pb) = _port(a), _port(b)
                topo.addLink(sa, sb, port1=pa, port2=pb, cls=TCLink, **opts)
        self.net = Mininet(topo=topo, link=TCLink, host=ExerciseHost, controller=None,
                           autoSetMacs=False)
        return self.net

    def start(self) -> None:
        assert self.net is not None
        self.net.start()
        for name, params in self.topology["switches"].items():
            if "runtime_json" in params:
                self.program(name, self.folder / params["runtime_json"])
        for name, params in self.topology["hosts"].items():
            for command in params.get("commands", []):
                self.net.get(name).cmd(command)

    def address(self, switch: str) -> str:
        return f"127.0.0.1:{self.grpc_ports[switch]}"

    def program(self, switch: str, runtime_json: Path) -> None:
        """``simple_controller.program_switch``: pipeline and entries of the runtime JSON."""
        runtime = json.loads(runtime_json.read_text())
        controller = Controller(self.address(switch), self.device_ids[switch], self.p4info)
        try:
            controller.set_pipeline(self.json_path.read_bytes())
            for spec in runtime.get("table_entries", []):
                controller.write([controller.table_entry(spec)])
        finally:
            controller.close()

    def stop(self) -> None:
        if self.net is not None:
            self.net.stop()
            self.net = None
