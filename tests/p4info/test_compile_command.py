"""``netweft-p4c`` / ``netweft compile``: p4c-bm2-ss's options, P4Info files in each
format, the device config they write, and one-line errors."""

import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format, text_format
from p4.config.v1 import p4info_pb2

from netweft.p4.compiler import compile_p4
from netweft.p4.compiler.device_config import load_device_config
from netweft.p4.compiler.p4info import build_p4info
from netweft.p4.programs import program
from netweft.testbed.command_line import main as netweft_main
from netweft.testbed.commands.compile import p4c_main

PROGRAM = """#include <core.p4>
#include <v1model.p4>
#include "defs.p4"
header h_t { bit<8> a; }
struct hs { h_t h; }
struct m_t { }
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout m_t m) { apply { } }
control I(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    action set(bit<9> port) { sm.egress_spec = port; }
    table t { key = { hdr.h.a : exact; } actions = { set; } size = TABLE_SIZE; }
#ifdef WITH_SECOND
    table second { key = { hdr.h.a : exact; } actions = { set; } }
#endif
    apply { t.apply();
#ifdef WITH_SECOND
        second.apply();
#endif
    }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture
def prog(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "defs.p4").write_text("#define TABLE_SIZE 64\n")
    src = tmp_path / "prog.p4"
    src.write_text(PROGRAM)
    return src


def test_tutorials_command_line_writes_p4info_and_device_config(tmp_path, prog):
    build = tmp_path / "build"
    build.mkdir()
    txt, js, binary = (str(build / f"prog.p4info.{x}") for x in ("txtpb", "json", "bin"))
    rc = p4c_main(["--p4v", "16", "-I", str(tmp_path / "inc"), "-D", "WITH_SECOND",
                   "--p4runtime-files", f"{txt},{js},{binary}",
                   "-o", str(build / "prog.json"), str(prog)])
    assert rc == 0
    from_text = text_format.Parse(open(txt).read(), p4info_pb2.P4Info())
    from_json = json_format.Parse(open(js).read(), p4info_pb2.P4Info())
    from_bin = p4info_pb2.P4Info.FromString(open(binary, "rb").read())
    assert from_text == from_json == from_bin
    assert [t.preamble.name for t in from_text.tables] == ["I.t", "I.second"]
    assert from_text.tables[0].size == 64  # the macro from -I's defs.p4
    loaded = load_device_config((build / "prog.json").read_bytes())
    assert build_p4info(loaded) == from_text


def test_without_define_the_guarded_table_is_absent(tmp_path, prog):
    out = tmp_path / "p.txt"
    rc = p4c_main(["-I", str(tmp_path / "inc"), "--p4runtime-files", str(out),
                   "-o", str(tmp_path / "o.json"), str(prog)])
    assert rc == 0
    info = text_format.Parse(out.read_text(), p4info_pb2.P4Info())
    assert [t.preamble.name for t in info.tables] == ["I.t"]


def test_output_directory_gets_the_program_name(tmp_path, prog):
    # as p4c's driver: `p4c --target bmv2 --arch v1model prog.p4 -o build`
    build = tmp_path / "build"
    build.mkdir()
    rc = p4c_main(["--target", "bmv2", "--arch", "v1model", "-I", str(tmp_path / "inc"),
                   "--p4runtime-files", str(build / "prog.txt"), str(prog), "-o", str(build)])
    assert rc == 0
    assert load_device_config((build / "prog.json").read_bytes()).tables.keys() == {"I.t"}


def test_older_p4runtime_file_and_format(tmp_path):
    out = tmp_path / "basic.p4info"
    rc = netweft_main(["compile", str(program("basic_forward")), "-o",
                       str(tmp_path / "b.json"), "--p4runtime-file", str(out),
                       "--p4runtime-format", "json"])
    assert rc == 0
    info = json_format.Parse(out.read_text(), p4info_pb2.P4Info())
    assert info == build_p4info(compile_p4(program("basic_forward")))


def test_netweft_compile_error_prefix(tmp_path, capsys):
    bad = tmp_path / "bad.p4"
    bad.write_text("control C() { apply { } }\nxyz\n")
    assert netweft_main(["compile", str(bad), "-o", str(tmp_path / "o.json")]) == 1
    assert capsys.readouterr().err.startswith(f"netweft compile: error: {bad}:2:")


def test_bad_extension_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        p4c_main(["--p4runtime-files", str(tmp_path / "x.yaml"), str(program("basic_forward"))])
    assert exit_.value.code == 2
    assert "unknown P4Runtime file extension" in capsys.readouterr().err


@pytest.mark.parametrize("option", [["--p4v", "14"], ["--std", "p4-14"],
                                    ["--target", "tofino"], ["--arch", "psa"]])
def test_unsupported_language_or_target_is_refused_when_parsing(option, capsys):
    with pytest.raises(SystemExit) as exit_:
        p4c_main(option + [str(program("basic_forward"))])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert option[1] in err and ("P4-16" in err or "v1model" in err)


def test_format_without_the_older_file_option_is_a_usage_error(tmp_path, capsys):
    assert p4c_main(["--p4runtime-format", "json", "-o", str(tmp_path / "x.json"),
                     str(program("basic_forward"))]) == 2
    assert "netweft-p4c: error: --p4runtime-format applies to --p4runtime-file" in \
        capsys.readouterr().err


def test_p4_error_is_one_located_line(tmp_path, capsys):
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <core.p4>\ncontrol C() { apply { x = 1; } }\n")
    assert p4c_main(["-o", str(tmp_path / "bad.json"), str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"netweft-p4c: error: {bad}:2:")
    assert not (tmp_path / "bad.json").exists()


def test_installed_command_prints_no_traceback(tmp_path):
    exe = Path(sys.executable).parent / "netweft-p4c"  # [project.scripts] entry point
    assert exe.exists(), "pip install -e . installs netweft-p4c beside python"
    missing = tmp_path / "missing.p4"
    r = subprocess.run([exe, "-o", str(tmp_path / "m.json"), str(missing)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert str(missing) in r.stderr and len(r.stderr.strip().splitlines()) == 1
