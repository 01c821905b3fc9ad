"""Old import paths of moved ``netweft.emulation`` modules, kept for one release.

``MOVED`` maps an old module name to its new one; a name below an old package
maps to the same name below the new one (``netweft.emulation.p4.ir`` is
``netweft.p4.compiler.ir``). :func:`install` puts a ``sys.meta_path`` finder in
place (``emulation/__init__.py`` calls it) that answers an import of an old
name with the new module, under the old name too (``old.X is new.X``), and a
:class:`DeprecationWarning` naming the new path. ``python -m OLD_NAME`` runs
the new module: ``runpy`` asks the same finder, and the loader hands it the
new module's code. Add a move here as one line; remove the table after the
release that announced the moves.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from importlib.machinery import ModuleSpec
from types import CodeType, ModuleType

MOVED: dict[str, str] = {
    "netweft.emulation.p4": "netweft.p4.compiler",
    "netweft.emulation.switch_process": "netweft.emulation.process.switch_process",
    "netweft.emulation.switch_command": "netweft.emulation.process.netweft_switch",
    "netweft.emulation.switch_control": "netweft.emulation.process.control",
    "netweft.emulation.mininet": "netweft.emulation.network.mininet",
    "netweft.emulation.link_model": "netweft.emulation.links.link_model",
    "netweft.emulation.link_params": "netweft.emulation.links.link_params",
    "netweft.emulation.port_options": "netweft.emulation.links.port_options",
}


def new_name(old: str, moved: dict[str, str] = MOVED) -> str | None:
    """The module ``old`` moved to, or None if it did not move."""
    package = old
    while package:
        if package in moved:
            return moved[package] + old[len(package):]
        package = package.rpartition(".")[0]
    return None


def _warn(old: str, new: str) -> None:
    # stacklevel 3: past this helper and the loader's method to the importing code
    # (the warnings module skips importlib's own frames)
    warnings.warn(f"{old} moved to {new}; import it from there (the old path goes in the "
                  "next release)", DeprecationWarning, stacklevel=3)


class _AliasLoader(importlib.abc.Loader):
    """Gives the new module under the old name."""

    def __init__(self, old: str, new: str) -> None:
        self.old = old
        self.new = new

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        _warn(self.old, self.new)
        module = importlib.import_module(self.new)
        self.new_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The new module ran when it was imported; give it back its own spec, which the
        import system replaced with the old name's."""
        module.__spec__ = self.new_spec

    def get_code(self, fullname: str) -> CodeType | None:
        """The new module's code, which ``python -m OLD_NAME`` runs as ``__main__``."""
        _warn(self.old, self.new)
        spec = importlib.util.find_spec(self.new)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "get_code"):
            raise ImportError(f"{self.old} moved to {self.new}, which has no code to run",
                              name=fullname)
        return loader.get_code(self.new)


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of ``moved`` and loads their new modules."""

    def __init__(self, moved: dict[str, str]) -> None:
        self.moved = moved

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> ModuleSpec | None:
        new = new_name(fullname, self.moved)
        if new is None:
            return None
        moved = importlib.util.find_spec(new)
        if moved is None:
            return None
        # origin: the new file, which ``python -m`` gives the program as __file__ and argv[0]
        return ModuleSpec(fullname, _AliasLoader(fullname, new), origin=moved.origin)


def install(moved: dict[str, str] = MOVED) -> None:
    """Put the finder of ``moved`` first on ``sys.meta_path`` (once): ahead of the path
    finder, which would load a moved package's submodules a second time, as new
    modules under the old name."""
    if not any(isinstance(f, MovedModuleFinder) and f.moved is moved for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder(moved))
