"""``netweft stf PROGRAM.p4 TEST.stf``: run a p4c STF packet test on the embedded switch.

Prints one verdict per expected packet (and per unexpected one), a byte diff
for each mismatch, every control-plane error with its STF line, and exits 0
when everything passed, 1 otherwise (bad program, malformed STF, mismatch).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from netweft.testbed.arg_types import existing_dir, existing_file


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``stf`` subcommand."""
    parser = subparsers.add_parser(
        "stf", help="run a p4c STF packet test against the embedded P4 switch",
        description="Compile PROGRAM.p4, run the STF test (table entries, packets in, "
                    "expected packets out) on netweft's embedded switch and report each "
                    "expectation.")
    parser.add_argument("program", type=existing_file, help="the P4-16 v1model program")
    parser.add_argument("stf", type=existing_file, help="the STF test file")
    parser.add_argument("-I", "--include", dest="include_dirs", action="append", default=[],
                        type=existing_dir,
                        metavar="DIR", help="directory searched by #include (repeatable)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print only failures and the summary")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also print every packet the switch sent, per port")
    parser.set_defaults(func=run_stf_command)


def run_stf_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the test named by ``args``; returns the exit code."""
    from netweft.emulation.stf import STFError, run_stf_files
    from netweft.p4.compiler import P4Error
    from netweft.testbed.command_line import CommandError

    out = out or sys.stdout
    try:
        result = run_stf_files(args.program, args.stf, args.include_dirs)
    except (P4Error, STFError) as err:
        raise CommandError(str(err)) from None
    except OSError as err:
        raise CommandError(f"{err.filename or args.program}: {err.strerror or err}") from None
    for verdict in result.verdicts:
        if verdict.ok and args.quiet:
            continue
        print(verdict.describe(), file=out)
        if not verdict.ok:
            print(verdict.diff(), file=out)
    if not args.quiet:
        for note in result.notes:
            print(f"note: {note}", file=out)
    if getattr(args, "verbose", False):
        for port in sorted(result.outputs):
            for i, data in enumerate(result.outputs[port], start=1):
                print(f"out port {port} #{i}: {data.hex().upper()}", file=out)
    for error in result.errors:
        print(f"error: {error}", file=out)
    passed = sum(v.ok for v in result.verdicts)
    status = "PASS" if result.passed else "FAIL"
    print(f"{status}: {passed}/{len(result.verdicts)} expectations met, "
          f"{len(result.errors)} error(s)", file=out)
    return 0 if result.passed else 1
