"""``netweft perf --mode latency|sweep|spray``: the tables exist, their ratios are
the ones computed from the printed figures, every message was verified, the raw
numbers and plots are written; no speed is judged."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from netweft.testbed.perf.latency import LatencyResult, format_latency, latency_ratios
from netweft.testbed.perf.protocol import PerfResult
from netweft.testbed.perf.sweep import SweepRow, format_sweep, human_size

PERF = [sys.executable, "-m", "netweft.testbed.command_line", "perf"]


def test_latency_percentiles_and_ratios():
    udp = LatencyResult("udp", samples_ns=[10_000] * 98 + [50_000, 90_000], cpu_s=0.001)
    nw = LatencyResult("netweft write", samples_ns=[25_000] * 100, lost=0)
    assert udp.percentile_us(50) == 10.0 and udp.percentile_us(99) > 10.0
    assert latency_ratios([nw, udp]) == {"netweft write/udp p50": 2.5}
    text = format_latency([nw, udp], "header")
    assert "ratio netweft write/udp p50: 2.50x" in text
    assert latency_ratios([nw]) == {}  # no UDP baseline in this run, no ratio
    # busy-polling tests are also set beside the busy-polling UDP ping-pong
    busy = LatencyResult("netweft write [packet busy]", samples_ns=[12_000] * 100, busy=True)
    udp_busy = LatencyResult("udp busy", samples_ns=[8_000] * 100, busy=True)
    assert latency_ratios([busy, udp, udp_busy]) == {
        "netweft write [packet busy]/udp p50": 1.2,
        "netweft write [packet busy]/udp busy p50": 1.5}


def test_sweep_table_puts_netweft_beside_tcp():
    nw = PerfResult("n", "netweft", 1_000_000, 1.0, 1000, 0.01, verified=True)
    tcp = PerfResult("tcp", "tcp", 4_000_000, 1.0, 4000, 0.02, verified=True)
    row = SweepRow(1000, 8, 1, nw, tcp)
    assert row.goodput_ratio == pytest.approx(0.25)
    assert row.cpu_ratio == pytest.approx((0.01 / 1e6) / (0.02 / 4e6))
    text = format_sweep([row], "header")
    assert "0.25x" in text and "yes" in text
    assert [human_size(n) for n in (64, 4096, 1 << 20, 1000)] == ["64", "4K", "1M", "1000"]


@pytest.mark.parametrize("argv,message", [
    (["--plot", "/tmp/x.png"], "give --mode latency, sweep or spray"),
    (["--mode", "sweep", "--depths", "0"], "depths must be >= 1"),
    (["--mode", "sweep", "--sizes", "4k,lots"], "not a size"),
    (["--io", "warp"], "unknown I/O mode 'warp'"),
    (["--io", "thread,busy"], "--io takes one mode with --mode goodput"),
    (["--tx", "warp"], "unknown transmit path 'warp'"),
    (["--tx", "ports,packet"], "--tx takes one path with --mode goodput"),
])
def test_mode_options_are_checked(argv, message):
    res = subprocess.run([*PERF, "client", "127.0.0.1", "--control-port", "1", *argv],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr


@pytest.mark.slow
def test_latency_mode_over_loopback(tmp_path):
    raw_path, plot = tmp_path / "lat.json", tmp_path / "lat.png"
    res = subprocess.run([*PERF, "pair", "--mode", "latency", "--time", "0.6", "--rounds", "2",
                          "--json", str(raw_path), "--plot", str(plot)],
                         capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    raw = json.loads(raw_path.read_text())
    names = [r["name"] for r in raw["results"]]
    assert names == ["netweft write", "netweft send/recv", "udp", "tcp"]
    assert all(r["round_trips"] > 0 and r["p50_us"] <= r["p99_us"] <= r["p999_us"]
               for r in raw["results"])
    by = {r["name"]: r for r in raw["results"]}
    printed = {m.group(1): float(m.group(2))
               for m in re.finditer(r"ratio (.+): ([0-9.]+)x", res.stdout)}
    assert printed["netweft write/udp p50"] == pytest.approx(
        by["netweft write"]["p50_us"] / by["udp"]["p50_us"], abs=0.006)
    assert plot.stat().st_size > 0


@pytest.mark.slow
def test_sweep_mode_over_loopback(tmp_path):
    raw_path = tmp_path / "sweep.json"
    res = subprocess.run([*PERF, "pair", "--mode", "sweep", "--sizes", "4k,64k", "--depths",
                          "4", "--bursts", "1,8", "--time", "0.2", "--json", str(raw_path)],
                         capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    rows = json.loads(raw_path.read_text())["rows"]
    assert [(r["size"], r["entropy_burst"]) for r in rows] == [(4096, 1), (4096, 8),
                                                                (65536, 1), (65536, 8)]
    for r in rows:
        assert r["netweft"]["verified"] and r["tcp"]["verified"]
        assert r["goodput_ratio"] == pytest.approx(
            r["netweft"]["goodput_gbps"] / r["tcp"]["goodput_gbps"])


@pytest.mark.slow
@pytest.mark.netns
def test_packet_paths_side_by_side_over_veth(tmp_path):
    """--tx ports,packet: each grid point runs both paths beside one TCP run, and the
    latency mode adds the busy-polling UDP baseline for --io busy."""
    raw_path = tmp_path / "spray.json"
    res = subprocess.run([*PERF, "pair", "--path", "veth", "--mode", "spray", "--tx",
                          "ports,packet", "--bursts", "1", "--time", "0.3", "--json",
                          str(raw_path)], capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    rows = json.loads(raw_path.read_text())["rows"]
    assert [r["tx"] for r in rows] == ["ports", "packet"]
    assert rows[0]["tcp"] == rows[1]["tcp"]  # one TCP run beside both
    for r in rows:
        assert r["netweft"]["verified"] and r["netweft"]["bytes"] > 0
    packet = rows[1]["netweft"]["extra"]
    assert packet["io_ring_tx_frames"] > 0 and packet["server_io_ring_rx_frames"] > 0
    assert rows[0]["netweft"]["extra"]["io_ring_tx_frames"] == 0
    lat = subprocess.run([*PERF, "pair", "--path", "veth", "--mode", "latency", "--tx", "packet",
                          "--io", "busy", "--time", "0.4", "--rounds", "1"],
                         capture_output=True, text=True, timeout=180)
    assert lat.returncode == 0, lat.stdout + lat.stderr
    assert "udp busy" in lat.stdout
    for base in ("udp", "udp busy"):
        assert re.search(rf"ratio netweft write/{base} p50: [0-9.]+x", lat.stdout)
