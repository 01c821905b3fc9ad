"""The control modules' old import paths still work for one release, warn, and give the
module at its new path (one module object, not a second copy)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from netweft.testbed.moved_modules import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_name_warns_and_is_the_new_module(old):
    parent = old.rpartition(".")[0]
    code = (f"import importlib, warnings\n"
            f"with warnings.catch_warnings():\n"
            f"    warnings.simplefilter('ignore')\n"
            f"    importlib.import_module({parent!r})\n"
            f"warnings.simplefilter('error', DeprecationWarning)\n"
            f"try:\n    importlib.import_module({old!r})\n"
            f"except DeprecationWarning as w:\n    print(w)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert f"{old} has moved to {MOVED[old]}" in out


def test_classes_are_shared_between_old_and_new_names():
    sys.modules.pop("netweft.testbed.fabric.entries", None)
    with pytest.warns(DeprecationWarning, match="fabric.entries has moved"):
        old = importlib.import_module("netweft.testbed.fabric.entries")
    new = importlib.import_module("netweft.testbed.control.entries")
    assert old is new and old.TableWrite is new.TableWrite
