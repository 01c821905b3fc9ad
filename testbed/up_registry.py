"""Running testbeds, recorded so that ``netweft exec``, ``down`` and ``clean`` find them.

``netweft up`` writes ``/run/netweft/testbeds/<name>.json`` (its PID, the
namespace prefix, the run folder and every node's namespace and address) once
the network runs, and removes it when it stops. A record whose process is gone
belongs to a crashed run: ``netweft clean`` removes it with the namespaces.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from netweft.emulation.network import OWNER_DIR, Host, Network
from netweft.emulation.process_lifetime import same_process_runs, start_ticks

REGISTRY_DIR = OWNER_DIR / "testbeds"


class RegistryError(LookupError):
    """No running testbed matches; the message says which ones exist."""


@dataclass
class RunningTestbed:
    """What another process needs to reach a running testbed's nodes."""

    name: str
    pid: int
    prefix: str
    run_dir: str
    topology: str
    nodes: dict[str, dict[str, str | None]]
    started: int | None = None   # the owner's start time (clock ticks since boot)

    @property
    def alive(self) -> bool:
        """Whether the testbed's owner runs (a zombie, killed and not yet reaped, does not;
        nor does a later process that got its PID)."""
        return same_process_runs(self.pid, self.started)

    def netns(self, node: str) -> str:
        if node not in self.nodes:
            raise RegistryError(f"testbed {self.name} has no node {node!r} "
                                f"(nodes: {' '.join(self.nodes)})")
        return str(self.nodes[node]["netns"])

    def grpc_addresses(self) -> dict[str, str]:
        """Switch name to its P4Runtime server's address (``unix:PATH``)."""
        return {name: str(n["grpc"]) for name, n in self.nodes.items() if n.get("grpc")}

    def addresses(self) -> dict[str, str]:
        """Host name to IP address, for substituting names in commands."""
        return {name: str(n["ip"]) for name, n in self.nodes.items() if n.get("ip")}


def record_for(name: str, net: Network, run_dir: Path, topology: Path) -> RunningTestbed:
    nodes: dict[str, dict[str, str | None]] = {}
    for node in net.nodes.values():
        ip = node.ip_address if isinstance(node, Host) and node.ip is not None else None
        nodes[node.name] = {"netns": node.netns, "ip": ip,
                            "kind": "host" if isinstance(node, Host) else "switch"}
        if getattr(node, "grpc_address", None):
            nodes[node.name]["grpc"] = node.grpc_address
    return RunningTestbed(name, os.getpid(), net.prefix, str(run_dir.resolve()),
                         str(topology), nodes, start_ticks(os.getpid()))


def write(record: RunningTestbed) -> None:
    REGISTRY_DIR.mkdir(parents=True, exist_ok=True)
    path = REGISTRY_DIR / f"{record.name}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(record), indent=2))
    tmp.replace(path)


def remove(name: str) -> None:
    (REGISTRY_DIR / f"{name}.json").unlink(missing_ok=True)


def records() -> list[RunningTestbed]:
    """Every recorded testbed, live or not, by name."""
    found = []
    for path in sorted(REGISTRY_DIR.glob("*.json")) if REGISTRY_DIR.is_dir() else []:
        try:
            found.append(RunningTestbed(**json.loads(path.read_text())))
        except (OSError, ValueError, TypeError):
            continue
    return found


def find(name: str | None) -> RunningTestbed:
    """The running testbed called ``name``, or the only one running if ``name`` is None."""
    live = [r for r in records() if r.alive]
    if name is not None:
        for r in live:
            if r.name == name:
                return r
        raise RegistryError(f"no running testbed named {name!r}"
                            + (f" (running: {', '.join(r.name for r in live)})" if live
                               else "; start one with netweft up TOPO"))
    if not live:
        raise RegistryError("no testbed is running; start one with netweft up TOPO")
    if len(live) > 1:
        raise RegistryError(f"{len(live)} testbeds run ({', '.join(r.name for r in live)}); "
                            "choose one with --testbed NAME")
    return live[0]
