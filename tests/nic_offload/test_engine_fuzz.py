"""Builds the engine's libFuzzer harness (clang, ASan + UBSan) and runs it for a
bounded number of inputs: any crash, sanitizer report or harness abort fails."""

import shutil
import subprocess
from pathlib import Path

import pytest

NIC = Path(__file__).resolve().parents[2] / "nic_offload"


@pytest.mark.slow
@pytest.mark.clang_fuzzer
def test_engine_input_fuzzer_finds_nothing(tmp_path):
    clang = shutil.which("clang")
    exe = tmp_path / "engine_input_fuzz"
    sources = sorted(str(p) for p in (NIC / "src").rglob("*.c"))
    build = subprocess.run(
        [clang, "-g", "-O0", "-fsanitize=fuzzer,address,undefined",
         "-fno-sanitize-recover=undefined", f"-I{NIC / 'include'}",
         str(NIC / "fuzz" / "engine_input_fuzz.c"), *sources, "-lisal", "-lpthread",
         "-o", str(exe)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr
    run = subprocess.run(
        [str(exe), "-runs=20000", "-seed=1", "-max_len=512"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Done 20000 runs" in run.stderr
