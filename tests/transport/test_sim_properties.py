"""Property test: any mix of operations, sizes, modes, impairments and seeds delivers intact.

Hypothesis draws a seed, an impairment level for each kind and a list of
operations (RMA write, RMA read, send) with sizes from 1 byte to a few packets
or a large message; every delivered byte is compared. Derandomized, so CI runs
the same examples every time.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from netweft.transport import Impairments, Simulation

from .sim_helpers import pattern

probability = st.sampled_from([0.0, 0.01, 0.05])
impairments = st.builds(Impairments, loss=probability, duplicate=probability,
                        reorder=probability, corrupt=probability, junk=probability,
                        jitter_ns=st.sampled_from([0, 30_000]))
sizes = st.one_of(st.integers(1, 10_000), st.integers(10_000, 300_000))
operations = st.lists(st.tuples(st.sampled_from(["write", "read", "send"]), sizes),
                      min_size=1, max_size=8)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32), imp=impairments, ops=operations,
       mode=st.sampled_from(["rud", "rod"]))
def test_any_operation_mix_is_delivered_intact(seed, imp, ops, mode):
    sim = Simulation(seed=seed, impairments=imp)
    a, b = sim.endpoint(), sim.endpoint()
    total = sum(size for _, size in ops)
    a_mem = a.register(np.zeros(total, dtype=np.uint8))
    b_mem = b.register(np.zeros(total, dtype=np.uint8))
    peer = a.connect(b.address, mode=mode)
    expected_a, expected_b = np.zeros(total, np.uint8), np.zeros(total, np.uint8)
    largest_send = max([size for op, size in ops if op == "send"], default=1)
    sent, recvs, ids, offset = [], [], [], 0
    for i, (op, size) in enumerate(ops):
        data = pattern(size, seed % 1000 + i)
        span = slice(offset, offset + size)
        if op == "write":
            a_mem.buffer[span] = data
            expected_a[span] = data
            expected_b[span] = data
            ids.append(peer.write(a_mem, b_mem.remote(), local_offset=offset,
                                  remote_offset=offset, length=size))
        elif op == "read":
            b_mem.buffer[span] = data
            expected_b[span] = data
            expected_a[span] = data
            ids.append(peer.read(a_mem, b_mem.remote(), local_offset=offset,
                                 remote_offset=offset, length=size))
        else:
            recvs.append(b.post_recv(bytearray(largest_send)))  # RUD may match any buffer
            sent.append(data.tobytes())
            ids.append(peer.send(data.tobytes()))
        offset += size
    assert all(c.ok for c in a.cq.wait_all(ids, timeout=120))
    got = [bytes(c.check().data) for c in b.cq.wait_all(recvs, timeout=120)]
    assert np.array_equal(a_mem.buffer, expected_a)
    assert np.array_equal(b_mem.buffer, expected_b)
    assert sorted(got) == sorted(sent)
    if mode == "rod":
        assert got == sent
