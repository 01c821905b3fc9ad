"""Old import paths of moved ``netweft.transport`` modules, kept for one release.

``MOVED`` maps an old module name to its new one. :func:`install` puts a
``sys.meta_path`` finder in place (``transport/__init__.py`` calls it) that
answers an import of an old name with the new module, under the old name too,
and a :class:`DeprecationWarning` naming the new path. Add a move here as one
line; remove the table after the release that announced the moves.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from importlib.machinery import ModuleSpec
from types import ModuleType

MOVED: dict[str, str] = {
    "netweft.transport.impairments": "netweft.transport.sim.wire",
    "netweft.transport.switch_port": "netweft.transport.sim.port",
    "netweft.transport.fabric": "netweft.transport.sim.network",
}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} moved to {self.new}; import it from there (the old "
                      "path goes in the next release)", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.new)
        self.new_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The new module ran when it was imported; give it back its own spec, which the
        import system replaced with the old name's."""
        module.__spec__ = self.new_spec


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of ``moved`` and loads their new modules."""

    def __init__(self, moved: dict[str, str]) -> None:
        self.moved = moved

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> ModuleSpec | None:
        new = self.moved.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(new))


def install(moved: dict[str, str] = MOVED) -> None:
    """Put the finder of ``moved`` on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, MovedModuleFinder) and f.moved is moved for f in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder(moved))
