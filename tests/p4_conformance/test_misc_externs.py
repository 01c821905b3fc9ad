"""digest, log_msg, assert/assume, random(lo, lo) and empty action profile /
selector tables: forwarding goes on as if they were not there (no control
plane reads digests or programs groups here)."""

from __future__ import annotations

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("misc_externs", BOTH_BACKENDS)


def test_side_effect_free_externs_do_not_disturb_forwarding(make_switch):
    frame = bytes.fromhex("0a0000000001" "0a00000000ff" "0800") + b"payload"
    expected = bytes.fromhex("0a0000000001" "0a000002012a" "0800") + b"payload"
    sw = make_switch()
    assert_outputs(sw.process(5, frame), [(2, expected)])
    # twice: digests and logs accumulate no state that changes forwarding
    assert_outputs(sw.process(5, frame), [(2, expected)])
