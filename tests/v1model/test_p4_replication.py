"""Multicast, clones with field lists, resubmit, recirculate, truncate, payload checksums."""

import struct

from hypothesis import given, settings
from hypothesis import strategies as st
from p4_switch import switch

from netweft.emulation.v1model.hash_algorithms import csum16

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88b7")
CTL = "!BBHBBBBH"
PAYLOAD = b"payload!"


def ctl(op, passes=0, rid=0, ig=0, eg=0, kept=0, rnd=0, csum=0) -> bytes:
    return ETH + struct.pack(CTL, op, passes, rid, ig, eg, kept, rnd, csum) + PAYLOAD


def test_unicast_sees_normal_instance_types():
    sw = switch("replication")
    assert sw.process(1, ctl(0)) == [(2, ctl(0, 1, 0, 0, 0, 0x5A))]


def test_multicast_copies_carry_their_rid_in_group_order():
    sw = switch("replication")
    sw.mc_group_set(7, [(3, 10), (4, 11), (3, 12)])
    out = sw.process(1, ctl(1))
    assert out == [(3, ctl(1, 1, 10, 0, 5, 0x5A)), (4, ctl(1, 1, 11, 0, 5, 0x5A)),
                   (3, ctl(1, 1, 12, 0, 5, 0x5A))]
    assert sw.process(1, ctl(1)) == out  # deterministic
    sw.mc_group_set(7, [])
    assert sw.process(1, ctl(1)) == []


def test_ingress_clone_is_the_received_packet_with_the_field_list():
    sw = switch("replication")
    sw.clone_session_set(3, 9)
    out = sw.process(1, ctl(2))
    # the clone re-parses the received bytes; only the @field_list(1) fields survive
    assert sorted(out) == sorted([(2, ctl(2, 1, 0, 0, 0, 0x5A)),
                                  (9, ctl(2, 0, 0, 0, 1, 0x5A))])


def test_egress_clone_keeps_egress_headers_and_runs_egress_again():
    sw = switch("replication")
    sw.clone_session_set(3, 9, truncate=20)
    out = sw.process(1, ctl(7))
    original = ctl(7, 1, 0, 0, 0, 0x5A)
    clone = ctl(7, 1, 0, 0, 2, 0x5A)[:20]
    assert sorted(out) == sorted([(2, original), (9, clone)])


def test_resubmit_preserves_the_field_list_until_the_program_stops():
    sw = switch("replication")
    # passes 1 and 2 resubmit; the third pass is forwarded
    assert sw.process(1, ctl(3)) == [(2, ctl(3, 3, 0, 6, 0, 0x5A))]


def test_recirculate_feeds_the_deparsed_packet_back():
    sw = switch("replication")
    # pass 1 egress recirculates (ctl written by pass 1), pass 2 goes out
    assert sw.process(1, ctl(4)) == [(2, ctl(4, 2, 0, 4, 0, 0x5A))]


def test_truncate_cuts_the_emitted_packet():
    sw = switch("replication")
    assert sw.process(1, ctl(5)) == [(2, ctl(5, 1, 0, 0, 0, 0x5A)[:16])]


def test_random_is_in_range_and_logged():
    sw = switch("replication", seed=1)
    values = set()
    for _ in range(40):
        (_, data), = sw.process(1, ctl(6))
        values.add(struct.unpack(CTL, data[14:24])[6])
    assert values <= set(range(10, 21)) and len(values) > 3
    assert sw.logs[0].startswith("random gave ")


def test_update_checksum_with_payload():
    sw = switch("replication")
    (_, data), = sw.process(1, ctl(8))
    assert struct.unpack(CTL, data[14:24])[7] == csum16(bytes([8]) + PAYLOAD)


def test_verify_checksum_with_payload_sets_checksum_error():
    sw = switch("replication")
    good = csum16(bytes([12]) + PAYLOAD)
    assert sw.process(1, ctl(12, csum=good)) == [(2, ctl(12, 1, 0, 0, 0, 0x5A, 0, good))]
    assert sw.process(1, ctl(12, csum=good ^ 1)) == [(2, ctl(12, 1, 0, 0, 0, 0x5A, 1, good ^ 1))]


def test_a_recirculation_loop_is_cut_by_the_pass_limit():
    sw = switch("replication", max_passes=5)
    sw.mc_group_set(7, [(3, 1)])
    # op 3 resubmits twice then forwards: 3 passes, fits in the limit
    assert len(sw.process(1, ctl(3))) == 1
    sw2 = switch("replication", max_passes=2)
    assert sw2.process(1, ctl(3)) == []
    assert sw2.stats["pass_limit"] == 1


def test_deprecated_forms_preserve_the_fields_of_their_data_argument():
    sw = switch("replication")
    sw.clone_session_set(3, 9)
    out = sw.process(6, ctl(9))
    # clone3 keeps meta.kept and standard_metadata.ingress_port (reported in the rid
    # field for op 9) but not meta.passes
    assert sorted(out) == sorted([(2, ctl(9, 1, 6, 0, 0, 0x5A)),
                                  (9, ctl(9, 0, 6, 0, 1, 0x5A))])
    # resubmit(data) keeps meta.passes: the second pass sees passes == 2 and forwards
    assert sw.process(1, ctl(10)) == [(2, ctl(10, 2, 0, 6, 0, 0x5A))]


def test_split_ingress_and_egress_for_a_traffic_manager():
    from netweft.emulation.switch import QueueMetadata

    sw = switch("replication")
    queued = sw.ingress(1, ctl(13))
    assert [(q.port, q.priority, q.length) for q in queued] == [(2, 5, len(ctl(13)))]
    sent, more = sw.egress(queued[0], QueueMetadata(enq_qdepth=7, deq_timedelta=300))
    assert more == []
    assert sent == [(2, ctl(13, 1, 7, 0, 0, 0x5A, 0, 300))]


def test_split_halves_carry_multicast_copies_and_recirculation():
    sw = switch("replication")
    sw.mc_group_set(7, [(3, 10), (4, 11)])
    queued = sw.ingress(1, ctl(1))
    assert [q.port for q in queued] == [3, 4]
    assert [sw.egress(q)[0] for q in queued] == [[(3, ctl(1, 1, 10, 0, 5, 0x5A))],
                                                   [(4, ctl(1, 1, 11, 0, 5, 0x5A))]]
    first = sw.ingress(1, ctl(4))        # egress of pass 1 recirculates
    sent, again = sw.egress(first[0])
    assert sent == [] and len(again) == 1  # the recirculated packet's ingress ran
    assert sw.egress(again[0]) == ([(2, ctl(4, 2, 0, 4, 0, 0x5A))], [])


def test_big_multicast_groups_are_not_cut_by_the_pass_limit():
    sw = switch("replication", max_passes=8)
    sw.mc_group_set(7, [(p, p) for p in range(100)])
    assert len(sw.process(1, ctl(1))) == 100


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=40), st.integers(0, 511))
def test_arbitrary_bytes_never_crash_the_switch(data, port):
    sw = _FUZZ_SWITCH
    sw.mc_group_set(7, [(3, 1), (4, 2)])
    sw.clone_session_set(3, 9)
    out = sw.process(port, data)
    assert all(0 <= p < 512 and isinstance(b, bytes) for p, b in out)
    assert sw.stats["internal_error"] == 0


_FUZZ_SWITCH = switch("replication")


def test_clone_session_to_a_multicast_group():
    sw = switch("replication")
    sw.mc_group_set(9, [(5, 50), (6, 60)])
    sw.clone_session_set(3, None, mc_group=9)
    out = sw.process(1, ctl(2))
    # the I2E clone goes to each group copy with its rid; no port for the session itself
    assert sorted(out) == sorted([(2, ctl(2, 1, 0, 0, 0, 0x5A)),
                                  (5, ctl(2, 0, 50, 0, 1, 0x5A)),
                                  (6, ctl(2, 0, 60, 0, 1, 0x5A))])
