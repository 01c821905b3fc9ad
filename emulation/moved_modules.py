"""Old import paths of modules that moved inside ``netweft.emulation``, kept for one release.

:data:`MOVED` maps an old module name to its new one; a name below an old
package maps to the same name below the new one (``netweft.emulation.p4.ir``
is ``netweft.p4.compiler.ir``).  :class:`MovedModuleFinder`, installed on
``sys.meta_path`` by ``netweft.emulation``'s ``__init__``, answers an import
of an old name with the new module object itself (``old.X is new.X``) and a
DeprecationWarning naming the new path.  ``python -m OLD_NAME`` works too:
``runpy`` asks the same finder and runs the new module's code as ``__main__``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import CodeType, ModuleType

MOVED: dict[str, str] = {
    "netweft.emulation.p4": "netweft.p4.compiler",
    "netweft.emulation.switch_process": "netweft.emulation.process.switch_process",
    "netweft.emulation.switch_command": "netweft.emulation.process.netweft_switch",
    "netweft.emulation.switch_control": "netweft.emulation.process.control",
    "netweft.emulation.mininet": "netweft.emulation.network.mininet",
}


def new_name(old: str) -> str | None:
    """The module ``old`` moved to, or None if it did not move."""
    package = old
    while package:
        if package in MOVED:
            return MOVED[package] + old[len(package):]
        package = package.rpartition(".")[0]
    return None


def _warn(old: str, new: str) -> None:
    # stacklevel 3: past this helper and the loader method to the importing code
    # (the warnings module skips importlib's own frames)
    warnings.warn(f"{old} is deprecated; it moved to {new}", DeprecationWarning, stacklevel=3)


class _MovedModuleLoader(importlib.abc.Loader):
    """Gives the new module under the old name."""

    def __init__(self, old: str, new: str) -> None:
        self.old = old
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        _warn(self.old, self.new)
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the new module is already imported."""

    def get_code(self, fullname: str) -> CodeType | None:
        """The new module's code, which ``python -m OLD_NAME`` runs as ``__main__``."""
        _warn(self.old, self.new)
        spec = importlib.util.find_spec(self.new)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "get_code"):
            raise ImportError(f"{self.old} moved to {self.new}, which has no code to run",
                              name=fullname)
        return spec.loader.get_code(self.new)


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of :data:`MOVED` under their old names."""

    def find_spec(self, fullname: str, path: object = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        moved = importlib.util.find_spec(new)
        if moved is None:
            return None
        # origin: the new file, which ``python -m`` gives the program as __file__ and argv[0]
        return importlib.machinery.ModuleSpec(fullname, _MovedModuleLoader(fullname, new),
                                              origin=moved.origin)


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once): ahead of the path finder, which
    would otherwise load a moved package's submodules a second time under the old name."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
