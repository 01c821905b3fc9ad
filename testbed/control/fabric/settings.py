"""The fabric's settings: spray mode per destination prefix, ECN and trim thresholds,
multicast groups. Parsed from the command line's ``KEY=VALUE`` words (errors say
what to write instead) or built in Python."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from netweft.testbed.control.fabric.multicast import MulticastGroupSpec

# The spray modes, in fabric.p4's order (the mode number is the index).
SPRAY_MODES = ("flow_hash", "entropy_hash", "random", "round_robin", "adaptive")
MAX_DEPTH = (1 << 19) - 1    # v1model's enq_qdepth is 19 bits wide


class SettingsError(ValueError):
    """A setting is malformed; the message says what a good one looks like."""


@dataclass(frozen=True)
class PortThreshold:
    """A queue-depth threshold (packets) on every port, or on one switch's port."""

    packets: int
    switch: str | None = None
    port: int | None = None


@dataclass
class FabricSettings:
    """What the controller installs besides routes."""

    default_spray: str = "flow_hash"
    spray: dict[ipaddress.IPv4Network, str] = field(default_factory=dict)
    ecn: list[PortThreshold] = field(default_factory=list)
    trim: list[PortThreshold] = field(default_factory=list)
    trim_priority: int = 0   # the queue trimmed packets join (N - 1 with N priority queues)
    trim_dscp: int = 0       # the IP DSCP trimmed packets get
    multicast: list[MulticastGroupSpec] = field(default_factory=list)

    def spray_mode(self, prefix: ipaddress.IPv4Network) -> str:
        """The mode of the longest configured prefix holding ``prefix`` (else the default)."""
        best = None
        for net, mode in self.spray.items():
            if prefix.subnet_of(net) and (best is None or net.prefixlen > best[0].prefixlen):
                best = (net, mode)
        return best[1] if best else self.default_spray

    @staticmethod
    def threshold(rules: list[PortThreshold], switch: str, port: int) -> int | None:
        """The threshold of ``switch``'s ``port``: its own rule, else the switch's, else all."""
        ranked = sorted((r for r in rules if r.switch in (None, switch)
                         and r.port in (None, port)),
                        key=lambda r: (r.switch is not None, r.port is not None))
        return ranked[-1].packets if ranked else None


def spray_mode(text: str) -> str:
    if text not in SPRAY_MODES:
        raise SettingsError(f"spray mode {text!r}: use one of {', '.join(SPRAY_MODES)}")
    return text


def parse_spray(text: str) -> tuple[ipaddress.IPv4Network, str]:
    """``10.0.2.0/24=adaptive``."""
    prefix, sep, mode = text.partition("=")
    if not sep:
        raise SettingsError(f"--spray {text!r}: write PREFIX=MODE, e.g. 10.0.2.0/24=adaptive")
    try:
        net = ipaddress.IPv4Network(prefix)
    except ValueError as err:
        raise SettingsError(f"--spray {text!r}: {err}") from None
    return net, spray_mode(mode)


def parse_threshold(text: str, option: str) -> PortThreshold:
    """``20`` (every port), ``leaf2=20`` (every port of leaf2) or ``leaf2:1=20``."""
    where, sep, value = text.rpartition("=")
    if not value.isdigit() or not 0 < int(value) <= MAX_DEPTH:
        raise SettingsError(f"{option} {text!r}: give packets in 1..{MAX_DEPTH}, as N, "
                            "SWITCH=N or SWITCH:PORT=N")
    if not sep:
        return PortThreshold(int(value))
    switch, colon, port = where.partition(":")
    if not switch or (colon and not port.isdigit()):
        raise SettingsError(f"{option} {text!r}: write N, SWITCH=N or SWITCH:PORT=N")
    return PortThreshold(int(value), switch, int(port) if colon else None)


def parse_multicast(text: str, group_id: int) -> MulticastGroupSpec:
    """``239.1.1.1=h2,h3,h4`` (group ``group_id``) or ``5:239.1.1.1=h2,h3``; with
    ``/acks=h1`` the switches aggregate the receivers' ACKs to the sender h1."""
    text, slash, acks = text.partition("/acks=")
    if slash and not acks:
        raise SettingsError(f"--multicast {text!r}: /acks= names the sending host")
    head, sep, members = text.partition("=")
    gid, colon, address = head.rpartition(":")
    if colon:
        if not gid.isdigit() or not 0 < int(gid) < 0x8000:
            raise SettingsError(f"--multicast {text!r}: a fabric group id is 1..32767 "
                                "(from 32768 up they are aggregation jobs')")
        group_id = int(gid)
    names = tuple(m for m in members.split(",") if m)
    if not sep or not names:
        raise SettingsError(f"--multicast {text!r}: write [ID:]ADDRESS=HOST,HOST,..., "
                            "e.g. 239.1.1.1=h2,h3,h4")
    try:
        ip = ipaddress.IPv4Address(address)
    except ValueError as err:
        raise SettingsError(f"--multicast {text!r}: {err}") from None
    if not ip.is_multicast:
        raise SettingsError(f"--multicast {text!r}: {ip} is not a multicast address "
                            "(224.0.0.0/4)")
    if acks and acks not in names:
        raise SettingsError(f"--multicast {text}/acks={acks}: the sender {acks} must be one "
                            "of the members")
    return MulticastGroupSpec(group_id, ip, names, acks or None)
