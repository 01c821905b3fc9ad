"""``netweft bench links``: the tables come from measurements on a real testbed."""

import json

import pytest
from pyroute2 import netns

from netweft.testbed.bench.links import (
    SETTINGS,
    format_forwarding,
    format_links,
    run_bench,
)
from netweft.testbed.command_line import build_parser


def test_options_are_checked_when_parsed(capsys):
    parser = build_parser()
    for argv in (["bench", "links", "--seconds", "0"], ["bench", "links", "--pings", "1"],
                 ["bench", "links", "--setting", "warp 9"]):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
    assert "invalid choice: 'warp 9'" in capsys.readouterr().err


@pytest.mark.netns
@pytest.mark.slow
def test_delay_setting_and_forwarding_rows(tmp_path):
    delay = next(s for s in SETTINGS if s.label == "delay 5ms")
    results = run_bench(tmp_path, [delay], pings=20, seconds=1, packets=1000,
                        log=lambda _m: None)
    prefixes = {r["namespaces"].rstrip("*") for r in results["links"] + results["forwarding"]}
    assert len(prefixes) == 2 and not [n for n in netns.listnetns()
                                       if any(n.startswith(p) for p in prefixes)]
    row, = results["links"]
    # the switch delays h2's link 5 ms each way: no round trip can be shorter
    assert row["received"] > 0 and row["rtt_p50_ms"] >= row["rtt_floor_ms"] == 10.0
    assert row["rate_meas_mbit"] > 0 and row["loss_expected_rt"] == 0.0
    assert [(r["frame_bytes"], r["ports"]) for r in results["forwarding"]] == [
        (64, 1), (64, 4), (1500, 1), (1500, 4)]
    assert all(r["veth_pps"] > 0 and r["in_process_pps"] > 0 for r in results["forwarding"])
    assert json.loads((tmp_path / "bench-links.json").read_text()) == results
    assert "delay 5ms" in format_links(results["links"])
    assert "veth/in-process" in format_forwarding(results["forwarding"])
