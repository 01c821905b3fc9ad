"""Buffer and endpoint lifetimes: nothing the engine points into is freed under it."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from netweft.transport import EngineError, Simulation


def test_exit_with_live_cycles_does_not_crash():
    code = textwrap.dedent("""
        import numpy as np
        from netweft.transport import Simulation
        sim = Simulation(seed=1)
        a, b = sim.endpoint(), sim.endpoint()
        src = a.register(np.ones(300_000, np.uint8))
        dst = b.register(memoryview(bytearray(300_000)))
        peer = a.connect(b.address)
        a.cq.wait_for(peer.write(src, dst.remote())).check()
        b.post_recv(bytearray(10))
        peer.send(b"pending")  # left in flight on purpose
        print("ok")
    """)
    res = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr
    assert "BufferError" not in res.stderr


def test_inflight_buffers_stay_alive_without_user_references():
    sim = Simulation(seed=2)
    a, b = sim.endpoint(), sim.endpoint()
    rid = b.post_recv(bytearray(200_000))  # the only reference is the endpoint's
    wr = a.connect(b.address).send(bytes(range(256)) * 700)  # a temporary bytes object
    gc.collect()
    a.cq.wait_for(wr, timeout=10).check()
    got = b.cq.wait_for(rid, timeout=10).check()
    assert bytes(got.data) == bytes(range(256)) * 700
    assert a.outstanding == 0 and b.outstanding == 0


def test_deregistering_a_region_with_pending_work_is_refused():
    sim = Simulation(seed=3)
    a, b = sim.endpoint(), sim.endpoint()
    src = a.register(np.ones(1 << 20, np.uint8))
    dst = b.register(np.zeros(1 << 20, np.uint8))
    wr = a.connect(b.address).write(src, dst.remote())
    with pytest.raises(EngineError, match="still referenced"):
        src.deregister()
    assert src.registered
    a.cq.wait_for(wr, timeout=10).check()
    src.deregister()
    assert not src.registered


def test_regions_used_by_sends_and_receives_are_busy_too():
    sim = Simulation(seed=4)
    a, b = sim.endpoint(), sim.endpoint()
    out = a.register(bytearray(b"m" * 5000))
    inbox = b.register(bytearray(5000))
    rid = b.post_recv(inbox)
    with pytest.raises(EngineError, match="in flight"):
        inbox.deregister()
    wr = a.connect(b.address).send(out)
    with pytest.raises(EngineError, match="in flight"):
        out.deregister()
    a.cq.wait_for(wr, timeout=10).check()
    assert bytes(b.cq.wait_for(rid, timeout=10).check().data) == b"m" * 5000
    out.deregister()
    inbox.deregister()


def test_udp_endpoints_left_open_stop_cleanly_at_exit_and_on_collection():
    code = textwrap.dedent("""
        import gc, os, random
        import numpy as np
        from netweft.transport import udp_endpoint
        r = random.Random(os.getpid())  # own loopback addresses: parallel runs never clash
        net = f"127.{r.randrange(1, 250)}.{r.randrange(1, 250)}"
        def start(ip_a, ip_b):
            a, b = udp_endpoint((ip_a, 0), mtu=8972), udp_endpoint((ip_b, 0), mtu=8972)
            src = a.register(np.ones(8 << 20, np.uint8))
            dst = b.register(np.zeros(8 << 20, np.uint8))
            b.connect(a.address)
            for _ in range(4):
                a.connect(b.address).write(src, dst.remote())  # left in flight
            return a, b
        start(net + ".1", net + ".2")  # dropped at once: collected mid-flight
        gc.collect()
        junk = [np.full(1 << 20, 7, np.uint8) for _ in range(32)]  # reuse freed memory
        keep = start(net + ".3", net + ".4")  # still open at exit
        print("ok")
    """)
    for _ in range(3):
        res = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code],
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-3000:]
