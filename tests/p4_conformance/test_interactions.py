"""Interactions of recirculate, resubmit, clones, multicast and truncate, as in
BMv2 simple_switch (targets/simple_switch/simple_switch.cpp):
- recirculate re-parses the deparsed packet, packet_length is its new length;
- an E2E clone is taken before egress's drop decision is applied;
- each resubmit carries the field list as it is at the end of ingress;
- an I2E clone and a resubmit can come from the same pass;
- every multicast copy runs egress and may be E2E-cloned; a clone's
  metadata is reset, so its egress_rid is 0;
- truncate() to more than the packet's length changes nothing."""

from __future__ import annotations

import struct

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("interactions", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88bd")
CTL = "!BBHBBBB"
PAYLOAD = b"payload-bytes"
LENGTH = 14 + struct.calcsize(CTL) + len(PAYLOAD)


def packet(op: int, passes: int = 0, ig_length: int = 0, ig_instance: int = 0,
           eg_instance: int = 0, eg_port: int = 0, eg_rid: int = 0,
           after_ctl: bytes = b"") -> bytes:
    return ETH + struct.pack(CTL, op, passes, ig_length, ig_instance, eg_instance, eg_port,
                             eg_rid) + after_ctl + PAYLOAD


def test_recirculated_packet_is_the_deparsed_longer_one(make_switch):
    out = make_switch().process(1, packet(1))
    extra = bytes.fromhex("cafef00d")
    assert_outputs(out, [(2, packet(1, 1, LENGTH + 4, 4, 0, 2, 0, after_ctl=extra))])


def test_egress_clone_survives_egress_drop(make_switch):
    sw = make_switch()
    sw.clone_session_set(5, 4)
    assert_outputs(sw.process(1, packet(2)), [(4, packet(2, 0, LENGTH, 0, 2, 4, 0))])


def test_resubmit_loop_carries_preserved_counter(make_switch):
    out = make_switch().process(1, packet(3))
    assert_outputs(out, [(2, packet(3, 3, LENGTH, 6, 0, 2, 0))])


def test_truncate_beyond_length_changes_nothing(make_switch):
    out = make_switch().process(1, packet(4))
    assert_outputs(out, [(2, packet(4, 0, LENGTH, 0, 0, 2, 0))])


def test_ingress_clone_and_resubmit_in_one_pass(make_switch):
    sw = make_switch()
    sw.clone_session_set(5, 4)
    out = sw.process(1, packet(5))
    assert_outputs(out, [
        (4, packet(5, 0, 0, 0, 1, 4, 0)),        # the clone: re-parsed original bytes
        (2, packet(5, 0, LENGTH, 6, 0, 2, 0)),   # the resubmitted packet's second pass
    ])


def test_egress_clones_of_multicast_copies(make_switch):
    sw = make_switch()
    sw.clone_session_set(5, 4)
    sw.mc_group_set(1, [(1, 21), (3, 23)])
    out = sw.process(0, packet(6))
    assert_outputs(out, [
        (1, packet(6, 0, LENGTH, 0, 5, 1, 21)),
        (3, packet(6, 0, LENGTH, 0, 5, 3, 23)),
        (4, packet(6, 0, LENGTH, 0, 2, 4, 0)),
        (4, packet(6, 0, LENGTH, 0, 2, 4, 0)),
    ])
