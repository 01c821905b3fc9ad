"""The host tools netweft and its tests run, and the Debian package that provides each.

One table, read by ``netweft doctor`` (which reports each tool) and by the test
suite (a test that needs a missing tool fails with the package to install, so a
machine set up by hand cannot pass by skipping). ``scripts/setup`` installs every
package named here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class HostTool:
    """A command on PATH, the Debian package that installs it, and what it is for."""

    command: str
    package: str
    enables: str
    version_args: tuple[str, ...] = ("--version",)


HOST_TOOLS: dict[str, HostTool] = {t.command: t for t in (
    HostTool("ip", "iproute2", "namespaces, veth, links", ("-V",)),
    HostTool("tc", "iproute2", "rate limits on links (tbf)", ("-V",)),
    HostTool("ethtool", "ethtool", "checksum and segmentation offloads off on links"),
    HostTool("tcpdump", "tcpdump", "packet captures"),
    HostTool("tshark", "tshark", "decoding captures with netweft's Lua dissector"),
    HostTool("ping", "iputils-ping", "the README's network example", ("-V",)),
    HostTool("iperf3", "iperf3", "kernel TCP/UDP baselines by hand between hosts"),
    HostTool("gcc", "gcc", "the C engine's build and its C unit checks"),
    HostTool("make", "make", "building the fuzz harnesses (make -C nic_offload/fuzz)"),
    HostTool("clang", "clang", "libFuzzer harnesses of the wire codec and the engine"),
    HostTool("mnexec", "mininet", "Mininet networks with netweft switches", ("-h",)),
)}

# Static runtimes that ``clang -fsanitize=fuzzer,address,undefined`` links.
CLANG_RUNTIMES = ("libclang_rt.fuzzer-x86_64.a", "libclang_rt.asan-x86_64.a",
                  "libclang_rt.ubsan_standalone-x86_64.a")


class MissingToolError(RuntimeError):
    """A host tool is missing; the message names the Debian package that provides it."""


def require(command: str) -> str:
    """The path of ``command``, or :class:`MissingToolError` naming its package."""
    path = shutil.which(command)
    if path is None:
        tool = HOST_TOOLS[command]
        raise MissingToolError(f"{command} is not installed: apt-get install {tool.package} "
                               f"(./scripts/setup installs it); needed for {tool.enables}")
    return path


def clang_runtime_package(clang: str) -> str:
    """The Debian package of this clang's fuzzer and sanitizer runtimes (libclang-rt-N-dev)."""
    out = subprocess.run([clang, "--version"], capture_output=True, text=True,
                         check=False).stdout
    match = re.search(r"clang version (\d+)", out)
    return f"libclang-rt-{match.group(1)}-dev" if match else "libclang-rt-<version>-dev"


def missing_clang_runtimes(clang: str) -> list[str]:
    """Which of :data:`CLANG_RUNTIMES` this clang cannot find (it prints a bare name then)."""
    missing = []
    for name in CLANG_RUNTIMES:
        found = subprocess.run([clang, f"-print-file-name={name}"], capture_output=True,
                               text=True, check=False).stdout.strip()
        if found == name:
            missing.append(name)
    return missing


def require_clang_fuzzer() -> str:
    """The path of clang, checked to link libFuzzer, ASan and UBSan programs."""
    clang = require("clang")
    missing = missing_clang_runtimes(clang)
    if missing:
        raise MissingToolError(
            f"clang cannot link fuzzers: {', '.join(missing)} missing: apt-get install "
            f"{clang_runtime_package(clang)} (./scripts/setup installs it)")
    return clang
