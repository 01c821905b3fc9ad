"""A detached ``netweft up`` killed with SIGKILL: its processes die with it, and the next
``netweft up`` removes the namespaces and veths it left."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from pyroute2 import netns
from test_up import NETWEFT, _leftovers, pair_topology  # noqa: F401 - a fixture

from netweft.emulation.network import OWNER_DIR
from netweft.emulation.process_lifetime import is_running, stamp_alive
from netweft.testbed import up_registry
from netweft.testbed.topology import load_topology

pytestmark = pytest.mark.netns


def _processes_of(run_dir: Path) -> list[int]:
    """Running (not zombie) processes whose command line names the run folder."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if str(run_dir).encode() in cmdline and int(pid) != os.getpid() and is_running(int(pid)):
            found.append(int(pid))
    return found


def _state(pid: int) -> str:
    """A process's state line and kernel wait channel, for a failure message."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        wchan = Path(f"/proc/{pid}/wchan").read_text()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError as exc:
        return f"pid {pid}: {exc}"
    return f"pid {pid} state {stat} wchan {wchan!r} cmd {cmd!r}"


def _owner_state(prefix: str) -> str:
    """What `netweft clean` judges a network by: its namespaces and its owner file's PID."""
    spaces = [n for n in netns.listnetns() if n.startswith(prefix + "-")]
    try:
        stamp = (OWNER_DIR / prefix).read_text()
        owner = int(stamp.split()[0])
    except (OSError, ValueError, IndexError) as exc:
        return f"namespaces {spaces}, owner file: {exc}"
    return (f"namespaces {spaces}, owner file {stamp.strip()!r}: {_state(owner)} "
            f"(its owner running: {stamp_alive(stamp)})")


def test_a_killed_testbed_takes_its_processes_along_and_the_next_up_removes_the_rest(
        pair_topology, tmp_path):  # noqa: F811 - the fixture
    run_dir = tmp_path / "run"
    name = load_topology(pair_topology).name
    up = [*NETWEFT, "up", str(pair_topology), "--detach", "--out", str(run_dir), "--no-pcap"]
    record = None
    try:
        done = subprocess.run(up, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        record = up_registry.find(name)
        switch = [pid for pid in _processes_of(run_dir) if pid != record.pid]
        assert switch, "the switch process names its log in the run folder"
        os.kill(record.pid, signal.SIGKILL)
        # the kernel sends each child SIGTERM when its parent dies; no `netweft clean` yet
        deadline = time.monotonic() + 30
        while (_processes_of(run_dir) or is_running(record.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)   # the killed owner too: a process still exiting counts as live
        assert _processes_of(run_dir) == []
        assert not is_running(record.pid), f"the killed owner still runs: {_state(record.pid)}"
        assert [n for n in netns.listnetns() if n.startswith(record.prefix + "-")]
        # the next netweft up (here: one running an empty script, so it stops at once)
        # removes what the killed run left and says so in one line
        empty = tmp_path / "empty.txt"
        empty.write_text("")
        before = _owner_state(record.prefix)
        again = subprocess.run([*NETWEFT, "up", str(pair_topology), "--out",
                                str(tmp_path / "again"), "--no-pcap", "--run", str(empty)],
                               capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        said = [line for line in again.stderr.splitlines() if "killed runs left" in line]
        assert len(said) == 1 and f"{record.prefix}-*" in said[0], (
            f"{again.stderr}\nbefore it: {before}\nafter it: {_owner_state(record.prefix)}")
        assert _leftovers(record.prefix, run_dir) == []
        assert all(r.name != name for r in up_registry.records())
    finally:
        record = record or next((r for r in up_registry.records() if r.name == name), None)
        if record is not None and record.alive:
            os.kill(record.pid, signal.SIGKILL)
        if record is not None:
            for node in record.nodes.values():
                if node["netns"] in netns.listnetns():
                    subprocess.run(["ip", "netns", "del", node["netns"]], check=False)
            up_registry.remove(name)
