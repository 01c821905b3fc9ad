"""``netweft doctor`` against the machine it runs on."""

import functools
import json
import os
import shutil
import subprocess
import sys
from importlib import metadata

import pytest

from netweft.testbed.commands import doctor
from netweft.testbed.host_tools import HOST_TOOLS, missing_clang_runtimes


@functools.cache
def _rows():
    out = subprocess.run([sys.executable, "-m", "netweft.testbed.command_line", "doctor", "--json"],
                         capture_output=True, text=True, check=True).stdout
    return {r["item"]: r for r in json.loads(out)}


def test_versions_match_installed_packages():
    rows = _rows()
    assert rows["python"]["detail"] == ".".join(map(str, sys.version_info[:3]))
    for name in doctor.PACKAGES:
        row = rows[f"pkg {name}"]
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = None
        assert row["ok"] == (version is not None), name
        if version is not None:
            assert row["detail"] == version


@pytest.mark.parametrize("tool", [*HOST_TOOLS, "simple_switch_grpc", "p4c"])
def test_tools_match_path(tool):
    row = _rows()[tool]
    assert row["ok"] == bool(shutil.which(tool))


def test_every_tool_the_tests_use_is_checked():
    """The doctor reports every host tool (clang's runtimes too) the test suite runs."""
    rows = _rows()
    assert set(HOST_TOOLS) <= set(rows)
    assert rows["clang runtimes"]["ok"] == (not missing_clang_runtimes(shutil.which("clang")))


def test_root_row():
    assert _rows()["root"]["ok"] == (os.geteuid() == 0)


@pytest.mark.netns
def test_qdisc_row_matches_kernel(tmp_path):
    """Each qdisc the doctor reports present can be attached; each absent one cannot."""
    row = _rows()["qdiscs"]
    have_text, lack_text = row["detail"].split("; ")
    have = set(have_text.removeprefix("have ").split(", ")) - {"none"}
    lack = set(lack_text.removeprefix("lack ").split(", ")) - {"none"}
    assert have | lack == set(doctor.QDISCS)
    ns = "nwtest-qd"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "add", "name", "nwa", "type", "veth", "peer", "name", "nwb"],
                       check=True)
        for q in sorted(have | lack):
            if q in ("clsact", "red", "tbf"):
                continue  # need arguments; covered by the doctor's own attach
            res = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "nwa",
                                  "root", q], capture_output=True)
            subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", "nwa", "root"],
                           capture_output=True)
            assert (res.returncode == 0) == (q in have), q
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


@pytest.mark.netns
def test_namespace_rows_and_no_leftovers():
    before = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    rows = _rows()
    assert rows["network namespaces"]["ok"] and rows["veth pairs"]["ok"]
    after = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "nwdoc-" not in after and before.count("\n") == after.count("\n")
