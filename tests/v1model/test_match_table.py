"""Match tables: exact, lpm, ternary, range and optional keys with P4Runtime priorities."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from netweft.emulation.v1model.match_table import ActionSpec, KeySpec, MatchTable, TableError

FWD = ActionSpec("MyIngress.forward", (("port", 9),))
DROP = ActionSpec("MyIngress.drop", ())


def table(*keys):
    return MatchTable("MyIngress.t", [KeySpec(*k) for k in keys], [FWD, DROP])


def port_of(entry):
    return None if entry is None else entry.args[0]


def test_exact_dictionary_lookup_and_value_forms():
    t = table(("hdr.ethernet.dstAddr", "exact", 48), ("hdr.ipv4.dstAddr", "exact", 32))
    t.add({"ethernet.dstAddr": "08:00:00:00:01:11", "hdr.ipv4.dstAddr": "10.0.1.1"}, "forward",
          {"port": 1})
    t.add([b"\x08\x00\x00\x00\x02\x22", 0x0A000202], "MyIngress.forward", [2])
    assert port_of(t.lookup((0x080000000111, 0x0A000101))) == 1
    assert port_of(t.lookup((0x080000000222, 0x0A000202))) == 2
    assert t.lookup((0x080000000111, 0x0A000102)) is None


def test_lpm_longest_prefix_wins_whatever_the_insertion_order():
    t = table(("hdr.ipv4.dstAddr", "lpm", 32))
    t.add({"hdr.ipv4.dstAddr": ("10.0.0.0", 8)}, "forward", {"port": 1})
    t.add({"hdr.ipv4.dstAddr": ("10.0.1.0", 24)}, "forward", {"port": 2})
    t.add({"hdr.ipv4.dstAddr": ("0.0.0.0", 0)}, "forward", {"port": 9})
    t.add({"hdr.ipv4.dstAddr": "10.0.1.7"}, "forward", {"port": 3})  # bare value: /32
    assert port_of(t.lookup((0x0A000107,))) == 3
    assert port_of(t.lookup((0x0A000108,))) == 2
    assert port_of(t.lookup((0x0A050108,))) == 1
    assert port_of(t.lookup((0x0B000000,))) == 9


def test_lpm_with_exact_key():
    t = table(("meta.vrf", "exact", 8), ("hdr.ipv4.dstAddr", "lpm", 32))
    t.add({"meta.vrf": 1, "dstAddr": ("10.0.0.0", 8)}, "forward", {"port": 1})
    t.add({"meta.vrf": 2, "dstAddr": ("10.0.0.0", 16)}, "forward", {"port": 2})
    assert port_of(t.lookup((1, 0x0A000001))) == 1
    assert port_of(t.lookup((2, 0x0A000001))) == 2
    assert t.lookup((2, 0x0A010001)) is None


def test_ternary_larger_priority_wins():
    t = table(("hdr.ipv4.dstAddr", "ternary", 32))
    t.add({"dstAddr": ("10.0.0.0", "255.0.0.0")}, "forward", {"port": 1}, priority=10)
    t.add({"dstAddr": ("10.0.1.0", "255.255.255.0")}, "forward", {"port": 2}, priority=5)
    assert port_of(t.lookup((0x0A000105,))) == 1
    t.add({"dstAddr": ("10.0.1.5", "255.255.255.255")}, "forward", {"port": 3}, priority=20)
    assert port_of(t.lookup((0x0A000105,))) == 3
    assert port_of(t.lookup((0x0A000106,))) == 1
    assert t.lookup((0x0B000000,)) is None


def test_range_and_optional_keys():
    t = table(("hdr.tcp.dstPort", "range", 16), ("hdr.ipv4.protocol", "optional", 8))
    t.add({"dstPort": (1000, 2000), "protocol": 6}, "forward", {"port": 1}, priority=2)
    t.add({"dstPort": (0, 65535), "protocol": None}, "forward", {"port": 2}, priority=1)
    assert port_of(t.lookup((1500, 6))) == 1
    assert port_of(t.lookup((1500, 17))) == 2
    assert port_of(t.lookup((2001, 6))) == 2


def test_bad_values_give_clear_errors():
    t = table(("hdr.ipv4.dstAddr", "lpm", 32))
    with pytest.raises(TableError, match="does not fit in 32 bits"):
        t.add({"dstAddr": (1 << 32, 32)}, "forward", {"port": 1})
    with pytest.raises(TableError, match="prefix length 33"):
        t.add({"dstAddr": ("10.0.0.0", 33)}, "forward", {"port": 1})
    with pytest.raises(TableError, match="unknown key"):
        t.add({"srcAddr": 1}, "forward", {"port": 1})
    with pytest.raises(TableError, match="unknown action"):
        t.add({"dstAddr": 1}, "nope", {})
    with pytest.raises(TableError, match="missing parameter"):
        t.add({"dstAddr": 1}, "forward", {})
    with pytest.raises(TableError, match="does not fit in 9 bits"):
        t.add({"dstAddr": 1}, "forward", {"port": 512})
    with pytest.raises(TableError, match="cannot parse"):
        t.add({"dstAddr": "ten"}, "forward", {"port": 1})


def test_ambiguous_suffix_is_rejected():
    t = table(("hdr.ipv4.dstAddr", "exact", 32), ("hdr.inner.dstAddr", "exact", 32))
    with pytest.raises(TableError, match="ambiguous"):
        t.add({"dstAddr": 1, "hdr.inner.dstAddr": 2}, "forward", {"port": 1})


def test_default_action_and_const_default():
    t = table(("hdr.ipv4.dstAddr", "exact", 32))
    t.set_default("drop")
    assert t.default_action == "MyIngress.drop"
    t.set_default("forward", {"port": 4}, const=True)
    assert t.default_args == (4,)
    with pytest.raises(TableError, match="const"):
        t.set_default("drop")


def test_ipv6_values():
    t = table(("hdr.ipv6.dstAddr", "lpm", 128))
    t.add({"dstAddr": ("2001:db8::", 32)}, "forward", {"port": 6})
    assert port_of(t.lookup((0x20010DB8 << 96 | 5,))) == 6


def test_modify_and_delete_entries():
    t = table(("hdr.ipv4.dstAddr", "exact", 32))
    e = t.add({"dstAddr": 5}, "forward", {"port": 1})
    t.modify(e, "forward", {"port": 7})
    assert port_of(t.lookup((5,))) == 7
    t.delete(e)
    assert t.lookup((5,)) is None
    with pytest.raises(TableError, match="no such entry"):
        t.modify(e, "drop")


def test_duplicate_matches_are_refused():
    t = table(("hdr.ipv4.dstAddr", "lpm", 32))
    t.add({"dstAddr": ("10.0.0.0", 8)}, "forward", {"port": 1})
    with pytest.raises(TableError, match="already exists"):
        t.add({"dstAddr": ("10.1.0.0", 8)}, "forward", {"port": 2})  # same /8 after masking
    t.add({"dstAddr": ("10.0.0.0", 16)}, "forward", {"port": 2})
    x = table(("meta.k", "exact", 8))
    x.add([1], "drop")
    with pytest.raises(TableError, match="already exists"):
        x.add([1], "forward", [3])
    tern = table(("meta.k", "ternary", 8))
    tern.add([(1, 0xFF)], "drop", priority=1)
    tern.add([(1, 0xFF)], "drop", priority=2)  # another priority: a different entry
    with pytest.raises(TableError, match="already exists"):
        tern.add([(1, 0xFF)], "drop", priority=2)


def test_many_exact_entries_install_quickly():
    t = table(("meta.k", "exact", 32))
    for i in range(20000):
        t.add([i], "forward", [i % 512])
    assert port_of(t.lookup((12345,))) == 12345 % 512


def _brute_force(entries, key, specs):
    """The reference: scan every entry, larger priority then earlier entry wins."""
    def hit(entry):
        for m, v, spec in zip(entry.match, key, specs, strict=True):
            w = spec.width
            if spec.match_kind == "ternary" and v & m[1] != m[0]:
                return False
            if spec.match_kind == "lpm" and m[1] and v >> (w - m[1]) != m[0] >> (w - m[1]):
                return False
            if spec.match_kind in ("exact", "optional") and m is not None and v != m[0]:
                return False
        return True
    hits = [e for e in entries if hit(e)]
    return min(hits, key=lambda e: (-e.priority, e.seq)) if hits else None


ENTRY = st.tuples(st.tuples(st.integers(0, 255), st.integers(0, 255)),   # ternary
                  st.tuples(st.integers(0, 255), st.integers(0, 8)),     # lpm
                  st.one_of(st.none(), st.integers(0, 3)),               # optional
                  st.integers(0, 1),                                     # exact
                  st.integers(0, 5))                                     # priority


@given(st.lists(ENTRY, max_size=25), st.lists(st.tuples(st.integers(0, 255), st.integers(0, 255),
                                                        st.integers(0, 3), st.integers(0, 1)),
                                               min_size=1, max_size=20))
def test_masked_index_agrees_with_a_linear_scan(entries, keys):
    t = table(("t", "ternary", 8), ("l", "lpm", 8), ("o", "optional", 2), ("e", "exact", 1))
    for tern, lpm, opt, ex, prio in entries:
        try:
            t.add([tern, lpm, opt, ex], "drop", priority=prio)
        except TableError:
            pass  # a duplicate match and priority
    for key in keys:
        assert t.lookup(key) is _brute_force(t.entries, key, t.keys)


def test_keyless_tables_take_no_entries():
    t = table()
    t.set_default("forward", {"port": 3})
    assert t.lookup(()) is None and t.default_args == (3,)
    with pytest.raises(TableError, match="no key"):
        t.add({}, "drop")
