"""Malformed input and runaway programs never crash or hang the switch."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p4_switch import switch

SWITCHES = {name: switch(name) for name in ("stacks_unions", "externs", "statements")}


def test_a_parser_loop_ends_in_parser_timeout():
    sw = switch("parser_loop")
    data = bytes(12) + b"\x08\x00" + b"rest"
    assert sw.process(1, data) == [(2, bytes(12) + b"\xde\xad" + b"rest")]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(SWITCHES)), st.binary(max_size=48), st.integers(0, 511))
def test_arbitrary_bytes_are_processed_without_internal_errors(name, data, port):
    sw = SWITCHES[name]
    out = sw.process(port, data)
    assert all(0 <= p < 512 and isinstance(b, bytes) for p, b in out)
    assert sw.stats["internal_error"] == 0


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**20 - 1), st.booleans()), min_size=0, max_size=6),
       st.binary(max_size=12))
def test_random_mpls_stacks(labels, tail):
    sw = SWITCHES["stacks_unions"]
    body = b"".join(((label << 12) | (bos << 8) | 64).to_bytes(4, "big")
                    for label, bos in labels)
    data = bytes.fromhex("0a0000000001" "0a0000000002" "8847") + body + tail
    out = sw.process(0, data)
    assert len(out) == 1 and sw.stats["internal_error"] == 0
