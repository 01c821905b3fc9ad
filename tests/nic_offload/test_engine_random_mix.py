"""Randomised mixes of writes, reads and sends in both directions under all
impairments at once: every operation completes exactly once with success and
every byte lands where it should."""

import os
import random

import pytest
from engine_net import EngineNet, Impairments

from netweft.nic_offload import ffi, lib

REGION = 100_000
SIZES = [0, 1, 1000, 1416, 1417, 9000, 40_000]


def run_mix(seed: int, mode: int, n_ops: int = 40) -> None:
    rng = random.Random(seed)
    imp = Impairments(loss=0.03, dup=0.03, reorder=0.1, reorder_ns=50_000, corrupt=0.02,
                      delay_ns=rng.choice([2_000, 20_000, 300_000]))
    net = EngineNet(seed=seed, imp=imp)
    nodes = [net.add("10.0.0.1"), net.add("10.0.0.2")]
    mem = []
    for node in nodes:
        local, _ = net.register(node, REGION, lib.NW_ACCESS_LOCAL, os.urandom(REGION))
        written, wkey = net.register(node, REGION, lib.NW_ACCESS_REMOTE_WRITE)
        readable, rkey = net.register(node, REGION, lib.NW_ACCESS_REMOTE_READ, os.urandom(REGION))
        mem.append((local, written, wkey, readable, rkey))
    peers = [net.peer(nodes[0], nodes[1], mode), net.peer(nodes[1], nodes[0], mode)]
    expect_written = [bytearray(REGION), bytearray(REGION)]
    reads, sends = [], []
    want = [0, 0]
    for op_id in range(n_ops):
        src = rng.randrange(2)
        dst = 1 - src
        local = mem[src][0]
        _, written, wkey, readable, rkey = mem[dst]
        kind = rng.choice(["write", "read", "send"])
        size = rng.choice(SIZES)
        off = rng.randrange(0, REGION - size + 1)
        roff = rng.randrange(0, REGION - size + 1)
        want[src] += 1
        if kind == "write":
            # Overlapping writes land in posting order only on ROD, so write
            # each byte at most once: disjoint slices chosen by operation id.
            roff = op_id * (REGION // n_ops)
            size = min(size, REGION // n_ops)
            assert lib.nw_post_write(nodes[src].engine, peers[src], op_id, local + off, size,
                                     wkey, roff) == 0
            expect_written[dst][roff:roff + size] = bytes(ffi.buffer(local + off, size))
        elif kind == "read":
            out = ffi.new("uint8_t[]", max(size, 1))
            reads.append((out, bytes(ffi.buffer(readable + roff, size))))
            assert lib.nw_post_read(nodes[src].engine, peers[src], op_id, out, size, rkey,
                                    roff) == 0
        else:
            buf = ffi.new("uint8_t[]", 40_000)
            assert lib.nw_post_recv(nodes[dst].engine, op_id, buf, 40_000) == 0
            data = os.urandom(size)
            sends.append((dst, op_id, buf, data))
            assert lib.nw_post_send(nodes[src].engine, peers[src], op_id, data, size) == 0
            want[dst] += 1
        if rng.random() < 0.3:  # let some traffic flow between posts
            stop = net.now + rng.randrange(10_000, 2_000_000)
            net.run(until=lambda stop=stop: net.now >= stop)
    net.run(until=lambda: [len(n.completions) for n in nodes] == want)
    for node in nodes:
        keys = [(c[0], c[2]) for c in node.completions]
        assert len(keys) == len(set(keys))  # each operation completed once
        assert all(c[1] == 0 for c in node.completions), node.completions
    for i in range(2):
        assert bytes(ffi.buffer(mem[i][1], REGION)) == bytes(expect_written[i])
    # A receive buffer holds one whole message. RUD matches buffers in arrival
    # order, so compare the delivered messages as a multiset; ROD keeps order.
    bufs = {(dst, op_id): buf for dst, op_id, buf, _ in sends}
    for dst in range(2):
        sent = [data for d, _, _, data in sends if d == dst]
        got = [bytes(ffi.buffer(bufs[(dst, c[0])], c[3])) for c in nodes[dst].completions
               if c[2] == lib.NW_OP_RECV]
        if mode == lib.NW_MODE_ROD:
            assert got == sent
        else:
            assert sorted(got) == sorted(sent)
    for out, data in reads:
        assert bytes(ffi.buffer(out, len(data))) == data
    net.run()  # and nothing else happens afterwards
    assert [len(n.completions) for n in nodes] == want


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", [lib.NW_MODE_RUD, lib.NW_MODE_ROD], ids=["RUD", "ROD"])
def test_random_mix(seed, mode):
    run_mix(seed, mode)
