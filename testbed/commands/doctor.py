"""``netweft doctor``: a truthful table of what this machine offers netweft.

Every row is measured, not assumed: namespaces and veth pairs are created and
removed, each qdisc is attached to a scratch veth, tools are looked up on PATH
and asked for their version.
"""

from __future__ import annotations

import argparse
import ctypes.util
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

from netweft.testbed.host_tools import (
    CLANG_RUNTIMES,
    HOST_TOOLS,
    clang_runtime_package,
    missing_clang_runtimes,
)

QDISCS = ("pfifo", "tbf", "htb", "mq", "clsact", "netem", "red", "fq", "fq_codel",
          "codel", "pie", "sfq", "prio")
PACKAGES = ("netweft", "cffi", "numpy", "scapy", "pyroute2", "pytest", "hypothesis",
            "grpcio", "protobuf", "p4runtime", "p4runtime-shell", "matplotlib")


@dataclass
class Check:
    """One row of the doctor's table."""

    item: str
    ok: bool
    detail: str
    enables: str


def _run(cmd: list[str], timeout: float = 10.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def check_python() -> list[Check]:
    rows = [Check("python", sys.version_info >= (3, 10), platform.python_version(),
                  "netweft itself (needs 3.10+)")]
    for name in PACKAGES:
        try:
            version = metadata.version(name)
            rows.append(Check(f"pkg {name}", True, version, _PACKAGE_USE.get(name, "")))
        except metadata.PackageNotFoundError:
            rows.append(Check(f"pkg {name}", False, "not installed", _PACKAGE_USE.get(name, "")))
    return rows


_PACKAGE_USE = {
    "netweft": "the netweft distribution",
    "cffi": "the C engine (nic_offload)",
    "numpy": "memory regions",
    "scapy": "packet crafting, netweft header layers",
    "pyroute2": "namespaces, veth, links",
    "pytest": "the test suite",
    "hypothesis": "property and fuzz tests",
    "grpcio": "the P4Runtime server and its clients",
    "protobuf": "P4Runtime messages",
    "p4runtime": "P4Runtime protobufs",
    "p4runtime-shell": "P4Runtime client scripts",
    "matplotlib": "experiment plots",
}


def check_engine() -> list[Check]:
    try:
        from netweft.nic_offload import csum16

        ok = csum16(b"\x00\x01\xf2\x03\xf4\xf5\xf6\xf7") == 0x220D
        detail = "compiled, self-test passed" if ok else "compiled, self-test FAILED"
    except Exception as exc:  # noqa: BLE001 - the doctor reports any failure
        ok, detail = False, f"not importable: {exc}"
    rows = [Check("C engine", ok, detail, "the transport's per-packet work")]
    isal = ctypes.util.find_library("isal")
    header = os.path.exists("/usr/include/isa-l.h")
    rows.append(Check("ISA-L", bool(isal) and header,
                      f"library {isal or 'missing'}, header {'present' if header else 'missing'}",
                      "Reed-Solomon erasure coding in the C engine"))
    return rows


def check_root() -> Check:
    euid = os.geteuid()
    return Check("root", euid == 0, f"euid {euid}", "namespaces, veth, raw sockets")


def _scratch_ns() -> str:
    return f"nwdoc-{uuid.uuid4().hex[:8]}"


def check_network() -> list[Check]:
    """Create a namespace with a veth pair and try each qdisc on it."""
    ip, tc = shutil.which("ip"), shutil.which("tc")
    if not ip:
        return [Check("iproute2", False, "ip not on PATH", "namespaces, veth, links")]
    ns = _scratch_ns()
    rows: list[Check] = []
    try:
        res = _run([ip, "netns", "add", ns])
        rows.append(Check("network namespaces", res.returncode == 0,
                          "created and removed one" if res.returncode == 0 else _first_line(res.stderr),
                          "emulated hosts and switches"))
        if res.returncode != 0:
            return rows
        res = _run([ip, "-n", ns, "link", "add", "nwd0", "type", "veth", "peer", "name", "nwd1"])
        veth_ok = res.returncode == 0
        rows.append(Check("veth pairs", veth_ok,
                          "created one in a scratch namespace" if veth_ok else _first_line(res.stderr),
                          "links between hosts and switches"))
        if veth_ok:
            _run([ip, "-n", ns, "link", "set", "nwd0", "up"])
            rows.append(_check_af_packet())
            if tc:
                rows.append(_check_qdiscs(ip, ns))
            else:
                rows.append(Check("qdiscs", False, "tc not on PATH", "rate limits on links"))
    finally:
        _run([ip, "netns", "del", ns])
    return rows


def _check_af_packet() -> Check:
    try:
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        sock.close()
        return Check("AF_PACKET sockets", True, "raw socket opened",
                     "switch processes on veth ports, captures")
    except OSError as exc:
        return Check("AF_PACKET sockets", False, str(exc), "switch processes on veth ports")


_QDISC_ARGS = {
    "tbf": ["rate", "1mbit", "burst", "32kbit", "latency", "50ms"],
    "red": ["limit", "400000", "avpkt", "1000", "bandwidth", "10mbit", "probability", "0.1",
            "min", "30000", "max", "90000"],
    "pfifo": ["limit", "100"],
}


def _check_qdiscs(ip: str, ns: str) -> Check:
    present, absent = [], []
    for qdisc in QDISCS:
        where = [] if qdisc == "clsact" else ["root"]
        res = _run([ip, "netns", "exec", ns, "tc", "qdisc", "add", "dev", "nwd0", *where,
                    qdisc, *_QDISC_ARGS.get(qdisc, [])])
        (present if res.returncode == 0 else absent).append(qdisc)
        _run([ip, "netns", "exec", ns, "tc", "qdisc", "del", "dev", "nwd0", *(where or [qdisc])])
    detail = f"have {', '.join(present) or 'none'}; lack {', '.join(absent) or 'none'}"
    enables = "link rate via tbf/htb; without netem, links add no delay or loss"
    return Check("qdiscs", bool(present), detail, enables)


def _tool(name: str, version_args: list[str], enables: str) -> Check:
    path = shutil.which(name)
    if not path:
        return Check(name, False, "not on PATH", enables)
    try:
        res = _run([path, *version_args])
        version = _first_line(res.stdout) or _first_line(res.stderr)
    except (OSError, subprocess.TimeoutExpired) as exc:
        version = f"present, version unknown ({exc})"
    return Check(name, True, f"{path}: {version}", enables)


def check_tools() -> list[Check]:
    """Every host tool netweft and its tests run (with the package that provides it),
    clang's fuzzer and sanitizer runtimes, and the optional BMv2 and p4c."""
    rows = []
    for tool in HOST_TOOLS.values():
        row = _tool(tool.command, list(tool.version_args), tool.enables)
        if not row.ok:
            row.detail = f"not on PATH (apt-get install {tool.package})"
        rows.append(row)
    rows.append(check_clang_runtimes())
    rows += [
        _tool("simple_switch_grpc", ["--version"], "BMv2 (optional; not used by netweft yet)"),
        _tool("p4c", ["--version"], "compiling P4 for BMv2 (optional; netweft has its own front end)"),
    ]
    return rows


def check_clang_runtimes() -> Check:
    """clang's libFuzzer, ASan and UBSan runtimes, which the fuzz tests link."""
    enables = "the fuzz tests (libFuzzer + ASan + UBSan)"
    clang = shutil.which("clang")
    if clang is None:
        return Check("clang runtimes", False, "clang not on PATH (apt-get install clang)", enables)
    missing = missing_clang_runtimes(clang)
    if missing:
        return Check("clang runtimes", False, f"missing {', '.join(missing)} (apt-get install "
                     f"{clang_runtime_package(clang)})", enables)
    return Check("clang runtimes", True, ", ".join(CLANG_RUNTIMES), enables)


def _writable(folder: Path) -> str | None:
    """None if files can be made in ``folder`` (made if missing), else why not."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-"):
            pass
    except OSError as exc:
        return f"{folder}: {exc.strerror or exc}"
    return None


def check_switch_backend() -> Check:
    """The switch back end ``auto`` would choose: C (the native pipeline and the C
    packet loop) needs the C compiler and writable build caches, and the packet loop
    must build."""
    from netweft.emulation.native import build, dataplane_build
    from netweft.emulation.native.selection import backend_choice

    enables = "switches at native speed (--backend auto|c|python)"
    try:
        chosen = backend_choice(None)
    except ValueError as exc:
        return Check("switch back end", False, str(exc), enables)
    source = ("$NETWEFT_SWITCH_BACKEND" if os.environ.get("NETWEFT_SWITCH_BACKEND")
              else "the default")
    cc = build.compiler()
    why = None if cc else "no C compiler (apt-get install gcc)"
    for folder in (build.cache_dir(), dataplane_build.cache_dir()):
        why = why or _writable(folder)
    if why is None:
        try:
            dataplane_build.load()
        except Exception as exc:  # noqa: BLE001 - the doctor reports any failure
            why = f"the packet loop does not build: {str(exc).splitlines()[0]}"
    auto = "python" if why else "c"
    detail = (f"auto runs {'C' if auto == 'c' else 'Python'}"
              + (f" ({why})" if why else f" (compiler {cc}, caches writable)")
              + f"; switches ask for {chosen} ({source})")
    return Check("switch back end", auto == "c", detail, enables)


def run_checks() -> list[Check]:
    """All checks, in table order."""
    rows = check_python() + check_engine() + [check_switch_backend(), check_root()]
    if os.geteuid() == 0:
        rows += check_network()
    else:
        rows.append(Check("network namespaces", False, "not root, not tried",
                          "emulated hosts and switches"))
    return rows + check_tools()


def format_table(rows: list[Check]) -> str:
    """The checks as an aligned text table."""
    header = ("item", "ok", "detail", "enables")
    cells = [header] + [(r.item, "yes" if r.ok else "no", r.detail, r.enables) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(3)]
    lines = []
    for i, c in enumerate(cells):
        lines.append("  ".join(c[j].ljust(widths[j]) for j in range(3)) + "  " + c[3])
        if i == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * len(header[3]))
    return "\n".join(lines)


def _main(args: argparse.Namespace) -> int:
    rows = run_checks()
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
    else:
        print(format_table(rows))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``netweft doctor``."""
    p = sub.add_parser("doctor", help="report what this machine offers netweft")
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.set_defaults(func=_main)
