"""Builds the frame parser's libFuzzer harness (nic_offload/fuzz/fuzz_udp_frame.c:
clang, ASan + UBSan) and runs it for a bounded number of inputs from a seed
corpus of valid and nearly valid frames: any crash, sanitizer report or harness
abort fails. A copy of udp_frame.c without one bounds check shows that the
harness can fail at all."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP, UDP, IPOption_NOP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from netweft.nic_offload import ffi, lib

NIC = Path(__file__).resolve().parents[2] / "nic_offload"
pytestmark = [pytest.mark.slow, pytest.mark.clang_fuzzer, pytest.mark.host_tools("make")]
RUNS = 1_000_000


def _c_frame(payload: bytes, csum: int, ecn: int = 0) -> bytes:
    buf = ffi.new("uint8_t[]", lib.NW_FRAME_HLEN + len(payload))
    ffi.memmove(buf + lib.NW_FRAME_HLEN, payload, len(payload))
    a = ffi.new("nw_udp_addr_t *", {"src_ip": 0x0A000001, "dst_ip": 0x0A000002,
                                     "src_port": 49152, "dst_port": 4793, "ecn": ecn})
    lib.nw_eth_write(buf, b"\x02\0\0\0\0\x02", b"\x02\0\0\0\0\x01")
    lib.nw_ipv4_udp_write(buf + lib.NW_ETH_HLEN, len(payload), a, csum)
    return bytes(ffi.buffer(buf))


def _seed_corpus(directory: Path) -> None:
    directory.mkdir()
    # The first byte (a destination MAC byte) tells the harness whether to repair
    # the UDP checksum of its second copy: odd and even seeds both.
    eth = {"odd": Ether(dst="03:00:00:00:00:02", src="02:00:00:00:00:01"),
           "even": Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")}
    seeds = {
        "full": _c_frame(b"netweft payload", lib.NW_UDP_CSUM_FULL, ecn=1),
        "none": _c_frame(b"x" * 33, lib.NW_UDP_CSUM_NONE),
        "partial": _c_frame(b"", lib.NW_UDP_CSUM_PARTIAL, ecn=3),
    }
    for name, e in eth.items():
        seeds[f"options_{name}"] = bytes(e / IP(src="10.0.0.1", dst="10.0.0.2",
                                                options=[IPOption_NOP()] * 8, tos=0xB9)
                                         / UDP(sport=1, dport=4793) / Raw(b"opts"))
        seeds[f"padded_{name}"] = bytes(e / IP(src="10.0.0.1", dst="10.0.0.2")
                                        / UDP(sport=2, dport=4793) / Raw(b"p")) + b"\0" * 17
        seeds[f"fragment_{name}"] = bytes(e / IP(src="10.0.0.1", dst="10.0.0.2", flags="MF")
                                          / UDP(sport=3, dport=4793) / Raw(b"frag"))
        seeds[f"tcp_{name}"] = bytes(e / IP(src="10.0.0.1", dst="10.0.0.2")
                                     / TCP(sport=4, dport=4793) / Raw(b"tcp"))
    for name, frame in seeds.items():
        (directory / name).write_bytes(frame)


def _build(out: Path, frame_source: Path | None = None) -> Path:
    target = out / "fuzz_udp_frame"
    args = ["make", "-s", "-C", str(NIC / "fuzz"), f"OUT={out}", str(target)]
    if frame_source is not None:
        args.append(f"FRAME={frame_source} {NIC / 'src' / 'checksum.c'}")
    env = {k: v for k, v in os.environ.items() if k != "CC"}  # the Makefile picks clang
    run = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    return target


def _fuzz(binary: Path, corpus: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(binary), f"-runs={RUNS}", "-seed=1", "-max_len=512", "-print_final_stats=1",
         f"-artifact_prefix={binary.parent}/", str(corpus)],
        capture_output=True, text=True, timeout=300, check=False, cwd=binary.parent)


def test_frame_parser_survives_fuzzing_without_findings(tmp_path):
    binary = _build(tmp_path / "out")
    _seed_corpus(tmp_path / "corpus")
    run = _fuzz(binary, tmp_path / "corpus")
    assert run.returncode == 0, run.stderr[-4000:]
    assert f"Done {RUNS} runs" in run.stderr
    assert "ERROR: AddressSanitizer" not in run.stderr


def test_the_harness_catches_a_missing_total_length_check(tmp_path):
    # Let the IP total length run 4 bytes past the frame in a copy of udp_frame.c:
    # the parser then reads UDP bytes beyond the frame, which the fuzzer must find.
    source = (NIC / "src" / "io" / "udp_frame.c").read_text()
    check = "if (total > room)"
    assert source.count(check) == 1
    broken = tmp_path / "udp_frame_broken.c"
    broken.write_text(source.replace(check, "if (total > room + 4)"))
    binary = _build(tmp_path / "out", frame_source=broken)
    _seed_corpus(tmp_path / "corpus")
    run = _fuzz(binary, tmp_path / "corpus")
    assert run.returncode != 0
    assert "AddressSanitizer: heap-buffer-overflow" in run.stderr
