"""``netweft bench ec`` runs every code, raw and through the engine, and reports its numbers."""

from __future__ import annotations

import json

import pytest

from netweft.nic_offload import ffi, lib
from netweft.testbed.command_line import main


def test_bench_ec_prints_and_writes_every_code(tmp_path, capsys):
    out = tmp_path / "ec.json"
    assert main(["bench", "ec", "--bytes", "1048576", "--seconds", "0.01", "--runs", "1",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "raw enc" in text and "6.7 GB/s" in text
    data = json.loads(out.read_text())
    assert [(r["k"], r["m"]) for r in data["codes"]] == [(4, 2), (8, 2), (10, 4), (16, 4), (32, 8)]
    for r in data["codes"]:
        assert r["raw_encode_gbps"] > 0 and r["engine_decode_gbps"] > 0
        assert r["recovered_pkts"] > 0  # the engine really decoded
        assert abs(r["parity_overhead"] - r["m"] / r["k"]) < 0.1


def test_engine_bench_transfer_is_intact_and_decodes_every_block():
    o = ffi.new("nw_ec_bench_t *")
    assert lib.nw_ec_bench_engine(8, 2, 2, 8972, 4 << 20, o) == 0
    assert o.retransmits == 0 and o.recovered_pkts >= 2 * (o.payload_bytes // (8 * 8900))
    assert lib.nw_ec_bench_engine(8, 2, 3, 8972, 1 << 20, o) == lib.NW_EINVAL  # drop > m


def test_bench_ec_rejects_bad_options(capsys):
    for argv in (["--bytes", "10"], ["--seconds", "0"], ["--mtu", "70000"]):
        with pytest.raises(SystemExit) as exc:
            main(["bench", "ec", *argv])
        assert exc.value.code == 2
        assert "error: argument" in capsys.readouterr().err
