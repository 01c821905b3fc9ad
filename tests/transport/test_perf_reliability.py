"""``netweft perf --reliability``: validated at parse time, applied to the netweft writes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from netweft.testbed.perf.goodput import format_report
from netweft.testbed.perf.protocol import PerfResult

PERF = [sys.executable, "-m", "netweft.testbed.command_line", "perf"]


@pytest.mark.parametrize("role", [["client", "127.0.0.1"], ["pair"], ["sim"]])
def test_bad_reliability_is_refused_while_parsing(role):
    res = subprocess.run([*PERF, *role, "--reliability", "ec:40,2"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2
    assert "argument --reliability: ec:K,M needs 1 <= K <= 32" in res.stderr
    assert "Traceback" not in res.stderr


def test_perf_sim_with_coding_recovers_loss():
    res = subprocess.run([*PERF, "sim", "--count", "4", "--msg-size", "512k", "--loss", "0.03",
                          "--reliability", "ec:8,2"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "reliability ec:8,2" in res.stdout


def test_report_summarises_coding_counters():
    r = PerfResult("netweft", "netweft", 10, 1.0, 1, 0.1,
                   extra={"ec_blocks_sent": 7, "ec_parity_bytes_out": 900, "ec_retransmits": 1,
                          "server_ec_pkts_recovered": 5, "server_ec_blocks_repaired": 1})
    out = format_report([r], "header")
    assert ("coding netweft: 7 blocks, 900 parity bytes, 5 packets recovered by parity, "
            "1 coded packets resent (1 blocks repaired by retransmission)") in out
