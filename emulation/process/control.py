"""The switch process's control channel: ``simple_switch_CLI``-style commands on a Unix socket.

A switch process started with ``--control PATH`` listens on a Unix stream
socket at ``PATH`` (reachable from every network namespace, unlike a TCP
port inside the switch's namespace).  A client sends one command per line
and reads one answer line per command: ``ok``, a JSON value, or
``error: <why>``.  Commands (BMv2 ``simple_switch_CLI`` names and argument
order where BMv2 has them):

``set_queue_depth <packets> [<port> [<priority>]]``
    depth of the egress queues (all ports, one port, or one priority).
``set_queue_rate <packets/s> [<port> [<priority>]]``
    service rate of the egress queues.
``set_queue_depth_bytes <bytes|none> [<port> [<priority>]]``,
``set_queue_rate_bps <bits/s|none> [<port> [<priority>]]``
    the byte and bit-rate variants (netweft's).
``set_link <--link value>``
    change a port's link model and queues, as the ``--link`` option does
    (``set_link 2/out:loss=0.05``); the port's settings not named stay.
``queue_depth <port> [<priority>]``
    packets queued now (JSON number).
``queue_depths``
    packets queued now on every port that has had traffic, with the switch's
    time: ``{"time_ns": T, "ports": {"2": [total, prio0, prio1, ...]}}`` (poll
    it to plot queue occupancy over time).
``counters``
    the switch's counters (JSON object).
``help``
    the command list.
``table_add``, ``table_set_default``, ``mc_mgrp_create``, ``mc_node_create``, ...
    simple_switch_CLI's table, multicast, mirroring, register and counter
    commands (:mod:`netweft.emulation.p4runtime.command_list`); the answer is
    ``ok`` or what simple_switch_CLI prints, as a JSON string.

From Python: :func:`send_command`; from a shell:
``python -m netweft.emulation.process.control PATH set_queue_depth 16 2``.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from netweft.emulation.links.port_options import (
    PortOptionError,
    PortOptions,
    link_option_port,
    parse_link_option,
)

__all__ = ["ControlError", "execute", "send_command"]

MAX_LINE = 4096


class ControlError(ValueError):
    """A command that cannot be run; the message says why."""


def _int(text: str, what: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise ControlError(f"{what} must be an integer, got {text!r}") from None


def _number_or_none(text: str, what: str) -> float | None:
    if text.lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise ControlError(f"{what} must be a number or 'none', got {text!r}") from None


def _target(args: list[str], usage: str) -> tuple[int | None, int | None]:
    if len(args) > 2:
        raise ControlError(f"usage: {usage}")
    port = _int(args[0], "port") if args else None
    priority = _int(args[1], "priority") if len(args) > 1 else None
    return port, priority


def execute(switch: Any, line: str, port_options: dict[int, PortOptions] | None = None,
            extra_counters: Callable[[], dict[str, int]] | None = None) -> str:
    """Run one command line against ``switch``; returns the answer line.

    ``port_options``: the ports' current settings (``set_link`` refines and
    updates them); ``extra_counters``: more counters for ``counters``.
    """
    words = line.split()
    if not words:
        raise ControlError("empty command (try 'help')")
    cmd, args = words[0], words[1:]
    try:
        if cmd in ("set_queue_depth", "set_queue_rate", "set_queue_depth_bytes",
                   "set_queue_rate_bps"):
            usage = f"{cmd} <value> [<port> [<priority>]]"
            if not args:
                raise ControlError(f"usage: {usage}")
            port, priority = _target(args[1:], usage)
            if cmd == "set_queue_depth":
                switch.set_queue_depth(_int(args[0], "depth"), port, priority)
            elif cmd == "set_queue_rate":
                rate = _number_or_none(args[0], "rate")
                if rate is None:
                    raise ControlError("set_queue_rate needs packets/s > 0")
                switch.set_queue_rate(rate, port, priority)
            elif cmd == "set_queue_depth_bytes":
                depth = _number_or_none(args[0], "depth")
                switch.set_queue_depth_bytes(None if depth is None else int(depth), port,
                                             priority)
            else:
                switch.set_queue_rate_bps(_number_or_none(args[0], "rate"), port, priority)
            return "ok"
        if cmd == "set_link":
            if len(args) != 1:
                raise ControlError("usage: set_link PORT[/in|/out]:KEY=VALUE,...")
            options = port_options if port_options is not None else {}
            number = link_option_port(args[0])
            number, opts = parse_link_option(args[0], options.get(number))
            switch.configure_port(number, opts)
            options[number] = opts
            return "ok"
        if cmd == "queue_depth":
            if not 1 <= len(args) <= 2:
                raise ControlError("usage: queue_depth <port> [<priority>]")
            port, priority = _target(args, "queue_depth <port> [<priority>]")
            return json.dumps(switch.tm.depth(port, priority))
        if cmd == "queue_depths":
            if args:
                raise ControlError("usage: queue_depths")
            return json.dumps({"time_ns": switch.time_ns, "ports": switch.tm.depths()},
                              sort_keys=True)
        if cmd == "counters":
            counters = dict(switch.stats)
            if extra_counters is not None:
                counters.update(extra_counters())
            return json.dumps(counters, sort_keys=True)
        if cmd in _command_list():
            from netweft.emulation.p4runtime.command_list import session_for
            text = session_for(switch).execute(line)
            return json.dumps(text) if text else "ok"
        if cmd == "help":
            return json.dumps(["set_queue_depth", "set_queue_rate", "set_queue_depth_bytes",
                               "set_queue_rate_bps", "set_link", "queue_depth",
                               "queue_depths", "counters", *_command_list()])
    except (PortOptionError, ValueError) as err:
        raise ControlError(str(err)) from None
    raise ControlError(f"unknown command {cmd!r} (try 'help')")


def _command_list() -> list[str]:
    """simple_switch_CLI's table, multicast, mirroring, register and counter commands."""
    from netweft.emulation.p4runtime.command_list import COMMANDS
    return COMMANDS


class ControlServer:
    """The listening socket and its connections, driven by the switch's select loop."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if self.path.exists() or self.path.is_symlink():
            self.path.unlink()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.listener.bind(str(self.path))
            self.listener.listen(8)
        except OSError:
            self.listener.close()
            raise
        self.listener.setblocking(False)
        self._buffers: dict[socket.socket, bytes] = {}

    def accept(self) -> socket.socket | None:
        """A new client connection (register it for reading), or None."""
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return None
        conn.setblocking(False)
        self._buffers[conn] = b""
        return conn

    def handle(self, conn: socket.socket, run: Callable[[str], str]) -> bool:
        """Answer the complete lines a client sent; False once it has gone (unregister it)."""
        try:
            data = conn.recv(MAX_LINE)
        except BlockingIOError:
            return True
        except OSError:
            data = b""
        if not data:
            self._drop(conn)
            return False
        buf = self._buffers[conn] + data
        *lines, rest = buf.split(b"\n")
        if len(rest) > MAX_LINE:
            lines, rest = [rest[:MAX_LINE]], b""
        self._buffers[conn] = rest
        for raw in lines:
            text = raw.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                answer = run(text)
            except ControlError as err:
                answer = f"error: {err}"
            try:
                conn.setblocking(True)
                conn.settimeout(2.0)
                conn.sendall(answer.encode() + b"\n")
                conn.setblocking(False)
            except OSError:
                self._drop(conn)
                return False
        return True

    def _drop(self, conn: socket.socket) -> None:
        self._buffers.pop(conn, None)
        conn.close()

    def close(self) -> None:
        for conn in list(self._buffers):
            self._drop(conn)
        self.listener.close()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


def send_command(path: str | Path, line: str, timeout: float = 5.0) -> str:
    """Send one command to a switch process's control socket; returns its answer line.

    Raises :class:`ControlError` with the switch's reason if it answered ``error: ...``.
    """
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(line.strip().encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    answer = data.decode().strip()
    if answer.startswith("error: "):
        raise ControlError(answer[len("error: "):])
    return answer


def main(argv: list[str] | None = None) -> int:
    """``python -m netweft.emulation.process.control PATH COMMAND...``"""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        print("usage: python -m netweft.emulation.process.control SOCKET COMMAND [ARGS...]",
              file=sys.stderr)
        return 2
    try:
        print(send_command(args[0], " ".join(args[1:])))
    except ControlError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"error: cannot reach the switch at {args[0]}: {err.strerror or err}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
