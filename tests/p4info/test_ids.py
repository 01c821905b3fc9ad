"""p4c's id scheme and aliases. The ids asserted here were read by hand from p4c's
reference outputs (testdata/p4_16_samples_outputs/*.p4info.txtpb in p4lang/p4c)."""

import pytest

from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.p4info_ids import (
    ACTION,
    ACTION_PROFILE,
    TABLE,
    SuffixSet,
    SymbolTable,
    hashed_id,
    jenkins_one_at_a_time,
)


def test_known_p4c_ids():
    # basic_routing-bmv2.p4.p4info.txtpb: action NoAction id 21257015,
    # table ingress.bd id 48392551, table ingress.ipv4_fib id 41084491
    assert hashed_id(ACTION, "NoAction") == 21257015
    assert hashed_id(TABLE, "ingress.bd") == 48392551
    assert hashed_id(TABLE, "ingress.ipv4_fib") == 41084491
    # action_profile-bmv2.p4.p4info.txtpb: action profile "ap" id 294074782
    assert hashed_id(ACTION_PROFILE, "ap") == 294074782


def test_kind_is_the_top_byte():
    for kind in (ACTION, TABLE, ACTION_PROFILE):
        assert hashed_id(kind, "x.y") >> 24 == kind
        assert hashed_id(kind, "x.y") & 0xFFFFFF == jenkins_one_at_a_time("x.y") & 0xFFFFFF


def test_collision_probes_the_next_hash_value():
    # two names whose hashes agree in the low 24 bits
    seen: dict[int, str] = {}
    pair = None
    for i in range(200000):
        name = f"c.t{i}"
        low = jenkins_one_at_a_time(name) & 0xFFFFFF
        if low in seen:
            pair = (seen[low], name)
            break
        seen[low] = name
    assert pair is not None
    st = SymbolTable()
    for n in pair:
        st.add(TABLE, n)
    st.assign_ids()
    first, second = sorted(pair, key=str.encode)
    assert st.id_of(TABLE, first) == hashed_id(TABLE, first)
    expected_second = (TABLE << 24) | ((jenkins_one_at_a_time(second) + 1) & 0xFFFFFF)
    assert st.id_of(TABLE, second) == expected_second


def test_explicit_id_gets_the_prefix_and_is_avoided_by_hashing():
    st = SymbolTable()
    taken = hashed_id(TABLE, "c.t") & 0xFFFFFF
    st.add(TABLE, "c.pinned", explicit_id=taken)
    st.add(TABLE, "c.t")
    st.assign_ids()
    assert st.id_of(TABLE, "c.pinned") == (TABLE << 24) | taken
    assert st.id_of(TABLE, "c.t") == (TABLE << 24) | (taken + 1)


def test_explicit_id_with_the_wrong_prefix_is_an_error():
    st = SymbolTable()
    with pytest.raises(P4Error, match="wrong 8-bit prefix"):
        st.add(TABLE, "c.t", explicit_id=(ACTION << 24) | 5)


def test_same_explicit_id_twice_is_an_error():
    st = SymbolTable()
    st.add(TABLE, "a", explicit_id=7)
    with pytest.raises(P4Error, match="multiple declarations"):
        st.add(TABLE, "b", explicit_id=7)


def test_aliases_are_shortest_unique_suffixes():
    s = SuffixSet()
    for n in ("ingress.a.t", "ingress.b.t", "ingress.c", "egress.c2", "x"):
        s.add(n)
    assert s.shortest_unique_suffix("ingress.a.t") == "a.t"
    assert s.shortest_unique_suffix("ingress.c") == "c"
    assert s.shortest_unique_suffix("egress.c2") == "c2"
    assert s.shortest_unique_suffix("x") == "x"
    s.add("egress.c")
    assert s.shortest_unique_suffix("ingress.c") == "ingress.c"
