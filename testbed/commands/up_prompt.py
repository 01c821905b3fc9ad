"""The prompt ``netweft up`` opens: Mininet's verbs over a running netweft network.

``h1 ping h2`` (any command in a node, host names replaced by their addresses),
``pingall``, ``iperf h1 h2`` (iperf3), ``links``, ``nodes``, ``dump``,
``capture s1-eth1`` (tcpdump to a pcap in the run folder; ``capture stop
s1-eth1``; ``capture`` lists them), ``sh CMD`` (in the root namespace),
``fabric --spray-default adaptive ...`` (the fabric controller's settings, on the
switches running fabric.p4), ``exit``. A script for ``--run`` holds one such line per line (``#`` starts a
comment line); every verb reports whether it succeeded, and the run fails if any did not.
"""

from __future__ import annotations

import cmd
import subprocess
import sys
from pathlib import Path
from typing import TextIO

from netweft.emulation.network import Network, NetworkError, Switch
from netweft.emulation.process_lifetime import die_with_parent
from netweft.testbed.capture import iperf3, start_capture, stop_capture


def substitute_names(argv: list[str], addresses: dict[str, str]) -> list[str]:
    """Replace every word that names a host by its IP address, as Mininet's CLI does."""
    return [addresses.get(word, word) for word in argv]


class TestbedPrompt(cmd.Cmd):
    """Mininet-style verbs; each ``do_*`` records a failure in ``failures``."""

    __test__ = False  # not a pytest test class
    prompt = "netweft> "

    def __init__(self, net: Network, run_dir: Path, out: TextIO | None = None) -> None:
        super().__init__(stdout=out or sys.stdout)
        self.net = net
        self.run_dir = run_dir
        self.failures: list[str] = []
        self.captures: dict[str, tuple[subprocess.Popen, Path]] = {}
        self.intro = ("netweft testbed: nodes " + " ".join(net.nodes)
                      + ". Verbs: h1 ping h2, pingall, iperf h1 h2, links, nodes, dump, "
                        "capture s1-eth1, fabric --spray-default MODE ..., sh CMD, exit (help lists "
                        "them).")

    # -- plumbing ------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def fail(self, line: str, why: str) -> None:
        self.failures.append(f"{line}: {why}")
        self.say(f"*** {why}")

    def addresses(self) -> dict[str, str]:
        return {h.name: h.ip_address for h in self.net.hosts if h.ip is not None}

    def emptyline(self) -> bool:
        return False

    def onecmd(self, line: str) -> bool:
        try:
            return super().onecmd(line)
        except (NetworkError, ValueError, OSError, subprocess.SubprocessError) as exc:
            self.fail(line, str(exc))
            return False
        except KeyboardInterrupt:
            self.say("")
            return False

    def run_script(self, path: Path) -> int:
        """Run every line of ``path``; returns the number of failed lines."""
        for raw in path.read_text().splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            self.say(f"{self.prompt}{line}")
            if self.onecmd(line):
                break
        return len(self.failures)

    # -- a command in a node ---------------------------------------------------------------------
    def default(self, line: str) -> bool:
        first, _, rest = line.partition(" ")
        if first in ("EOF",):
            return True
        if first not in self.net.nodes:
            self.fail(line, f"unknown verb or node {first!r} (help lists the verbs)")
            return False
        if not rest.strip():
            self.fail(line, f"give a command to run in {first}, e.g. {first} ip addr")
            return False
        node = self.net.nodes[first]
        # The rest is a shell line (pipes and redirections work, as in Mininet's CLI);
        # words that name hosts become their addresses.
        line_in_node = " ".join(substitute_names(rest.split(), self.addresses()))
        code = self._run_in(node.netns, ["sh", "-c", line_in_node])
        if code != 0:
            self.fail(line, f"{first}: exit status {code}")
        return False

    def _run_in(self, netns: str, argv: list[str]) -> int:
        self.stdout.flush()
        proc = subprocess.Popen(die_with_parent(["ip", "netns", "exec", netns, *argv]),
                                stdout=self._fd(), stderr=subprocess.STDOUT)
        try:
            return proc.wait()
        except KeyboardInterrupt:  # Ctrl-C reached the child too (same process group)
            try:
                return proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                return proc.wait()

    def _fd(self):
        try:
            self.stdout.fileno()
            return self.stdout
        except (AttributeError, OSError, ValueError):
            return None

    # -- Mininet's verbs -------------------------------------------------------------------------
    def do_nodes(self, _arg: str) -> None:
        """nodes: list the nodes."""
        self.say("available nodes are: \n" + " ".join(self.net.nodes))

    def do_links(self, _arg: str) -> None:
        """links: each link, its ends and what it emulates."""
        for link in self.net.links:
            self.say(link.describe())

    def do_dump(self, _arg: str) -> None:
        """dump: every node with its interfaces, namespace and (switches) program."""
        for node in self.net.nodes.values():
            ifaces = ",".join(f"{i.name}:{i.ip.ip if i.ip else None}" for i in node.interfaces)
            if isinstance(node, Switch):
                pid = node.process.pid if node.process else None
                prog = node.program.name if node.program else None
                self.say(f"<Switch {node.name}: {ifaces} program={prog} pid={pid} "
                         f"netns={node.netns}>")
            else:
                self.say(f"<Host {node.name}: {ifaces} mac={getattr(node, 'mac', None)} "
                         f"netns={node.netns}>")

    def do_pingall(self, arg: str) -> None:
        """pingall [TIMEOUT_S]: every host pings every other host once."""
        timeout = arg.strip() or "1"
        hosts = [h for h in self.net.hosts if h.ip is not None]
        sent = received = 0
        self.say("*** Ping: testing ping reachability")
        for src in hosts:
            row = []
            for dst in hosts:
                if dst is src:
                    continue
                sent += 1
                ok = src.cmd("ping", "-c1", "-W", timeout, dst.ip_address,
                             check=False).returncode == 0
                received += ok
                row.append(dst.name if ok else "X")
            self.say(f"{src.name} -> {' '.join(row)}")
        dropped = 100 * (sent - received) // sent if sent else 0
        self.say(f"*** Results: {dropped}% dropped ({received}/{sent} received)")
        if received != sent:
            self.failures.append(f"pingall: {sent - received} of {sent} pings lost")

    def do_iperf(self, arg: str) -> None:
        """iperf [CLIENT SERVER [SECONDS]]: TCP throughput with iperf3 (first two hosts by default)."""
        words = arg.split()
        hosts = self.net.hosts
        if len(words) not in (0, 2, 3) or (not words and len(hosts) < 2):
            self.fail(f"iperf {arg}", "usage: iperf CLIENT SERVER [SECONDS]")
            return
        client, server = ((self.net.host(words[0]), self.net.host(words[1])) if words
                          else (hosts[0], hosts[-1]))
        seconds = words[2] if len(words) == 3 else "2"
        result = iperf3(client, server, float(seconds))
        self.say(f"*** Iperf: testing TCP bandwidth between {client.name} and {server.name}")
        self.say(f"*** Results: ['{result['sent_bps'] / 1e6:.1f} Mbits/sec', "
                 f"'{result['received_bps'] / 1e6:.1f} Mbits/sec']")

    def do_capture(self, arg: str) -> None:
        """capture IFACE | capture stop IFACE | capture: capture a port to a pcap file."""
        words = arg.split()
        if not words:
            for name, (proc, path) in self.captures.items():
                state = "running" if proc.poll() is None else "stopped"
                self.say(f"{name}: {path} ({state})")
            if not self.captures:
                self.say("no captures; capture s1-eth1 starts one")
            return
        if words[0] == "stop" and len(words) == 2:
            proc, path = self.captures[words[1]] if words[1] in self.captures else (None, None)
            if proc is None:
                self.fail(arg, f"no capture on {words[1]}")
                return
            stop_capture(proc)
            self.say(f"stopped; open it with: wireshark {path}")
            return
        iface = self.net.interface(words[0])
        if words[0] in self.captures and self.captures[words[0]][0].poll() is None:
            self.say(f"{words[0]} is being captured to {self.captures[words[0]][1]}")
            return
        path = (self.run_dir / "captures" / f"{words[0]}.pcap").resolve()
        proc = start_capture(self.net, iface.node.name, iface.name, path)
        self.captures[words[0]] = (proc, path)
        self.say(f"capturing {words[0]} to {path} (capture stop {words[0]} ends it)")

    def do_fabric(self, arg: str) -> None:
        """fabric [--spray-default MODE] [--spray PREFIX=MODE] [--ecn-threshold ...]
        [--trim-threshold ...] [--multicast ADDR=H,H,...[/acks=H]]: reconfigure the
        switches running fabric.p4 with the fabric controller (only what differs is sent)."""
        import argparse
        import contextlib
        import io
        import shlex

        from netweft.testbed.command_line import CommandError
        from netweft.testbed.commands.fabric import add_settings_arguments, settings_from
        from netweft.testbed.control.fabric.controller import configure_network
        from netweft.testbed.control.fabric.graph import FabricGraphError
        from netweft.testbed.control.fabric.installer import InstallError
        from netweft.testbed.control.fabric.multicast import MulticastError
        from netweft.testbed.control.p4runtime_session import SessionError

        parser = argparse.ArgumentParser(prog="fabric", add_help=False)
        add_settings_arguments(parser)
        errors = io.StringIO()
        try:
            with contextlib.redirect_stderr(errors):
                args = parser.parse_args(shlex.split(arg))
        except SystemExit:
            self.fail(f"fabric {arg}", errors.getvalue().strip().splitlines()[-1])
            return
        try:
            reports = configure_network(self.net, settings_from(args), log=self.say)
        except (CommandError, FabricGraphError, InstallError, MulticastError,
                SessionError) as exc:   # each names the switch or the setting
            self.fail(f"fabric {arg}", str(exc))
            return
        if not reports:
            self.fail(f"fabric {arg}", "no switch runs fabric.p4 without entries of its own")

    def do_sh(self, arg: str) -> None:
        """sh CMD: run a command in the root namespace."""
        code = subprocess.call(["sh", "-c", arg], stdout=self._fd(), stderr=subprocess.STDOUT)
        if code != 0:
            self.fail(f"sh {arg}", f"exit status {code}")

    def do_exit(self, _arg: str) -> bool:
        """exit: stop the testbed and leave."""
        return True

    do_quit = do_exit

    def do_EOF(self, _arg: str) -> bool:  # noqa: N802 - cmd.Cmd's name for end of input
        self.say("")
        return True

    def close(self) -> None:
        for proc, _path in self.captures.values():
            stop_capture(proc)
