"""Topology files: netweft's YAML and the p4lang tutorials' ``topology.json``, read as they are.

Both formats load into one :class:`Topology` (hosts, switches, links), which
:meth:`Topology.build` turns into a :class:`~netweft.emulation.network.Network`
whose switches run their P4 programs with their runtime files applied.

netweft's YAML (documented in ``docs/testbed.md``)::

    name: pair
    defaults: {program: basic_forward, link: {mtu: 1500}}
    hosts:
      h1: {ip: 10.0.1.1/24}
      h2: {ip: 10.0.1.2/24, commands: ["sysctl -w net.ipv4.ip_forward=0"]}
    switches:
      s1: {runtime: s1-runtime.json}
    links:
      - [h1, s1-p1]
      - {ends: [h2, s1-p2], delay: 2ms, loss: 0.1%, rate: 100mbit, queue: 64}

The tutorials' format, with the semantics of their ``utils/run_exercise.py``:
hosts have ``ip``, ``mac`` and shell ``commands`` (which set the default route
and the gateway's ARP entry, so netweft adds no routes of its own); switches
have ``runtime_json``, ``cli_input`` or a ``program``; a link is ``[a, b]``,
``[a, b, latency]`` or ``[a, b, latency, bandwidth]`` where a switch end is
``sK-pN`` (port N, interface ``sK-ethN``), a number for latency means
milliseconds and bandwidth is in Mbit/s. The tutorials' programs are BMv2 JSON
files compiled by p4c (``build/basic.json``); netweft compiles the P4 source
beside them (``basic.p4``), so ``program`` may name either. A switch without a
``program`` runs ``--program`` (the Makefile's ``-j``), else the source of its
runtime file's ``bmv2_json``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from netweft.emulation.links.link_params import LinkParams, LinkParamsError
from netweft.emulation.network import Network, NetworkError
from netweft.p4.programs import program as shipped_program

DEFAULT_PROGRAM = "fabric"   # switches that name no program and have no entries run it


class TopologyError(ValueError):
    """A topology file is malformed; the message names the file and the entry."""


@dataclass
class HostSpec:
    name: str
    ip: str | None = None
    mac: str | None = None
    commands: list[str] = field(default_factory=list)
    auto_routes: bool = True


@dataclass
class SwitchSpec:
    name: str
    program: Path | None = None
    runtime: Path | None = None
    cli_input: Path | None = None
    priority_queues: int = 1
    # The source of the runtime file's bmv2_json (tutorials): used when neither the
    # topology nor --program names a program.
    inferred_program: Path | None = None
    backend: str | None = None   # auto, c or python (None: the network's, else the default)


@dataclass
class LinkSpec:
    a: str
    b: str
    port_a: int | None = None
    port_b: int | None = None
    mtu: int = 1500
    params: LinkParams = field(default_factory=LinkParams)


@dataclass
class Topology:
    """A testbed as a file describes it; ``build`` makes the network."""

    name: str
    source: Path
    hosts: dict[str, HostSpec] = field(default_factory=dict)
    switches: dict[str, SwitchSpec] = field(default_factory=dict)
    links: list[LinkSpec] = field(default_factory=list)
    backend: str | None = None   # the file's ``backend:`` for every switch

    def build(self, run_dir: Path, prefix: str | None = None,
              default_program: Path | None = None, pcaps: bool = True,
              p4runtime: bool = True, backend: str | None = None) -> Network:
        """The declared (not yet started) network; logs, pcaps and counters go to ``run_dir``.

        ``default_program`` runs on switches the file gives no program; with
        ``p4runtime`` every switch also serves P4Runtime on a Unix socket
        (:func:`grpc_socket`), which a controller reaches from any namespace.
        ``backend`` (auto, c or python; ``netweft up --backend``) overrides the
        file's back end for every switch; None keeps the file's (a switch's own
        ``backend:``, else the file's top-level one, else ``$NETWEFT_SWITCH_BACKEND``
        or the default).
        """
        net = Network(prefix)
        for h in self.hosts.values():
            net.add_host(h.name, h.ip, h.mac, auto_routes=h.auto_routes, commands=h.commands)
        for s in self.switches.values():
            prog = s.program or default_program or s.inferred_program
            if prog is None and (s.runtime is not None or s.cli_input is not None):
                raise TopologyError(
                    f"{self.source}: switch {s.name} has entries for a program it does not "
                    "name: name one in the file or give --program FILE.p4")
            if prog is None:  # the fabric program, which the fabric controller configures
                prog = shipped_program(DEFAULT_PROGRAM)
            net.add_switch(s.name, prog, runtime=s.runtime, commands=s.cli_input,
                           pcap_dir=run_dir / "pcaps" if pcaps else None,
                           log_file=run_dir / "logs" / f"{s.name}.log",
                           stats_out=run_dir / "logs" / f"{s.name}-counters.json",
                           control=control_socket(run_dir, net.prefix, s.name),
                           priority_queues=s.priority_queues,
                           backend=backend or s.backend or self.backend,
                           grpc_address=(f"unix:{grpc_socket(run_dir, net.prefix, s.name)}"
                                         if p4runtime else None))
        for link in self.links:
            try:
                net.add_link(net.node(link.a), net.node(link.b), port_a=link.port_a,
                             port_b=link.port_b, mtu=link.mtu, params=link.params)
            except NetworkError as exc:
                raise TopologyError(f"{self.source}: {exc}") from None
        (run_dir / "logs").mkdir(parents=True, exist_ok=True)
        return net


def control_socket(run_dir: Path, prefix: str, switch: str) -> Path:
    """Where a switch's control channel listens: ``logs/<switch>.sock`` in the run folder,
    or ``/tmp/netweft-<prefix>-<switch>.sock`` if that path is too long for a Unix socket."""
    path = (run_dir / "logs" / f"{switch}.sock").resolve()
    return path if len(str(path)) < 100 else Path(f"/tmp/netweft-{prefix}-{switch}.sock")


def grpc_socket(run_dir: Path, prefix: str, switch: str) -> Path:
    """Where a switch's P4Runtime server listens: ``logs/<switch>.grpc`` in the run folder,
    or ``/tmp/netweft-<prefix>-<switch>.grpc`` if that path is too long for a Unix socket."""
    path = (run_dir / "logs" / f"{switch}.grpc").resolve()
    return path if len(str(path)) < 100 else Path(f"/tmp/netweft-{prefix}-{switch}.grpc")


def load_topology(path: str | Path) -> Topology:
    """Read a topology file: ``.yaml``/``.yml`` is netweft's, ``.json`` the tutorials'."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise TopologyError(f"{path}: cannot read the topology file ({exc.strerror})") from None
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TopologyError(f"{path}:{exc.lineno}:{exc.colno}: {exc.msg}") from None
        return _from_tutorials(path, data)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise TopologyError(f"{where}: {getattr(exc, 'problem', None) or exc}") from None
    return _from_yaml(path, data)


# -- netweft's YAML ---------------------------------------------------------------------------

_HOST_KEYS = {"ip", "mac", "commands", "routes"}
_SWITCH_KEYS = {"program", "runtime", "cli", "priority_queues", "backend"}
_BACKENDS = ("auto", "c", "python")
_LINK_KEYS = {"ends", "mtu", "delay", "jitter", "loss", "rate", "queue"}


def _mapping(value: Any, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TopologyError(f"{where}: expected a mapping, got {type(value).__name__}")
    return dict(value)


def _check_keys(entry: dict, allowed: set[str], where: str) -> None:
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise TopologyError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}; "
                            f"known: {', '.join(sorted(allowed))}")


def _from_yaml(path: Path, data: Any) -> Topology:
    where = str(path)
    data = _mapping(data, where)
    _check_keys(data, {"name", "defaults", "hosts", "switches", "links", "backend"}, where)
    defaults = _mapping(data.get("defaults"), f"{where}: defaults")
    _check_keys(defaults, {"program", "link"}, f"{where}: defaults")
    link_defaults = _mapping(defaults.get("link"), f"{where}: defaults.link")
    _check_keys(link_defaults, _LINK_KEYS - {"ends"}, f"{where}: defaults.link")
    topo = Topology(str(data.get("name") or path.stem), path)
    topo.backend = _backend(data.get("backend"), where)
    for name, entry in _mapping(data.get("hosts"), f"{where}: hosts").items():
        at = f"{where}: hosts.{name}"
        entry = _mapping(entry, at)
        _check_keys(entry, _HOST_KEYS, at)
        routes = entry.get("routes", "auto")
        if routes not in ("auto", "none"):
            raise TopologyError(f"{at}: routes: {routes!r}; use auto or none")
        topo.hosts[str(name)] = HostSpec(str(name), _str(entry.get("ip")),
                                         _str(entry.get("mac")),
                                         _commands(entry.get("commands"), at),
                                         auto_routes=routes == "auto")
    for name, entry in _mapping(data.get("switches"), f"{where}: switches").items():
        at = f"{where}: switches.{name}"
        entry = _mapping(entry, at)
        _check_keys(entry, _SWITCH_KEYS, at)
        prog = entry.get("program", defaults.get("program"))
        topo.switches[str(name)] = SwitchSpec(
            str(name), _program(path, prog, at) if prog else None,
            _file(path, entry.get("runtime"), f"{at}: runtime"),
            _file(path, entry.get("cli"), f"{at}: cli"),
            _queues(entry.get("priority_queues", 1), at),
            backend=_backend(entry.get("backend"), at))
    links = data.get("links") or []
    if not isinstance(links, list):
        raise TopologyError(f"{where}: links: a list of [a, b] or {{ends: [a, b], ...}}")
    for n, entry in enumerate(links):
        at = f"{where}: links[{n}]"
        if isinstance(entry, list):
            entry = {"ends": entry}
        entry = {**link_defaults, **_mapping(entry, at)}
        _check_keys(entry, _LINK_KEYS, at)
        ends = entry.get("ends")
        if not isinstance(ends, list) or len(ends) != 2:
            raise TopologyError(f"{at}: ends: two node names, e.g. [h1, s1-p1]")
        topo.links.append(_link(topo, ends, entry, at))
    return topo


def _link(topo: Topology, ends: list, entry: dict, at: str) -> LinkSpec:
    (a, port_a), (b, port_b) = (_end(topo, str(e), at) for e in ends)
    mtu = entry.get("mtu", 1500)
    if isinstance(mtu, bool) or not isinstance(mtu, int):
        raise TopologyError(f"{at}: mtu: {mtu!r} is not a whole number of bytes")
    try:
        params = LinkParams.parse(delay=entry.get("delay"), jitter=entry.get("jitter"),
                                  loss=entry.get("loss"), rate=entry.get("rate"),
                                  queue=entry.get("queue"), where=at)
    except LinkParamsError as exc:
        raise TopologyError(str(exc)) from None
    return LinkSpec(a, b, port_a, port_b, mtu, params)


def _end(topo: Topology, text: str, at: str) -> tuple[str, int | None]:
    """``h1`` -> (h1, None); ``s1-p3`` -> (s1, 3)."""
    name, sep, port = text.partition("-")
    if name not in topo.hosts and name not in topo.switches:
        raise TopologyError(f"{at}: {name!r} is neither a host nor a switch of this file")
    if not sep:
        return name, None
    if name not in topo.switches or not port.startswith("p") or not port[1:].isdigit():
        raise TopologyError(f"{at}: {text!r}: a port is written SWITCH-pN, e.g. s1-p1")
    return name, int(port[1:])


def _backend(value: Any, at: str) -> str | None:
    """A ``backend:`` value: auto, c or python (None: not given)."""
    if value is None:
        return None
    if value not in _BACKENDS:
        raise TopologyError(f"{at}: backend: {value!r}; use auto, c or python")
    return str(value)


def _queues(value: Any, at: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 8:
        raise TopologyError(f"{at}: priority_queues: {value!r}; give 1..8")
    return value


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _commands(value: Any, at: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise TopologyError(f"{at}: commands: a list of shell command lines")
    return list(value)


def _file(base: Path, value: Any, at: str) -> Path | None:
    """A file named relative to the topology file (or the working directory, or its parent)."""
    if value is None:
        return None
    for candidate in (base.parent / str(value), Path(value), base.parent.parent / str(value)):
        if candidate.is_file():
            return candidate.resolve()
    raise TopologyError(f"{at}: no file {value!r} (looked beside {base.name}, in its parent "
                        "and in the working directory)")


def _program(base: Path, value: Any, at: str) -> Path:
    """A P4 source: a path, the source of a BMv2 JSON (build/X.json -> X.p4), or a name in p4/."""
    text = str(value)
    if text.endswith(".json"):  # p4c's output: its source sits beside the build folder
        stem = Path(text).stem
        for folder in (Path(text).parent.parent, Path(text).parent, Path()):
            for root in (Path(), base.parent, base.parent.parent):
                source = root / folder / f"{stem}.p4"
                if source.is_file():
                    return source.resolve()
        raise TopologyError(f"{at}: program {text!r} is a BMv2 JSON; netweft compiles the P4 "
                            f"source and found no {stem}.p4 beside it: give --program "
                            f"{stem}.p4")
    try:
        return _file(base, text, at)  # type: ignore[return-value]
    except TopologyError:
        try:
            return shipped_program(text)
        except FileNotFoundError:
            raise TopologyError(f"{at}: program {text!r} is neither a file nor one of "
                                "netweft's programs (p4/)") from None


# -- the p4lang tutorials' topology.json ---------------------------------------------------------

def _from_tutorials(path: Path, data: Any) -> Topology:
    where = str(path)
    data = _mapping(data, where)
    for key in ("hosts", "switches", "links"):
        if key not in data:
            raise TopologyError(f"{where}: missing {key!r} (a tutorials topology.json has "
                                "hosts, switches and links)")
    topo = Topology(path.parent.name or path.stem, path)
    for name, entry in _mapping(data["hosts"], f"{where}: hosts").items():
        at = f"{where}: hosts.{name}"
        entry = _mapping(entry, at)
        topo.hosts[name] = HostSpec(name, _str(entry.get("ip")), _str(entry.get("mac")),
                                    _commands(entry.get("commands"), at), auto_routes=False)
    for name, entry in _mapping(data["switches"], f"{where}: switches").items():
        at = f"{where}: switches.{name}"
        entry = _mapping(entry, at)
        runtime = _file(path, entry.get("runtime_json"), f"{at}: runtime_json")
        prog = entry.get("program")
        inferred = None
        if prog is None and runtime is not None:  # the runtime file names p4c's output
            try:
                bmv2_json = json.loads(runtime.read_text()).get("bmv2_json")
            except (json.JSONDecodeError, AttributeError):
                bmv2_json = None  # the switch's loader reports a broken runtime file
            if bmv2_json is not None:
                try:
                    inferred = _program(path, bmv2_json, at)
                except TopologyError:
                    inferred = None  # --program must name it
        # cpu_port matters to P4Runtime packet-in/out, which netweft up's switches
        # do not serve; it is accepted and has no effect.
        topo.switches[name] = SwitchSpec(
            name, _program(path, prog, at) if prog else None, runtime,
            _file(path, entry.get("cli_input"), f"{at}: cli_input"),
            _queues(entry.get("priority_queues", 1), at), inferred)
    links = data["links"]
    if not isinstance(links, list):
        raise TopologyError(f"{where}: links: a list of [node1, node2, latency, bandwidth]")
    for n, entry in enumerate(links):
        at = f"{where}: links[{n}]"
        if not isinstance(entry, list) or not 2 <= len(entry) <= 4:
            raise TopologyError(f"{at}: a link is [node1, node2] with optional latency "
                                "and bandwidth")
        a, b = sorted(map(str, entry[:2]))  # as run_exercise.py: alphabetical, hosts first
        if a.startswith("h") and not b.startswith("s"):
            raise TopologyError(f"{at}: hosts should be connected to switches, not {b}")
        fields = {"ends": [a, b]}
        if len(entry) > 2:
            fields["delay"] = entry[2]
        if len(entry) > 3 and entry[3] is not None:
            fields["rate"] = entry[3]
        topo.links.append(_link(topo, [a, b], fields, at))
    return topo
