"""libFuzzer + AddressSanitizer over the C wire codec (nic_offload/fuzz/)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import netweft.nic_offload
from netweft.nic_offload import lib

from .cases import ALL_TYPES, c_build, declared_payload_len, next_headers_of

NIC = Path(netweft.nic_offload.__file__).parent
FUZZ_DIR = NIC / "fuzz"
pytestmark = [pytest.mark.clang_fuzzer, pytest.mark.host_tools("make")]


def _seed_corpus(directory: Path) -> None:
    """One valid packet per (type, next header), with a payload its fields announce."""
    directory.mkdir()
    for t in ALL_TYPES:
        for nh in next_headers_of(t):
            fields = {"pds.type": t, "pds.next_hdr": nh, "pds.flags": lib.NW_PDS_F_AR,
                      "pds.psn": 1000 + t, "ses.flags": lib.NW_SES_F_EOM, "rsp.opcode": 2}
            payload = b"netweft"
            fields.update({"ses.payload_length": len(payload), "rsp.payload_length": len(payload),
                           "parity.shard_len": len(payload)})
            if declared_payload_len(fields) is None:
                payload = b""
            (directory / f"t{t}_nh{nh}").write_bytes(c_build(fields, payload))


def _build(out: Path, codec_source: Path | None = None) -> None:
    # As the README gives it: no CC on the command line or in the environment, so
    # the Makefile must pick clang over make's built-in CC=cc.
    args = ["make", "-s", "-C", str(FUZZ_DIR), f"OUT={out}"]
    if codec_source is not None:
        args.append(f"CODEC={codec_source}")
    env = {k: v for k, v in os.environ.items() if k != "CC"}
    run = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False, env=env)
    assert run.returncode == 0, run.stdout + run.stderr


def _fuzz(binary: Path, runs: int, corpus: Path | None = None) -> subprocess.CompletedProcess:
    args = [str(binary), f"-runs={runs}", "-seed=1", "-max_len=256", "-print_final_stats=1",
            f"-artifact_prefix={binary.parent}/"]  # crash files stay out of the working tree
    if corpus is not None:
        args.append(str(corpus))
    return subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def harnesses(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fuzz")
    _build(out)
    return out


def test_parse_survives_fuzzing_without_findings(harnesses, tmp_path):
    _seed_corpus(tmp_path / "corpus")
    run = _fuzz(harnesses / "fuzz_wire_parse", 400_000, tmp_path / "corpus")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Done 400000 runs" in run.stderr
    assert "ERROR: AddressSanitizer" not in run.stderr


def test_build_survives_fuzzing_without_findings(harnesses):
    run = _fuzz(harnesses / "fuzz_wire_build", 200_000)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Done 200000 runs" in run.stderr


def test_the_harness_catches_a_missing_bounds_check(tmp_path):
    # Remove the header-length check from a copy of the codec: the fuzzer must
    # find the resulting overread, which shows the harness can fail at all.
    source = (NIC / "src" / "uet_wire.c").read_text()
    check = "    if (len < hdr)\n        return NW_WIRE_ETRUNC;\n"
    assert check in source
    broken = tmp_path / "uet_wire_broken.c"
    broken.write_text(source.replace(check, ""))
    _build(tmp_path / "out", codec_source=broken)
    _seed_corpus(tmp_path / "corpus")
    run = _fuzz(tmp_path / "out" / "fuzz_wire_parse", 400_000, tmp_path / "corpus")
    assert run.returncode != 0
    assert "AddressSanitizer: heap-buffer-overflow" in run.stderr
