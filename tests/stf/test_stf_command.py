"""``netweft stf``: verdicts, diffs, exit codes and clean messages for bad input."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

from netweft.testbed.command_line import main

REPO = Path(__file__).parent.parent.parent
BASIC = REPO / "p4" / "basic_forward.p4"
IPV4_IN = ("000000000001 000000000002 0800 4500001e00010000401165cd0a0000010a000101 "
           "00010002000a826c 6869")
IPV4_OUT = ("080000000111 000000000001 0800 4500001e000100003f1166cd0a0000010a000101 "
            "00010002000a826c 6869")
ROUTE = ("add MyIngress.ipv4_lpm hdr.ipv4.dstAddr:0x0a000101/32 "
         "MyIngress.ipv4_forward(dstAddr:0x080000000111, port:3)")


def netweft_stf(*argv: str) -> tuple[int, str]:
    """``netweft stf ARGV``'s exit code and what it printed (stdout, then stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["stf", *argv])
        except SystemExit as exit_:  # argparse rejected an argument
            code = exit_.code
    return code, out.getvalue() + err.getvalue()


def test_passing_test_exits_zero(tmp_path):
    stf = tmp_path / "ok.stf"
    stf.write_text(f"{ROUTE}\npacket 0 {IPV4_IN}\nexpect 3 {IPV4_OUT}$\n")
    code, out = netweft_stf(str(BASIC), str(stf))
    assert code == 0
    assert "PASS line 3: port 3 packet #1" in out
    assert out.strip().endswith("PASS: 1/1 expectations met, 0 error(s)")


def test_mismatch_exits_one_with_diff(tmp_path):
    stf = tmp_path / "bad.stf"
    stf.write_text(f"{ROUTE}\npacket 0 {IPV4_IN}\nexpect 3 {IPV4_OUT.replace('6869', '6868')}\n")
    code, out = netweft_stf(str(BASIC), str(stf))
    assert code == 1
    assert "FAIL line 3: port 3 packet #1: differs at byte 43" in out
    assert "0020 expected:" in out and "0020 actual:" in out and "^^" in out
    assert "FAIL: 0/1 expectations met" in out


def test_malformed_stf_is_a_message_not_a_traceback(tmp_path):
    stf = tmp_path / "broken.stf"
    stf.write_text("# fine\npacket 0 abz\n")
    code, out = netweft_stf(str(BASIC), str(stf))
    assert code == 1
    assert out == f"netweft stf: error: {stf}:2: packet: invalid hex digit 'z' in packet data\n"


def test_bad_program_and_missing_files(tmp_path):
    prog = tmp_path / "bad.p4"
    prog.write_text("control c() { apply { x = ; } }\n")
    stf = tmp_path / "empty.stf"
    stf.write_text("")
    code, out = netweft_stf(str(prog), str(stf))
    assert code == 1 and out.startswith(f"netweft stf: error: {prog}:1:")
    code, out = netweft_stf(str(BASIC), str(tmp_path / "nope.stf"))
    assert code == 2 and "Traceback" not in out
    assert out.splitlines()[-1] == ("netweft stf: error: argument stf: no such file: "
                                    f"'{tmp_path / 'nope.stf'}'")
    code, out = netweft_stf(str(tmp_path / "nope.p4"), str(stf))
    assert code == 2 and "nope.p4" in out and "Traceback" not in out


def test_include_dirs_and_the_installed_command(tmp_path):
    # the program includes "headers.p4" from a directory given with -I
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "headers.p4").write_text("header h_t { bit<8> a; }\n")
    prog = tmp_path / "prog.p4"
    prog.write_text("""#include <core.p4>
#include <v1model.p4>
#include "headers.p4"
struct hs { h_t h; }
struct m { }
parser P(packet_in p, out hs hdr, inout m meta, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control V(inout hs hdr, inout m meta) { apply { } }
control I(inout hs hdr, inout m meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 2; hdr.h.a = hdr.h.a + 1; }
}
control E(inout hs hdr, inout m meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout m meta) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
""")
    stf = tmp_path / "t.stf"
    stf.write_text("packet 1 41 ff\nexpect 2 42 ff $\n")
    proc = subprocess.run([sys.executable, "-m", "netweft.testbed.command_line", "stf", str(prog),
                           str(stf), "-I", str(tmp_path / "inc")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS: 1/1" in proc.stdout


def test_verbose_lists_every_packet_sent(tmp_path):
    stf = tmp_path / "v.stf"
    stf.write_text(f"{ROUTE}\npacket 0 {IPV4_IN}\npacket 0 {IPV4_IN}\nexpect 3\n")
    code, out = netweft_stf(str(BASIC), str(stf), "-v")
    assert code == 0
    sent = "".join(IPV4_OUT.split()).upper()
    assert out.count(f": {sent}") == 2
    assert f"out port 3 #1: {sent}" in out and f"out port 3 #2: {sent}" in out
