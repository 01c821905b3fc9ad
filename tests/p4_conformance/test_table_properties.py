"""Match semantics as properties: for random entry sets, the switch picks what
a straightforward reference matcher picks (ternary and range: the matching
entry with the largest priority; lpm: the longest matching prefix)."""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from .harness import BOTH_BACKENDS, switch_factory

make_switch = switch_factory("tables", BOTH_BACKENDS)

ETH = bytes.fromhex("0a0000000001" "0a0000000002" "88b8")


def chosen(sw, which: int, t: int = 0, r: int = 0, lk: int = 0) -> int:
    pkt = ETH + struct.pack("!BBHHBI", which, 0, t, r, 0, lk) + bytes(4)
    (_, data), = sw.process(0, pkt)
    return data[14 + 11]


ternary_entries = st.lists(
    st.tuples(st.integers(0, 0xFFFF), st.integers(0, 0xFFFF)), min_size=1, max_size=12,
    unique_by=lambda vm: (vm[0] & vm[1], vm[1]))


@settings(max_examples=30, deadline=None)
@given(entries=ternary_entries, keys=st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=8),
       priorities=st.permutations(range(1, 13)))
def test_ternary_largest_priority_wins(make_switch, entries, keys, priorities):
    sw = make_switch()
    installed = []
    for i, (value, mask) in enumerate(entries):
        prio = priorities[i]
        sw.table_add("t_ternary", {"hdr.keys.t": (value & mask, mask)}, "set_result",
                     {"id": i + 1}, priority=prio)
        installed.append((value & mask, mask, prio, i + 1))
    # make keys likely to hit: also probe each entry's own value
    for key in keys + [v for v, _, _, _ in installed]:
        matching = [(p, ident) for v, m, p, ident in installed if key & m == v]
        expected = max(matching)[1] if matching else 0
        assert chosen(sw, 2, t=key) == expected


@settings(max_examples=30, deadline=None)
@given(prefixes=st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 32)),
                         min_size=1, max_size=12,
                         unique_by=lambda p: (p[0] >> (32 - p[1]) if p[1] else 0, p[1])),
       keys=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=8))
def test_lpm_longest_prefix_wins(make_switch, prefixes, keys):
    sw = make_switch()
    installed = []
    for i, (value, length) in enumerate(prefixes):
        mask = ((1 << length) - 1) << (32 - length) if length else 0
        sw.table_add("t_lpm", {"hdr.keys.l": (value & mask, length)}, "set_result",
                     {"id": i + 1})
        installed.append((value & mask, mask, length, i + 1))
    for key in keys + [v for v, _, _, _ in installed]:
        matching = [(length, ident) for v, m, length, ident in installed if key & m == v]
        expected = max(matching)[1] if matching else 0xEE  # default on_miss()
        assert chosen(sw, 5, lk=key) == expected


@settings(max_examples=30, deadline=None)
@given(ranges=st.lists(st.tuples(st.integers(0, 0xFFFF), st.integers(0, 0xFFFF)),
                       min_size=1, max_size=10),
       keys=st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=8),
       priorities=st.permutations(range(1, 11)))
def test_range_largest_priority_wins(make_switch, ranges, keys, priorities):
    sw = make_switch()
    installed = []
    for i, (a, b) in enumerate(ranges):
        lo, hi = min(a, b), max(a, b)
        sw.table_add("t_range", {"hdr.keys.r": (lo, hi)}, "set_result", {"id": i + 1},
                     priority=priorities[i])
        installed.append((lo, hi, priorities[i], i + 1))
    for key in keys + [lo for lo, _, _, _ in installed] + [hi for _, hi, _, _ in installed]:
        matching = [(p, ident) for lo, hi, p, ident in installed if lo <= key <= hi]
        expected = max(matching)[1] if matching else 0
        assert chosen(sw, 3, r=key) == expected
