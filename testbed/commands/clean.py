"""``netweft clean``: remove what a crashed or killed run left behind.

A running network records its owner's PID in ``/run/netweft/<prefix>``. For
networks whose owner is gone, this removes the namespaces (with their veths and
the processes inside), veth pairs a run killed while creating a link left in the
root namespace, and then the owner files; networks whose owner still runs
are kept unless ``--all`` is given. Switch processes, captures and iperf3
servers run inside the namespaces and go with them; the records of ``netweft
up`` testbeds whose process is gone (``/run/netweft/testbeds``) are removed too.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from netweft.emulation.network import (
    DEFAULT_PREFIX,
    OWNER_DIR,
    leftover_namespaces,
    leftover_owner_files,
    leftover_root_links,
    remove_namespace,
    remove_root_link,
)
from netweft.testbed import up_registry
from netweft.testbed.command_line import CommandError


def clean(prefixes: Sequence[str] = (DEFAULT_PREFIX,), include_live: bool = False,
          log: Callable[[str], None] = print) -> int:
    """Remove leftover namespaces, then owner files; returns how many things were removed."""
    names = leftover_namespaces(prefixes, include_live=include_live)
    for name in names:
        remove_namespace(name)
        log(f"removed namespace {name}")
    links = [name for name in leftover_root_links(prefixes, include_live=include_live)
             if remove_root_link(name)]  # an end takes its peer with it
    for name in links:
        log(f"removed veth pair {name} from the root namespace")
    # After the namespaces: a file whose namespaces are gone, or never were (a run
    # killed half-way through start), is a stale record.
    files = leftover_owner_files(prefixes, include_live=include_live)
    for path in files:
        path.unlink(missing_ok=True)
        log(f"removed owner file {path}")
    records = [r for r in up_registry.records()
               if (include_live or not r.alive)
               and _matches(r.prefix, prefixes)]
    for record in records:
        up_registry.remove(record.name)
        log(f"removed the record of testbed {record.name} (pid {record.pid})")
    # Control sockets that netweft up puts in /tmp when the run folder's path is too
    # long for a Unix socket: stale once their network's owner file is gone.
    sockets = [path for path in Path("/tmp").glob("netweft-*-*.sock")
               if _matches(path.name.split("-")[1], prefixes)
               and (include_live or not (OWNER_DIR / path.name.split("-")[1]).exists())]
    for path in sockets:
        path.unlink(missing_ok=True)
        log(f"removed control socket {path}")
    return len(names) + len(links) + len(files) + len(records) + len(sockets)


def _matches(prefix: str, prefixes: Sequence[str]) -> bool:
    """``prefix`` is one of ``prefixes`` or one of them plus netweft's five hex digits."""
    return any(prefix == p or (prefix.startswith(p) and len(prefix) == len(p) + 5)
               for p in prefixes)


def _main(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        raise CommandError("needs root to remove namespaces; run it as root (sudo)")
    if not clean(include_live=args.all):
        print("nothing to clean")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``netweft clean``."""
    p = sub.add_parser("clean", help="remove namespaces and owner files left behind by "
                                     "crashed netweft runs")
    p.add_argument("--all", action="store_true",
                   help="also remove networks whose owning process is still running")
    p.set_defaults(func=_main)
