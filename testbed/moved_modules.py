"""The testbed's old module names, kept importable for one release with a DeprecationWarning.

The testbed was one flat folder; its modules now live in ``commands/``, ``bench/``,
``perf/``, ``experiments/`` and ``control/`` (with the fabric controller, which was
``fabric/``). :data:`MOVED` maps each old name to its new
module: :class:`MovedModuleFinder` (installed on ``sys.meta_path`` by
the package's ``__init__``) makes ``import netweft.testbed.bench_switch``
warn and give the very module object of ``netweft.testbed.bench.switch``, and
``python -m`` an old name runs the new module. ``netweft.testbed.perf`` was a
module and is now a package: the names the old module offered resolve through
:data:`MOVED_NAMES` (:func:`moved_name` is the package's ``__getattr__``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable, Sequence
from types import CodeType, ModuleType
from typing import Any

# old module name -> the module that holds what it held (the library part of a split one)
MOVED: dict[str, str] = {
    "netweft.testbed.cli": "netweft.testbed.command_line",
    "netweft.testbed.doctor": "netweft.testbed.commands.doctor",
    "netweft.testbed.clean": "netweft.testbed.commands.clean",
    "netweft.testbed.stf_command": "netweft.testbed.commands.stf",
    "netweft.testbed.p4check_command": "netweft.testbed.commands.p4check",
    "netweft.testbed.compile_command": "netweft.testbed.commands.compile",
    "netweft.testbed.up": "netweft.testbed.commands.up",
    "netweft.testbed.up_prompt": "netweft.testbed.commands.up_prompt",
    "netweft.testbed.cli_command": "netweft.testbed.commands.switch_cli",
    "netweft.testbed.fabric_command": "netweft.testbed.commands.fabric",
    "netweft.testbed.trace_command": "netweft.testbed.commands.trace",
    "netweft.testbed.aggregation_command": "netweft.testbed.commands.aggregation",

    "netweft.testbed.bench_switch": "netweft.testbed.bench.switch",
    "netweft.testbed.bench_aggregation": "netweft.testbed.bench.aggregation",
    "netweft.testbed.bench_allreduce": "netweft.testbed.bench.allreduce",
    "netweft.testbed.bench_cc": "netweft.testbed.bench.cc",
    "netweft.testbed.bench_ec": "netweft.testbed.bench.ec",
    "netweft.testbed.bench_fabric": "netweft.testbed.bench.fabric",
    "netweft.testbed.bench_links": "netweft.testbed.bench.links",
    "netweft.testbed.bench_reliability": "netweft.testbed.bench.reliability",

    "netweft.testbed.perf_latency": "netweft.testbed.perf.latency",
    "netweft.testbed.perf_options": "netweft.testbed.perf.options",
    "netweft.testbed.perf_sweep": "netweft.testbed.perf.sweep",
    "netweft.testbed.perf_pair": "netweft.testbed.perf.pair",
    "netweft.testbed.perf_sim": "netweft.testbed.perf.sim",

    "netweft.testbed.demo": "netweft.testbed.experiments.demo",
    "netweft.testbed.demo_hosts": "netweft.testbed.experiments.demo_hosts",
    "netweft.testbed.fabric_testbed": "netweft.testbed.experiments.fabric_testbed",
    "netweft.testbed.fabric_hosts": "netweft.testbed.experiments.fabric_hosts",
    "netweft.testbed.marks_experiment": "netweft.testbed.experiments.marks",
    "netweft.testbed.multicast_experiment": "netweft.testbed.experiments.multicast",
    "netweft.testbed.spray_experiment": "netweft.testbed.experiments.spray",
    "netweft.testbed.cc_testbed": "netweft.testbed.experiments.cc_testbed",
    "netweft.testbed.cc_studies": "netweft.testbed.experiments.cc_studies",
    "netweft.testbed.allreduce_testbed": "netweft.testbed.experiments.allreduce_testbed",
    "netweft.testbed.reliability_testbed": "netweft.testbed.experiments.reliability_testbed",
    "netweft.testbed.allreduce_fabric": "netweft.testbed.experiments.allreduce_fabric",

    "netweft.testbed.fabric": "netweft.testbed.control.fabric",
    **{f"netweft.testbed.fabric.{name}": f"netweft.testbed.control.fabric.{name}"
       for name in ("compute", "controller", "ecmp_spray_binding", "fabric_binding", "graph",
                    "installer", "multicast", "path_probe", "plan", "routes", "settings")},
    **{f"netweft.testbed.fabric.{name}": f"netweft.testbed.control.{name}"
       for name in ("entries", "entity_encoder", "p4runtime_session")},
    "netweft.testbed.aggregation_controller": "netweft.testbed.control.aggregation.controller",
    "netweft.testbed.aggregation_placement": "netweft.testbed.control.aggregation.placement",
}

# a module that became a package: its old public names -> the module now holding each
_PERF = "netweft.testbed.perf."
MOVED_NAMES: dict[str, dict[str, str]] = {
    "netweft.testbed.perf": {
        **dict.fromkeys(("CONTROL_PORT", "IP_UDP_HEADERS", "PerfResult", "PerfError", "Control",
                         "cpu_seconds", "server_endpoint", "run_against_server",
                         "local_ip_towards", "NetweftSession"), _PERF + "protocol"),
        **dict.fromkeys(("CLIENT_COUNTERS", "SERVER_COUNTERS", "run_tcp", "run_netweft",
                         "engine_counters", "run_client", "ratios", "format_report"),
                        _PERF + "goodput"),
        "serve": _PERF + "server",
        "reliability_arg": _PERF + "options",
        **dict.fromkeys(("MODE_DEFAULTS", "register"), "netweft.testbed.commands.perf"),
    },
}


def _warn(old: str, new: str, stacklevel: int) -> None:
    warnings.warn(f"{old} moved to {new}; the old name goes away in the next release",
                  DeprecationWarning, stacklevel=stacklevel)


class _AliasLoader(importlib.abc.Loader):
    """Gives the new module's object for the old name (and its code to ``python -m``)."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        # stacklevel 3: past this loader and importlib's frames (which warnings skips)
        _warn(self.old, self.new, stacklevel=3)
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the new module ran when it was imported); importlib pointed
        its ``__spec__`` at the old name's: give it back its own."""
        module.__spec__ = self._spec

    def get_code(self, fullname: str) -> CodeType | None:
        """The new module's code, so that ``python -m <old name>`` still runs it."""
        _warn(self.old, self.new, stacklevel=2)
        spec = importlib.util.find_spec(self.new)
        return spec.loader.get_code(self.new)  # type: ignore[union-attr]


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of :data:`MOVED` (only those; every other name is left alone)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(fullname, new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())


def moved_name(package: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` serving the old module's names, with a warning."""
    names = MOVED_NAMES[package]

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        _warn(f"{package}.{name}", f"{names[name]}.{name}", stacklevel=3)
        return getattr(importlib.import_module(names[name]), name)

    return __getattr__
