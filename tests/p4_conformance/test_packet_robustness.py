"""Arbitrary bytes never crash the switch: process() returns a list of
(port, bytes) for any input (DESIGN: a malformed packet is counted and
dropped, never crashes a switch)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from .harness import BOTH_BACKENDS, REPO_P4_DIR, switch_factory
from .packets import ipv4_udp

spray_switch = switch_factory(REPO_P4_DIR / "ecmp_spray.p4", BOTH_BACKENDS)
features_switch = switch_factory("parser_features")
mri_switch = switch_factory("tut_mri")

VALID = bytes(ipv4_udp(dst="10.1.2.3"))


@st.composite
def frames(draw) -> bytes:
    if draw(st.booleans()):
        return draw(st.binary(max_size=200))
    data = bytearray(VALID)
    for _ in range(draw(st.integers(1, 6))):
        pos = draw(st.integers(0, len(data) - 1))
        data[pos] = draw(st.integers(0, 255))
    return bytes(data[:draw(st.integers(0, len(data)))])


def check(outputs) -> None:
    assert isinstance(outputs, list)
    for port, data in outputs:
        assert 0 <= port < 511
        assert isinstance(data, bytes | bytearray)


@settings(max_examples=60, deadline=None)
@given(data=frames(), ethertype=st.sampled_from([0x0800, 0x86DD, 0x8100, 0x9100, 0x9101,
                                                 0x9102, 0x9103, 0x9104]))
def test_arbitrary_frames_never_crash(spray_switch, features_switch, mri_switch, data,
                                      ethertype):
    spray = spray_switch()
    spray.table_add("MyIngress.ipv4_routes", {"hdr.ipv4.dstAddr": ("0.0.0.0", 0)},
                    "MyIngress.set_group", {"group_id": 1, "group_size": 2, "mode": 0})
    check(spray.process(1, data))
    retyped = data[:12] + ethertype.to_bytes(2, "big") + data[14:] if len(data) >= 14 else data
    check(spray.process(1, retyped))
    check(features_switch().process(0, retyped))
    check(mri_switch().process(0, data))
