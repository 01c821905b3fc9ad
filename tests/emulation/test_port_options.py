"""``--link`` settings: parsing, refusals naming the fix, the round trip, the control commands."""

from __future__ import annotations

import json

import pytest
from tm_helpers import probe_frame, probe_switch, run

from netweft.emulation.links.link_model import GilbertElliott, LinkConfig
from netweft.emulation.links.port_options import (
    PortOptionError,
    PortOptions,
    parse_link_option,
    parse_link_options,
)
from netweft.emulation.process.control import ControlError, execute
from netweft.emulation.process.switch_process import link_arguments


def test_a_link_option_sets_both_directions_and_the_queues():
    port, opts = parse_link_option("3:delay=5ms,jitter=250us,loss=1%,rate=100mbit,queue=64")
    assert port == 3
    link = LinkConfig(delay_ns=5_000_000, jitter_ns=250_000, loss=0.01, rate_bps=100e6)
    assert opts == PortOptions(ingress=link, egress=link, queue_depth=64)


def test_direction_suffixes_and_later_options_refine_earlier_ones():
    opts = parse_link_options(["1:delay=1ms,rate=1gbit", "1/out:gemodel=0.01/0.3/0.9",
                               "1/in:loss=0.5", "1:queue_bytes=9000,queue_pps=1e4,"
                               "queue_rate=10mbit"])[1]
    assert opts.ingress == LinkConfig(delay_ns=1_000_000, rate_bps=1e9, loss=0.5)
    assert opts.egress == LinkConfig(delay_ns=1_000_000, rate_bps=1e9,
                                     gemodel=GilbertElliott(0.01, 0.3, 0.9, 0.0))
    assert (opts.queue_bytes, opts.queue_pps, opts.queue_bps) == (9000, 1e4, 10e6)


@pytest.mark.parametrize("links", [
    ["2:delay=5ms,jitter=1ms,loss=0.01,rate=100mbit,queue=64"],
    ["4/in:corrupt=0.001,limit=50", "4/out:gemodel=0.02/0.4/1/0.001,rate=2500kbit"],
    ["1:queue=8,queue_bytes=12000,queue_pps=500,queue_rate=3mbit"],
])
def test_settings_survive_the_round_trip_through_the_command_line(links):
    parsed = parse_link_options(links)
    assert parse_link_options(link_arguments(parsed)) == parsed


@pytest.mark.parametrize("text, message", [
    ("delay=5ms", "write PORT"),
    ("1:delay=5", "give a duration with a unit"),
    ("1:rate=100mbps", "bytes/s; write mbit"),
    ("1:loss=1.5", "fraction in 0..1"),
    ("1:gemodel=0/0", "cannot both be 0"),
    ("1/in:queue=8", "drop '/in'"),
    ("1:colour=red", "unknown key 'colour'"),
    ("600:delay=1ms", "not in 0..510"),
    ("1:queue=-3", "whole number"),
])
def test_bad_settings_are_refused_with_the_fix(text, message):
    with pytest.raises(PortOptionError, match=message):
        parse_link_options([text])


def test_control_commands_change_queues_and_links_at_run_time():
    sw = probe_switch("2:rate=8mbit", priority_queues=2)
    options = parse_link_options(["2:rate=8mbit"])
    assert execute(sw, "set_queue_depth 3 2", options) == "ok"
    assert execute(sw, "set_queue_rate 1000 2 1", options) == "ok"
    assert sw.tm.queue_config(2, 0).depth_packets == 3
    assert sw.tm.queue_config(2, 1).rate_pps == 1000
    assert sw.tm.queue_config(2, 0).rate_pps is None
    out = run(sw, [(0, 1, probe_frame(2, tag=k)) for k in range(10)])
    assert len(out) == 4
    assert execute(sw, "set_link 2/out:loss=1", options) == "ok"
    assert options[2].egress.loss == 1 and options[2].egress.rate_bps == 8e6
    run(sw, [(10**10, 1, probe_frame(2))])
    counters = json.loads(execute(sw, "counters"))
    assert counters["drop_queue_full"] == 6 and counters["drop_link_loss"] == 1
    assert json.loads(execute(sw, "queue_depth 2")) == 0
    sw.receive(1, probe_frame(2), 2 * 10**10)
    sw.receive(1, probe_frame(2, 1), 2 * 10**10)
    sw.receive(1, probe_frame(2, 1), 2 * 10**10)
    assert json.loads(execute(sw, "queue_depths")) == {"time_ns": 2 * 10**10,
                                                       "ports": {"2": [2, 0, 2]}}
    for bad, why in [("set_queue_depth x", "integer"), ("set_queue_depth 4 2 5", "priority"),
                     ("fly", "unknown command"), ("set_link 2:delay=1", "unit")]:
        with pytest.raises(ControlError, match=why):
            execute(sw, bad, options)


def test_the_switch_process_refuses_a_link_for_a_port_it_does_not_have(capsys):
    from netweft.emulation.process.switch_process import main

    with pytest.raises(SystemExit) as stop:
        main(["--program", "p4/basic_forward.p4", "--port", "1=s1-eth1",
              "--link", "3:delay=1ms"])
    assert stop.value.code == 2
    assert "--link names port(s) 3 that no --port gives" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--program", "p4/basic_forward.p4", "--link", "1:delay=5"])
    assert "give a duration with a unit" in capsys.readouterr().err


def test_bad_queue_limits_from_python_are_a_switch_error():
    from netweft.emulation.switch import SwitchError

    sw = probe_switch()
    with pytest.raises(SwitchError, match="queue depth must be >= 0"):
        sw.configure_port(2, PortOptions(queue_depth=-1))
    with pytest.raises(SwitchError, match="rate_pps must be positive"):
        sw.set_queue_rate(0, 2)


def test_netem_spelling_reads_as_the_key_value_one():
    netem = parse_link_option("2/out:delay 5ms jitter 1ms loss 1% gemodel 0.01 0.3 0.9 "
                              "corrupt 0.1% rate 100mbit queue 16")
    keyed = parse_link_option("2/out:delay=5ms,jitter=1ms,loss=0.01,gemodel=0.01/0.3/0.9,"
                              "corrupt=0.001,rate=100mbit,queue=16")
    assert netem == keyed
    assert netem[1].egress.gemodel == GilbertElliott(0.01, 0.3, 0.9, 0.0)
    assert netem[1].egress.loss == 0.01   # loss and gemodel together: both apply
