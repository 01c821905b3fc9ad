"""C-level checks compiled against the engine's sources with gcc."""

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
NIC = HERE.parents[1] / "nic_offload"


ALL = sorted(str(p.relative_to(NIC / "src")) for p in (NIC / "src").rglob("*.c"))


@pytest.mark.parametrize(
    "check,sources,args",
    [("sack_window_check.c", ["sack.c"], []),
     ("aggregation_worker_check.c", ["collectives/aggregation_worker.c",
                                     "collectives/aggregation_quantization.c"], []),
     ("rto_stall_check.c", ALL, []),
     ("io_driver_check.c", ALL, ["socket"]),
     ("io_driver_check.c", ALL, ["ports"])],
    ids=["sack_window", "aggregation_worker", "rto_stall", "io_driver_socket",
         "io_driver_ports"],
)
@pytest.mark.host_tools("gcc")
def test_c_check(tmp_path, check, sources, args):
    cc = shutil.which("gcc")
    exe = tmp_path / check.removesuffix(".c")
    build = subprocess.run(
        [cc, "-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
         "-fsanitize=address,undefined",
         f"-I{NIC / 'include'}", str(HERE / "c" / check),
         *(str(NIC / "src" / s) for s in sources), "-lisal", "-pthread", "-o", str(exe)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "passed" in run.stdout
