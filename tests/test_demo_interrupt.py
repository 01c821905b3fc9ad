"""``netweft demo`` stopped from outside: Ctrl-C cleans up quietly; after ``kill -9``,
``netweft clean`` removes the namespaces and the owner file."""

import os
import re
import signal
import subprocess
import sys

import pytest
from pyroute2 import netns

from netweft.emulation.network import OWNER_DIR, remove_namespace
from netweft.testbed.commands.clean import clean

pytestmark = [pytest.mark.netns, pytest.mark.slow]


@pytest.fixture
def demo(tmp_path):
    """Start ``netweft demo`` in its own process group; yields (process, network prefix)
    once its hosts exchange datagrams; removes whatever is left however the test ends."""
    # A test run started in the background by a non-interactive shell ignores SIGINT,
    # and the demo would inherit that: a handled signal is reset to its default at exec.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "netweft.testbed.command_line", "demo", "--count", "100000",
             "--out", str(tmp_path / "out")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    prefix, lines = None, []
    try:
        for line in proc.stderr:
            lines.append(line)
            match = re.search(r"namespaces (nw[0-9a-f]{5})-\*", line)
            prefix = prefix or (match and match.group(1))
            if line.startswith("[3/5]"):
                break
        assert prefix and lines[-1].startswith("[3/5]"), "".join(lines)
        proc.lines = lines
        yield proc, prefix
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for name in netns.listnetns():
            if prefix and name.startswith(f"{prefix}-"):
                remove_namespace(name)
        if prefix:
            (OWNER_DIR / prefix).unlink(missing_ok=True)


def _stuck_report(proc) -> str:
    """What a demo that does not end is doing: its processes (``ps``), the Python
    stacks its main process prints on SIGUSR1, and its stderr so far."""
    tree = subprocess.run(["ps", "-e", "-o", "pid,ppid,pgid,sid,stat,args", "--forest"],
                          capture_output=True, text=True, check=False).stdout
    ours = "\n".join(line for line in tree.splitlines() if "netweft" in line or "setpriv" in line)
    if proc.poll() is None:
        proc.send_signal(signal.SIGUSR1)
    try:
        _, err = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired as timeout:   # a child that holds the pipe lives on
        err = (timeout.stderr or b"").decode(errors="replace") if isinstance(
            timeout.stderr, bytes) else (timeout.stderr or "")
    return f"processes:\n{ours}\nstderr:\n{''.join(proc.lines)}{err}"


def _namespaces(prefix):
    return [name for name in netns.listnetns() if name.startswith(f"{prefix}-")]


def test_ctrl_c_stops_the_demo_without_tracebacks_and_cleans_up(demo):
    proc, prefix = demo
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends on Ctrl-C
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the demo did not end within 120 s of Ctrl-C\n" + _stuck_report(proc))
    assert proc.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.strip().splitlines()[-1] == "netweft demo: interrupted"
    assert _namespaces(prefix) == []
    assert not (OWNER_DIR / prefix).exists()


def test_clean_after_kill_9_removes_namespaces_and_the_owner_file(demo):
    proc, prefix = demo
    proc.kill()  # the demo itself, as kill -9 would; its children keep running
    proc.wait()
    assert _namespaces(prefix) and (OWNER_DIR / prefix).exists()
    removed = []
    assert clean(prefixes=(prefix,), log=removed.append) == len(removed)
    assert _namespaces(prefix) == []
    assert not (OWNER_DIR / prefix).exists()
    assert f"removed owner file {OWNER_DIR / prefix}" in removed
    # A second run has nothing left to do.
    assert clean(prefixes=(prefix,), log=removed.append) == 0
