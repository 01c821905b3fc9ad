"""Old import paths of moved modules still work for one release: each package's alias
table (``<package>/moved_modules.py``) answers an old name with the new module and a
DeprecationWarning that names the new path."""

from __future__ import annotations

import importlib
import sys

import pytest

TABLES = ("netweft.emulation.moved_modules", "netweft.transport.moved_modules")


def _moves() -> list[tuple[str, str]]:
    return [(old, new) for table in TABLES
            for old, new in importlib.import_module(table).MOVED.items()]


@pytest.mark.parametrize("old, new", _moves())
def test_an_old_path_gives_the_new_module_with_a_warning(old, new):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        moved = importlib.import_module(old)
    module = importlib.import_module(new)
    assert moved is module
    assert module.__spec__.name == new   # the alias did not take over the module's identity


def test_a_name_never_moved_is_still_not_found():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("netweft.transport.no_such_module")
