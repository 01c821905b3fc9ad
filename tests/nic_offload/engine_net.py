"""An in-memory network for driving C engines against each other in tests.

Engines exchange packets through a seeded, impaired link (loss, duplication,
reordering by random extra delay, corruption, fixed delay) in virtual time, so
every run is reproducible from its seed. This is test scaffolding for the
sans-IO engine; the transport's own simulator lives in ``netweft.transport``.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field

from netweft.nic_offload import ffi, lib

NEVER = 2**64 - 1


def ip(text: str) -> int:
    """Dotted quad to a host-order integer."""
    a, b, c, d = (int(x) for x in text.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d


@dataclass
class Impairments:
    loss: float = 0.0
    dup: float = 0.0
    reorder: float = 0.0  # probability of an extra random delay up to reorder_ns
    reorder_ns: int = 200_000
    corrupt: float = 0.0
    # Corrupted datagrams fail the UDP checksum and the kernel drops them, as
    # on a real host; set False to hand the corrupted bytes to the engine.
    udp_checksum: bool = True
    delay_ns: int = 10_000
    drop_filter: object = None  # callable(bytes) -> bool: drop this packet
    mutate: object = None  # callable(bytes) -> bytes: rewrite a packet in flight (a switch)
    rate_bps: float = 0.0  # each sender's link rate (0 = infinite): packets leave one by one
    hold_until: object = None  # callable(bytes, now) -> time before which it cannot arrive


@dataclass
class Node:
    """One engine on the network plus its keep-alive buffers."""

    addr: int
    engine: object
    cfg: object
    keep: list = field(default_factory=list)
    completions: list = field(default_factory=list)

    def stats(self) -> dict:
        st = ffi.new("nw_stats_t *")
        lib.nw_stats_get(self.engine, st)
        return {name: getattr(st, name) for name in dir(st)}


class EngineNet:
    def __init__(self, seed: int = 1, imp: Impairments | None = None) -> None:
        self.rng = random.Random(seed)
        self.imp = imp or Impairments()
        self.now = 0
        self.nodes: dict[int, Node] = {}
        self.queue: list = []
        self.seq = 0
        self.buf = ffi.new("uint8_t[]", 16448)
        self.dst = ffi.new("nw_dest_t *")
        self.sent: list[tuple[int, int, bytes]] = []  # (src_port, dst_ip, packet) if recording
        self.record = False
        self.checksum_drops = 0
        self.busy_until: dict[int, int] = {}  # sender address -> its link is free again

    def add(self, addr: str, **overrides) -> Node:
        cfg = ffi.new("nw_config_t *")
        lib.nw_config_default(cfg)
        cfg.seed = self.rng.getrandbits(63)
        for k, v in overrides.items():
            setattr(cfg, k, v)
        msg = lib.nw_config_check(cfg)
        assert msg == ffi.NULL, ffi.string(msg).decode()
        eng = ffi.gc(lib.nw_engine_new(cfg), lib.nw_engine_free)
        assert eng != ffi.NULL
        node = Node(ip(addr), eng, cfg)
        self.nodes[node.addr] = node
        return node

    # ------------------------------------------------------------ helpers
    def register(self, node: Node, size: int, access: int, fill: bytes | None = None):
        buf = ffi.new("uint8_t[]", size)
        if fill is not None:
            ffi.memmove(buf, fill, len(fill))
        rkey = ffi.new("uint32_t *")
        rc = lib.nw_mr_register(node.engine, buf, size, access, rkey)
        assert rc == 0, rc
        node.keep.append(buf)
        return buf, rkey[0]

    def peer(self, node: Node, other: Node, mode: int = 0) -> int:
        out = ffi.new("uint32_t *")
        assert lib.nw_peer_add(node.engine, other.addr, 0, mode, out) == 0
        return out[0]

    def poll(self, node: Node) -> list:
        comps = ffi.new("nw_completion_t[64]")
        while True:
            n = lib.nw_poll_cq(node.engine, comps, 64)
            for i in range(n):
                c = comps[i]
                node.completions.append(
                    (c.wr_id, c.status, c.opcode, c.bytes, c.peer, c.mode)
                )
            if n < 64:
                return node.completions

    # ------------------------------------------------------------ the loop
    def _transmit(self, src: Node, data: bytes, dst_ip: int, src_port: int) -> None:
        imp = self.imp
        if self.record:
            self.sent.append((src_port, dst_ip, data))
        if imp.drop_filter is not None and imp.drop_filter(data):
            return
        if imp.mutate is not None:
            data = imp.mutate(data)
        if self.rng.random() < imp.loss:
            return
        depart = self.now
        if imp.rate_bps:
            depart = max(self.now, self.busy_until.get(src.addr, 0))
            depart += max(1, int(len(data) * 8 * 1e9 / imp.rate_bps))
            self.busy_until[src.addr] = depart
        copies = 2 if self.rng.random() < imp.dup else 1
        for _ in range(copies):
            pkt = data
            if self.rng.random() < imp.corrupt:
                b = bytearray(pkt)
                i = self.rng.randrange(len(b))
                b[i] ^= 1 << self.rng.randrange(8)
                pkt = bytes(b)
                if imp.udp_checksum and lib.nw_csum16(pkt, len(pkt)) != lib.nw_csum16(data, len(data)):
                    self.checksum_drops += 1
                    continue
            t = depart + imp.delay_ns
            if imp.hold_until is not None:
                t = max(t, imp.hold_until(pkt, self.now))
            if self.rng.random() < imp.reorder:
                t += self.rng.randrange(imp.reorder_ns)
            self.seq += 1
            heapq.heappush(self.queue, (t, self.seq, dst_ip, pkt, src.addr, src_port))

    def _drain(self, node: Node) -> int:
        n_total = 0
        while True:
            n = lib.nw_output(node.engine, self.buf, len(self.buf), self.dst, self.now)
            assert n >= 0, n
            if n == 0:
                return n_total
            n_total += 1
            self._transmit(node, bytes(ffi.buffer(self.buf, n)), self.dst.ip, self.dst.src_port)

    def run(self, until=None, max_ns: int = 60_000_000_000) -> None:
        """Runs until `until()` is true (checked when idle points pass) or nothing is left."""
        deadline = self.now + max_ns
        while self.now <= deadline:
            for node in self.nodes.values():
                self._drain(node)
                self.poll(node)
            if until is not None and until():
                return
            t_next = min(
                [self.queue[0][0]] if self.queue else [NEVER],
            )
            for node in self.nodes.values():
                t_next = min(t_next, lib.nw_next_deadline(node.engine))
            if t_next == NEVER:
                return
            self.now = max(self.now, t_next)
            while self.queue and self.queue[0][0] <= self.now:
                _, _, dst_ip, pkt, src_ip, src_port = heapq.heappop(self.queue)
                node = self.nodes.get(dst_ip)
                if node is not None:
                    lib.nw_input(node.engine, pkt, len(pkt), src_ip, src_port, self.now)
            for node in self.nodes.values():
                if lib.nw_next_deadline(node.engine) <= self.now:
                    lib.nw_on_time(node.engine, self.now)
        raise AssertionError("simulation did not finish in its virtual time budget")
