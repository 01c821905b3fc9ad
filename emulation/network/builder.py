"""The network builder: emulated hosts and switches in network namespaces joined by veth links.

A :class:`Network` is declared first (hosts, switches, links), then started:
every node gets its own namespace, every link a veth pair whose ends are moved
into the two namespaces. Starting is all-or-nothing: if any step fails, every
namespace created so far is removed (which removes its veth ends) before the
error propagates. ``stop`` (or leaving the ``with`` block) does the same for a
running network. All namespaces carry the network's ``prefix`` so that
``netweft clean`` can find leftovers of a crashed run, as ``mn -c`` does.

A link carries :class:`~netweft.emulation.links.link_params.LinkParams` (delay,
jitter, loss, rate, queue) that hold in each direction, as Mininet's ``TCLink``.
This kernel has no ``netem``, so the switch at a link's switch end applies them
through its traffic manager's per-port options: on packets it sends into the
link and on packets it receives from a host over it. A link between two hosts
has no switch to do that: it takes only a rate (the kernel's ``tbf`` on both
ends) and refuses the rest with a message that says so.

A switch declared with a ``program`` runs as a switch process (the embedded P4
switch on its interfaces) once the links exist; its runtime file and
simple_switch_CLI command list are applied before it serves traffic.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyroute2 import IPRoute, NetNS, netns

from netweft.emulation.links.link_params import LinkParams
from netweft.emulation.links.port_options import PortOptions
from netweft.emulation.process_lifetime import (
    die_with_parent,
    is_running,
    owner_stamp,
    popen_registered,
    stamp_alive,
)

DEFAULT_PREFIX = "nw"
# A running network records its owner's PID here, so that ``netweft clean`` removes
# only what crashed runs left behind and never a live network of another process.
OWNER_DIR = Path("/run/netweft")


class NetworkError(RuntimeError):
    """A network could not be built or driven; the message says which step failed."""


@dataclass
class Interface:
    """One end of a link inside a node's namespace."""

    node: Node
    name: str
    mac: str
    ip: ipaddress.IPv4Interface | None = None
    port: int | None = None  # switch port number, for switch interfaces


@dataclass
class Node:
    """A host or a switch: a network namespace with interfaces."""

    name: str
    network: Network
    interfaces: list[Interface] = field(default_factory=list)

    @property
    def netns(self) -> str:
        """The namespace's name as ``ip netns`` shows it."""
        return f"{self.network.prefix}-{self.name}"

    def cmd(self, *argv: str, check: bool = True, timeout: float | None = 60,
            **kwargs) -> subprocess.CompletedProcess[str]:
        """Run a command inside the node's namespace and wait for it."""
        return subprocess.run(["ip", "netns", "exec", self.netns, *argv], capture_output=True,
                              text=True, check=check, timeout=timeout, **kwargs)

    def popen(self, *argv: str, **kwargs) -> subprocess.Popen:
        """Start a command inside the node's namespace; the network stops it on ``stop``,
        and it ends if this process dies first (call it from a long-lived thread:
        :mod:`netweft.emulation.process_lifetime`)."""
        return popen_registered(die_with_parent(["ip", "netns", "exec", self.netns, *argv]),
                                self.network._processes.append, **kwargs)


@dataclass
class Host(Node):
    """An emulated end host; its first interface is ``eth0``.

    With ``auto_routes`` (the default) the host gets a default route out of
    ``eth0`` and a permanent neighbour entry for every other host, so that no
    ARP is needed; ``commands`` (shell lines, as the p4lang tutorials' topology
    files give) run in the host once the network is up.
    """

    ip: ipaddress.IPv4Interface | None = None
    mac: str | None = None
    auto_routes: bool = True
    commands: list[str] = field(default_factory=list)

    @property
    def ip_address(self) -> str:
        if self.ip is None:
            raise NetworkError(f"host {self.name} has no IP address")
        return str(self.ip.ip)


@dataclass
class Switch(Node):
    """A switch node: its ports are interfaces ``<name>-eth<port>`` in its namespace.

    With a ``program`` the network starts a switch process on the ports when it
    starts (``runtime``: a runtime file; ``commands``: a simple_switch_CLI command
    list applied after it; ``pcap_dir``: BMv2-style pcaps per port;
    ``log_file``: the process's messages; ``trace_file``: the per-packet trace;
    ``control``: the control channel's socket; ``priority_queues`` per port;
    ``grpc_address``: where it serves P4Runtime, e.g. ``unix:/run/s1.grpc``).
    """

    program: Path | None = None
    runtime: Path | None = None
    commands: Path | None = None
    pcap_dir: Path | None = None
    log_file: Path | None = None
    trace_file: Path | None = None
    stats_out: Path | None = None
    control: Path | None = None
    priority_queues: int = 1
    grpc_address: str | None = None
    backend: str | None = None
    process: subprocess.Popen | None = None

    def port_map(self) -> dict[int, str]:
        """Switch port number to interface name."""
        return {i.port: i.name for i in self.interfaces if i.port is not None}

    def port_settings(self) -> dict[int, PortOptions]:
        """The traffic manager's per-port settings that emulate this switch's links.

        A port facing a host takes its link both ways (the host emulates nothing);
        a port facing another switch takes it on egress, and the other switch does
        the same for the other direction.
        """
        out = {}
        for iface in self.interfaces:
            link = self.network.link_of(iface)
            if link.params.any():
                from_host = isinstance(self.network.peer_of(iface).node, Host)
                out[iface.port] = link.params.port_options(ingress_too=from_host)
        return out


@dataclass
class Link:
    """A veth link between two interfaces, with its MTU and emulated behaviour."""

    a: Interface
    b: Interface
    mtu: int = 1500
    params: LinkParams = field(default_factory=LinkParams)

    @property
    def rate_mbit(self) -> float | None:
        return None if self.params.rate_bps is None else self.params.rate_bps / 1e6

    def describe(self) -> str:
        """``h1-eth0<->s1-eth1 (delay 5ms)``, as ``links`` prints it."""
        return (f"{self.a.node.name}:{self.a.name}<->{self.b.node.name}:{self.b.name} "
                f"(mtu {self.mtu}, {self.params.describe()})")


class Network:
    """A declared, then started, set of namespaces and veth links.

    >>> net = Network()
    >>> h1, h2 = net.add_host("h1", "10.0.1.1/24"), net.add_host("h2", "10.0.1.2/24")
    >>> s1 = net.add_switch("s1")
    >>> net.add_link(h1, s1); net.add_link(h2, s1)
    >>> with net: ...
    """

    def __init__(self, prefix: str | None = None) -> None:
        self.prefix = prefix or f"{DEFAULT_PREFIX}{uuid.uuid4().hex[:5]}"
        if len(self.prefix) > 10 or not self.prefix.replace("-", "").isalnum():
            raise NetworkError(f"network prefix {self.prefix!r}: at most 10 letters and digits")
        self.nodes: dict[str, Node] = {}
        self.links: list[Link] = []
        self._processes: list[subprocess.Popen] = []
        self._created: list[str] = []
        self.started = False

    # -- declaration -----------------------------------------------------------------------
    def add_host(self, name: str, ip: str | None = None, mac: str | None = None, *,
                 auto_routes: bool = True, commands: Sequence[str] = ()) -> Host:
        """Declare a host; ``ip`` is ``addr/prefixlen`` for its ``eth0``."""
        self._check_new(name)
        try:
            address = ipaddress.IPv4Interface(ip) if ip else None
        except ValueError as exc:
            raise NetworkError(f"host {name}: {exc}") from None
        host = Host(name, self, ip=address, mac=mac or self._mac(len(self.nodes) + 1, 0),
                    auto_routes=auto_routes, commands=list(commands))
        self.nodes[name] = host
        return host

    def add_switch(self, name: str, program: Path | str | None = None, *,
                   runtime: Path | str | None = None, commands: Path | str | None = None,
                   pcap_dir: Path | str | None = None,
                   log_file: Path | str | None = None, trace_file: Path | str | None = None,
                   stats_out: Path | str | None = None, control: Path | str | None = None,
                   priority_queues: int = 1, grpc_address: str | None = None,
                   backend: str | None = None) -> Switch:
        """Declare a switch; ports are numbered in the order links are added, from 1.

        With ``program`` (a P4-16 v1model source) :meth:`start` runs it on the ports;
        ``backend``: auto, c or python (the switch process's ``--backend``).
        """
        self._check_new(name)

        def path(value: Path | str | None) -> Path | None:
            return None if value is None else Path(value)

        if program is None and (runtime is not None or commands is not None):
            raise NetworkError(f"switch {name}: a runtime file or command list needs a program")
        switch = Switch(name, self, program=path(program), runtime=path(runtime),
                        commands=path(commands),
                        pcap_dir=path(pcap_dir), log_file=path(log_file),
                        trace_file=path(trace_file), stats_out=path(stats_out),
                        control=path(control), priority_queues=priority_queues,
                        grpc_address=grpc_address, backend=backend)
        self.nodes[name] = switch
        return switch

    def add_link(self, a: Node, b: Node, *, port_a: int | None = None,
                 port_b: int | None = None, mtu: int = 1500,
                 rate_mbit: float | None = None, params: LinkParams | None = None) -> Link:
        """Declare a veth link between two nodes.

        ``params`` (or the shorthand ``rate_mbit``) say what the link does to
        packets; a link between two hosts takes only a rate (see module doc).
        """
        if a is b:
            raise NetworkError(f"a link needs two different nodes, got {a.name} twice")
        params = params or LinkParams()
        if rate_mbit is not None:
            params = LinkParams(**{**params.__dict__, "rate_bps": rate_mbit * 1e6})
        if isinstance(a, Host) and isinstance(b, Host) and params.needs_switch():
            raise NetworkError(
                f"link {a.name}-{b.name}: {', '.join(params.needs_switch())} need a switch "
                "at one end of the link (this kernel has no netem, so netweft's switch "
                "emulates them); link both hosts to a switch, or keep only a rate (tbf)")
        link = Link(self._new_interface(a, port_a), self._new_interface(b, port_b), mtu, params)
        self.links.append(link)
        return link

    def host(self, name: str) -> Host:
        node = self.nodes.get(name)
        if not isinstance(node, Host):
            raise NetworkError(f"no host named {name!r}")
        return node

    def switch(self, name: str) -> Switch:
        node = self.nodes.get(name)
        if not isinstance(node, Switch):
            raise NetworkError(f"no switch named {name!r}")
        return node

    def node(self, name: str) -> Node:
        node = self.nodes.get(name)
        if node is None:
            raise NetworkError(f"no node named {name!r} (nodes: {' '.join(self.nodes)})")
        return node

    def link_of(self, iface: Interface) -> Link:
        """The link ``iface`` is an end of."""
        for link in self.links:
            if iface is link.a or iface is link.b:
                return link
        raise NetworkError(f"{iface.node.name}:{iface.name} is not linked")

    def peer_of(self, iface: Interface) -> Interface:
        """The interface at the other end of ``iface``'s link."""
        link = self.link_of(iface)
        return link.b if link.a is iface else link.a

    def interface(self, name: str) -> Interface:
        """A switch interface by name (``s1-eth1``) or a host's as ``h1-eth0``."""
        for node in self.nodes.values():
            for iface in node.interfaces:
                if name in (iface.name, f"{node.name}-{iface.name}"):
                    return iface
        raise NetworkError(f"no interface named {name!r}")

    @property
    def hosts(self) -> list[Host]:
        return [n for n in self.nodes.values() if isinstance(n, Host)]

    @property
    def switches(self) -> list[Switch]:
        return [n for n in self.nodes.values() if isinstance(n, Switch)]

    def _check_new(self, name: str) -> None:
        if self.started:
            raise NetworkError("the network is running; declare nodes before start()")
        if name in self.nodes:
            raise NetworkError(f"a node named {name!r} exists already")
        if not name.isalnum() or len(name) > 8:
            raise NetworkError(f"node name {name!r}: at most 8 letters and digits")

    def _mac(self, node_index: int, port: int) -> str:
        return f"02:00:00:{node_index:02x}:{port:02x}:01"

    def _new_interface(self, node: Node, port: int | None) -> Interface:
        index = list(self.nodes).index(node.name) + 1
        if isinstance(node, Host):
            if node.interfaces:
                raise NetworkError(f"host {node.name} has one interface (eth0) already linked")
            iface = Interface(node, "eth0", node.mac or self._mac(index, 0), node.ip)
        else:
            used = {i.port for i in node.interfaces}
            number = port if port is not None else max(used, default=0) + 1
            if number in used or not 0 <= number < 511:
                raise NetworkError(f"switch {node.name}: port {number} taken or out of range")
            iface = Interface(node, f"{node.name}-eth{number}", self._mac(index, number),
                              port=number)
        node.interfaces.append(iface)
        return iface

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Create namespaces and links; on any failure remove everything created so far."""
        if os.geteuid() != 0:
            raise NetworkError("building a network needs root (network namespaces)")
        if self.started:
            raise NetworkError("the network is running already")
        if self.links and shutil.which("ethtool") is None:
            raise NetworkError("ethtool is not installed (apt-get install ethtool)")
        try:
            OWNER_DIR.mkdir(parents=True, exist_ok=True)
            (OWNER_DIR / self.prefix).write_text(owner_stamp() + "\n")
            for node in self.nodes.values():
                netns.create(node.netns)
                self._created.append(node.netns)
                # No IPv6 (as the p4lang tutorials' hosts): router solicitations and
                # duplicate address detection would otherwise cross every switch and capture.
                node.cmd("sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                         "net.ipv6.conf.default.disable_ipv6=1")
                with NetNS(node.netns) as ns:
                    ns.link("set", index=ns.link_lookup(ifname="lo")[0], state="up")
            with IPRoute() as ipr:
                for number, link in enumerate(self.links):
                    self._create_link(ipr, number, link)
            for host in self.hosts:
                self._configure_host(host)
            self._start_switches([s for s in self.switches if s.program is not None])
            for host in self.hosts:
                self._run_host_commands(host)
            self.started = True
        except BaseException as exc:
            self.stop()
            if not isinstance(exc, Exception):
                raise
            if isinstance(exc, NetworkError):
                raise NetworkError(f"{exc}\n(the network was stopped and cleaned up)") from None
            raise NetworkError(f"network start failed and was cleaned up: {exc}") from exc

    def _create_link(self, ipr: IPRoute, number: int, link: Link) -> None:
        tmp_a, tmp_b = f"{self.prefix}l{number}a", f"{self.prefix}l{number}b"
        ipr.link("add", ifname=tmp_a, kind="veth", peer={"ifname": tmp_b})
        try:
            self._place_link_ends(ipr, link, tmp_a, tmp_b)
        except Exception:
            for tmp in (tmp_a, tmp_b):  # an end still in the root namespace
                for index in ipr.link_lookup(ifname=tmp):
                    ipr.link("del", index=index)
            raise

    def _place_link_ends(self, ipr: IPRoute, link: Link, tmp_a: str, tmp_b: str) -> None:
        for tmp, iface in ((tmp_a, link.a), (tmp_b, link.b)):
            index = ipr.link_lookup(ifname=tmp)[0]
            ipr.link("set", index=index, net_ns_fd=iface.node.netns)
            with NetNS(iface.node.netns) as ns:
                index = ns.link_lookup(ifname=tmp)[0]
                ns.link("set", index=index, ifname=iface.name, address=iface.mac, mtu=link.mtu)
                if iface.ip is not None:
                    ns.addr("add", index=index, address=str(iface.ip.ip),
                            prefixlen=iface.ip.network.prefixlen)
                ns.link("set", index=index, state="up")
            # Hosts must put real checksums on the wire: a switch that reads frames through
            # AF_PACKET forwards them as they are, and the receiver checks them.
            self._disable_offloads(iface)
            if link.rate_mbit and not link_has_switch(link):
                self._set_rate(iface, link.rate_mbit, link.mtu)

    def _disable_offloads(self, iface: Interface) -> None:
        iface.node.cmd("ethtool", "-K", iface.name, "tx", "off", "rx", "off", "tso", "off",
                       "gso", "off", "gro", "off")

    def _set_rate(self, iface: Interface, rate_mbit: float, mtu: int) -> None:
        burst = max(mtu * 4, int(rate_mbit * 1e6 / 8 / 250))
        iface.node.cmd("tc", "qdisc", "replace", "dev", iface.name, "root", "tbf",
                       "rate", f"{rate_mbit}mbit", "burst", str(burst), "latency", "50ms")

    def _start_switches(self, switches: list[Switch]) -> None:
        """Start the switch processes side by side (each compiles its program first),
        all from this thread, whose end their parent-death signal follows; the first
        failure, by declaration order, is raised."""
        from netweft.emulation.process.switch_process import SwitchStartError, launch_switch_process

        launches = []
        try:
            for switch in switches:
                if switch.pcap_dir is not None:
                    switch.pcap_dir.mkdir(parents=True, exist_ok=True)
                try:
                    launches.append(launch_switch_process(
                        switch, switch.program, switch.runtime, switch.stats_out,
                        log=switch.log_file, links=switch.port_settings(),
                        pcap_dir=switch.pcap_dir, trace_file=switch.trace_file,
                        control=switch.control, priority_queues=switch.priority_queues,
                        grpc_address=switch.grpc_address, backend=switch.backend,
                        extra_args=["--commands", str(switch.commands)] if switch.commands
                        else ()))
                except RuntimeError as exc:  # a setting the switch process would refuse
                    raise NetworkError(f"switch {switch.name}: {exc}") from None
            for switch, launch in zip(switches, launches, strict=True):
                try:
                    switch.process = launch.wait_ready()
                except SwitchStartError as exc:
                    raise NetworkError(f"switch {switch.name}: {exc}") from None
        finally:
            for launch in launches:
                launch.close()

    def _run_host_commands(self, host: Host) -> None:
        for line in host.commands:
            done = host.cmd("sh", "-c", line, check=False)
            if done.returncode != 0:
                raise NetworkError(f"host {host.name}: command {line!r} failed (exit "
                                   f"{done.returncode}): {(done.stderr or done.stdout).strip()}")

    def _configure_host(self, host: Host) -> None:
        """Default route out of eth0 and static neighbours, so no ARP is needed."""
        if not host.interfaces or not host.auto_routes:
            return
        with NetNS(host.netns) as ns:
            index = ns.link_lookup(ifname="eth0")[0]
            ns.route("add", dst="0.0.0.0/0", oif=index)
            for other in self.hosts:
                if other is host or other.ip is None:
                    continue
                ns.neigh("add", dst=str(other.ip.ip), lladdr=other.mac, ifindex=index,
                         state=0x80)  # NUD_PERMANENT

    def stop(self) -> None:
        """Stop processes started in the network and remove its namespaces."""
        for switch in self.switches:
            switch.process = None
        for proc in self._processes:
            if proc.poll() is None:
                proc.terminate()
        for proc in self._processes:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._processes.clear()
        for name in reversed(self._created):
            remove_namespace(name)
        self._created.clear()
        (OWNER_DIR / self.prefix).unlink(missing_ok=True)
        self.started = False

    def __enter__(self) -> Network:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def link_has_switch(link: Link) -> bool:
    """Whether a switch sits at either end of ``link`` (and so can emulate it)."""
    return isinstance(link.a.node, Switch) or isinstance(link.b.node, Switch)


def remove_namespace(name: str) -> None:
    """Kill whatever runs in a namespace, then remove it (and the veth ends inside).

    Returns once the killed processes are gone (or are zombies), at most a few
    seconds later, so that a caller that checks afterwards finds nothing left.
    """
    pids = [int(pid) for pid in subprocess.run(["ip", "netns", "pids", name],
                                               capture_output=True, text=True,
                                               check=False).stdout.split() if pid.isdigit()]
    for pid in pids:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5.0
    while pids and time.monotonic() < deadline:
        pids = [pid for pid in pids if is_running(pid)]
        if pids:
            time.sleep(0.01)
    try:
        netns.remove(name)
    except OSError:
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)


def _owner_alive(prefix: str) -> bool:
    """Whether the process that owns the network ``prefix`` runs (a killed owner that no
    one reaped yet, a zombie, does not: its network is a leftover; nor does a process
    that got the dead owner's PID later: the owner file holds its start time too)."""
    try:
        stamp = (OWNER_DIR / prefix).read_text()
    except OSError:
        return False
    return stamp_alive(stamp)


def _is_network_prefix(head: str, prefixes: Sequence[str]) -> bool:
    """Whether ``head`` is a network prefix of netweft's form, ``<prefix><5 hex>``
    (or one of ``prefixes`` itself, to name a single network)."""
    if head in prefixes:
        return True
    for prefix in prefixes:
        tag = head[len(prefix):]
        if head.startswith(prefix) and len(tag) == 5 and all(c in "0123456789abcdef" for c in tag):
            return True
    return False


def leftover_namespaces(prefixes: Sequence[str] = (DEFAULT_PREFIX,),
                        include_live: bool = False) -> list[str]:
    """Namespaces that look like netweft's (``<prefix><5 hex>-<node>``) whose owner is gone.

    With ``include_live``, also those of networks whose owning process still runs.
    """
    found = []
    for name in netns.listnetns():
        head, _, node = name.partition("-")
        if node and _is_network_prefix(head, prefixes) and (include_live or not _owner_alive(head)):
            found.append(name)
    return sorted(found)


def leftover_root_links(prefixes: Sequence[str] = (DEFAULT_PREFIX,),
                        include_live: bool = False) -> list[str]:
    """Veth ends left in the root namespace (``<prefix><5 hex>l<N>a|b``) by networks
    whose owner is gone.

    A link is created in the root namespace and its ends then move into the nodes'
    namespaces: a run killed in between (``kill -9``) leaves the pair behind.
    """
    with IPRoute() as ipr:
        names = [link.get_attr("IFLA_IFNAME") for link in ipr.get_links()]
    found = []
    for name in names:
        head, sep, tail = (name or "").rpartition("l")
        if (sep and len(tail) >= 2 and tail[:-1].isdigit() and tail[-1] in "ab"
                and _is_network_prefix(head, prefixes)
                and (include_live or not _owner_alive(head))):
            found.append(name)
    return sorted(found)


def remove_root_link(name: str) -> bool:
    """Delete a veth pair by one end's name in the root namespace; False if already gone."""
    with IPRoute() as ipr:
        indices = ipr.link_lookup(ifname=name)
        for index in indices:
            ipr.link("del", index=index)
    return bool(indices)


def leftover_owner_files(prefixes: Sequence[str] = (DEFAULT_PREFIX,),
                         include_live: bool = False) -> list[Path]:
    """Owner files (``/run/netweft/<prefix><5 hex>``) of networks whose owner is gone.

    A network killed before ``stop()`` (``kill -9``) leaves its file behind; with
    ``include_live``, also the files of networks whose owner still runs.
    """
    if not OWNER_DIR.is_dir():
        return []
    return sorted(path for path in OWNER_DIR.iterdir()
                  if _is_network_prefix(path.name, prefixes)
                  and (include_live or not _owner_alive(path.name)))
