"""``netweft bench reliability``: one small point of the study, end to end."""

from __future__ import annotations

import json

import pytest

from netweft.testbed.command_line import main


def test_one_point_writes_table_json_csv_and_plot(tmp_path, capsys):
    assert main(["bench", "reliability", "--drop", "0.05", "--rtt-us", "200", "--size", "64k",
                 "--messages", "6", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "ec:16,4 p50/p99/p99.9" in out and "adaptive within 10%" in out
    data = json.loads((tmp_path / "reliability.json").read_text())
    (row,) = data["rows"]
    assert row["messages"] == 6 and row["drop"] == 0.05 and row["size"] == 64 << 10
    for name in ("sr", "ec", "adaptive"):
        assert 0 < row[f"{name}_p50_ms"] <= row[f"{name}_p99_ms"] <= row[f"{name}_p99.9_ms"]
    assert row["ec_speedup_mean"] == pytest.approx(row["sr_mean_ms"] / row["ec_mean_ms"])
    assert sum(row["adaptive_codes"].values()) == 6
    assert (tmp_path / "reliability.csv").read_text().startswith("drop,rtt_us,size,")
    assert (tmp_path / "reliability_speedup.png").stat().st_size > 1000


def test_bad_options_are_refused_while_parsing(capsys):
    for argv in (["--code", "sr"], ["--drop", "0.9"], ["--size", "0"], ["--rtt-us", "0"]):
        with pytest.raises(SystemExit) as exc:
            main(["bench", "reliability", *argv])
        assert exc.value.code == 2
        assert "error: argument" in capsys.readouterr().err


@pytest.mark.netns
@pytest.mark.slow
def test_testbed_point_on_two_hosts_and_a_switch(tmp_path, capsys):
    assert main(["bench", "reliability", "--testbed", "--drop", "0.05", "--rtt-us", "400",
                 "--size", "64k", "--messages", "5", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "h1 -- s1 -- h2" in out
    data = json.loads((tmp_path / "reliability_testbed.json").read_text())
    (row,) = data["rows"]
    assert row["messages"] == 5
    assert {p["reliability"] for p in data["points"]} == {"sr", "ec:16,4", "adaptive"}
    assert all(len(p["times_s"]) == 5 and min(p["times_s"]) > 0 for p in data["points"])
