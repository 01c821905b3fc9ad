"""The native loop's link hooks (dataplane_wire.c) against the Python link path.

Both run the one C wire model; the hooks must give the arrivals, losses and
corruptions that :class:`~netweft.emulation.links.link_model.LinkDirection` gives
for the same settings, seed and frames, so a seeded run of a switch process is the
same on either back end.
"""

from __future__ import annotations

import random

import pytest

from netweft.emulation.links.link_model import GilbertElliott, LinkConfig, LinkDirection
from netweft.emulation.native.dataplane import WireTable
from netweft.nic_offload.wire_model import seed64

CONFIGS = [
    LinkConfig(delay_ns=2_000_000),
    LinkConfig(delay_ns=1_000_000, jitter_ns=400_000, loss=0.2, corrupt=0.1),
    LinkConfig(rate_bps=100e6, limit=8, delay_ns=50_000, loss=0.05),
    LinkConfig(gemodel=GilbertElliott(0.1, 0.3), jitter_ns=10_000, rate_bps=1e9),
]


def _frames(n: int) -> list[tuple[int, bytes]]:
    rng = random.Random(7)
    t, out = 0, []
    for _ in range(n):
        t += rng.randrange(0, 20_000)
        out.append((t, bytes(rng.randrange(256) for _ in range(rng.randrange(60, 1500)))))
    return out


def _hook(table: WireTable, ingress: bool, port: int, now: int, frame: bytes):
    ffi = table._mod.ffi
    hook = table.ingress_hook if ingress else table.egress_hook
    buf = ffi.new("uint8_t[]", frame)
    arrival = ffi.new("uint64_t *")
    if not hook.propagate(hook.self, port, now, buf, len(frame), arrival):
        return None
    return int(arrival[0]), bytes(ffi.buffer(buf, len(frame)))


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("ingress", [True, False])
def test_the_hooks_match_the_python_link_path(config, ingress):
    seed = f"3/2/{'in' if ingress else 'out'}"
    python = LinkDirection(config, seed)
    table = WireTable()
    table.set(2, WireTable.IN if ingress else WireTable.OUT, config.wire(), seed64(seed))
    got, want = [], []
    for now, frame in _frames(400):
        want.append(python.send(now, frame) if ingress else python.propagate(now, frame))
        got.append(_hook(table, ingress, 2, now, frame))
    assert got == want
    stats = table.stats(WireTable.IN if ingress else WireTable.OUT)
    assert stats["lost"] + stats["burst_lost"] + stats["dropped_limit"] == \
        python.stats.lost + python.stats.limit
    assert stats["corrupted"] == python.stats.corrupted


def test_a_port_without_a_link_is_ideal_and_a_replaced_link_keeps_its_counts():
    table = WireTable()
    assert _hook(table, False, 5, 1000, b"x" * 64) == (1000, b"x" * 64)
    table.set(5, WireTable.OUT, LinkConfig(loss=1.0).wire(), 1)
    assert _hook(table, False, 5, 2000, b"x" * 64) is None
    table.set(5, WireTable.OUT, None, 0)
    assert _hook(table, False, 5, 3000, b"x" * 64) == (3000, b"x" * 64)
    assert table.stats(WireTable.OUT)["lost"] == 1

