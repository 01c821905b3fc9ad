"""The transport's old module paths (before issue 21's folders) still import, for
one release: each warns with a DeprecationWarning and gives the moved module
itself. Each old path is imported in a fresh interpreter, so that the test sees
the import itself and not a module already in ``sys.modules``."""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys

import pytest

from netweft.transport.moved_modules import MOVED

CHECK = """
import importlib, json, sys, warnings
old, new = sys.argv[1], sys.argv[2]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    exec(f"import {old} as module")
moved = importlib.import_module(new)
print(json.dumps({
    "same": module is moved and sys.modules[old] is moved,
    "spec": moved.__spec__.name,
    "warnings": [[w.category.__name__, str(w.message), w.filename] for w in caught],
}))
"""


@pytest.mark.parametrize("old,new", sorted(MOVED.items()), ids=sorted(MOVED))
def test_old_path_warns_and_gives_the_moved_module(old, new):
    run = subprocess.run([sys.executable, "-c", CHECK, old, new],
                         capture_output=True, text=True, check=True)
    result = json.loads(run.stdout)
    assert result["same"]
    assert result["spec"] == new  # the moved module keeps its own spec
    deprecations = [w for w in result["warnings"] if w[0] == "DeprecationWarning"]
    assert len(deprecations) == 1
    category, message, filename = deprecations[0]
    assert old in message and new in message
    assert filename == "<string>"  # the warning points at the line that imported the old name


@pytest.mark.parametrize("new", sorted(set(MOVED.values())))
def test_every_new_path_exists(new):
    assert importlib.util.find_spec(new) is not None


def test_other_missing_names_still_fail():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("netweft.transport.no_such_module")


def test_collectives_still_gives_allreduce_and_broadcast():
    # netweft.transport.collectives was one module; it is now the folder of the
    # collectives, whose __init__ still gives its two functions.
    from netweft.transport.collectives import allreduce, broadcast, operations

    assert (allreduce, broadcast) == (operations.allreduce, operations.broadcast)
    with pytest.raises(ImportError):
        exec("from netweft.transport.collectives import no_such_name")
