"""``netweft trace``: JSON lines and a time-sequence plot from a small simulated incast."""

from __future__ import annotations

import json

import pytest

from netweft.testbed.command_line import main


def test_sim_writes_jsonl_and_plot_then_plot_redraws_it(tmp_path, capsys):
    out, png = tmp_path / "t.jsonl", tmp_path / "t.png"
    assert main(["trace", "sim", "--senders", "4", "--size", "65536", "--cc", "rccc",
                 "--queue", "8", "--out", str(out), "--plot", str(png), "--flow", "1"]) == 0
    text = capsys.readouterr().out
    assert "4 -> 1 incast" in text and "credit_granted" in text
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {"sent", "acked", "credit_granted", "credit_received"} <= {d["event"] for d in lines}
    assert [d["t_ns"] for d in lines] == sorted(d["t_ns"] for d in lines)
    assert png.stat().st_size > 5000
    again = tmp_path / "again.png"
    assert main(["trace", "plot", str(out), "--plot", str(again)]) == 0
    assert again.stat().st_size > 5000


def test_bad_options_and_files_say_what_is_wrong(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["trace", "sim", "--cc", "bbr"])
    assert exc.value.code == 2
    assert main(["trace", "sim", "--senders", "2", "--flow", "2",
                 "--out", str(tmp_path / "x.jsonl")]) == 1
    assert "--flow 2 names no sender" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["trace", "plot", str(bad)]) == 1
    assert "is not a netweft trace" in capsys.readouterr().err
