"""Random P4 expressions: run-time results, the front end's constant folding and a reference.

Each example builds an expression over ``bit<8> a, b`` and ``bit<16> c``, then
compiles it twice: once reading the operands from the packet (computed by the
generated pipeline code) and once with the operands as ``const`` declarations
(folded by the front end).  Both must equal a Python reference model of
P4's width rules.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4_source

M8, M16 = 0xFF, 0xFFFF

TEMPLATE = """
#include <core.p4>
#include <v1model.p4>
header ops_t {{ bit<8> a; bit<8> b; bit<16> c; }}
header res_t {{ bit<8> r8; bit<16> r16; }}
struct hs {{ ops_t ops; res_t res; }}
struct m_t {{ }}
{consts}
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {{
    state start {{ p.extract(hdr.ops); transition accept; }}
}}
control V(inout hs hdr, inout m_t m) {{ apply {{ }} }}
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {{
    apply {{
        sm.egress_spec = 1;
        hdr.res.setValid();
        hdr.res.r8 = {e8};
        hdr.res.r16 = {e16};
    }}
}}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout hs hdr, inout m_t m) {{ apply {{ }} }}
control D(packet_out p, in hs hdr) {{ apply {{ p.emit(hdr.ops); p.emit(hdr.res); }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def _bin8(draw, depth):
    return _expr(draw, 8, depth)


def _expr(draw, width: int, depth: int):
    """``(p4 text, python function of (a, b, c))`` of a ``bit<width>`` expression."""
    mask = M8 if width == 8 else M16
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        leaf = draw(st.sampled_from(["a", "b", "k"] if width == 8 else ["c", "k", "cast"]))
        if leaf == "k":
            k = draw(st.integers(0, mask))
            return f"{width}w{k}", lambda a, b, c, k=k: k
        if leaf == "cast":
            t, f = _expr(draw, 8, depth - 1 if depth else 0)
            return f"((bit<16>) {t})", f
        if leaf == "c":
            return "OPC", lambda a, b, c: c
        return "OP" + leaf.upper(), (lambda a, b, c: a) if leaf == "a" else (lambda a, b, c: b)
    op = draw(st.sampled_from(["+", "-", "*", "&", "|", "^", "|+|", "|-|", "~", "neg", "<<",
                               ">>", "mux", "narrow" if width == 8 else "concat"]))
    if op in ("~", "neg"):
        t, f = _expr(draw, width, depth - 1)
        if op == "~":
            return f"(~{t})", lambda a, b, c: ~f(a, b, c) & mask
        return f"(-{t})", lambda a, b, c: -f(a, b, c) & mask
    if op in ("<<", ">>"):
        t, f = _expr(draw, width, depth - 1)
        k = draw(st.integers(0, width + 2))
        if op == "<<":
            return f"({t} << {k})", lambda a, b, c: (f(a, b, c) << k) & mask
        return f"({t} >> {k})", lambda a, b, c: f(a, b, c) >> k
    if op == "mux":
        t1, f1 = _expr(draw, width, depth - 1)
        t2, f2 = _expr(draw, width, depth - 1)
        t3, f3 = _expr(draw, width, depth - 1)
        return (f"({t1} < {t2} ? {t3} : {t1})",
                lambda a, b, c: f3(a, b, c) if f1(a, b, c) < f2(a, b, c) else f1(a, b, c))
    if op == "narrow":
        t, f = _expr(draw, 16, depth - 1)
        if draw(st.booleans()):
            return f"((bit<8>) {t})", lambda a, b, c: f(a, b, c) & M8
        return f"({t}[11:4])", lambda a, b, c: (f(a, b, c) >> 4) & M8
    if op == "concat":
        t1, f1 = _expr(draw, 8, depth - 1)
        t2, f2 = _expr(draw, 8, depth - 1)
        return f"({t1} ++ {t2})", lambda a, b, c: (f1(a, b, c) << 8) | f2(a, b, c)
    t1, f1 = _expr(draw, width, depth - 1)
    t2, f2 = _expr(draw, width, depth - 1)
    fn = {
        "+": lambda x, y: (x + y) & mask, "-": lambda x, y: (x - y) & mask,
        "*": lambda x, y: (x * y) & mask, "&": lambda x, y: x & y, "|": lambda x, y: x | y,
        "^": lambda x, y: x ^ y, "|+|": lambda x, y: min(x + y, mask),
        "|-|": lambda x, y: max(x - y, 0),
    }[op]
    return f"({t1} {op} {t2})", lambda a, b, c: fn(f1(a, b, c), f2(a, b, c))


@st.composite
def programs(draw):
    e8 = _expr(draw, 8, 3)
    e16 = _expr(draw, 16, 3)
    a, b = draw(st.integers(0, M8)), draw(st.integers(0, M8))
    c = draw(st.integers(0, M16))
    return e8, e16, a, b, c


def _run(text: str, a: int, b: int, c: int, backend: str | None = None) -> tuple[int, int]:
    sw = SoftSwitch(compile_p4_source(text, "fuzz.p4"), backend=backend)
    (_port, out), = sw.process(0, struct.pack("!BBH", a, b, c))
    return struct.unpack("!BH", out[4:7])


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_runtime_folding_and_reference_agree(case):
    (t8, f8), (t16, f16), a, b, c = case
    expected = (f8(a, b, c), f16(a, b, c))
    fields = {"OPA": "hdr.ops.a", "OPB": "hdr.ops.b", "OPC": "hdr.ops.c"}
    p8, p16 = t8, t16
    for name, field in fields.items():
        p8, p16 = p8.replace(name, field), p16.replace(name, field)
    from_packet = TEMPLATE.format(consts="", e8=p8, e16=p16)
    folded = TEMPLATE.format(
        consts=f"const bit<8> OPA = {a}; const bit<8> OPB = {b}; const bit<16> OPC = {c};",
        e8=t8, e16=t16)
    assert _run(from_packet, a, b, c) == expected, (t8, t16)
    # folded by the front end: the back end sees constants only, the Python one is enough
    assert _run(folded, a, b, c, "python") == expected, (t8, t16)


# The same program over signed operands and results.
SIGNED_TEMPLATE = TEMPLATE.replace("bit<", "int<")


def _signed(value: int, width: int) -> int:
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def _sexpr(draw, width: int, depth: int):
    """``(p4 text, python function)`` of an ``int<width>`` expression."""
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        leaf = draw(st.sampled_from(["OPA", "OPB", "k"] if width == 8 else ["OPC", "k", "ext"]))
        if leaf == "k":
            k = draw(st.integers(lo, hi))
            return f"({width}s{k})" if k >= 0 else f"(-{width}s{-k})", lambda a, b, c, k=k: k
        if leaf == "ext":  # sign extension
            t, f = _sexpr(draw, 8, max(depth - 1, 0))
            return f"((int<16>) {t})", f
        return leaf, {"OPA": lambda a, b, c: a, "OPB": lambda a, b, c: b,
                      "OPC": lambda a, b, c: c}[leaf]
    op = draw(st.sampled_from(["+", "-", "*", "&", "|", "^", "|+|", "|-|", "~", "neg", "<<",
                               ">>", "via_bits", "narrow" if width == 8 else "mux"]))
    if op in ("~", "neg"):
        t, f = _sexpr(draw, width, depth - 1)
        if op == "~":
            return f"(~{t})", lambda a, b, c: ~f(a, b, c)
        return f"(-{t})", lambda a, b, c: _signed(-f(a, b, c), width)
    if op in ("<<", ">>"):
        t, f = _sexpr(draw, width, depth - 1)
        k = draw(st.integers(0, width + 2))
        if op == "<<":
            return f"({t} << {k})", lambda a, b, c: _signed(f(a, b, c) << k, width) if k < width \
                else 0
        return f"({t} >> {k})", lambda a, b, c: f(a, b, c) >> k
    if op == "via_bits":  # int -> bit -> int of the same width keeps the bits
        t, f = _sexpr(draw, width, depth - 1)
        return f"((int<{width}>) ((bit<{width}>) {t}))", f
    if op == "narrow":
        t, f = _sexpr(draw, 16, depth - 1)
        return f"((int<8>) {t})", lambda a, b, c: _signed(f(a, b, c), 8)
    if op == "mux":
        t1, f1 = _sexpr(draw, width, depth - 1)
        t2, f2 = _sexpr(draw, width, depth - 1)
        return (f"({t1} > {t2} ? {t1} : {t2})",
                lambda a, b, c: max(f1(a, b, c), f2(a, b, c)))
    t1, f1 = _sexpr(draw, width, depth - 1)
    t2, f2 = _sexpr(draw, width, depth - 1)
    fn = {
        "+": lambda x, y: _signed(x + y, width), "-": lambda x, y: _signed(x - y, width),
        "*": lambda x, y: _signed(x * y, width), "&": lambda x, y: x & y,
        "|": lambda x, y: x | y, "^": lambda x, y: x ^ y,
        "|+|": lambda x, y: max(min(x + y, hi), lo), "|-|": lambda x, y: max(min(x - y, hi), lo),
    }[op]
    return f"({t1} {op} {t2})", lambda a, b, c: fn(f1(a, b, c), f2(a, b, c))


@st.composite
def signed_programs(draw):
    return (_sexpr(draw, 8, 3), _sexpr(draw, 16, 3), draw(st.integers(-128, 127)),
            draw(st.integers(-128, 127)), draw(st.integers(-32768, 32767)))


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(signed_programs())
def test_signed_runtime_folding_and_reference_agree(case):
    (t8, f8), (t16, f16), a, b, c = case
    expected = (f8(a, b, c), f16(a, b, c))
    fields = {"OPA": "hdr.ops.a", "OPB": "hdr.ops.b", "OPC": "hdr.ops.c"}
    p8, p16 = t8, t16
    for name, field in fields.items():
        p8, p16 = p8.replace(name, field), p16.replace(name, field)
    from_packet = SIGNED_TEMPLATE.format(consts="", e8=p8, e16=p16)
    folded = SIGNED_TEMPLATE.format(
        consts=f"const int<8> OPA = {a}; const int<8> OPB = {b}; const int<16> OPC = {c};",
        e8=t8, e16=t16)
    packet = struct.pack("!bbh", a, b, c)
    for text in (from_packet, folded):
        # folded by the front end: the back end sees constants only, the Python one is enough
        sw = SoftSwitch(compile_p4_source(text, "sfuzz.p4"),
                        backend="python" if text is folded else None)
        (_port, out), = sw.process(0, packet)
        assert struct.unpack("!bh", out[4:7]) == expected, (t8, t16, text is folded)
