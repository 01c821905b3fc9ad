"""Start ``netweft-switch`` as a process and learn its P4Runtime address."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

LISTENING = re.compile(r"P4Runtime server listening on (\S+)")


@contextmanager
def running_switch(args: Sequence[str], popen: Callable[..., subprocess.Popen] | None = None,
                   timeout: float = 120.0, command: Sequence[str] | None = None
                   ) -> Iterator[tuple[subprocess.Popen, str]]:
    """``(process, grpc target)`` of a netweft-switch started with ``args``; killed after.

    ``command`` replaces ``python -m netweft.emulation.process.netweft_switch`` (for example
    the installed ``netweft-switch`` script)."""
    argv = [*(command or (sys.executable, "-m", "netweft.emulation.process.netweft_switch")), *args]
    start = popen or subprocess.Popen
    proc = start(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) \
        if popen else start(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [lines.put("")],
                         daemon=True).start()
        target = None
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                break
            found = LISTENING.search(line)
            if found:
                target = found.group(1)
            if not line or line.strip() == "ready":
                break
        if target is None or proc.poll() is not None:
            proc.kill()
            raise RuntimeError(f"netweft-switch did not start: {proc.stderr.read()[-2000:]}")
        yield proc, target
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
