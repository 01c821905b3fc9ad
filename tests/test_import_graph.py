"""The layering holds: every module's imports (read with ast, function-level ones
included) go only in the allowed directions between netweft's packages and
between the folders inside them (docs/design.md, "Layers").

A rule about a folder that does not exist (yet) holds vacuously; it bites as soon
as the folder appears."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Rule:
    """Modules under ``importers`` (minus ``except_importers``: a module, or with
    ``.*`` a package and everything below it) import nothing under ``forbidden``;
    names are dotted, below ``netweft.``. ``top_modules_only`` limits
    the importers to the modules directly in the importer package (not its
    ``__init__``, the package's public front)."""
    importers: str
    forbidden: tuple[str, ...]
    why: str
    except_importers: tuple[str, ...] = ()
    top_modules_only: bool = False


RULES = [
    # Between the top-level packages (brief, issue 21): testbed -> emulation,
    # transport, p4, nic_offload; emulation -> p4, nic_offload; transport ->
    # nic_offload; p4 and nic_offload -> nothing of ours; nothing -> testbed.
    Rule("emulation", ("testbed", "transport"),
         "the switch and its processes do not know the transport or the testbeds"),
    Rule("transport", ("testbed", "emulation", "p4"),
         "the transport runs on its engine alone, with or without a switch"),
    Rule("p4", ("testbed", "emulation", "transport", "nic_offload"),
         "the P4 programs and compiler are the bottom layer"),
    Rule("nic_offload", ("testbed", "emulation", "transport", "p4"),
         "the C engine's package builds and loads the engine, nothing else"),
    # Inside transport: the core (endpoint, memory, queues, engine handle, ...) is
    # what the drivers and the collectives build on, never the other way round.
    Rule("transport", ("transport.collectives", "transport.sim", "transport.udp"),
         "the transport's core does not know its drivers or the collectives",
         # the simulator's network and ports, on their way into sim/ (house-wire)
         except_importers=("transport.fabric", "transport.switch_port"),
         top_modules_only=True),
    # The drivers carry the core's packets; collectives are applications above them.
    Rule("transport.sim", ("transport.collectives",), "the simulator does not know collectives"),
    Rule("transport.udp", ("transport.collectives",), "the UDP driver does not know collectives"),
    # The switch's back ends run a program on frames handed to them; processes and
    # namespaces are drivers around them.
    Rule("emulation.pipeline", ("emulation.process", "emulation.network"),
         "the Python back end does not start processes or build networks"),
    Rule("emulation.native", ("emulation.process", "emulation.network"),
         "the native back end does not start processes or build networks"),
    # Commands are leaves: only the command line dispatches to them (and the bench
    # group, which is itself a command); nothing else in testbed imports them.
    Rule("testbed", ("testbed.commands",), "only the command line imports commands",
         except_importers=("testbed.command_line", "testbed.commands.*", "testbed.bench")),
    # Controllers plan and install; commands and experiments use them, not back.
    Rule("testbed.control", ("testbed.commands", "testbed.experiments"),
         "controllers do not import commands or experiments"),
]


def _packages() -> dict[str, Path]:
    """Installed package name (below ``netweft.``) -> its folder (pyproject's map)."""
    text = (ROOT / "pyproject.toml").read_text()
    return {name: ROOT / folder
            for name, folder in re.findall(r'"netweft\.(\w+)" = "(\w+)"', text)}


def _modules() -> dict[str, Path]:
    """Dotted module name (below ``netweft.``; a package by its ``__init__``) -> file."""
    modules = {}
    for package, folder in _packages().items():
        for path in folder.rglob("*.py"):
            if any(part.startswith(".") or part in ("build", "__pycache__")
                   for part in path.relative_to(ROOT).parts):
                continue
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = path
    return modules


MODULES = _modules()


def _is_package(module: str) -> bool:
    return MODULES.get(module, Path()).name == "__init__.py" or (
        module in _packages() and module not in MODULES)


def _resolve(module: str, node: ast.ImportFrom) -> list[str]:
    """What ``from X import a, b`` in ``module`` imports: ``X.a`` where that is a
    module of ours, else ``X``. Absolute names outside ``netweft.`` are dropped."""
    if node.level:
        package = module if _is_package(module) else module.rpartition(".")[0]
        base = package.split(".")
        base = base[:len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    elif node.module and (node.module == "netweft" or node.module.startswith("netweft.")):
        target = node.module.removeprefix("netweft").removeprefix(".")
    else:
        return []
    out = []
    for alias in node.names:
        sub = f"{target}.{alias.name}" if target else alias.name
        out.append(sub if sub in MODULES or sub in _packages() else target)
    return out


def imports_of(module: str, path: Path) -> set[str]:
    """Every module of ours that ``module`` imports, at any level of its code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name.removeprefix("netweft.") for a in node.names
                         if a.name.startswith("netweft."))
        elif isinstance(node, ast.ImportFrom):
            found.update(_resolve(module, node))
    return {name for name in found if name}


GRAPH = {module: imports_of(module, path) for module, path in MODULES.items()}


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _applies(rule: Rule, module: str) -> bool:
    if not _under(module, rule.importers) or any(
            _under(module, e[:-2]) if e.endswith(".*") else module == e
            for e in rule.except_importers):
        return False
    if rule.top_modules_only:
        return module.rpartition(".")[0] == rule.importers and not _is_package(module)
    return True


def violations(rule: Rule, graph: dict[str, set[str]] = GRAPH) -> list[str]:
    return sorted(f"{module} imports {target}" for module, targets in graph.items()
                  if _applies(rule, module)
                  for target in targets if any(_under(target, f) for f in rule.forbidden))


@pytest.mark.parametrize("rule", RULES, ids=lambda r: f"{r.importers}-not-{'+'.join(r.forbidden)}")
def test_rule_holds(rule):
    assert not violations(rule), f"{rule.why}: {violations(rule)}"


def test_the_graph_sees_imports_of_every_kind(tmp_path):
    """The parser finds absolute, relative and function-level imports (a graph that
    saw none would pass every rule)."""
    source = tmp_path / "driver.py"
    source.write_text("import netweft.nic_offload\nfrom ..endpoint import Endpoint\n"
                      "def f():\n    from netweft.transport.collectives import ring\n"
                      "    from . import x\n")
    graph = {"transport.udp.driver": imports_of("transport.udp.driver", source)}
    assert graph["transport.udp.driver"] == {"nic_offload", "transport.endpoint",
                                             "transport.collectives", "transport.udp"}
    rule = Rule("transport.udp", ("transport.collectives",), "test")
    assert violations(rule, graph) == ["transport.udp.driver imports transport.collectives"]
    assert len(_packages()) >= 5 and sum(len(targets) for targets in GRAPH.values()) > 200
