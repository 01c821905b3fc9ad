"""The package layout, the C engine build and the command line."""

import importlib
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from netweft.nic_offload import csum16


def _py_csum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


@pytest.mark.parametrize("name", ["netweft.p4", "netweft.emulation", "netweft.testbed",
                                  "netweft.transport", "netweft.nic_offload"])
def test_namespace_packages_import(name):
    assert importlib.import_module(name).__name__ == name


def test_csum16_rfc1071_example():
    assert csum16(bytes.fromhex("0001f203f4f5f6f7")) == 0x220D


@given(st.binary(max_size=2000))
def test_csum16_matches_python(data):
    assert csum16(data) == _py_csum16(data)


def test_cli_lists_subcommands():
    out = subprocess.run([sys.executable, "-m", "netweft.testbed.command_line", "--help"],
                         capture_output=True, text=True, check=True).stdout
    assert "doctor" in out and "demo" in out


@pytest.mark.netns
def test_the_namespace_tests_run_on_one_worker(request):
    # scripts/test runs two xdist workers with --dist loadgroup, the namespace tests in
    # one group (conftest.py). Where the grouping does not take (pytest 9.2 with
    # pytest-xdist 3.8: xdist writes the group into `_nodeid`, which pytest 9.2 no
    # longer reads) they run on both workers at once, and one test's `netweft up` or
    # `clean` removes another's namespaces and veths as a killed run's leftovers.
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run with --dist loadgroup")
    assert request.node.nodeid.endswith("@netns"), (
        f"--dist loadgroup did not group the namespace tests (pytest {pytest.__version__}); "
        "install the versions pyproject.toml names (./scripts/setup)")
