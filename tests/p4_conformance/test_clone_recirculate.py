"""Clone (I2E, E2E), resubmit, recirculate and truncate, as BMv2 simple_switch.

Derivations (BMv2 targets/simple_switch/simple_switch.cpp and docs/simple_switch.md):
- I2E clone: the clone re-parses the packet as received (ingress changes are
  lost), metadata is reset except the field list, instance_type 1.
- E2E clone: the clone keeps the headers as they are at the end of egress,
  metadata reset except the field list, runs egress again with instance_type 2.
- resubmit: the received packet enters ingress again with instance_type 6; the
  original is not forwarded.
- recirculate: the deparsed packet enters ingress again with instance_type 4;
  the original is not emitted.
- A packet that ingress sends to unicast enters egress with instance_type 0.
- truncate(n): the emitted packet is cut to n bytes.
"""

from __future__ import annotations

import struct

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("clone_recirculate", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88b6")
PAYLOAD = b"0123456789"
CTL = "!BBBBBBHHH"
LENGTH = 14 + struct.calcsize(CTL) + len(PAYLOAD)
SESSION = 5
CLONE_PORT = 4


def packet(op: int, ig_instance: int = 0, eg_instance: int = 0, preserved: int = 0,
           not_preserved: int = 0, mark: int = 0, ig_length: int = 0, eg_length: int = 0,
           eg_port: int = 0) -> bytes:
    return ETH + struct.pack(CTL, op, ig_instance, eg_instance, preserved, not_preserved,
                             mark, ig_length, eg_length, eg_port) + PAYLOAD


def test_plain_packet_passes_once(make_switch):
    sw = make_switch()
    out = sw.process(1, packet(0))
    assert_outputs(out, [(2, packet(0, 0, 0, 0xAB, 0xCD, 0, LENGTH, LENGTH, 2))])


def test_ingress_to_egress_clone(make_switch):
    sw = make_switch()
    sw.clone_session_set(SESSION, CLONE_PORT)
    out = sw.process(1, packet(1))
    assert_outputs(out, [
        (2, packet(1, 0, 0, 0xAB, 0xCD, 0x11, LENGTH, LENGTH, 2)),
        (CLONE_PORT, packet(1, 0, 1, 0xAB, 0, 0, 0, LENGTH, CLONE_PORT)),
    ])


def test_ingress_clone_survives_dropping_the_original(make_switch):
    sw = make_switch()
    sw.clone_session_set(SESSION, CLONE_PORT)
    out = sw.process(1, packet(6))
    assert_outputs(out, [(CLONE_PORT, packet(6, 0, 1, 0xAB, 0, 0, 0, LENGTH, CLONE_PORT))])


def test_clone_to_unconfigured_session_is_ignored(make_switch):
    sw = make_switch()
    out = sw.process(1, packet(1))
    assert_outputs(out, [(2, packet(1, 0, 0, 0xAB, 0xCD, 0x11, LENGTH, LENGTH, 2))])


def test_clone_session_truncation(make_switch):
    sw = make_switch()
    sw.clone_session_set(SESSION, CLONE_PORT, truncate=20)
    out = sw.process(1, packet(1))
    full_clone = packet(1, 0, 1, 0xAB, 0, 0, 0, LENGTH, CLONE_PORT)
    assert_outputs(out, [
        (2, packet(1, 0, 0, 0xAB, 0xCD, 0x11, LENGTH, LENGTH, 2)),
        (CLONE_PORT, full_clone[:20]),
    ])


def test_egress_to_egress_clone(make_switch):
    sw = make_switch()
    sw.clone_session_set(SESSION, CLONE_PORT)
    out = sw.process(1, packet(2))
    assert_outputs(out, [
        (2, packet(2, 0, 0, 0xAB, 0xCD, 0x22, LENGTH, LENGTH, 2)),
        (CLONE_PORT, packet(2, 0, 2, 0xAB, 0, 0x22, LENGTH, LENGTH, CLONE_PORT)),
    ])


def test_resubmit(make_switch):
    sw = make_switch()
    out = sw.process(1, packet(3))
    assert_outputs(out, [(3, packet(3, 6, 0, 0xAB, 0, 0, LENGTH, LENGTH, 3))])


def test_recirculate(make_switch):
    sw = make_switch()
    out = sw.process(1, packet(4))
    assert_outputs(out, [(3, packet(4, 4, 0, 0xAB, 0, 0x44, LENGTH, LENGTH, 3))])


def test_truncate_in_egress(make_switch):
    sw = make_switch()
    out = sw.process(1, packet(5))
    full = packet(5, 0, 0, 0xAB, 0xCD, 0, LENGTH, LENGTH, 2)
    assert_outputs(out, [(2, full[:18])])


def test_egress_clone_session_truncation(make_switch):
    sw = make_switch()
    sw.clone_session_set(SESSION, CLONE_PORT, truncate=16)
    out = sw.process(1, packet(2))
    assert_outputs(out, [
        (2, packet(2, 0, 0, 0xAB, 0xCD, 0x22, LENGTH, LENGTH, 2)),
        (CLONE_PORT, packet(2, 0, 2, 0xAB, 0, 0x22, LENGTH, LENGTH, CLONE_PORT)[:16]),
    ])


port_parser_switch = switch_factory("port_parser", BOTH_BACKENDS)


def test_parser_sees_the_ingress_port_and_clones_are_reparsed_with_it(port_parser_switch):
    sw = port_parser_switch()
    sw.clone_session_set(5, 4)
    eth = bytes.fromhex("0a0000000001" "0a00000000ff" "0800") + b"data"

    def with_flag(frame: bytes, flag: int) -> bytes:
        return frame[:11] + bytes([flag]) + frame[12:]

    # from the CPU port: the CPU header (port 3, mirror) is stripped; the clone
    # is the received packet parsed again from port 7, CPU header included
    cpu = bytes([(3 << 1) | 1])
    out = sw.process(7, cpu + eth)
    assert_outputs(out, [(3, with_flag(eth, 0)), (4, cpu + with_flag(eth, 1))])
    # from any other port the first byte is Ethernet, and the packet goes to the CPU
    assert_outputs(sw.process(2, eth), [(7, with_flag(eth, 0))])
