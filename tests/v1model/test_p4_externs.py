"""Registers, counters, meters, hashes, selectors, functions, sub-controls, digests."""

import struct
import zlib

import pytest
from p4_switch import switch
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from netweft.emulation.v1model.hash_algorithms import CRC_CCITT, HashAlgorithms, csum16

DST = bytes.fromhex("0a0000000001")
SRC = bytes.fromhex("0a0000000002")
CTL = "!BBIIHBb"


def ctl(op, idx=0, value=0, out1=0, out2=0, out3=0, sval=0) -> bytes:
    return DST + SRC + b"\x88\xb6" + struct.pack(CTL, op, idx, value, out1, out2, out3, sval)


def fields(data: bytes):
    return struct.unpack(CTL, data[14:14 + struct.calcsize(CTL)])


def one(sw, data, port=3):
    out = sw.process(port, data)
    assert len(out) == 1, out
    return out[0]


def test_register_write_then_read_and_control_plane_view():
    sw = switch("externs")
    _, data = one(sw, ctl(1, idx=5, value=0xDEADBEEF))
    assert fields(data)[3] == 0xDEADBEEF
    assert sw.register_read("regs", 5) == 0xDEADBEEF
    sw.register_write("I.regs", 2, 77)
    _, data = one(sw, ctl(1, idx=2, value=9))
    assert sw.register_read("regs", 2) == 9


def test_counter_counts_packets_and_bytes():
    sw = switch("externs")
    a = ctl(2, idx=1)
    one(sw, a)
    one(sw, a + b"pad")
    assert sw.counter_read("ctr", 1) == (2, 2 * len(a) + 3)
    assert sw.counter_read("ctr", 0) == (0, 0)


def test_direct_counter_counts_hits_of_its_entry():
    sw = switch("externs")
    entry = sw.table_add("by_op", {"hdr.ctl.op": 2}, "counted", {"port": 6})
    port, _ = one(sw, ctl(2))
    assert port == 6
    one(sw, ctl(1))  # misses: not counted
    assert sw.direct_counter_read("by_op", entry) == (1, len(ctl(2)))


def test_meter_colours_with_an_injected_clock():
    now = [0]
    sw = switch("externs", clock=lambda: now[0])
    sw.meter_set_rates("mtr", [(0.001, 1), (0.002, 2)], index=0)
    colours = [fields(one(sw, ctl(3, idx=0))[1])[5] for _ in range(3)]
    assert colours == [0, 1, 2]
    now[0] = 1_000_000
    assert fields(one(sw, ctl(3, idx=0))[1])[5] == 0
    assert fields(one(sw, ctl(3, idx=1))[1])[5] == 0  # unconfigured meter: green


def test_hash_matches_bmv2_field_list_packing():
    sw = switch("externs")
    value = 0x01020304
    f = fields(one(sw, ctl(4, value=value))[1])
    algos = HashAlgorithms()
    assert f[4] == algos.get("crc16")(SRC + struct.pack("!I", value)) % 65536
    assert f[3] == 10 + zlib.crc32(struct.pack("!I", value)) % 1000


def test_function_out_parameter_and_sub_control_constructor_argument():
    sw = switch("externs")
    f = fields(one(sw, ctl(5, idx=100, value=1))[1])
    assert (f[5], f[4], f[3]) == (255, 1, 101)
    f = fields(one(sw, ctl(5, idx=20, value=0xFFFFFFF0))[1])
    assert (f[5], f[4], f[3]) == (220, 0, (0xFFFFFFF0 + 100) & 0xFFFFFFFF)


def test_signed_arithmetic_shift_and_concatenation():
    sw = switch("externs")
    f = fields(one(sw, ctl(7, value=0x1234, sval=-100))[1])
    assert f[6] == 56 and f[5] == 28 and f[4] == 0x3412
    f = fields(one(sw, ctl(7, sval=10))[1])
    assert f[6] == -90 and f[5] == (-45) & 0xFF


def test_digest_is_collected():
    sw = switch("externs")
    one(sw, ctl(6), port=9)
    assert sw.digests == [(1, {"src": int.from_bytes(SRC, "big"), "port": 9})]


def test_failed_assert_drops_the_packet_and_is_counted():
    sw = switch("externs")
    assert sw.process(1, ctl(8, value=1)) == []
    assert sw.stats["assert_failed"] == 1
    assert len(sw.process(1, ctl(8, value=0))) == 1


def test_non_control_packets_are_dropped_and_exit_skips_the_rest():
    sw = switch("externs")
    assert sw.process(1, DST + SRC + b"\x86\xdd" + bytes(40)) == []


def test_action_selector_spreads_flows_over_members_deterministically():
    sw = switch("externs")
    members = [sw.act_prof_add_member("ecmp", "set_port", {"port": p}) for p in (4, 5, 6)]
    group = sw.act_prof_create_group("ecmp", members)
    sw.table_add_group("ecmp", {"hdr.ipv4.dstAddr": "10.0.0.9"}, group)
    algos = HashAlgorithms()
    seen = set()
    for i in range(30):
        src = f"10.1.0.{i + 1}"
        pkt = bytes(Ether(dst=DST, src=SRC) / IP(src=src, dst="10.0.0.9", proto=17) / UDP())
        port, _ = one(sw, pkt)
        key = bytes(int(x) for x in src.split(".")) + b"\x11"
        assert port == (4, 5, 6)[(algos.get("crc16")(key) & 0xFFFF) % 3]
        seen.add(port)
    assert seen == {4, 5, 6}


@pytest.mark.parametrize("backend", ["python", "auto"])
def test_an_empty_selector_group_drops_and_counts_with_one_warning(backend, caplog):
    """A group emptied by its controller (every member removed) drops the packets its
    entries select, counted as ``drop_empty_group`` and warned about once, not as the
    back end's internal error."""
    sw = switch("externs", backend=backend)
    member = sw.act_prof_add_member("ecmp", "set_port", {"port": 4})
    sw.table_add_group("ecmp", {"hdr.ipv4.dstAddr": "10.0.0.8"},
                       sw.act_prof_create_group("ecmp", [member]))
    sw.table_add_group("ecmp", {"hdr.ipv4.dstAddr": "10.0.0.9"},
                       sw.act_prof_create_group("ecmp", []))
    def pkt_to(dst: str) -> bytes:
        return bytes(Ether(dst=DST, src=SRC) / IP(src="10.1.0.1", dst=dst, proto=17) / UDP())

    assert one(sw, pkt_to("10.0.0.8"))[0] == 4
    pkt = pkt_to("10.0.0.9")
    with caplog.at_level("WARNING"):
        for _ in range(3):
            assert sw.process(3, pkt) == []
    stats = sw.stats
    assert (stats["drop_empty_group"], stats["internal_error"], stats["dropped"]) == (3, 0, 3)
    warnings = [r for r in caplog.records if "no members" in r.getMessage()]
    assert len(warnings) == 1 and not any(r.exc_info for r in caplog.records)


def test_action_profile_entries_need_members():
    sw = switch("externs")
    with pytest.raises(ValueError, match="action profile"):
        sw.table_add("ecmp", {"hdr.ipv4.dstAddr": 1}, "set_port", {"port": 1})


def test_direct_meter_colours_per_entry():
    now = [0]
    sw = switch("externs", clock=lambda: now[0])
    e1 = sw.table_add("by_meter", {"hdr.ctl.idx": 1}, "metered", {})
    sw.table_add("by_meter", {"hdr.ctl.idx": 2}, "metered", {})
    sw.direct_meter_set_rates("by_meter", e1, [(0.001, 1), (0.002, 2)])
    colours = [fields(one(sw, ctl(9, idx=1))[1])[5] for _ in range(3)]
    assert colours == [0, 1, 2]
    assert fields(one(sw, ctl(9, idx=2))[1])[5] == 0  # its own, unconfigured meter
    assert fields(one(sw, ctl(9, idx=3))[1])[5] == 0  # miss: NoAction leaves out3 alone
    with pytest.raises(ValueError, match="no direct meter"):
        sw.direct_meter_set_rates("by_op", e1, [(1.0, 1), (1.0, 1)])


def test_crc16_custom_follows_the_configured_parameters():
    sw = switch("externs")
    value = 0x31323334
    data = struct.pack("!I", value)
    algos = HashAlgorithms()
    assert fields(one(sw, ctl(10, value=value))[1])[4] == algos.get("crc16")(data)
    sw.set_crc16_parameters(0x1021, 0xFFFF, 0x0000, False, False)  # CRC-16/CCITT-FALSE
    algos.set_crc16_parameters(CRC_CCITT)
    assert fields(one(sw, ctl(10, value=value))[1])[4] == algos.get("crc16_custom")(data)


def test_only_the_last_digest_of_a_pass_is_sent():
    sw = switch("externs")
    one(sw, ctl(11), port=4)
    assert sw.digests == [(2, {"src": int.from_bytes(DST, "big"), "port": 4})]


def test_deprecated_checksum16_extern():
    sw = switch("externs")
    value = 0x45000073
    assert fields(one(sw, ctl(12, value=value))[1])[4] == csum16(struct.pack("!I", value))
