"""Features whose control-plane side lies beyond the issue's stable contract:
action profile members, action selector groups, parser value sets, direct
counters, configured meters, digests and log messages.  These use
SoftSwitch's additional methods (act_prof_add_member, act_prof_create_group,
table_add_member, table_add_group, value_set_add, direct_counter_read,
meter_set_rates, the clock option, digests, logs); the
expected packets are still derived independently (selector member =
crc16(selector fields) % group size, members in creation order, as BMv2)."""

from __future__ import annotations

from .harness import switch_factory
from .packets import assert_outputs
from .reference_hashes import crc16

misc_switch = switch_factory("misc_externs")
parser_switch = switch_factory("parser_features")
stateful_switch = switch_factory("stateful")

DST = bytes.fromhex("0a0000000001")


def test_action_profile_member(misc_switch):
    sw = misc_switch()
    member = sw.act_prof_add_member("MIngress.profiled", "MIngress.set_port", {"port": 7})
    sw.table_add_member("MIngress.profiled", {"hdr.ethernet.dstAddr": "0a:00:00:00:00:01"},
                        member)
    frame = DST + bytes.fromhex("0a00000000ff" "0800") + b"x"
    # profiled hits (no 0x01 mark); selected misses (0x02 mark); port from the member
    expected = DST + bytes.fromhex("0a000002002a" "0800") + b"x"
    assert_outputs(sw.process(5, frame), [(7, expected)])


def test_action_selector_picks_member_by_crc16_of_selector_fields(misc_switch):
    sw = misc_switch()
    members = [sw.act_prof_add_member("MIngress.selected", "MIngress.set_port", {"port": p})
               for p in (3, 4, 5, 6)]
    group = sw.act_prof_create_group("MIngress.selected", members)
    sw.table_add_group("MIngress.selected", {"hdr.ethernet.dstAddr": "0a:00:00:00:00:01"}, group)
    seen = set()
    for low in range(16):
        src_in = bytes([0x0A, 0, 0, low, 0, 0xFF])
        # ingress has already set src[7:0] = 42 and, on the profiled miss, src[15:8] = 1
        src_at_selection = bytes([0x0A, 0, 0, low, 0x01, 0x2A])
        index = crc16(src_at_selection + b"\x08\x00") % 4
        seen.add(index)
        out = sw.process(5, DST + src_in + b"\x08\x00" + b"y")
        assert_outputs(out, [(3 + index, DST + src_at_selection + b"\x08\x00" + b"y")])
    assert len(seen) > 1


def test_value_set_member_is_matched(parser_switch):
    sw = parser_switch()
    sw.value_set_add("FeatParser.special_types", 0x88CC)
    frame = DST + bytes(6) + b"\x88\xcc" + b"\x01\x02"
    expected = DST + (0x77).to_bytes(6, "big") + b"\x88\xcc" + b"\x01\x02"
    assert_outputs(sw.process(0, frame), [(1, expected)])


def test_direct_counter_counts_hits_of_its_entry(stateful_switch):
    sw = stateful_switch()
    entry = sw.table_add("MyIngress.counted", {"hdr.st.index": 4}, "MyIngress.count_entry", {})
    frame = bytes.fromhex("0a0000000001" "0a0000000002" "88ba") + bytes([6, 4]) + bytes(6)
    other = bytes.fromhex("0a0000000001" "0a0000000002" "88ba") + bytes([6, 5]) + bytes(6)
    sw.process(0, frame)
    sw.process(0, frame + b"pad")
    sw.process(0, other)
    assert sw.direct_counter_read("MyIngress.counted", entry) == (2, 2 * len(frame) + 3)


def test_digest_and_log_msg_are_recorded(misc_switch):
    sw = misc_switch()
    frame = DST + bytes.fromhex("0a00000000ff" "0800") + b"x"
    sw.process(5, frame)
    assert len(sw.digests) == 1
    receiver, _data = sw.digests[0]
    assert receiver == 1
    assert "plain message" in sw.logs
    assert "ethertype 2048 from port 5" in sw.logs


def test_configured_meter_is_a_two_rate_three_colour_marker(stateful_switch):
    """RFC 2698, colour-blind, packets meter with CBS 2 and PBS 4 at a frozen
    time: two GREEN, two YELLOW, then RED; once time refills the buckets,
    GREEN again."""
    now = [1_000_000]
    sw = stateful_switch(clock=lambda: now[0])
    sw.meter_set_rates("MyIngress.rate", [(0.001, 2), (0.002, 4)], 1)

    def color() -> int:
        frame = bytes.fromhex("0a0000000001" "0a0000000002" "88ba") + bytes([5, 1]) \
            + bytes(4) + b"\xff\xff"
        (_, data), = sw.process(0, frame)
        return data[14 + 6]

    assert [color() for _ in range(6)] == [0, 0, 1, 1, 2, 2]
    now[0] += 10_000_000
    assert color() == 0
