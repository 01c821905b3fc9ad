"""STF files run on SoftSwitch: every command against the switch, and honest verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from netweft.emulation.stf import match_packet, run_stf
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4

HERE = Path(__file__).parent
REPO = HERE.parent.parent

# A tagged frame: dst, src, EtherType 0x88B5, tag(kind, val, port); 18 bytes.
SRC = "000000000001"


def tag_frame(dst: str, kind: int, val: int, port: int, extra: str = "") -> str:
    return f"{dst} {SRC} 88B5 {kind:02x} {val:02x} {port:04x} {extra}".strip()


@pytest.fixture(scope="module")
def tagged():
    return compile_p4(HERE / "programs" / "tagged_switch.p4")


@pytest.fixture(scope="module")
def basic():
    return compile_p4(REPO / "p4" / "basic_forward.p4")


def run(program, text: str):
    return run_stf(SoftSwitch(program), text, "t.stf")


# IPv4/UDP to 10.0.1.1, TTL 64, correct header checksum; after forwarding the
# TTL is 63 and the checksum 0x66CD.
IPV4_IN = ("000000000001 000000000002 0800 4500001e00010000401165cd0a0000010a000101 "
           "00010002000a826c 6869")
IPV4_OUT = ("080000000111 000000000001 0800 4500001e000100003f1166cd0a0000010a000101 "
            "00010002000a826c 6869")


def test_basic_forward_lpm_entry_passes(basic):
    result = run(basic, f"""
add MyIngress.ipv4_lpm hdr.ipv4.dstAddr:0x0a000100/24 MyIngress.ipv4_forward(dstAddr:0x080000000111, port:3)
packet 0 {IPV4_IN}
expect 3 {IPV4_OUT}$
""")
    assert result.errors == []
    assert [(v.line, v.port, v.ok) for v in result.verdicts] == [(4, 3, True)]
    assert result.passed


def test_lpm_prefix_from_written_digits(basic):
    # 0x0a0001** has six written hex digits (wildcards do not count): 10.0.1.0/24
    result = run(basic, f"""
add ipv4_lpm dstAddr:0x0a0001** ipv4_forward(dstAddr:0x080000000111, port:3)
packet 0 {IPV4_IN}
expect 3 {IPV4_OUT}
""")
    assert result.passed, result.errors


def test_wrong_bytes_fail_with_position_and_diff(basic):
    wrong = IPV4_OUT.replace("3f11", "4011")  # claims the TTL was not decremented
    result = run(basic, f"""
add ipv4_lpm dstAddr:0x0a000101/32 ipv4_forward(dstAddr:0x080000000111, port:3)
packet 0 {IPV4_IN}
expect 3 {wrong}
""")
    (verdict,) = result.verdicts
    assert not verdict.ok and not result.passed
    assert verdict.reason == "differs at byte 22"
    diff = verdict.diff()
    assert "expected:" in diff and "actual:" in diff and "^^" in diff


def test_wildcards_and_length_rules(basic):
    masked = IPV4_OUT.replace("3f1166cd", "3f11****")
    out_bytes = bytes.fromhex("".join(IPV4_OUT.split()))
    assert match_packet("".join(masked.split()).upper(), out_bytes, exact=True) == ""
    # a prefix of the packet passes without '$' and fails with it
    prefix = "".join(IPV4_OUT.split())[:28].upper()
    assert match_packet(prefix, out_bytes, exact=False) == ""
    assert match_packet(prefix, out_bytes, exact=True).startswith("too long")
    assert match_packet(prefix + "00" * 40, out_bytes, exact=False).startswith("too short")
    # an odd number of nibbles compares as a prefix, as in p4c's driver
    assert match_packet(prefix[:-1], out_bytes, exact=False) == ""
    assert match_packet(prefix[:-2] + "F", out_bytes, exact=False) == "differs at byte 13"


def test_missing_and_unexpected_packets_fail(basic):
    # no route: the packet is dropped, so the expectation is not met
    result = run(basic, f"packet 0 {IPV4_IN}\nexpect 3 {IPV4_OUT}\n")
    assert [(v.ok, v.reason) for v in result.verdicts] == [(False, "no packet came out")]
    # a packet on a port nobody expected fails the test
    result = run(basic, f"""
add ipv4_lpm dstAddr:0x0a000101/32 ipv4_forward(dstAddr:0x080000000111, port:3)
packet 0 {IPV4_IN}
""")
    assert [(v.port, v.ok, v.reason) for v in result.verdicts] == [
        (3, False, "unexpected packet")]


def test_expect_without_data_allows_any_packets(basic):
    result = run(basic, f"""
add ipv4_lpm dstAddr:0x0a000101/32 ipv4_forward(dstAddr:0x080000000111, port:3)
packet 0 {IPV4_IN}
packet 0 {IPV4_IN}
expect 3
""")
    assert result.passed and result.verdicts == []
    assert len(result.outputs[3]) == 2


def test_setdefault_changes_the_miss_action(basic):
    result = run(basic, f"""
setdefault ipv4_lpm ipv4_forward(dstAddr:0x080000000111, port:3)
packet 0 {IPV4_IN}
expect 3 {IPV4_OUT}$
""")
    assert result.passed, (result.errors, [v.describe() for v in result.verdicts])


def test_expectations_per_port_in_order(tagged):
    a = tag_frame("000000000002", 0x40, 1, 0)
    b = tag_frame("000000000002", 0x40, 2, 0)
    text = f"""
add by_dst dst:0x000000000002 fwd(port:2)
packet 1 {a}
packet 1 {b}
expect 2 {b}
expect 2 {a}
"""
    result = run(tagged, text)
    assert [v.ok for v in result.verdicts] == [False, False]
    result = run(tagged, text.replace(f"expect 2 {b}\nexpect 2 {a}",
                                      f"expect 2 {a}\nexpect 2 {b}"))
    assert result.passed


def test_ternary_range_valid_keys_and_priority(tagged):
    text = """
add by_dst dst:0x000000000002 fwd(port:2)
add by_kind {p1} tag.kind:0x0* tag.port:0->100 tag.$valid$:1 set_val(v:0xAA)
add by_kind {p2} tag.kind:0x05 tag.port:0x10->0x20 hdr.tag.valid:1 set_val(v:0xBB)
packet 1 {frame}
expect 2 {out}$
"""
    frame = tag_frame("000000000002", 5, 0, 0x15)
    # both entries match; the larger priority wins, as in P4Runtime
    high_second = run(tagged, text.format(p1=1, p2=5, frame=frame,
                                          out=tag_frame("000000000002", 5, 0xBB, 0x15)))
    assert high_second.passed, [v.describe() for v in high_second.verdicts]
    high_first = run(tagged, text.format(p1=9, p2=5, frame=frame,
                                         out=tag_frame("000000000002", 5, 0xAA, 0x15)))
    assert high_first.passed
    # outside both ranges: no entry matches, val is unchanged
    other = tag_frame("000000000002", 5, 0, 0x300)
    miss = run(tagged, text.format(p1=1, p2=5, frame=other, out=other))
    assert miss.passed
    # the ternary wildcard nibble: kind 0x15 is outside 0x0*
    kind15 = tag_frame("000000000002", 0x15, 0, 0x50)
    assert run(tagged, text.format(p1=1, p2=5, frame=kind15, out=kind15)).passed


def test_multicast_group_from_nodes(tagged):
    frame = tag_frame("0000000000ff", 0x40, 0, 0)
    result = run(tagged, f"""
add by_dst dst:0x0000000000ff flood(grp:7)
mc_mgrp_create 7
mc_node_create 5 3 4
mc_node_create 6 8
mc_node_associate 7 0
mc_node_associate 7 1
packet 1 {frame}
expect 3 {frame.replace(SRC, "000000000005")}$
expect 4 {frame.replace(SRC, "000000000005")}$
expect 8 {frame.replace(SRC, "000000000006")}$
""")
    assert result.passed, [v.describe() for v in result.verdicts]
    assert sorted(result.outputs) == [3, 4, 8]


def test_mirroring_add_clones_to_the_session_port(tagged):
    frame = tag_frame("000000000002", 5, 0, 0x15)
    result = run(tagged, f"""
add by_dst dst:0x000000000002 fwd(port:2)
add by_kind 1 tag.kind:0x05 tag.port:0->0xffff tag.$valid$:1 mirror(session:9)
mirroring_add 9 6
packet 1 {frame}
expect 2 {frame}$
expect 6 {frame.replace(SRC, "C10E00000000")}$
""")
    assert result.passed, [v.describe() for v in result.verdicts] + result.errors


def test_registers_and_counters(tagged):
    frame = tag_frame("000000000002", 3, 0, 0)
    result = run(tagged, f"""
add by_dst dst:0x000000000002 fwd(port:2)
packet 1 {frame}
packet 1 {frame}
expect 2
register_read seen 3 == 2
register_read seen 4 == 0
register_write seen 4 41
register_read seen 4 == 41
check_counter per_kind(3) packets == 2
check_counter per_kind(3) bytes == 36
check_counter per_kind(4)
register_reset seen
register_read seen 3 == 0
""")
    assert result.errors == []
    assert result.passed
    wrong = run(tagged, f"packet 1 {frame}\nregister_read seen 3 == 5\n"
                        "check_counter per_kind(3) packets > 1\n")
    assert wrong.errors == [
        "t.stf:2: register_read: seen[3] is 1, expected == 5",
        "t.stf:3: check_counter: per_kind[3] packets is 1, expected > 1"]


def test_control_plane_errors_carry_the_stf_line(tagged):
    result = run(tagged, """
add no_such_table k:1 fwd(port:1)
add by_dst dst:0x000000000002 no_such_action()
add by_dst nokey:1 fwd(port:2)
add by_dst dst:0x000000000002 fwd(port:2, extra:1)
mc_node_associate 1 4
""")
    assert not result.passed
    lines = [e.split(":")[1] for e in result.errors]
    assert lines == ["2", "3", "4", "5", "6"]
    assert "no_such_table" in result.errors[0]
    assert "no_such_action" in result.errors[1]
    assert "has no key 'nokey'" in result.errors[2]
    assert "extra" in result.errors[3]
    assert "no multicast node 4" in result.errors[4]


def test_zero_length_packet_is_not_sent(tagged):
    # p4c's driver hands BMv2 nothing for 'packet PORT' without data
    result = run(tagged, "setdefault by_dst fwd(port:2)\npacket 1\n")
    assert result.passed and result.outputs == {}
    assert result.notes == ["line 2: zero-length packet not sent"]
    # the same switch forwards a real frame
    frame = "000000000002 000000000001 0800"
    assert run(tagged, f"setdefault by_dst fwd(port:2)\npacket 1 {frame}\n"
                       f"expect 2 {frame}$\n").passed


@pytest.mark.parametrize(("program", "stf", "passed"), [
    (REPO / "p4" / "basic_forward.p4", HERE / "programs" / "basic_forward.stf", 2),
    (HERE / "programs" / "tagged_switch.p4", HERE / "programs" / "tagged_switch.stf", 4),
])
def test_stf_files_shipped_with_the_tests(program, stf, passed):
    from netweft.emulation.stf import run_stf_files

    result = run_stf_files(program, stf)
    assert result.errors == []
    assert [v.ok for v in result.verdicts] == [True] * passed


def test_multicast_dissociate_destroy_and_counter_reset(tagged):
    frame = tag_frame("0000000000ff", 0x02, 0, 0)
    result = run(tagged, f"""
add by_dst dst:0x0000000000ff flood(grp:7)
mc_mgrp_create 7
mc_node_create 0 3
mc_node_create 0 4
mc_node_associate 7 0
mc_node_associate 7 1
mc_node_dissociate 7 0
packet 1 {frame}
expect 4 {frame}$
check_counter per_kind(2) packets == 1
counter_reset per_kind
check_counter per_kind(2) packets == 0
mc_mgrp_destroy 7
packet 1 {frame}
""")
    assert result.errors == []
    # only port 4 ever got a copy: node 0 left the group, then the group was destroyed
    assert sorted(result.outputs) == [4] and len(result.outputs[4]) == 1
    assert result.passed


class _CrashingSwitch:
    """Stands in for a SoftSwitch whose pipeline fails inside process()."""

    def __init__(self) -> None:
        self.stats = {"internal_error": 0}

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        if data[:1] == b"\xff":
            self.stats["internal_error"] += 1
            return []
        return [(port, data)]


def test_internal_switch_errors_are_reported_at_the_packet_line():
    result = run_stf(_CrashingSwitch(), "packet 1 00\nexpect 1 00\npacket 1 ff\n", "t.stf")
    assert [v.ok for v in result.verdicts] == [True]
    assert result.errors == ["t.stf:3: packet: the switch hit an internal error and dropped "
                             "the packet (its log has the traceback)"]
    assert not result.passed


def test_lpm_key_given_as_value_and_prefix_mask(basic):
    result = run(basic, f"""
add ipv4_lpm dstAddr:0x0a000100&&&0xffffff00 ipv4_forward(dstAddr:0x080000000111, port:3)
packet 0 {IPV4_IN}
expect 3 {IPV4_OUT}$
""")
    assert result.passed, result.errors
    bad = run(basic, "add ipv4_lpm dstAddr:0x0a000100&&&0xff00ff00 drop()\n")
    assert bad.errors == ["t.stf:1: add: mask '0xff00ff00' of an lpm key is not a prefix mask"]
