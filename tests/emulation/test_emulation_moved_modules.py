"""Old import paths of moved emulation modules: the same module objects, with a warning."""

import importlib
import subprocess
import sys

import pytest

from netweft.emulation.moved_modules import MOVED, new_name


def _import_fresh(name: str):
    """Import ``name`` as if for the first time (the test session may have imported it)."""
    sys.modules.pop(name, None)
    return importlib.import_module(name)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_gives_the_new_module_and_warns(old):
    new = importlib.import_module(MOVED[old])
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {MOVED[old]}; import it from"):
        module = _import_fresh(old)
    assert module is new
    assert module.__spec__.name == MOVED[old]   # the new module keeps its own spec


def test_names_imported_from_an_old_path_are_the_new_objects():
    from netweft.emulation.process.switch_process import start_switch_process

    sys.modules.pop("netweft.emulation.switch_process", None)
    with pytest.warns(DeprecationWarning):
        from netweft.emulation.switch_process import start_switch_process as old
    assert old is start_switch_process


def test_a_module_below_a_moved_package_is_the_one_below_the_new_package():
    import netweft.p4.compiler.ir as ir

    assert new_name("netweft.emulation.p4.ir") == "netweft.p4.compiler.ir"
    with pytest.warns(DeprecationWarning):
        assert _import_fresh("netweft.emulation.p4.ir") is ir
    assert new_name("netweft.emulation.switch") is None
    assert new_name("netweft.emulation.p4runtime") is None


def test_an_unknown_module_still_fails_to_import():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("netweft.emulation.no_such_module")


@pytest.mark.parametrize(("old", "usage"), [
    ("netweft.emulation.switch_process", "usage:"),
    ("netweft.emulation.switch_control", "usage: python -m netweft.emulation.process.control"),
])
def test_python_dash_m_runs_a_moved_module_under_its_old_name(old, usage):
    args = ["--help"] if old.endswith("switch_process") else []
    proc = subprocess.run([sys.executable, "-W", "default::DeprecationWarning", "-m", old, *args],
                          capture_output=True, text=True, timeout=60)
    assert usage in proc.stdout + proc.stderr
    assert f"{old} moved to {MOVED[old]}; import it from there" in proc.stderr
    assert "--program" in proc.stdout or old.endswith("control")
