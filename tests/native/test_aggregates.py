"""Header stacks, unions in stacks, tuples, == on aggregates and stacks/tuples in
hash field lists: a program that uses them together, on both back ends, with
seeded valid and mutated frames; every output must be identical."""

from __future__ import annotations

import random

import pytest

from netweft.emulation.native.build import compiler

from .differential import compare_frame_by_frame
from .programs import mutate

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

SOURCE = r"""
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header u1_t { bit<8> x; }
header u2_t { bit<16> y; }
header_union u_t { u1_t one; u2_t two; }
struct hs { h_t k; h_t[3] s; u_t[2] us; }
struct m_t { tuple<bit<8>, bit<16>> tup; bit<16> h; bit<16> h2; bit<8> eq; }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.k); transition select(hdr.k.a) { 0: done; default: more; } }
    state more {
        p.extract(hdr.s.next);
        transition select(hdr.s.last.b) { 0: more; 1: uni; default: done; }
    }
    state uni { transition select(p.lookahead<bit<8>>()) { 1: one; 2: two; default: done; } }
    state one { p.extract(hdr.us.next.one); transition uni; }
    state two { p.extract(hdr.us.next.two); transition uni; }
    state done { transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        m.tup = { hdr.k.b, 16w7 };
        hash(m.h, HashAlgorithm.crc16, 16w0, { hdr.s, m.tup }, 32w65536);
        hash(m.h2, HashAlgorithm.crc32, 16w0, { hdr.s[1], hdr.k }, 32w65536);
        m.eq = 0;
        if (hdr.s[0] == hdr.s[1]) { m.eq = m.eq | 1; }
        if (hdr.s == hdr.s) { m.eq = m.eq | 2; }
        if (hdr.us[0] == hdr.us[1]) { m.eq = m.eq | 4; }
        if (m.tup == { 8w3, 16w7 }) { m.eq = m.eq | 8; }
        if (hdr.us[0].isValid()) { m.eq = m.eq | 16; }
        if (hdr.us[hdr.k.b].two.isValid()) { m.eq = m.eq | 32; }
        hdr.s[hdr.k.a].a = hdr.s[hdr.k.a].a + 1;
        hdr.k.a = m.eq;
        hdr.k.b = (bit<8>)(m.h ^ m.h2);
        if (hdr.k.b[0:0] == 1) { hdr.us.pop_front(1); }
        else { hdr.s.push_front(2); hdr.s[0].setValid(); }
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def _frames(count: int, seed: int) -> list[tuple[int, bytes]]:
    """A key header, 0..4 stack elements (their b ends the stack), union members."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        body = bytes([rng.randrange(4), rng.randrange(4)])
        for _k in range(rng.randrange(5)):
            body += bytes([rng.randrange(256), rng.choice((0, 0, 1, 2))])
        for _k in range(rng.randrange(4)):
            kind = rng.choice((1, 2, 3))
            body += bytes([kind]) + bytes(rng.randrange(256) for _ in range(kind))
        if rng.random() < 0.3:
            body = mutate(rng, body)
        out.append((0, body))
    return out


def test_stacks_unions_tuples_and_equality_agree(tmp_path) -> None:
    from netweft.emulation.switch import SoftSwitch
    from netweft.p4.compiler import compile_p4

    path = tmp_path / "aggregates.p4"
    path.write_text(SOURCE)
    program = compile_p4(str(path))
    py, c = SoftSwitch(program, backend="python"), SoftSwitch(program, backend="c")
    compared, sent = compare_frame_by_frame(py, c, _frames(3000, seed=5))
    assert compared == sent == 3000
