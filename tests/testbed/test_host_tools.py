"""The host-tool table: a missing tool is an error naming its Debian package, and
scripts/setup installs every package the table names."""

import re
import stat
from pathlib import Path

import pytest

from netweft.testbed.host_tools import (
    CLANG_RUNTIMES,
    HOST_TOOLS,
    MissingToolError,
    clang_runtime_package,
    require,
    require_clang_fuzzer,
)

ROOT = Path(__file__).resolve().parents[2]


def _apt_packages() -> set[str]:
    text = (ROOT / "scripts" / "setup").read_text()
    body = re.search(r"APT_PACKAGES=\((.*?)\)", text, re.S).group(1)
    return set(re.sub(r"#.*", "", body).split())


def test_setup_installs_every_tool_package_and_the_clang_runtimes():
    packages = _apt_packages()
    assert {t.package for t in HOST_TOOLS.values()} <= packages
    clang = require("clang")
    assert clang_runtime_package(clang) in packages


@pytest.mark.parametrize("command", ["tshark", "ping", "clang"])
def test_a_missing_tool_names_its_package(command, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MissingToolError, match=f"apt-get install {HOST_TOOLS[command].package} "):
        require(command)


def test_clang_without_its_runtimes_names_the_runtime_package(monkeypatch, tmp_path):
    # A clang that finds no runtime prints the bare name for -print-file-name, as
    # clang does on a machine where libclang-rt-N-dev is not installed.
    fake = tmp_path / "clang"
    fake.write_text('#!/bin/sh\ncase "$1" in\n  --version) echo "Debian clang version 14.0.6";;\n'
                    '  -print-file-name=*) echo "${1#-print-file-name=}";;\nesac\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    with pytest.raises(MissingToolError) as err:
        require_clang_fuzzer()
    assert "apt-get install libclang-rt-14-dev" in str(err.value)
    assert all(name in str(err.value) for name in CLANG_RUNTIMES)


def test_this_machine_links_fuzzers():
    """./scripts/setup installed clang and its runtimes (the fuzz tests depend on it)."""
    assert Path(require_clang_fuzzer()).name.startswith("clang")
