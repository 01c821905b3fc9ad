"""The testbed's layout: the old module names still import (one release, with a
DeprecationWarning, as the very module of the new name), the entry points name the
new modules, and every command's and bench's --help works."""

import importlib
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from netweft.testbed.command_line import main
from netweft.testbed.moved_modules import MOVED, MOVED_NAMES


@pytest.mark.parametrize("old,new", sorted(MOVED.items()))
def test_an_old_name_imports_warns_and_is_the_new_module(old, new):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}") as record:
        __import__(old)
    module = sys.modules[old]
    assert module is importlib.import_module(new)
    assert module.__name__ == new and module.__spec__.name == new
    assert record[0].filename == __file__  # the warning names the importing line


def test_an_unknown_old_looking_name_still_fails():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("netweft.testbed.no_such_module")


def test_python_dash_m_with_an_old_name_runs_the_new_module():
    out = subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-m",
                          "netweft.testbed.cli", "--version"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.startswith("netweft ")
    assert "netweft.testbed.cli moved to netweft.testbed.command_line" in out.stderr


def _entry_points(group):
    return sorted(entry_points(group=group), key=lambda ep: ep.name)


@pytest.mark.parametrize("group", ["netweft.commands", "netweft.benches", "console_scripts"])
def test_entry_points_name_the_new_modules(group):
    ours = [ep for ep in entry_points(group=group) if ep.value.startswith("netweft.testbed.")]
    assert ours, f"no testbed entry points in {group}: reinstall (pip install -e .)"
    for ep in ours:
        assert ep.module not in MOVED, f"{ep.name} names the old module {ep.module}"
        importlib.import_module(ep.module)


def _help(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: netweft")  # netweft-switch's own parser says netweft-switch
    return out


def test_netweft_help_lists_every_command(capsys):
    out = _help([], capsys)
    for ep in _entry_points("netweft.commands"):
        assert f"    {ep.name} " in out or f"    {ep.name}\n" in out


@pytest.mark.parametrize("command", [ep.name for ep in _entry_points("netweft.commands")])
def test_every_command_has_help(command, capsys):
    _help([command], capsys)


@pytest.mark.parametrize("bench", [ep.name for ep in _entry_points("netweft.benches")])
def test_every_bench_has_help(bench, capsys):
    _help(["bench", bench], capsys)


@pytest.mark.parametrize("name,new", sorted(MOVED_NAMES["netweft.testbed.perf"].items()))
def test_the_old_perf_module_names_resolve_in_the_perf_package(name, new):
    # netweft.testbed.perf was a module and is now a package: the package gives the
    # old module's names (from the module now holding each), with a warning
    import netweft.testbed.perf as perf

    with pytest.warns(DeprecationWarning, match=f"netweft.testbed.perf.{name} moved to {new}"):
        value = getattr(perf, name)
    assert value is getattr(importlib.import_module(new), name)


def test_the_new_modules_import_without_deprecation_warnings():
    # every module of the tree imports the others by their new names
    script = ("import importlib, pkgutil, warnings\n"
              "warnings.filterwarnings('error', category=DeprecationWarning, module='netweft')\n"
              "import netweft.testbed as t\n"
              "for m in pkgutil.walk_packages(t.__path__, 'netweft.testbed.'):\n"
              "    importlib.import_module(m.name)\n")
    subprocess.run([sys.executable, "-c", script], check=True)
