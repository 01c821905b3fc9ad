"""``netweft p4check``: check a P4 program with netweft's compiler, front and back end.

Prints the control-plane objects of a program that compiles and that the embedded
switch can run, or the error as ``netweft p4check: error: file:line:col: message``
(exit status 1) for one that does not, so that a program can be checked without
p4c.  ``--target bmv2`` also refuses what p4c-bm2-ss / simple_switch refuse (see
docs/bmv2-differences.md), each as ``file:line:col: message``.
"""

from __future__ import annotations

import argparse
import sys

from netweft.emulation.pipeline.compiled import lower_program
from netweft.p4.compiler.bmv2_target import check_bmv2
from netweft.p4.compiler.compiler import compile_p4
from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.program import Program
from netweft.testbed.arg_types import existing_dir, existing_file
from netweft.testbed.command_line import CommandError


def summary(prog: Program) -> list[str]:
    """Human-readable lines naming the program's blocks and control-plane objects."""
    lines = [f"{prog.source_path}: ok ({prog.package})"]
    for role, block in prog.blocks.items():
        lines.append(f"  {role:17} {block.name}")
    for t in prog.tables.values():
        keys = ", ".join(f"{k.name}:{k.match_kind}" for k in t.keys) or "no key"
        acts = ", ".join(r.action.fqn for r in t.action_refs)
        lines.append(f"  table  {t.fqn} [{keys}] -> {acts}")
    for e in prog.externs.values():
        lines.append(f"  extern {e.name}: {e.extern_type}")
    for v in prog.value_sets.values():
        lines.append(f"  value_set {v.fqn} (size {v.size})")
    return lines


def run(args: argparse.Namespace) -> int:
    try:
        prog = compile_p4(args.program, include_dirs=args.include)
        lower_program(prog)  # what the embedded switch would refuse
    except P4Error as err:
        raise CommandError(str(err)) from None
    if args.target == "bmv2":
        findings = check_bmv2(prog)
        for d in findings:
            print(d, file=sys.stderr)
        errors = [d for d in findings if d.is_error]
        if errors:
            raise CommandError(f"{len(errors)} construct{'s' if len(errors) > 1 else ''} "
                               "above would not deploy to BMv2 (p4c-bm2-ss refuses "
                               f"{'them' if len(errors) > 1 else 'it'}); see "
                               "docs/bmv2-differences.md for the deployable forms")
    if not args.quiet:
        print("\n".join(summary(prog)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``p4check`` to the ``netweft`` command line."""
    p = subparsers.add_parser("p4check", help="check a P4-16 v1model program (no p4c needed)",
                              description=__doc__)
    p.add_argument("program", type=existing_file, help="the .p4 file")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   type=existing_dir,
                   help="directory searched by #include (repeatable)")
    p.add_argument("--target", choices=("netweft", "bmv2"), default="netweft",
                   help="netweft (default): what the embedded switch runs; bmv2: also refuse "
                        "what p4c-bm2-ss and simple_switch refuse")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    p.set_defaults(func=run)
