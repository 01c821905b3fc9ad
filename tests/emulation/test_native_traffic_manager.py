"""The C traffic manager against the Python reference on random arrival sequences.

Both are driven through the same script (arrivals, queue and port-rate changes)
in virtual time, the way the switch drives its traffic manager: departures due
by an arrival leave first, then the arrival passes straight through or is
queued; every frame that starts on a port occupies its transmitter.  The logs
(departure times, packets, ports, queue metadata, drop reasons) must be equal.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from netweft.emulation.links.link_model import LinkConfig, LinkDirection
from netweft.emulation.native.dataplane_tm import NativeTrafficManager
from netweft.emulation.traffic_manager import QueueConfig, TrafficManager
from netweft.emulation.v1model.simple_switch import QueuedPacket


def _script(seed: int) -> tuple[int, dict, list[tuple]]:
    rng = random.Random(seed)
    queues = rng.randint(1, 8)
    default = {"depth_packets": rng.randint(0, 12),
               "depth_bytes": rng.choice([None, rng.randint(0, 12000)]),
               "rate_pps": rng.choice([None, None, rng.uniform(1e4, 1e6)]),
               "rate_bps": rng.choice([None, None, rng.uniform(1e7, 1e10)])}
    ops: list[tuple] = []
    t = 0
    for handle in range(rng.randint(50, 400)):
        t += rng.choice([0, 0, rng.randint(0, 3000), rng.randint(0, 40000)])
        if rng.random() < 0.04:
            port = rng.choice([None, rng.randint(0, 3)])
            prio = rng.randint(0, queues - 1) if port is not None and rng.random() < .5 else None
            fields = rng.sample(["depth_packets", "depth_bytes", "rate_pps", "rate_bps"],
                                rng.randint(1, 4))
            values = {"depth_packets": rng.randint(0, 10),
                      "depth_bytes": rng.choice([None, rng.randint(0, 9000)]),
                      "rate_pps": rng.choice([None, rng.uniform(1e4, 2e6)]),
                      "rate_bps": rng.choice([None, rng.uniform(1e7, 1e10)])}
            ops.append(("configure", port, prio, {f: values[f] for f in fields}))
        if rng.random() < 0.03:
            ops.append(("rate", rng.randint(0, 3), rng.choice([None, rng.uniform(1e8, 4e10)])))
        priority = rng.randint(0, queues) if rng.random() < 0.05 else rng.randint(0, queues - 1)
        ops.append(("arrive", t, rng.randint(0, 3), priority, rng.randint(40, 1500), handle))
    return queues, default, ops


class _PythonSide:
    def __init__(self, queues: int, default: dict) -> None:
        self.tm = TrafficManager(priority_queues=queues, default_queue=QueueConfig(**default))

    def configure(self, port, prio, changes):
        self.tm.configure_queue(port, prio, **changes)

    def rate(self, port, rate):
        self.tm.set_link(port, LinkDirection(LinkConfig(rate_bps=rate)) if rate else None)

    def pass_through(self, t, port, prio, length, handle):
        meta = self.tm.pass_through(t, self._packet(port, prio, length, handle))
        return None if meta is None else (meta.enq_timestamp, meta.enq_qdepth,
                                          meta.deq_timedelta, meta.deq_qdepth, meta.qid)

    def enqueue(self, t, port, prio, length, handle):
        return self.tm.enqueue(t, self._packet(port, prio, length, handle))

    def next_departure(self):
        return self.tm.next_departure()

    def dequeue(self, t):
        d = self.tm.dequeue(t)
        q = d.queue
        return (d.time, d.packet.hdr, d.packet.port, d.packet.length,
                (q.enq_timestamp, q.enq_qdepth, q.deq_timedelta, q.deq_qdepth, q.qid))

    def transmitted(self, port, t, length):
        return self.tm.transmitted(port, t, length)

    def drops(self):
        return dict(self.tm.drops)

    @staticmethod
    def _packet(port, prio, length, handle):
        return QueuedPacket(hdr=handle, meta=None, sm=SimpleNamespace(priority=prio),
                            payload=b"", port=port, ilen=length, truncate=None)


class _NativeSide:
    def __init__(self, queues: int, default: dict) -> None:
        self.tm = NativeTrafficManager(queues, **default)

    def configure(self, port, prio, changes):
        self.tm.configure_queue(port, prio, **changes)

    def rate(self, port, rate):
        self.tm.set_port_rate(port, rate)

    def pass_through(self, t, port, prio, length, handle):
        meta = self.tm.pass_through(t, port, prio, length)
        return None if meta is None else tuple(meta)

    def enqueue(self, t, port, prio, length, handle):
        return self.tm.enqueue(t, port, prio, length, handle)

    def next_departure(self):
        return self.tm.next_departure()

    def dequeue(self, t):
        d = self.tm.dequeue(t)
        return (d.time, d.handle, d.port, d.length, tuple(d.queue))

    def transmitted(self, port, t, length):
        return self.tm.transmitted(port, t, length)

    def drops(self):
        return self.tm.drops


def _drive(side, ops: list[tuple]) -> list[tuple]:
    log: list[tuple] = []

    def depart_until(limit):
        while (td := side.next_departure()) is not None and (limit is None or td <= limit):
            time, handle, port, length, meta = side.dequeue(td)
            log.append(("departs", time, handle, port, meta,
                        side.transmitted(port, time, length)))

    for op in ops:
        if op[0] == "configure":
            side.configure(*op[1:])
        elif op[0] == "rate":
            side.rate(*op[1:])
        else:
            _, t, port, prio, length, handle = op
            depart_until(t)
            meta = side.pass_through(t, port, prio, length, handle)
            if meta is not None:
                log.append(("passes", t, handle, meta, side.transmitted(port, t, length)))
            else:
                log.append(("queued", t, handle, side.enqueue(t, port, prio, length, handle)))
    depart_until(None)
    log.append(("drops", side.drops()))
    return log


@pytest.mark.parametrize("seed", range(40))
def test_the_c_traffic_manager_matches_the_python_one(seed):
    queues, default, ops = _script(seed)
    expected = _drive(_PythonSide(queues, default), ops)
    got = _drive(_NativeSide(queues, default), ops)
    assert got == expected


def test_every_kind_of_outcome_appears_across_the_scripts():
    kinds: set[str] = set()
    for seed in range(40):
        queues, default, ops = _script(seed)
        for entry in _drive(_NativeSide(queues, default), ops):
            if entry[0] == "queued":
                kinds.add(f"queued:{entry[3]}")
            else:
                kinds.add(entry[0])
    assert {"passes", "departs", "queued:None", "queued:queue_full",
            "queued:priority"} <= kinds


def test_a_bad_configuration_is_refused():
    with pytest.raises(ValueError, match="1..8"):
        NativeTrafficManager(9)
    tm = NativeTrafficManager(2)
    with pytest.raises(ValueError):
        tm.configure_queue(None, 1, depth_packets=3)      # a priority needs a port
    with pytest.raises(ValueError):
        tm.configure_queue(1, 2, depth_packets=3)         # only priorities 0 and 1
    with pytest.raises(ValueError, match="positive"):
        tm.configure_queue(1, rate_pps=-5)
