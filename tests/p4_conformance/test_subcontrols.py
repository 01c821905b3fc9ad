"""Sub-control instances, exit/return scope, copy-in/copy-out with aliased
arguments, and short-circuit evaluation of table applications (P4-16 spec:
controls are instantiated per instance with their own tables and externs;
exit ends every enclosing control and action, and the out/inout parameters of
those blocks are still copied out (as p4c's exit elimination does); arguments
are copied out left to right)."""

from __future__ import annotations

import struct

import pytest

from .harness import BOTH_BACKENDS, switch_factory
from .packets import assert_outputs

make_switch = switch_factory("subcontrols", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88bf")
SUB = "!BHHBBBB"


def frame(op: int, k1: int = 0, k2: int = 0, cls_a: int = 0, cls_b: int = 0, trace: int = 0,
          alias: int = 0) -> bytes:
    return ETH + struct.pack(SUB, op, k1, k2, cls_a, cls_b, trace, alias)


def test_each_instance_has_its_own_table_and_register(make_switch):
    sw = make_switch()
    sw.table_add("MyIngress.outer.classify", {"k": 5}, "set_class", {"c": 1})
    sw.table_add("MyIngress.inner.classify", {"k": 5}, "set_class", {"c": 2})
    sw.table_add("inner.classify", {"k": 6}, "set_class", {"c": 3})
    assert_outputs(sw.process(0, frame(1, k1=5, k2=5)),
                   [(1, frame(1, 5, 5, 1, 102, 0x80))])
    assert_outputs(sw.process(0, frame(1, k1=6, k2=6)),
                   [(1, frame(1, 6, 6, 0, 103, 0x80))])
    assert sw.register_read("MyIngress.outer.hits", 0) == 1
    assert sw.register_read("MyIngress.inner.hits", 0) == 2


@pytest.mark.parametrize("op, trace", [
    (4, 0x01 | 0x02 | 0x04 | 0x80),  # runs to the end
    (2, 0x01 | 0x04 | 0x80),         # return leaves only the sub-control
    (3, 0x01 | 0x80),                # exit leaves ingress (after copy-out); egress runs
    (7, 0x08 | 0x80),                # exit in an action: its inout write is copied out
])
def test_return_and_exit_scope(make_switch, op, trace):
    assert_outputs(make_switch().process(0, frame(op)), [(1, frame(op, trace=trace))])


def test_aliased_inout_arguments_copy_out_left_to_right(make_switch):
    assert_outputs(make_switch().process(0, frame(5, alias=7)),
                   [(1, frame(5, trace=0x80, alias=17))])


@pytest.mark.parametrize("first_hits, second_hits, trace", [
    (True, True, 0x10 | 0x40),    # second is never applied
    (False, True, 0x20 | 0x40),
    (False, False, 0),
])
def test_short_circuit_table_applications(make_switch, first_hits, second_hits, trace):
    sw = make_switch()
    sw.table_add("MyIngress.first", {"hdr.s.k1": 1}, "MyIngress.mark_first", {})
    sw.table_add("MyIngress.second", {"hdr.s.k2": 2}, "MyIngress.mark_second", {})
    k1 = 1 if first_hits else 9
    k2 = 2 if second_hits else 9
    assert_outputs(sw.process(0, frame(6, k1, k2)),
                   [(1, frame(6, k1, k2, trace=trace | 0x80))])


@pytest.mark.parametrize("op", [8, 9])
@pytest.mark.parametrize("hits", [True, False])
def test_exit_in_a_table_action_skips_the_rest_of_the_statement(make_switch, op, hits):
    """P4-16 'Exit statement': if applying the table runs an action that exits,
    neither branch of the if (nor any switch case) runs."""
    sw = make_switch()
    sw.table_add("MyIngress.exiting", {"hdr.s.k1": 1}, "MyIngress.stop_here", {})
    k1 = 1 if hits else 2
    trace = (0x04 if hits else 0x20) | 0x80
    assert_outputs(sw.process(0, frame(op, k1)), [(1, frame(op, k1, trace=trace))])


nested_switch = switch_factory("nested_controls", BOTH_BACKENDS)


def test_nested_instances_have_path_names_and_their_own_arguments(nested_switch):
    sw = nested_switch()
    sw.table_add("NIngress.mid.left.t", {"key": 1}, "set", {"v": 1})
    sw.table_add("NIngress.mid.right.t", {"key": 1}, "set", {"v": 2})
    eth = bytes.fromhex("0a0000000001" "0a0000000002" "88c7")
    out = sw.process(0, eth + bytes([1, 0, 0]))
    assert_outputs(out, [(1, eth + bytes([1, 1 + 10, 2 + 11]))])
    assert_outputs(sw.process(0, eth + bytes([2, 0, 0])), [(1, eth + bytes([2, 0, 0]))])
