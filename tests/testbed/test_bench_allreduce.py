"""``netweft bench allreduce``: a small sweep end to end (switch points and a projected one)."""

from __future__ import annotations

import json

import pytest

from netweft.testbed.bench.allreduce import FRAME, frame_bytes, in_network_frames
from netweft.testbed.command_line import main


def test_small_sweep_writes_table_json_csv_and_plot(tmp_path, capsys):
    assert main(["bench", "allreduce", "--workers", "4", "--topology", "star",
                 "--size", "16k", "--size", "32k", "--size", "64k", "--switch-max", "32k",
                 "--window", "8", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "ring/in-net" in out and "star n=4: ring/in-network time" in out
    rows = json.loads((tmp_path / "allreduce.json").read_text())["rows"]
    assert [r["in_network_source"] for r in rows] == ["switch", "switch", "fit"]
    for r in rows:
        # the measured points obey the packet rule the projection uses
        assert r["in_network_tx_bytes"] == in_network_frames(r["size"], 8) * FRAME
        # the ring moves 2 (n-1)/n of the buffer per host link, more than in-network's 1
        assert r["ring_tx_bytes"] > 1.5 * r["size"]
        assert r["bytes_ratio"] > 1.0 and r["in_network_ms"] > 0 and r["ring_ms"] > 0
    assert (tmp_path / "allreduce.csv").read_text().startswith("topology,workers,size,")
    assert (tmp_path / "allreduce.png").stat().st_size > 1000


def test_leaf_spine_hierarchical_wide_packets_and_concurrent_jobs(tmp_path, capsys):
    assert main(["bench", "allreduce", "--workers", "4", "--topology", "leaf-spine",
                 "--size", "32k", "--size", "64k", "--window", "4", "--lanes", "128",
                 "--jobs", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "leaf-spine n=4 hierarchical: ring/in-network time" in out
    assert "2 concurrent jobs on one switch" in out
    data = json.loads((tmp_path / "allreduce.json").read_text())
    assert data["settings"]["lanes"] == 128
    for r in data["rows"]:
        for prefix in ("in_network", "hierarchical"):
            assert r[f"{prefix}_tx_bytes"] == in_network_frames(r["size"], 4, 128) * \
                frame_bytes(128)
        # one switch: every host's blocks cross one uplink; hierarchical: one per leaf
        assert r["in_network_max_uplink_bytes"] == 2 * r["in_network_tx_bytes"]
        assert r["hierarchical_max_uplink_bytes"] == r["hierarchical_tx_bytes"]
        assert r["hierarchical_ms"] < r["in_network_ms"]
    assert [(j["job"], j["base"], j["method"], j["correct"]) for j in data["jobs"]] == [
        (1, 0, "in-network", True), (2, 4, "in-network", True)]
    assert (tmp_path / "allreduce.png").stat().st_size > 1000


def test_bad_options_are_refused(capsys):
    for argv in (["--workers", "1"], ["--size", "0"], ["--topology", "ring"],
                 ["--window", "0"], ["--lanes", "32"], ["--method", "tree"]):
        with pytest.raises(SystemExit) as exc:
            main(["bench", "allreduce", *argv])
        assert exc.value.code == 2
        assert "error: argument" in capsys.readouterr().err
    assert main(["bench", "allreduce", "--size", "1m", "--switch-max", "64k"]) != 0
    assert "--switch-max" in capsys.readouterr().err


def test_repeated_emulated_runs_are_summarised_by_their_medians():
    from netweft.testbed.bench.allreduce import median_rows

    def phase(seconds: float, agree: bool = True) -> dict:
        return {"seconds": seconds, "worker_cpu_seconds": seconds / 2,
                "switch_cpu_seconds": seconds / 4, "retransmits": 0, "tx_bytes": 1000.0,
                "rx_bytes": 1000.0, "agree": agree, "worker": "c"}

    runs = [{"size": 4096, "in-network": phase(t), "ring": phase(r)}
            for t, r in ((0.3, 0.1), (0.1, 0.5), (0.2, 0.2))]
    runs.append({"size": 8192, "in-network": phase(1.0, agree=False), "ring": phase(2.0)})
    small, large = median_rows(runs)
    assert small["runs"] == 3 and small["in-network"]["seconds"] == 0.2
    assert small["ring"]["seconds"] == 0.2 and small["speedup"] == 1.0
    assert small["in-network"]["runs_seconds"] == [0.3, 0.1, 0.2]
    assert large["speedup"] == 2.0 and not large["in-network"]["agree"]
    assert "in-network-python" not in small
