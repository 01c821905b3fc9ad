"""P4's width rules on both back ends: one program computing many expressions from
the packet's bytes, random packets, identical outputs (edge cases of casts, signed
arithmetic, saturation, shifts by run-time amounts, slices, concatenation)."""

from __future__ import annotations

import random

import pytest

from netweft.emulation.native.build import compiler
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4_source

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header in_t { int<8> a; bit<8> b; bit<16> c; int<16> d; bit<64> e; bit<8> s; }
header out_t {
    bit<128> w1; bit<128> w2; bit<16> x1; bit<16> x2; int<16> y1; int<16> y2; bit<8> z1;
    bit<8> z2; bit<64> q1; bit<64> q2; bit<32> r1; bit<8> f;
}
struct hs { in_t i; out_t o; }
struct m_t { bit<1> u; }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.i); transition accept; }
}
control V(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.o.setValid();
        hdr.o.w1 = (bit<128>)hdr.i.a;
        hdr.o.w2 = ((bit<128>)hdr.i.e << hdr.i.s) |+| (bit<128>)hdr.i.c;
        hdr.o.x1 = hdr.i.c |+| (bit<16>)hdr.i.b << 8;
        hdr.o.x2 = hdr.i.c |-| 16w1000;
        hdr.o.y1 = hdr.i.d |+| (int<16>)hdr.i.a * 16s300;
        hdr.o.y2 = hdr.i.d >> hdr.i.s[3:0];
        hdr.o.z1 = ((bit<4>)(hdr.i.a < -8s3 ? 4w1 : 4w0) ++ hdr.i.b[7:4]) + 8w3;
        hdr.o.z2 = hdr.i.b << hdr.i.s;
        hdr.o.q1 = hdr.i.e * (bit<64>)hdr.i.c - (hdr.i.e >> hdr.i.s);
        hdr.o.q2 = -hdr.i.e ^ ~(bit<64>)hdr.i.b;
        hdr.o.r1 = hdr.i.c ++ (bit<16>)hdr.i.d;
        hdr.o.f = ((int<8>)hdr.i.b >= hdr.i.a ? 1w1 : 1w0) ++ 7w0;
        if (hdr.i.s > 200) { hdr.o.r1[31:24] = hdr.i.b; }
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.i); p.emit(hdr.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_width_rules_agree_on_random_inputs():
    prog = compile_p4_source(PROGRAM, "expressions.p4")
    py, c = SoftSwitch(prog, backend="python"), SoftSwitch(prog, backend="c")
    rng = random.Random(5)
    for _ in range(3000):
        frame = bytes(rng.randrange(256) for _ in range(15))
        if rng.random() < 0.3:   # shift amounts and signs at their edges
            frame = frame[:14] + bytes([rng.choice((0, 1, 7, 8, 15, 16, 63, 64, 127, 255))])
        assert c.process(0, frame) == py.process(0, frame), frame.hex()
