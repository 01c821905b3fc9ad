"""Helpers for the P4 front-end tests: compile snippets inside a v1model skeleton."""

from __future__ import annotations

from pathlib import Path

import pytest

from netweft.p4.compiler import compile_p4_source

PROGRAMS = Path(__file__).parent / "programs"

SKELETON = """#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> a; bit<16> b; bit<32> c; int<8> s; }}
struct headers {{ h_t h; }}
struct meta_t {{ bit<8> x; bit<16> y; }}
{top}
parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.h); transition accept; }}
}}
control VC(inout headers hdr, inout meta_t meta) {{ apply {{ }} }}
control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {{
{locals}
    apply {{
{body}
    }}
}}
control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control CC(inout headers hdr, inout meta_t meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ pkt.emit(hdr.h); }} }}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

# line number (1-based) of the first line of {body} when top and locals are one line each
BODY_FIRST_LINE = 14


def in_ingress(body: str = "", locals_: str = "", top: str = ""):
    """Compile a program whose ingress apply block holds ``body``."""
    return compile_p4_source(SKELETON.format(top=top, locals=locals_, body=body),
                             filename="t.p4")


@pytest.fixture
def compile_ingress():
    return in_ingress


@pytest.fixture(scope="session")
def corpus_programs():
    from netweft.p4.compiler import compile_p4
    return [compile_p4(p) for p in sorted(PROGRAMS.glob("*.p4"))]
