"""A reference model of the aggregation switch's semantics, for testing the worker core
independently of the P4 program (the same tests run on the P4 program on the embedded
switch). Per (job, slot, pool): a worker bitmap, a contribution count, the int32 sums and
the maximum exponent; a worker's contribution to one pool clears its bit in the other pool
(it has the other pool's result); a repeated contribution is dropped, or answered with the
result again (unicast) once the pool is complete."""

from __future__ import annotations

from collections import Counter

import numpy as np

from netweft.transport.collectives.aggregation.codec import (
    FrameTemplate,
    decode_payload,
    encode_payload,
    frame_payload,
)
from netweft.transport.collectives.aggregation.worker import AggregationPacket


class ModelSwitch:
    """Workers 0..n-1 on ports 1..n; one job per id, ``workers[job]`` workers each."""

    def __init__(self, workers: dict[int, int]) -> None:
        self.workers = workers
        self.state: dict[tuple[int, int, int], dict] = {}
        self.counters: Counter = Counter()
        self.templates = {}
        self.port_of: dict[tuple[int, int], int] = {}  # (job, worker) -> port; default worker+1

    def _template(self, port: int) -> FrameTemplate:
        if port not in self.templates:
            self.templates[port] = FrameTemplate("02:00:00:00:00:fe", f"02:00:00:00:00:{port:02x}",
                                                 "10.0.0.254", f"10.0.0.{port}")
        return self.templates[port]

    def receive(self, port: int, frame: bytes, now: int) -> list[tuple[int, bytes]]:
        payload = frame_payload(frame)
        decoded = decode_payload(payload) if payload is not None else None
        if decoded is None or decoded[0].job_id not in self.workers:
            self.counters["malformed"] += 1
            return []
        p = decoded[0]
        n = self.workers[p.job_id]
        bit = 1 << p.worker_id
        mine = self.state.setdefault((p.job_id, p.slot, p.pool),
                                     {"bitmap": 0, "count": 0, "sums": None, "exp": None,
                                      "block": 0})
        other = self.state.get((p.job_id, p.slot, 1 - p.pool))
        age = (p.block - mine["block"]) & 0xFFFFFFFF
        if mine["count"] and (age >= 1 << 31 or (age == 0 and not mine["bitmap"] & bit
                                                   and mine["count"] == n)):
            self.counters["stale"] += 1  # an old round's copy, delayed in the network
            return []
        if mine["bitmap"] & bit:
            if mine["count"] == n:
                self.counters["resent"] += 1
                return [(port, self._result(mine, p, p.worker_id, port))]
            self.counters["duplicates"] += 1
            return []
        if other is not None:
            other["bitmap"] &= ~bit
        if mine["bitmap"] == 0:
            mine.update(count=0, sums=np.zeros_like(p.values), exp=p.exponent, block=p.block)
        mine["bitmap"] |= bit
        mine["count"] += 1
        mine["sums"] = (mine["sums"].astype(np.int64) + p.values).astype(np.int32)
        mine["exp"] = max(mine["exp"], p.exponent)
        if mine["count"] < n:
            return []
        self.counters["results"] += 1
        ports = [self.port_of.get((p.job_id, w), w + 1) for w in range(n)]
        return [(port, self._result(mine, p, w, port)) for w, port in enumerate(ports)]

    def _result(self, state: dict, p: AggregationPacket, worker: int, port: int) -> bytes:
        out = AggregationPacket(p.job_id, p.slot, p.pool, worker, state["block"], state["exp"],
                                state["sums"])
        return self._template(port).header + encode_payload(out, result=True)

    def advance(self, now: int) -> list[tuple[int, bytes]]:
        return []

    def next_deadline(self) -> int | None:
        return None
