"""netweft bench aggregation: every row sums its blocks (each block's result reaches
every worker, else the bench fails) and the table shows them; bad options are refused
at parse time. No figure is asserted."""

from __future__ import annotations

import subprocess
import sys

from netweft.testbed.bench.aggregation import format_table, run_bench


def test_rows_sum_every_block_and_print():
    results = run_bench(3, workers=(2, 3), programs=("aggregation",))
    assert [(r["program"], r["workers"], r["blocks"]) for r in results["rows"]] == \
        [("aggregation", 2, 3), ("aggregation", 3, 3)]
    assert results["forwarding_pps"] > 0 and results["lanes"] == 64
    for row in results["rows"]:
        assert row["lanes_per_s"] == row["contributions_per_s"] * 64
    table = format_table(results).splitlines()
    assert table[0].startswith("reference: basic_forward.p4") and len(table) == 4


def test_bad_block_count_is_refused_by_the_parser():
    run = subprocess.run([sys.executable, "-m", "netweft.testbed.command_line", "bench", "aggregation",
                          "--blocks", "0"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert "--blocks" in run.stderr and "Traceback" not in run.stderr
