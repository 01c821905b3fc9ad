"""The native dataplane's tests again with its C built under ASan and UBSan.

A child pytest loads the dataplane built with ``-fsanitize=address,undefined``
(``NETWEFT_DATAPLANE_CFLAGS``; the ASan runtime preloaded into the uninstrumented
Python): any out-of-bounds access, use after free or undefined behaviour in the
rings, the loop, the traffic manager or the replication engine aborts it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.netns, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
TESTS = ["test_native_traffic_manager.py", "test_native_dataplane.py",
         "test_native_generated_pipeline.py"]


def test_the_dataplane_tests_pass_under_asan_and_ubsan():
    asan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert os.path.isabs(asan), "gcc has no ASan runtime (Debian: libasan8, with gcc)"
    env = dict(os.environ,
               NETWEFT_DATAPLANE_CFLAGS="-fsanitize=address,undefined "
                                        "-fno-sanitize-recover=all -fno-omit-frame-pointer",
               LD_PRELOAD=asan, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          *(str(HERE / t) for t in TESTS)],
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " passed" in run.stdout
