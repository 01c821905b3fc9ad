"""``netweft p4check``: summary on success, file:line:col and exit 1 on errors."""

from __future__ import annotations

from netweft.testbed.command_line import main

from .conftest import PROGRAMS


def test_p4check_prints_blocks_and_tables(capsys):
    assert main(["p4check", str(PROGRAMS / "load_balance.p4")]) == 0
    out = capsys.readouterr().out
    assert "ingress           MyIngress" in out
    assert "table  MyIngress.ecmp_group [hdr.ipv4.dstAddr:lpm] -> MyIngress.drop, " \
           "MyIngress.set_ecmp_select, NoAction" in out


def test_p4check_reports_errors_with_location(tmp_path, capsys):
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <v1model.p4>\nconst bit<8> A = 8w1 + 16w2;\n")
    assert main(["p4check", str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"netweft p4check: error: {bad}:2:22: operands of '+' have different types: bit<8> and bit<16> "
                   "(P4 has no implicit width conversion; use a cast)")


def test_p4check_include_dirs_and_quiet(tmp_path, capsys):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "consts.p4").write_text("const bit<8> A = 1;\n")
    prog = tmp_path / "p.p4"
    prog.write_text((PROGRAMS / "basic.p4").read_text().replace(
        "#include <v1model.p4>", "#include <v1model.p4>\n#include <consts.p4>"))
    assert main(["p4check", "-q", "-I", str(tmp_path / "inc"), str(prog)]) == 0
    assert capsys.readouterr().out == ""
    assert main(["p4check", str(prog)]) == 1
    assert "include file 'consts.p4' not found" in capsys.readouterr().err


def test_p4check_runs_the_back_end_too(tmp_path, capsys):
    # the front end accepts a 12-bit header; the switch (like BMv2) needs whole bytes
    src = (PROGRAMS / "basic.p4").read_text()
    assert "header ethernet_t {" in src
    bad = tmp_path / "odd.p4"
    bad.write_text(src.replace("header ethernet_t {", "header ethernet_t {\n    bit<4> odd;", 1))
    assert main(["p4check", str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"netweft p4check: error: {bad}:")
    assert "not a whole number of bytes" in err
