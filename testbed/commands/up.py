"""``netweft up``, ``netweft exec`` and ``netweft down``: a testbed from a topology file.

``netweft up TOPO`` reads the topology (netweft's YAML or the p4lang
tutorials' ``topology.json``), builds the network, starts a switch process per
switch with its program compiled and its runtime file applied, then opens a
prompt with Mininet's verbs (:mod:`netweft.testbed.commands.up_prompt`). ``--run
SCRIPT`` runs prompt lines from a file instead; ``--detach`` leaves the
testbed running in the background for ``netweft exec NODE -- CMD`` and
``netweft down``. Logs, counters, the switches' pcaps and captures go to the
run folder (``--out``). Whatever happens (an error, Ctrl-C, SIGTERM from
``netweft down``), the namespaces, veths and processes go when ``up`` ends; if
``up`` is killed (SIGKILL), its switch processes and host programs end with it
(their parent-death signal, :mod:`netweft.emulation.process_lifetime`) and the
next ``netweft up`` or ``netweft clean`` removes its namespaces and veths.
"""

from __future__ import annotations

import argparse
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

from netweft.emulation.network import Network, NetworkError, remove_namespace
from netweft.testbed import up_registry
from netweft.testbed.arg_types import existing_file
from netweft.testbed.command_line import CommandError
from netweft.testbed.commands.fabric import add_settings_arguments, settings_argv, settings_from
from netweft.testbed.commands.up_prompt import TestbedPrompt, substitute_names
from netweft.testbed.control.fabric.controller import configure_network
from netweft.testbed.control.fabric.graph import FabricGraphError
from netweft.testbed.control.fabric.installer import InstallError
from netweft.testbed.control.fabric.multicast import MulticastError
from netweft.testbed.control.fabric.settings import FabricSettings
from netweft.testbed.control.p4runtime_session import SessionError
from netweft.testbed.topology import Topology, TopologyError, load_topology


class Shutdown(Exception):
    """SIGTERM or SIGHUP arrived: stop the testbed."""


_OWNER_PID = os.getpid()


def _raise_shutdown(signum: int, _frame: object) -> None:
    if os.getpid() != _OWNER_PID:
        # A helper pyroute2 forked inherits this handler; it must die as it would by
        # default, never run the owner's cleanup.
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    raise Shutdown(signal.Signals(signum).name)


def start_testbed(topo: Topology, run_dir: Path, name: str, default_program: Path | None = None,
                  pcaps: bool = True, log=print,
                  settings: FabricSettings | None = None, backend: str | None = None) -> Network:
    """Build and start ``topo``, record it for exec/down; the caller must call ``stop_testbed``.

    ``backend`` (auto, c or python) overrides the topology's switch back end.

    Switches running fabric.p4 without entries of their own (the default) are
    configured by the fabric controller with ``settings`` before this returns.
    """
    net = topo.build(run_dir, default_program=default_program, pcaps=pcaps, backend=backend)
    log(f"*** starting {len(net.hosts)} hosts, {len(net.switches)} switches, "
        f"{len(net.links)} links (namespaces {net.prefix}-*, run folder {run_dir})")
    net.start()
    try:
        reports = configure_network(net, settings)
        if reports:
            log(f"*** fabric controller: {len(reports)} fabric.p4 switches configured over "
                f"P4Runtime ({sum(r.inserted for r in reports)} entries)")
        up_registry.write(up_registry.record_for(name, net, run_dir, topo.source))
    except (InstallError, SessionError, FabricGraphError, MulticastError) as exc:
        net.stop()
        raise NetworkError(f"fabric controller: {exc}\n(the network was stopped and "
                           "cleaned up)") from None
    except BaseException:
        net.stop()
        raise
    return net


def stop_testbed(net: Network, name: str) -> None:
    try:
        net.stop()
    finally:
        up_registry.remove(name)


def _up(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        raise CommandError("needs root for network namespaces; run it as root (sudo)")
    try:
        topo = load_topology(args.topology)
    except TopologyError as exc:
        raise CommandError(str(exc)) from None
    name = args.name or topo.name
    try:
        running = up_registry.find(name)
    except up_registry.RegistryError:
        running = None
    if running is not None:
        raise CommandError(f"a testbed named {name} runs already (pid {running.pid}); stop "
                           f"it with netweft down --testbed {name}, or pick another --name")
    run_dir = args.out or Path("results") / time.strftime(f"up-{name}-%Y%m%d-%H%M%S")
    _remove_leftovers()
    if args.detach:
        return _detach(args, name, run_dir)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    global _OWNER_PID
    _OWNER_PID = os.getpid()
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_shutdown)
    net = None
    try:
        net = start_testbed(topo, run_dir, name, args.program, not args.no_pcap, log,
                            settings_from(args), backend=args.backend)
        log(f"*** testbed {name} is up: netweft exec NODE -- CMD reaches it from another shell")
        if args.serve:
            print("ready", flush=True)
            while True:
                signal.pause()
        prompt = TestbedPrompt(net, run_dir)
        try:
            if args.run:
                failed = prompt.run_script(args.run)
                return 1 if failed else 0
            while True:  # Ctrl-C at the prompt interrupts, as in Mininet; exit stops
                try:
                    prompt.cmdloop()
                    return 0
                except KeyboardInterrupt:
                    print("\nInterrupt (exit stops the testbed)", flush=True)
                    prompt.intro = None
        finally:
            prompt.close()
    except (TopologyError, NetworkError) as exc:
        raise CommandError(str(exc)) from None
    except (Shutdown, KeyboardInterrupt):
        log("*** stopping")
        return 0
    finally:
        if net is not None:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # finish the cleanup first
            stop_testbed(net, name)
            log(f"*** testbed {name} stopped; logs, pcaps and captures in {run_dir}")


def _remove_leftovers() -> None:
    """What earlier runs killed before their cleanup left (``netweft clean``), in one line."""
    from netweft.testbed.commands.clean import clean

    removed: list[str] = []
    if not clean(log=removed.append):
        return
    spaces = [m.split()[-1] for m in removed if m.startswith("removed namespace ")]
    prefixes = ", ".join(sorted({n.partition("-")[0] + "-*" for n in spaces}))
    print(f"*** removed what killed runs left: {len(spaces)} namespaces ({prefixes or '-'}) "
          f"and {len(removed) - len(spaces)} veths, owner files, records and sockets",
          file=sys.stderr, flush=True)


def _detach(args: argparse.Namespace, name: str, run_dir: Path) -> int:
    """Start ``up --serve`` in its own session and return once the testbed runs.

    The background process writes its messages to ``up.log`` in the run folder
    (it outlives this terminal); if it fails to start, that log is shown here.
    """
    argv = [sys.executable, "-m", "netweft.testbed.command_line", "up", str(args.topology), "--serve",
            "--out", str(run_dir), "--name", name]
    if args.program is not None:
        argv += ["--program", str(args.program)]
    if args.no_pcap:
        argv.append("--no-pcap")
    if args.backend:
        argv += ["--backend", args.backend]
    argv += settings_argv(args)
    run_dir.mkdir(parents=True, exist_ok=True)
    log = run_dir / "up.log"
    with open(log, "w") as stderr:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                stderr=stderr, start_new_session=True, text=True)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    ready = bool(sel.select(args.timeout)) and proc.stdout.readline().strip() == "ready"
    sel.close()
    proc.stdout.close()
    if not ready:
        if proc.poll() is None:
            proc.terminate()
        proc.wait()
        sys.stderr.write(log.read_text())
        raise CommandError(f"the testbed did not start (its messages are above and in {log})")
    print(f"testbed {name} runs in the background (pid {proc.pid}, log {log}); "
          "netweft exec NODE -- CMD reaches it, netweft down stops it", file=sys.stderr)
    return 0


def _exec(args: argparse.Namespace) -> int:
    try:
        record = up_registry.find(args.testbed)
        netns = record.netns(args.node)
    except up_registry.RegistryError as exc:
        raise CommandError(str(exc)) from None
    argv = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    if not argv:
        raise CommandError("give a command after --, e.g. netweft exec h1 -- ping -c1 h2", 2)
    argv = substitute_names(argv, record.addresses())
    os.execvp("ip", ["ip", "netns", "exec", netns, *argv])
    return 127  # not reached


def _down(args: argparse.Namespace) -> int:
    try:
        record = up_registry.find(args.testbed)
    except up_registry.RegistryError as exc:
        raise CommandError(str(exc)) from None
    os.kill(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + args.timeout
    while record.alive and time.monotonic() < deadline:
        time.sleep(0.1)
    if record.alive:  # wedged: take its namespaces away ourselves
        os.kill(record.pid, signal.SIGKILL)
    for node in record.nodes.values():
        if Path(f"/run/netns/{node['netns']}").exists():
            remove_namespace(str(node["netns"]))
    up_registry.remove(record.name)
    print(f"testbed {record.name} stopped; its run folder is {record.run_dir}")
    return 0


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _testbed_name(text: str) -> str:
    if not text.replace("-", "").replace("_", "").isalnum():
        raise argparse.ArgumentTypeError(f"{text!r}: letters, digits, - and _ only")
    return text


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``netweft up``, ``netweft exec`` and ``netweft down``."""
    p = sub.add_parser("up", help="start a testbed from a topology file and open a prompt")
    p.add_argument("topology", type=existing_file,
                   help="netweft YAML (.yaml) or the p4lang tutorials' topology.json")
    p.add_argument("--program", type=existing_file,
                   help="P4 program for switches the file gives none (the tutorials' Makefile "
                        "passes build/X.json; give X.p4)")
    p.add_argument("--run", type=existing_file,
                   help="run the prompt lines in this file, then stop (exit 1 if any failed)")
    p.add_argument("--detach", action="store_true",
                   help="keep the testbed running in the background (netweft down stops it)")
    p.add_argument("--out", type=Path, help="run folder (default results/up-<name>-<time>)")
    p.add_argument("--name", type=_testbed_name, help="testbed name (default: the topology's)")
    p.add_argument("--no-pcap", action="store_true", help="no pcap files from the switches")
    p.add_argument("--backend", choices=("auto", "c", "python"),
                   help="switch back end for every switch (default: the topology's backend:, "
                        "else $NETWEFT_SWITCH_BACKEND, else the default); c moves packets "
                        "in the native C loop, python in Python")
    p.add_argument("--timeout", type=_positive, default=300.0,
                   help="seconds --detach waits for the testbed (default 300)")
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    add_settings_arguments(p.add_argument_group(
        "fabric settings", "for the switches running fabric.p4 (the default program) "
        "without runtime files; netweft fabric install changes them later"))
    p.set_defaults(func=_up)

    e = sub.add_parser("exec", help="run a command in a node of a running testbed")
    e.add_argument("node", help="host or switch name, e.g. h1")
    e.add_argument("cmd", nargs=argparse.REMAINDER, help="-- COMMAND ARGS (host names become "
                   "their addresses)")
    e.add_argument("--testbed", type=_testbed_name, help="which testbed, if several run")
    e.set_defaults(func=_exec)

    d = sub.add_parser("down", help="stop a testbed started with netweft up --detach")
    d.add_argument("--testbed", type=_testbed_name, help="which testbed, if several run")
    d.add_argument("--timeout", type=_positive, default=30.0,
                   help="seconds to wait for it to stop (default 30)")
    d.set_defaults(func=_down)
