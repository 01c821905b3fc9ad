"""The generated C under AddressSanitizer and UndefinedBehaviorSanitizer: thousands of
valid, truncated, bit-flipped and junk frames through every ``p4/`` program, with
and without the queues; any out-of-bounds access or undefined behaviour aborts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from netweft.emulation.native.build import compiler


def _libasan() -> str | None:
    cc = compiler()
    if cc is None:
        return None
    out = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True,
                         check=False).stdout.strip()
    return out if out and Path(out).is_file() else None


@pytest.mark.skipif(_libasan() is None, reason="no C compiler with AddressSanitizer")
@pytest.mark.timeout(900)   # five sanitized builds, then Python under ASan: slow on a busy machine
def test_generated_code_is_clean_under_asan_and_ubsan() -> None:
    # the sanitized builds are cached beside the others (their flags are in the key)
    env = dict(os.environ, LD_PRELOAD=_libasan(),
               ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "tests.native.sanitized_run", "800"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=900,
                          check=False)
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, report[-4000:]
    assert "runtime error" not in report and "AddressSanitizer" not in report
    assert "sanitized run:" in proc.stdout
