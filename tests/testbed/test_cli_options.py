"""The ``netweft`` command line: options rejected at parse time with one line under
the command's own error prefix, --version, -I/--include, plain-text help."""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from netweft.testbed.command_line import build_parser, main


def _parse_error(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize("option,value,message", [
    ("--rma-bytes", "0", "must be an integer from 1 to 1073741824, got '0'"),
    ("--size", "100000", "must be an integer from 4 to 8972, got '100000'"),
    ("--size", "2", "must be an integer from 4 to 8972, got '2'"),
    ("--count", "-5", "must be an integer from 1 to 100000, got '-5'"),
    ("--count", "0", "must be an integer from 1 to 100000, got '0'"),
    ("--count", "many", "must be an integer from 1 to 100000, got 'many'"),
])
def test_demo_rejects_bad_values_before_it_starts(option, value, message, capsys):
    line = _parse_error(["demo", option, value], capsys)
    assert line == f"netweft demo: error: argument {option}: {message}"


def test_bench_switch_rejects_zero_packets_and_a_missing_program(capsys):
    line = _parse_error(["bench", "switch", "--packets", "0"], capsys)
    assert line.startswith("netweft bench switch: error: argument --packets: must be an integer")
    line = _parse_error(["bench", "switch", "--program", "nope.p4"], capsys)
    assert line == "netweft bench switch: error: argument --program: no such file: 'nope.p4'"


def test_bench_switch_with_a_broken_program_fails_naming_the_error(tmp_path, capsys):
    bad = tmp_path / "bad.p4"
    bad.write_text("control c() { apply { x = ; } }\n")
    assert main(["bench", "switch", "--packets", "10", "--program", str(bad)]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(f"netweft bench switch: error: cannot compile bad.p4: {bad}:1:")
    assert "skipping" not in captured.err and captured.out == ""


def test_version():
    out = subprocess.run([sys.executable, "-m", "netweft.testbed.command_line", "--version"],
                         capture_output=True, text=True, check=True).stdout
    from importlib.metadata import version
    assert out.strip() == f"netweft {version('netweft')}"


def _all_parsers(parser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _all_parsers(sub)


def test_help_is_plain_text():
    for parser in _all_parsers(build_parser()):
        text = parser.format_help()
        assert "``" not in text and ":class:" not in text and ":meth:" not in text, parser.prog


def test_every_command_taking_p4_accepts_dash_i_and_include(tmp_path):
    (tmp_path / "x.p4").write_text("")
    (tmp_path / "x.stf").write_text("")
    parser = build_parser()
    for argv in (["p4check", "x.p4"], ["stf", "x.p4", "x.stf"], ["bench", "switch"],
                 ["compile", "x.p4"]):
        argv = [str(tmp_path / a) if "." in a else a for a in argv]
        short = parser.parse_args([*argv, "-I", str(tmp_path)])
        long = parser.parse_args([*argv, "--include", str(tmp_path)])
        assert vars(short) == vars(long), argv


@pytest.mark.parametrize("argv,message", [
    (["p4check", "p4"], "argument program: 'p4' is a directory, not a file"),
    (["p4check", "p4/basic_forward.p4", "-I", "/nonexistent"],
     "argument -I/--include: no such directory: '/nonexistent'"),
    (["stf", "p4/basic_forward.p4", "nope.stf"], "argument stf: no such file: 'nope.stf'"),
])
def test_paths_are_checked_when_parsed(argv, message, capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    assert _parse_error(argv, capsys) == f"netweft {argv[0]}: error: {message}"


@pytest.mark.netns  # needs root: the demo checks for root first
def test_demo_output_folder_that_cannot_be_made_is_one_line(capsys):
    assert main(["demo", "--out", "/proc/netweft-demo"]) == 1
    err = capsys.readouterr().err
    assert err == ("netweft demo: error: cannot create the output folder /proc/netweft-demo: "
                   "No such file or directory; choose another with --out\n")
    help_text = subprocess.run([sys.executable, "-m", "netweft.emulation.process.switch_process",
                                "--help"], capture_output=True, text=True, check=True).stdout
    assert "-I DIR, --include DIR" in help_text


@pytest.mark.parametrize("command", ["clean", "demo"])
def test_commands_needing_root_say_so_as_a_user(command, monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main([command]) == 1
    assert capsys.readouterr().err.startswith(f"netweft {command}: error: needs root")


def test_output_into_a_closed_pipe_ends_quietly(tmp_path):
    """``netweft fabric routes TOPO | head -1``: no traceback when the reader leaves
    (the plan of 2 switches and 600 hosts is more than a pipe holds)."""
    hosts = {f"h{i}": {"ip": f"10.{i // 250}.{i % 250}.1/8"} for i in range(600)}
    links = [[f"h{i}", f"s{1 + i % 2}"] for i in range(600)] + [["s1", "s2"]]
    topo = tmp_path / "big.yaml"
    topo.write_text(json.dumps({"hosts": hosts, "switches": {"s1": {}, "s2": {}},
                                "links": links}))   # JSON is YAML
    proc = subprocess.Popen([sys.executable, "-m", "netweft.testbed.command_line", "fabric", "routes",
                             str(topo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"s1:\n"
    proc.stdout.close()   # as head does after its line
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and "Traceback" not in stderr, stderr
