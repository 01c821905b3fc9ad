"""p4/fabric.p4's interface: it deploys to BMv2, and every table, action, register
and counter of its P4Info is documented in docs/fabric.md (the controller codes
against that page)."""

from __future__ import annotations

from pathlib import Path

from netweft.p4.compiler.bmv2_target import bmv2_errors
from netweft.p4.compiler.p4info import build_p4info

from .fabric_switch import fabric_program

DOC = (Path(__file__).resolve().parents[2] / "docs" / "fabric.md").read_text()


def test_fabric_deploys_to_bmv2_without_netweft_leniency():
    assert [str(d) for d in bmv2_errors(fabric_program())] == []


def test_every_p4info_name_is_in_the_reference_page():
    info = build_p4info(fabric_program())
    names = [t.preamble.name for t in info.tables]
    names += [a.preamble.name for a in info.actions if a.preamble.name != "NoAction"]
    names += [r.preamble.name for r in info.registers]
    names += [c.preamble.name for c in info.counters]
    keys = [m.name for t in info.tables for m in t.match_fields]
    params = [p.name for a in info.actions for p in a.params]
    assert len(info.tables) == 8
    missing = [n for n in names + keys if f"`{n}`" not in DOC]
    missing += [p for p in params if f"`{p}`" not in DOC and f"`{p}` (" not in DOC
                and f"`{p}` .." not in DOC and p[:-1] + "0`" not in DOC]
    assert missing == []
