"""standard_metadata semantics of v1model as BMv2 simple_switch implements them.

Instance types (BMv2 docs/simple_switch.md): NORMAL 0, REPLICATION 5.  egress_spec
511 is the drop port; egress_spec defaults to 0; mark_to_drop sets egress_spec to
511 and mcast_grp to 0; a non-zero mcast_grp wins over egress_spec; multicast
copies see egress_rid; packet_length is the received length.
"""

from __future__ import annotations

import struct

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("v1model_metadata", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88b5")
PAYLOAD = b"\x11\x22\x33\x44\x55"
PROBE_FMT = "!BBHIIIHHI"  # command, arg, ig_port, ig_length, ig_instance, eg_*


def probe(command: int, arg: int = 0, ig_port: int = 0, ig_length: int = 0,
          ig_instance: int = 0, eg_instance: int = 0, eg_port: int = 0,
          eg_rid: int = 0, eg_length: int = 0) -> bytes:
    return ETH + struct.pack(PROBE_FMT, command, arg, ig_port, ig_length, ig_instance,
                             eg_instance, eg_port, eg_rid, eg_length) + PAYLOAD


def observed(command: int, arg: int, in_port: int, out_port: int, *,
             instance: int = 0, rid: int = 0) -> tuple[int, bytes]:
    """What the probe program writes for a packet seen in ingress and egress."""
    length = len(probe(command, arg))
    return out_port, probe(command, arg, in_port, length, 0, instance, out_port, rid, length)


def test_unicast_fills_ingress_and_egress_metadata(make_switch):
    sw = make_switch()
    out = sw.process(3, probe(1, 6))
    assert_outputs(out, [observed(1, 6, 3, 6)])


def test_egress_spec_defaults_to_port_zero(make_switch):
    sw = make_switch()
    assert_outputs(sw.process(4, probe(5)), [observed(5, 0, 4, 0)])


def test_egress_spec_511_drops(make_switch):
    assert make_switch().process(1, probe(2)) == []


def test_mark_to_drop_drops(make_switch):
    assert make_switch().process(1, probe(3, 2)) == []


def test_egress_spec_written_after_mark_to_drop_forwards(make_switch):
    sw = make_switch()
    assert_outputs(sw.process(1, probe(9, 7)), [observed(9, 7, 1, 7)])


def test_mark_to_drop_in_egress_drops(make_switch):
    assert make_switch().process(1, probe(7, 2)) == []


def test_exit_ends_ingress_but_not_egress(make_switch):
    sw = make_switch()
    assert_outputs(sw.process(2, probe(8, 5)), [observed(8, 5, 2, 5)])


def test_non_probe_frame_is_dropped(make_switch):
    other = bytes.fromhex("0a0000000001" "0a0000000002" "0800") + b"\x45" + bytes(19)
    assert make_switch().process(1, other) == []


def test_multicast_copies_carry_port_rid_and_replication_type(make_switch):
    sw = make_switch()
    sw.mc_group_set(3, [(1, 100), (4, 101), (1, 102)])
    out = sw.process(2, probe(4, 3))
    assert_outputs(out, [
        observed(4, 3, 2, 1, instance=5, rid=100),
        observed(4, 3, 2, 4, instance=5, rid=101),
        observed(4, 3, 2, 1, instance=5, rid=102),
    ])


def test_multicast_wins_over_drop_port(make_switch):
    sw = make_switch()
    sw.mc_group_set(9, [(5, 1)])
    assert_outputs(sw.process(0, probe(6, 9)), [observed(6, 9, 0, 5, instance=5, rid=1)])


def test_multicast_to_unconfigured_group_emits_nothing(make_switch):
    assert make_switch().process(0, probe(4, 42)) == []


def test_multicast_group_can_be_replaced(make_switch):
    sw = make_switch()
    sw.mc_group_set(3, [(1, 1), (2, 2)])
    sw.mc_group_set(3, [(6, 9)])
    assert_outputs(sw.process(0, probe(4, 3)), [observed(4, 3, 0, 6, instance=5, rid=9)])


def test_packet_length_is_the_received_length(make_switch):
    sw = make_switch()
    long_packet = probe(1, 2) + bytes(100)
    out = sw.process(1, long_packet)
    assert len(out) == 1
    port, data = out[0]
    assert port == 2
    fields = struct.unpack(PROBE_FMT, data[14:14 + struct.calcsize(PROBE_FMT)])
    assert fields[3] == len(long_packet)
    assert fields[8] == len(long_packet)
    assert data[14 + struct.calcsize(PROBE_FMT):] == PAYLOAD + bytes(100)


def test_output_order_is_deterministic(make_switch):
    outputs = []
    for _ in range(3):
        sw = make_switch()
        sw.mc_group_set(3, [(6, 1), (2, 2), (4, 3), (2, 4)])
        outputs.append(sw.process(1, probe(4, 3)))
        outputs.append(sw.process(1, probe(4, 3)))
    assert len(outputs[0]) == 4
    assert all(out == outputs[0] for out in outputs)
