"""``netweft perf``: the tool runs both protocols on one path and prints their ratios.

These tests check that the numbers exist, are consistent with each other and
that every netweft message was verified; they never judge a speed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from netweft.testbed.perf.goodput import CLIENT_COUNTERS, SERVER_COUNTERS, format_report, ratios
from netweft.testbed.perf.protocol import PerfResult

PERF = [sys.executable, "-m", "netweft.testbed.command_line", "perf"]


def _parse(out: str) -> dict[str, float]:
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"ratio (.+): ([0-9.]+)x", out)}


def test_ratios_and_report_from_results():
    results = [PerfResult("netweft", "netweft", 4_000, 2.0, 4, 0.5),
               PerfResult("netweft 1% loss*", "netweft", 3_000, 2.0, 3, 0.5, loss=0.01),
               PerfResult("tcp", "tcp", 8_000, 2.0, 8, 0.5, verified=True)]
    r = ratios(results)
    assert r == {"netweft/tcp goodput": 0.5, "netweft 1% loss / netweft loss-free goodput": 0.75}
    text = format_report(results, "header")
    assert "ratio netweft/tcp goodput: 0.50x" in text
    assert "injected by netweft" in text and "no netem" in text
    assert "counters" not in text  # no engine counters given, no counters line


def test_report_summarises_the_engine_counters():
    extra = {"retransmits": 17, "fast_retransmits": 12, "rto_fired": 5, "spurious_rtos": 2,
             "cwnd_cuts": 3, "server_dup_pkts": 4, "server_drops": 1}
    text = format_report([PerfResult("netweft", "netweft", 4_000, 2.0, 4, 0.5, extra=extra)],
                         "header")
    assert ("counters netweft: 17 retransmits (12 fast, 5 RTOs, 2 spurious), 3 cwnd cuts, "
            "4 duplicates and 1 bad packets dropped at the server") in text


def test_bad_options_give_messages_not_tracebacks():
    res = subprocess.run([*PERF, "client", "127.0.0.1", "--loss", "1.5"], capture_output=True,
                         text=True)
    assert res.returncode == 2 and "loss must be in [0, 1)" in res.stderr
    res = subprocess.run([*PERF, "client", "127.0.0.1", "--msg-size", "lots"],
                         capture_output=True, text=True)
    assert res.returncode == 2 and "not a size" in res.stderr
    res = subprocess.run([*PERF, "client", "127.0.0.1", "--control-port", "1", "--time", "0.1"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "cannot reach the perf server" in res.stderr
    assert "Traceback" not in res.stderr


def _pair(path: str, tmp_path, *extra: str) -> tuple[str, dict]:
    out_json = tmp_path / "perf.json"
    res = subprocess.run([*PERF, "pair", "--path", path, "--time", "0.3", "--msg-size", "256k",
                          "--json", str(out_json), *extra], capture_output=True, text=True,
                         timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout, json.loads(out_json.read_text())


def _check(out: str, raw: dict, loss: bool) -> None:
    names = [r["name"] for r in raw["results"]]
    assert names[0] == "netweft" and names[-1] == "tcp"
    assert all(r["verified"] and r["bytes"] > 0 for r in raw["results"])
    printed = _parse(out)
    assert printed.keys() == raw["ratios"].keys()
    by = {r["name"]: r for r in raw["results"]}
    assert raw["ratios"]["netweft/tcp goodput"] == pytest.approx(
        by["netweft"]["goodput_gbps"] / by["tcp"]["goodput_gbps"])
    for r in raw["results"]:
        if r["proto"] != "netweft":
            continue
        expected = set(CLIENT_COUNTERS) | {f"server_{n}" for n in SERVER_COUNTERS}
        assert expected <= r["extra"].keys()
        assert all(isinstance(v, int) and v >= 0 for v in r["extra"].values())
        printed_retx = re.search(rf"counters {re.escape(r['name'])}: (\d+) retransmits", out)
        assert printed_retx and int(printed_retx.group(1)) == r["extra"]["retransmits"]
    if loss:
        lossy = [r for r in raw["results"] if r["loss"] > 0][0]
        assert lossy["extra"]["retransmits"] > 0  # loss really was injected and repaired
        assert "injected by netweft" in out


@pytest.mark.slow
def test_pair_over_loopback_prints_ratios(tmp_path):
    out, raw = _pair("loopback", tmp_path, "--loss", "0.05")
    _check(out, raw, loss=True)


@pytest.mark.slow
@pytest.mark.netns
def test_pair_over_veth_between_namespaces(tmp_path):
    out, raw = _pair("veth", tmp_path, "--loss", "0.05", "--mtu", "9000")
    spaces = re.search(r"veth pair between namespaces (\S+) and (\S+),", out)
    assert spaces
    _check(out, raw, loss=True)
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert spaces.group(1) not in left and spaces.group(2) not in left  # cleaned up


def test_perf_sim_prints_the_loss_ratio_in_virtual_time():
    res = subprocess.run([*PERF, "sim", "--count", "6", "--msg-size", "256k", "--loss", "0.02"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    rows = {line.split()[0] + (" loss" if "loss " in line else ""): line.split()
            for line in res.stdout.splitlines() if line.startswith("netweft ")}
    clean, lossy = rows["netweft"], rows["netweft loss"]
    assert clean[-2:] == ["0", "0"]  # nothing lost, nothing resent
    assert int(lossy[-2]) > 0 and int(lossy[-1]) > 0
    ratio = _parse(res.stdout)["netweft 2% loss / netweft loss-free goodput"]
    assert ratio == pytest.approx(float(lossy[3]) / float(clean[1]), rel=0.01)


@pytest.mark.netns
def test_pair_over_veth_cleans_up_when_the_client_fails():
    res = subprocess.run([*PERF, "pair", "--path", "veth", "--time", "0.2", "--engine",
                          "window_pkts=3"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 1
    assert "window_pkts" in res.stderr and "Traceback" not in res.stderr
    spaces = re.search(r"veth pair between namespaces (\S+) and (\S+),", res.stdout)
    assert spaces
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert spaces.group(1) not in left and spaces.group(2) not in left


@pytest.mark.parametrize("argv,message", [
    (["sim", "--count", "0"], "count must be >= 1, got 0"),
    (["sim", "--depth", "0"], "depth must be >= 1"),
    (["sim", "--rate-gbps", "0"], "rate-gbps must be > 0"),
    (["sim", "--mtu", "100"], "mtu must be between 576 and 16475"),
    (["pair", "--time", "0"], "time must be > 0, got 0"),
    (["pair", "--time", "nan"], "time must be > 0"),
    (["pair", "--mtu", "100"], "mtu must be between 576 and 16475, got 100"),
    (["pair", "--window", "100"], "window must be a power of two"),
    (["pair", "--rounds", "0"], "rounds must be >= 1"),
    (["client", "127.0.0.1", "--depth", "-1"], "depth must be >= 1"),
    (["client", "127.0.0.1", "--control-port", "70000"], "port must be between 1 and 65535"),
    (["sim", "--json", "/nonexistent-dir/raw.json"], "directory /nonexistent-dir does not exist"),
    (["pair", "--json", "/"], "/ is a directory"),
])
def test_options_are_checked_when_parsed(argv, message):
    res = subprocess.run([*PERF, *argv], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2, res.stdout + res.stderr
    assert message in res.stderr and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith(f"netweft perf {argv[0]}: error:")


def test_perf_sim_writes_its_raw_numbers_with_json(tmp_path):
    out = tmp_path / "sim.json"
    res = subprocess.run([*PERF, "sim", "--count", "2", "--msg-size", "64k", "--loss", "0.05",
                          "--json", str(out)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    raw = json.loads(out.read_text())
    assert [r["loss"] for r in raw["results"]] == [0.0, 0.05]
    assert all(r["bytes"] == 2 * 65536 for r in raw["results"])
    (name, ratio), = raw["ratios"].items()
    assert f"ratio {name}: {ratio:.2f}x" in res.stdout


def _fake_server(behaviour: str):
    """A TCP port that is not a perf server: it accepts, then closes or talks nonsense."""
    import socket
    import threading

    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(4)

    def serve():
        while True:
            try:
                conn, _ = lst.accept()
            except OSError:
                return
            if behaviour == "garbage":
                conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")
                conn.recv(1024)
            elif behaviour == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return lst


@pytest.mark.parametrize("behaviour,message", [
    ("close", "the perf server closed the control connection"),
    ("reset", "netweft perf server"),  # a reset reads as a close or a failed send
    ("garbage", "is it a netweft perf server?"),
])
def test_client_against_a_port_that_is_not_a_perf_server(behaviour, message):
    lst = _fake_server(behaviour)
    try:
        for proto in ("tcp", "netweft"):
            res = subprocess.run([*PERF, "client", "127.0.0.1", "--control-port",
                                  str(lst.getsockname()[1]), "--time", "0.1", "--proto", proto],
                                 capture_output=True, text=True, timeout=60)
            assert res.returncode == 1, res.stdout + res.stderr
            lines = res.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("netweft perf client: "), res.stderr
            assert message in lines[0]
    finally:
        lst.close()


def test_server_and_client_on_one_address_work_with_the_defaults():
    """``perf server`` + ``perf client 127.0.0.1``: both engines on 127.0.0.1, the default
    transmit mode (they once failed with "engine error -15": entropy ports in use)."""
    server = subprocess.Popen([*PERF, "server", "--bind", "127.0.0.1", "--control-port", "0",
                               "--once"], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        port = int(line.rsplit(":", 1)[1])
        res = subprocess.run([*PERF, "client", "127.0.0.1", "--control-port", str(port),
                              "--time", "0.2", "--rounds", "1", "--proto", "netweft",
                              "--msg-size", "256k"], capture_output=True, text=True,
                             timeout=120)
        assert res.returncode == 0, res.stdout + res.stderr
        assert re.search(r"^netweft +[0-9.]+ .* yes$", res.stdout, re.M), res.stdout
    finally:
        server.kill()
        server.wait()
