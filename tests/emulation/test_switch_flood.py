"""A switch process under a junk flood keeps forwarding a valid flow and counts every frame.

The scenario is junk_flood.py's (measured numbers: docs/switch.md). The valid flow
(1,000 frames/s, well below what the switch forwards) crosses ports 1 -> 2 alone,
then while port 3 takes a short flood of junk; the switch reads its ports in
turns (at most ``BATCH`` frames from one port before the others), so the flood
takes at most its share of the loop and the valid flow keeps its delivery.
"""

import pytest
from junk_flood import run_flood

pytestmark = pytest.mark.netns


def test_a_junk_flood_on_one_port_neither_stops_a_valid_flow_nor_escapes_the_counters(
        tmp_path):
    result = run_flood(tmp_path, valid_rate=1000, seconds=2.0, junk_rate=20000, seed=7)
    alone, flooded, stats = result["alone"], result["flooded"], result["stats"]
    # every frame that reached a port was read by the switch or dropped by the kernel
    # because the switch did not read fast enough (the socket's tp_drops)
    junk_arrived = flooded["junk_sent"] - flooded["junk_vlan_short"]
    assert junk_arrived > 10_000
    assert stats["rx_port3"] + stats["kernel_drops_port3"] == junk_arrived
    valid_sent = alone["valid_sent"] + flooded["valid_sent"]
    assert stats["rx_port1"] + stats["kernel_drops_port1"] == valid_sent
    # ... and every frame the switch read was forwarded or dropped with a reason
    assert stats["received"] == sum(v for k, v in stats.items() if k.startswith("rx_port"))
    assert stats["received"] == stats["sent"] + stats["dropped"] + stats.get("switch_errors", 0)
    assert stats["sent"] == (sum(v for k, v in stats.items() if k.startswith("tx_port"))
                             + stats.get("dropped_no_such_port", 0)
                             + stats.get("tx_errors", 0))
    assert stats["drop_parser_error"] > 0 and stats["drop_program"] > 0
    # the junk has no route: port 2 carries the valid flow only, all of it delivered
    assert stats["tx_port2"] == alone["delivered"] + flooded["delivered"]
    # the valid flow's delivery under the flood is that without it, within 10%: the
    # switch reads the valid port in its turn however much junk waits on port 3
    assert alone["delivery_ratio"] > 0.95
    assert flooded["delivery_ratio"] >= 0.9 * alone["delivery_ratio"]
