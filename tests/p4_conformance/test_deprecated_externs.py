"""clone3 / resubmit(data) / recirculate(data): the older v1model forms keep the
listed metadata fields (BMv2 semantics as for the *_preserving_field_list forms)."""

from __future__ import annotations

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("deprecated_externs", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88c1")


def frame(op: int, ig: int = 0, eg: int = 0, kept: int = 0, dropped: int = 0) -> bytes:
    return ETH + bytes([op, ig, eg, kept, dropped]) + b"tail"


def test_clone3_keeps_the_listed_field(make_switch):
    sw = make_switch()
    sw.clone_session_set(5, 4)
    assert_outputs(sw.process(1, frame(1)), [
        (2, frame(1, 0, 0, 0x11, 0x22)),
        (4, frame(1, 0, 1, 0x11, 0)),
    ])


def test_resubmit_with_data_keeps_the_listed_field(make_switch):
    assert_outputs(make_switch().process(1, frame(2)), [(2, frame(2, 6, 0, 0x11, 0))])


def test_recirculate_with_data_keeps_the_listed_field(make_switch):
    # first pass: ingress 0, egress marks ig=0xFF and recirculates the deparsed packet;
    # second pass: ingress overwrites ig with 4 (RECIRC), metadata reset but kept
    assert_outputs(make_switch().process(1, frame(3)), [(2, frame(3, 4, 0, 0x11, 0))])
