"""V1MODEL_VERSION: the declarations p4c's v1model.p4 guards by version are guarded
the same way, and a version v1model.p4 does not define is an error."""

from __future__ import annotations

import pytest

from netweft.p4.compiler import P4Error, compile_p4_source

from .conftest import SKELETON


def program(version: str | None, top: str = "", body: str = "") -> str:
    src = SKELETON.format(top=top, locals="", body=body)
    if version is not None:
        src = f"#define V1MODEL_VERSION {version}\n" + src
    return src


def test_port_id_t_exists_from_20200408_on():
    prog = compile_p4_source(program("20200408", top="typedef PortId_t port_t;",
                                     body="port_t p = sm.ingress_port; sm.egress_spec = p;"),
                             "t.p4")
    assert prog.ingress is not None


def test_port_id_t_is_unknown_in_the_default_version_with_a_hint():
    with pytest.raises(P4Error) as err:
        compile_p4_source(program(None, top="typedef PortId_t port_t;"), "t.p4")
    msg = str(err.value)
    assert msg.startswith("t.p4:6:9: unknown type 'PortId_t'")
    assert "#define V1MODEL_VERSION 20200408" in msg


def test_default_version_has_bit9_port_fields():
    src = program(None, body="bit<9> p = sm.ingress_port; sm.egress_spec = p;")
    assert compile_p4_source(src, "t.p4").ingress is not None


@pytest.mark.parametrize("version,message", [
    ("20200409", "unknown V1MODEL_VERSION"),
    ("20170101", "unknown V1MODEL_VERSION"),
    ("abc", "V1MODEL_VERSION is empty or not a number"),
    ("", "V1MODEL_VERSION is empty or not a number"),
])
def test_unknown_or_invalid_version_is_an_error(version, message):
    with pytest.raises(P4Error) as err:
        compile_p4_source(program(version), "t.p4")
    assert err.value.loc.file.endswith("v1model.p4") and err.value.loc.line > 0
    assert err.value.msg.startswith(f"#error {message}")
    assert "20180101 and 20200408" in err.value.msg
