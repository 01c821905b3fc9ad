"""Malformed programs fail with P4Error("file:line:col: message") pointing at
the offending construct, never with another exception."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

LOCATION = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<message>.+)", re.S)

TEMPLATE = """\
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers { ethernet_t ethernet; }
struct metadata { bit<8> m; }

parser P(packet_in packet, out headers hdr, inout metadata meta,
         inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) {
    action fwd(bit<9> port) { standard_metadata.egress_spec = port; }
    table t {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { fwd; NoAction; }
        default_action = NoAction();
    }
    apply {
        t.apply();
        // INGRESS
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) {
    apply { }
}

control CC(inout headers hdr, inout metadata meta) { apply { } }

control D(packet_out packet, in headers hdr) { apply { packet.emit(hdr.ethernet); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def compile_text(tmp_path: Path, text: str, name: str = "prog.p4"):
    from netweft.p4.compiler import compile_p4

    path = tmp_path / name
    path.write_text(text)
    return compile_p4(str(path), include_dirs=(str(tmp_path),))


def expect_error(tmp_path: Path, text: str, line_of: str, words: tuple[str, ...] = (),
                 name: str = "prog.p4", column_of: str | None = None):
    """Compile ``text``; assert a P4Error located on the line containing ``line_of``.

    ``column_of`` (a substring of that line), when given, must start at or
    contain the reported column.
    """
    from netweft.p4.compiler import P4Error

    with pytest.raises(P4Error) as info:
        compile_text(tmp_path, text, name)
    message = str(info.value)
    match = LOCATION.match(message)
    assert match, f"no file:line:col prefix in {message!r}"
    assert match["file"].endswith(name), message
    lines = text.splitlines()
    expected_line = next(i for i, line in enumerate(lines, 1) if line_of in line)
    assert int(match["line"]) == expected_line, message
    if column_of is not None:
        start = lines[expected_line - 1].index(column_of) + 1
        assert start <= int(match["col"]) <= start + len(column_of), message
    for word in words:
        assert word.lower() in match["message"].lower(), message
    return message


def with_ingress(statement: str) -> str:
    return TEMPLATE.replace("// INGRESS", statement)


def test_template_itself_compiles(tmp_path):
    program = compile_text(tmp_path, TEMPLATE)
    assert program is not None


def test_undeclared_identifier(tmp_path):
    expect_error(tmp_path, with_ingress("meta.m = undeclared_thing;"), "undeclared_thing",
                 ("undeclared_thing",), column_of="undeclared_thing")


def test_unknown_field(tmp_path):
    expect_error(tmp_path, with_ingress("hdr.ethernet.nosuchfield = 1;"), "nosuchfield",
                 ("nosuchfield",))


def test_implicit_narrowing_is_a_type_error(tmp_path):
    expect_error(tmp_path, with_ingress("meta.m = hdr.ethernet.etherType;"),
                 "meta.m = hdr.ethernet.etherType;")


def test_mixed_widths_in_binary_operation(tmp_path):
    expect_error(tmp_path, with_ingress("meta.m = meta.m + hdr.ethernet.etherType;"),
                 "meta.m = meta.m + hdr.ethernet.etherType;")


def test_missing_semicolon(tmp_path):
    text = with_ingress("meta.m = 1\n        meta.m = 2;")
    from netweft.p4.compiler import P4Error

    with pytest.raises(P4Error) as info:
        compile_text(tmp_path, text)
    match = LOCATION.match(str(info.value))
    assert match
    first = next(i for i, line in enumerate(text.splitlines(), 1) if "meta.m = 1" in line)
    assert int(match["line"]) in (first, first + 1), str(info.value)


def test_unknown_action_in_table(tmp_path):
    text = TEMPLATE.replace("actions = { fwd; NoAction; }", "actions = { fwd; no_such_action; }")
    expect_error(tmp_path, text, "no_such_action", ("no_such_action",))


def test_unknown_parser_state(tmp_path):
    text = TEMPLATE.replace("transition accept;\n    }\n}", "transition nowhere;\n    }\n}")
    expect_error(tmp_path, text, "transition nowhere;", ("nowhere",))


def test_wrong_argument_count(tmp_path):
    expect_error(tmp_path, with_ingress("mark_to_drop(standard_metadata, 1);"),
                 "mark_to_drop(standard_metadata, 1);")


def test_duplicate_declaration(tmp_path):
    text = TEMPLATE.replace("struct metadata { bit<8> m; }",
                            "struct metadata { bit<8> m; }\nstruct metadata { bit<8> n; }")
    expect_error(tmp_path, text, "struct metadata { bit<8> n; }", ("metadata",))


def test_assignment_to_in_parameter(tmp_path):
    text = TEMPLATE.replace("apply { packet.emit(hdr.ethernet); }",
                            "apply { hdr.ethernet.etherType = 1; packet.emit(hdr.ethernet); }")
    expect_error(tmp_path, text, "hdr.ethernet.etherType = 1;")


def test_missing_include(tmp_path):
    text = TEMPLATE.replace("#include <v1model.p4>", '#include <v1model.p4>\n#include "absent.p4"')
    expect_error(tmp_path, text, '#include "absent.p4"', ("absent.p4",))


def test_error_in_included_file_names_that_file(tmp_path):
    (tmp_path / "bad_header.p4").write_text("header broken_t {\n    bit<8> a\n    bit<8> b;\n}\n")
    text = TEMPLATE.replace("#include <v1model.p4>",
                            '#include <v1model.p4>\n#include "bad_header.p4"')
    from netweft.p4.compiler import P4Error

    with pytest.raises(P4Error) as info:
        compile_text(tmp_path, text)
    match = LOCATION.match(str(info.value))
    assert match and match["file"].endswith("bad_header.p4"), str(info.value)
    assert int(match["line"]) in (2, 3), str(info.value)


def test_unterminated_comment(tmp_path):
    text = TEMPLATE.replace("// INGRESS", "/* never closed")
    from netweft.p4.compiler import P4Error

    with pytest.raises(P4Error) as info:
        compile_text(tmp_path, text)
    assert LOCATION.match(str(info.value)), str(info.value)


def test_unbalanced_conditional_directive(tmp_path):
    text = "#ifdef SOMETHING\n" + TEMPLATE
    from netweft.p4.compiler import P4Error

    with pytest.raises(P4Error) as info:
        compile_text(tmp_path, text)
    assert LOCATION.match(str(info.value)), str(info.value)


def test_no_main_package(tmp_path):
    text = TEMPLATE.replace("V1Switch(P(), VC(), I(), E(), CC(), D()) main;", "")
    from netweft.p4.compiler import P4Error

    with pytest.raises(P4Error) as info:
        compile_text(tmp_path, text)
    assert LOCATION.match(str(info.value)), str(info.value)


def test_non_constant_table_size(tmp_path):
    text = TEMPLATE.replace("default_action = NoAction();",
                            "default_action = NoAction();\n        size = meta.m;")
    expect_error(tmp_path, text, "size = meta.m;")


def test_stray_character(tmp_path):
    expect_error(tmp_path, with_ingress("meta.m = 1 $ 2;"), "meta.m = 1 $ 2;")


def test_unsupported_architecture_names_the_package(tmp_path):
    text = (
        "#include <core.p4>\n"
        "parser Prs(packet_in b, out bit<8> x) { state start { transition accept; } }\n"
        "control Ctl(inout bit<8> x) { apply { } }\n"
        "package SomeOtherArch(Prs p, Ctl c);\n"
        "SomeOtherArch(Prs(), Ctl()) main;\n"
    )
    expect_error(tmp_path, text, "SomeOtherArch(Prs(), Ctl()) main;", ("SomeOtherArch",))


def test_unreadable_inputs_are_p4_errors(tmp_path):
    """A missing file, a directory, binary junk and an empty file are bad user
    input too: P4Error with a location, never another exception."""
    from netweft.p4.compiler import P4Error, compile_p4

    (tmp_path / "junk.p4").write_bytes(bytes(range(256)))
    (tmp_path / "empty.p4").write_text("")
    for path in (tmp_path / "missing.p4", tmp_path, tmp_path / "junk.p4",
                 tmp_path / "empty.p4"):
        with pytest.raises(P4Error) as info:
            compile_p4(str(path))
        assert LOCATION.match(str(info.value)), str(info.value)
