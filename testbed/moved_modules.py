"""Old import paths of moved testbed modules, kept for one release.

Importing a module by its old name warns (``DeprecationWarning``) and gives the
module at its new path: the same module object, so its classes and state are
shared. ``install()`` (run by the package's ``__init__``) puts the finder first
on ``sys.meta_path``, so that an old submodule name is never found as a second
copy of the file under its new folder.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings

_FABRIC = ("compute", "controller", "ecmp_spray_binding", "fabric_binding", "graph",
           "installer", "multicast", "path_probe", "plan", "routes", "settings")

# old name -> new name
MOVED: dict[str, str] = {
    "netweft.testbed.fabric": "netweft.testbed.control.fabric",
    **{f"netweft.testbed.fabric.{name}": f"netweft.testbed.control.fabric.{name}"
       for name in _FABRIC},
    **{f"netweft.testbed.fabric.{name}": f"netweft.testbed.control.{name}"
       for name in ("entries", "entity_encoder", "p4runtime_session")},
    "netweft.testbed.aggregation_controller": "netweft.testbed.control.aggregation.controller",
    "netweft.testbed.aggregation_placement": "netweft.testbed.control.aggregation.placement",
    "netweft.testbed.allreduce_fabric": "netweft.testbed.experiments.allreduce_fabric",
}


class MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old names of :data:`MOVED` and loads them as their new modules."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # a placeholder; exec_module puts the real module in its place

    def exec_module(self, module: object) -> None:
        old = module.__name__
        new = MOVED[old]
        warnings.warn(f"{old} has moved to {new}; the old name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        sys.modules[old] = importlib.import_module(new)


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
