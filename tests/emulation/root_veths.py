"""Veth pairs in the root namespace for tests that drive a packet loop directly."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from netweft.emulation.network import OWNER_DIR
from netweft.emulation.process_lifetime import owner_stamp
from netweft.testbed.bench.switch_veth import quiet_interface


@contextmanager
def root_veth_pairs(ports: Iterable[int]) -> Iterator[dict[int, tuple[str, str]]]:
    """Port N's pair ``(<prefix>lNa, <prefix>lNb)``, offloads off and up, named as a
    network's links and with the network's owner file: a ``netweft clean`` or ``netweft
    up`` running meanwhile (another test, another suite on the machine) takes pairs of
    that name without a live owner for a killed run's leftovers, and deleted one in the
    middle of a test. Removed on exit, also when the test fails."""
    head = f"nw{uuid.uuid4().hex[:5]}"
    owner = OWNER_DIR / head
    made: list[str] = []
    try:
        OWNER_DIR.mkdir(parents=True, exist_ok=True)
        owner.write_text(owner_stamp() + "\n")
        pairs = {n: (f"{head}l{n}a", f"{head}l{n}b") for n in ports}
        for a, b in pairs.values():
            subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b],
                           check=True, capture_output=True)
            made.append(a)
            quiet_interface(a)
            quiet_interface(b)
        yield pairs
    finally:
        for name in made:
            subprocess.run(["ip", "link", "del", name], capture_output=True)
        owner.unlink(missing_ok=True)
