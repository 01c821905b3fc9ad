"""Child processes that end when the process that started them dies, for any reason.

A testbed's switch processes, host programs, captures and iperf3 servers must not
outlive it: after a ``kill -9`` of ``netweft up`` a switch process would keep
forwarding and holding its ports. :func:`die_with_parent` prefixes a command with
util-linux's ``setpriv --pdeathsig``, which asks the kernel for the parent-death
signal (``prctl(PR_SET_PDEATHSIG)``) and then execs the command; the setting survives
``execve`` (and ``ip netns exec``, which execs without forking), so the program
itself gets SIGTERM when its parent goes. No ``preexec_fn``: that is unsafe in a
process with threads (a P4Runtime client, a queue sampler).

Two caveats of the kernel's mechanism:

- The "parent" is the *thread* that forked the child: the signal fires when that
  thread exits, even if the process lives on. Start such children from a
  long-lived thread (the main thread), never from a pool worker that may end first.
- A parent that dies between the fork and ``setpriv``'s ``prctl`` (a few
  milliseconds) leaves the child running; ``netweft clean`` and the next
  ``netweft up`` remove whatever a dead testbed left, processes included.

The signal is SIGTERM, so a switch process still writes its counters; whatever
ignores it is killed when its namespace is removed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path


@cache
def _setpriv() -> str | None:
    return shutil.which("setpriv")


def die_with_parent(argv: Sequence[str], signum: int = signal.SIGTERM) -> list[str]:
    """``argv`` run so that it gets ``signum`` when the calling thread's process dies.

    Without util-linux's ``setpriv`` (Debian installs it everywhere) ``argv`` is
    returned unchanged.
    """
    setpriv = _setpriv()
    if setpriv is None:
        return list(argv)
    return [setpriv, f"--pdeathsig={signal.Signals(signum).name.removeprefix('SIG')}", "--",
            *argv]


def popen_registered(argv: Sequence[str], register: Callable[[subprocess.Popen], None],
                     **kwargs) -> subprocess.Popen:
    """``subprocess.Popen(argv, **kwargs)``, handed to ``register`` before a Ctrl-C can
    interrupt.

    A SIGINT that comes while ``Popen`` waits for the child's ``exec`` would raise
    KeyboardInterrupt there, leaving a running child that no cleanup knows of; in the
    main thread it is held until ``register`` has the child, then raised as usual.
    """
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is None:
        proc = subprocess.Popen(list(argv), **kwargs)
        register(proc)
        return proc
    held: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, _frame: held.append(signum))
    try:
        proc = subprocess.Popen(list(argv), **kwargs)
        register(proc)
    finally:
        signal.signal(signal.SIGINT, previous)
    if held and callable(previous):
        previous(signal.SIGINT, None)     # Python's default handler raises KeyboardInterrupt
    elif held and previous == signal.SIG_DFL:
        os.kill(os.getpid(), signal.SIGINT)
    return proc


def stop_process(proc: subprocess.Popen, timeout: float = 5.0) -> None:
    """End ``proc`` if it still runs: SIGTERM, then SIGKILL after ``timeout`` seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def is_running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie. A killed process whose parent is gone
    may stay a zombie for good where the machine's init does not reap it, and
    ``os.kill(pid, 0)`` calls a zombie alive."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (``/proc/PID/stat`` field 22), or
    None if there is no such process. A PID and its start time name one process: the
    kernel reuses PIDs (``pid_max`` is 32,768 on many machines), never both."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def owner_stamp(pid: int | None = None) -> str:
    """``"PID START"`` for this process (or ``pid``): what an owner file or a record
    holds so that a later reader can tell its owner from a process that got the PID."""
    pid = os.getpid() if pid is None else pid
    return f"{pid} {start_ticks(pid)}"


def stamp_alive(stamp: str) -> bool:
    """Whether the process an :func:`owner_stamp` names runs: the PID runs, is no zombie
    and started when the stamp says. A stamp of a PID alone (files written before start
    times were kept) is judged by the PID."""
    parts = stamp.split()
    try:
        pid = int(parts[0])
        start = int(parts[1]) if len(parts) > 1 and parts[1] != "None" else None
    except (IndexError, ValueError):
        return False
    return same_process_runs(pid, start)


def same_process_runs(pid: int, start: int | None) -> bool:
    """Whether ``pid`` runs (no zombie) and, if ``start`` is given, started then
    (:func:`start_ticks`): the process, not a later one given its PID."""
    return is_running(pid) and (start is None or start_ticks(pid) == start)
