"""Deprecated alias of :mod:`netweft.p4.compiler`, kept for one release.

The P4 front end moved to ``p4/compiler/`` (imported as ``netweft.p4.compiler``):
the compiler is not part of the emulated target. ``import netweft.emulation.p4``
and ``import netweft.emulation.p4.<module>`` still work and give the same module
objects as the new names, with a DeprecationWarning.
"""

import importlib
import pkgutil
import sys
import warnings

import netweft.p4.compiler as _compiler

warnings.warn("netweft.emulation.p4 is deprecated; import netweft.p4.compiler instead",
              DeprecationWarning, stacklevel=2)

for _info in pkgutil.iter_modules(_compiler.__path__):
    sys.modules[f"{__name__}.{_info.name}"] = importlib.import_module(
        f"netweft.p4.compiler.{_info.name}")

sys.modules[__name__] = _compiler
