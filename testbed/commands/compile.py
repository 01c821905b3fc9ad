"""``netweft compile`` and ``netweft-p4c``: compile a P4-16 v1model program into
netweft's device config and its P4Info, with p4c-bm2-ss's command line.

    netweft compile PROG.p4 -o OUT.json --p4runtime-files PROG.p4info.txtpb
    netweft-p4c --p4v 16 -I include -D DEBUG=1 \\
        --p4runtime-files build/basic.p4.p4info.txtpb -o build/basic.json basic.p4

``--p4runtime-files`` takes a comma-separated list; each file's format follows
its extension as in p4c (``.txtpb``/``.txt``: protobuf text, ``.json``: JSON,
``.bin``: binary). The older ``--p4runtime-file F --p4runtime-format
text|json|binary`` spelling works too. Errors are one line,
``netweft-p4c: error: file:line:col: message`` for the program, with exit
status 1 (2 for a bad command line).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from google.protobuf import json_format, text_format
from p4.config.v1 import p4info_pb2

from netweft.p4.compiler.bmv2_target import check_bmv2
from netweft.p4.compiler.compiler import compile_preprocessed
from netweft.p4.compiler.device_config import device_config, dumps, preprocess_file
from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.p4info import build_p4info
from netweft.p4.compiler.program import Program
from netweft.testbed.command_line import CommandError, plain_text

FORMATS = ("text", "json", "binary")
_BY_EXTENSION = ((".txtpb", "text"), (".txt", "text"), (".json", "json"), (".bin", "binary"))


def format_for(path: str) -> str:
    """The P4Info format p4c chooses for a file name (ValueError if none fits)."""
    for ext, fmt in _BY_EXTENSION:
        if path.endswith(ext):
            return fmt
    raise ValueError(f"{path}: unknown P4Runtime file extension; use .txtpb, .txt, .json "
                     "or .bin")


def serialize_p4info(info: p4info_pb2.P4Info, fmt: str) -> bytes:
    """P4Info in p4c's output formats."""
    if fmt == "text":
        return text_format.MessageToString(info).encode()
    if fmt == "json":
        return (json_format.MessageToJson(info) + "\n").encode()
    if fmt == "binary":
        return info.SerializeToString()
    raise ValueError(f"unknown P4Runtime format {fmt!r}")


def target_checks(target: str) -> list[Callable[[Program], None]]:
    """Checks a target adds after the front end; each raises P4Error on a construct
    the target cannot run (bmv2: ``netweft.p4.compiler.bmv2_target``)."""
    return [refuse_what_bmv2_refuses] if target == "bmv2" else []


def refuse_what_bmv2_refuses(program: Program) -> None:
    """p4c-bm2-ss's refusals and warnings (docs/bmv2-differences.md): each finding is
    printed as ``file:line:col: message``, and the first error is raised, so that it is
    the command's last line."""
    findings = check_bmv2(program)
    errors = [d for d in findings if d.is_error]
    for d in findings:
        if not errors or d is not errors[0]:
            print(d, file=sys.stderr)
    if errors:
        more = f" ({len(errors) - 1} more above)" if len(errors) > 1 else ""
        raise P4Error(errors[0].message + more, errors[0].loc)


# ------------------------------------------------------------------ command line


def _define(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not name.isidentifier():
        raise argparse.ArgumentTypeError(f"bad macro name in -D {text!r} (use -D NAME=VALUE)")
    return name, value if sep else "1"


def _choice(allowed: str, refusal: str) -> Callable[[str], str]:
    """An option type accepting one value and refusing others with ``refusal``."""
    def check(text: str) -> str:
        if text != allowed:
            raise argparse.ArgumentTypeError(refusal.format(text))
        return text
    return check


def _p4runtime_files(text: str) -> list[str]:
    files = [f for f in text.split(",") if f]
    if not files:
        raise argparse.ArgumentTypeError("--p4runtime-files needs at least one file name")
    for f in files:
        try:
            format_for(f)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return files


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options shared by ``netweft compile`` and ``netweft-p4c`` (p4c-bm2-ss's)."""
    p.add_argument("program", help="the P4-16 source file")
    p.add_argument("-o", "--output", metavar="OUT.json",
                   help="device config to write (default: PROGRAM's name with .json, in the "
                        "current directory; an existing directory gets that name inside, "
                        "as p4c's driver does)")
    p.add_argument("--p4runtime-files", type=_p4runtime_files, default=[], metavar="FILES",
                   help="comma-separated P4Info files to write; format by extension "
                        "(.txtpb/.txt text, .json, .bin)")
    p.add_argument("--p4runtime-file", metavar="FILE",
                   help="P4Info file in --p4runtime-format (p4c's older spelling)")
    p.add_argument("--p4runtime-format", choices=FORMATS, default=None,
                   help="format of --p4runtime-file (default: text)")
    p.add_argument("-I", "--include", dest="include", action="append", default=[], metavar="DIR",
                   help="directory searched by #include (repeatable)")
    p.add_argument("-D", dest="defines", action="append", type=_define, default=[],
                   metavar="NAME[=VALUE]", help="predefine a macro (repeatable)")
    p.add_argument("-U", dest="undefines", action="append", default=[], metavar="NAME",
                   help="forget a macro given with -D")
    p.add_argument("--p4v", default="16", metavar="16",
                   type=_choice("16", "P4 version {!r} is not supported; netweft compiles "
                                      "P4-16 (--p4v 16)"),
                   help="language version (16)")
    p.add_argument("--std", default="p4-16", metavar="p4-16",
                   type=_choice("p4-16", "language {!r} is not supported; netweft compiles "
                                         "P4-16 (--std p4-16)"),
                   help="language version, p4c's other spelling")
    p.add_argument("--target", default="bmv2", metavar="bmv2",
                   type=_choice("bmv2", "unknown target {!r}; netweft compiles for bmv2's "
                                        "v1model (--target bmv2)"),
                   help="target (bmv2)")
    p.add_argument("--arch", default="v1model", metavar="v1model",
                   type=_choice("v1model", "unknown architecture {!r}; netweft supports "
                                           "v1model (--arch v1model)"),
                   help="architecture (v1model)")


def run(args: argparse.Namespace) -> int:
    """Compile, check the target, write the device config and the P4Info files.
    Expected failures are CommandError (one line, file:line:col for the program)."""
    if args.p4runtime_format and not args.p4runtime_file:
        raise CommandError("--p4runtime-format applies to --p4runtime-file; with "
                           "--p4runtime-files the extension chooses the format", 2)
    defines = dict(args.defines)
    for name in args.undefines:
        defines.pop(name, None)
    outputs: list[tuple[str, str]] = [(f, format_for(f)) for f in args.p4runtime_files]
    if args.p4runtime_file:
        outputs.append((args.p4runtime_file, args.p4runtime_format or "text"))
    out = device_config_path(args.program, args.output)
    try:
        src = preprocess_file(args.program, args.include, defines)
        program = compile_preprocessed(src, args.program)
        for check in target_checks(args.target):
            check(program)
        info = build_p4info(program)
        config = dumps(device_config(src, args.program))
    except P4Error as err:  # file:line:col: message
        raise CommandError(str(err)) from None
    try:
        _write(out, config)
        for path, fmt in outputs:
            _write(path, serialize_p4info(info, fmt))
    except OSError as exc:
        raise CommandError(f"cannot write {exc.filename}: {exc.strerror}") from None
    return 0


def device_config_path(program: str, output: str | None) -> str:
    """Where ``-o`` puts the device config: the file named, or ``PROGRAM.json`` in the
    directory named (p4c's driver) or in the current directory."""
    name = Path(program).with_suffix(".json").name
    if output is None:
        return name
    if os.path.isdir(output):
        return os.path.join(output, name)
    return output


def _write(path: str, data: bytes) -> None:
    parent = os.path.dirname(path)
    if parent and not os.path.isdir(parent):
        raise FileNotFoundError(2, "no such directory (create it first)", path)
    with open(path, "wb") as f:
        f.write(data)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``compile`` to the ``netweft`` command line."""
    p = subparsers.add_parser("compile", help="compile a P4 program: device config + P4Info",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=run)


def p4c_main(argv: Sequence[str] | None = None) -> int:
    """``netweft-p4c``: the same compile, with p4c-bm2-ss's program name."""
    parser = argparse.ArgumentParser(
        prog="netweft-p4c", description=plain_text(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except CommandError as err:
        print(f"netweft-p4c: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("netweft-p4c: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(p4c_main())
