"""The programs the fabric experiments run on emulated hosts, one role per invocation.

``python -m netweft.testbed.experiments.fabric_hosts ROLE ARGS``:

- ``blast DST DPORT RATE_MBIT SECONDS SIZE FLOW SPORT [--uet] [--ect]``: sends UDP
  datagrams of SIZE bytes paced at RATE_MBIT (counting Ethernet, IP and UDP
  headers, as a link's rate does) for SECONDS; each carries FLOW and a sequence
  number. SPORT is a port number, or ``entropy`` for a random source port per
  datagram (UET's per-packet entropy). ``--uet`` starts the payload with a UET
  PDS prologue of type RUD, so that a fabric.p4 switch may trim it; ``--ect``
  sets ECT(0). Prints JSON: datagrams and bytes sent, seconds taken.
- ``mcast-send LENGTH SEED multicast ADDRESS GROUP RECEIVERS`` or ``mcast-send LENGTH
  SEED unicast ADDRESS:GROUP,...``: sends LENGTH bytes (random, from SEED) reliably to
  the group (or to each receiver in turn over its own group), prints JSON: seconds,
  the sender's counters and the SHA-256 of the buffer.
- ``mcast-recv GROUP INDEX LENGTH SENDER_IP``: receives the buffer as receiver INDEX;
  prints ``ready``, then JSON with the SHA-256 of what arrived and its counters.
- ``sink PORT SECONDS``: receives for at most SECONDS (or until 2 s pass without
  a datagram after the first); prints ``ready``, then JSON per flow: datagrams,
  bytes, reordered (a sequence number below one seen before), missing, CE-marked,
  trimmed (UET PDS flag 0x40), first and last arrival times.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import socket
import struct
import sys
import time

# payload: [PDS prologue 2][pad 2][flow 4][seq 4] ... within the 64 bytes a trim keeps
HEADER = struct.Struct("!HHII")
PDS_RUD = 2 << 11            # pdsType 2 (RUD) in the top 5 bits of the prologue
PDS_F_TRIMMED = 0x40          # NW_PDS_F_TRIMMED in the 7-bit flags
WIRE_OVERHEAD = 14 + 20 + 8   # Ethernet, IPv4, UDP
ECN_CE = 3
IDLE_S = 2.0                  # a sink stops this long after the last datagram


def _socket(port: int, ect: bool) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if ect:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0x02)
    sock.bind(("0.0.0.0", port))
    return sock


def blast(dst: str, dport: str, rate_mbit: str, seconds: str, size: str, flow: str,
          sport: str, *flags: str) -> None:
    ect, entropy = "--ect" in flags, sport == "entropy"
    # entropy: a pool of sockets on kernel-chosen ports, one picked per datagram
    socks = [_socket(0, ect) for _ in range(64)] if entropy else [_socket(int(sport), ect)]
    length, pps = int(size), float(rate_mbit) * 1e6 / ((int(size) + WIRE_OVERHEAD) * 8)
    prologue = PDS_RUD if "--uet" in flags else 0
    filler = os.urandom(max(0, length - HEADER.size))
    rng = random.Random(int(flow))
    sent, start = 0, time.perf_counter()
    end = start + float(seconds)
    while True:
        now = time.perf_counter()
        if now >= end:
            break
        due = int((now - start) * pps) + 1 - sent
        for _ in range(max(0, due)):
            out = socks[rng.randrange(len(socks))]
            try:
                out.sendto(HEADER.pack(prologue, 0, int(flow), sent) + filler,
                           (dst, int(dport)))
            except OSError:
                pass  # a full socket buffer drops, as a NIC would
            sent += 1
        time.sleep(0.0005)
    print(json.dumps({"flow": int(flow), "sent": sent, "bytes": sent * length,
                      "seconds": time.perf_counter() - start}))


def sink(port: str, seconds: str) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind(("0.0.0.0", int(port)))
    sock.settimeout(0.2)
    print("ready", flush=True)
    flows: dict[int, dict] = {}
    deadline = time.monotonic() + float(seconds)
    last = None
    while time.monotonic() < deadline and (last is None or time.monotonic() - last < IDLE_S):
        try:
            data, ancillary, _flags, _peer = sock.recvmsg(65535, 64)
        except TimeoutError:
            continue
        now = time.monotonic()
        last = now
        if len(data) < HEADER.size:
            continue
        prologue, _, flow, seq = HEADER.unpack_from(data)
        tos = next((c[2][0] for c in ancillary if c[1] == socket.IP_TOS), 0)
        f = flows.setdefault(flow, {"datagrams": 0, "bytes": 0, "reordered": 0, "ce": 0,
                                    "trimmed": 0, "max_seq": -1, "first": now, "last": now,
                                    "seen": set()})
        f["last"] = now
        if prologue & PDS_F_TRIMMED:
            f["trimmed"] += 1      # the header survived, the data did not: a loss, now known
            continue
        f["datagrams"] += 1
        f["bytes"] += len(data)
        f["ce"] += (tos & 3) == ECN_CE
        if seq < f["max_seq"]:
            f["reordered"] += 1
        f["max_seq"] = max(f["max_seq"], seq)
        f["seen"].add(seq)
    out = {}
    for flow, f in flows.items():
        seen = f.pop("seen")
        f["missing"] = f["max_seq"] + 1 - len(seen)
        f["seconds"] = f["last"] - f["first"]   # monotonic: one clock for every namespace
        out[str(flow)] = f
    print(json.dumps(out), flush=True)


def mcast_send(length: str, seed: str, mode: str, *args: str) -> None:
    from dataclasses import asdict

    from netweft.transport.collectives.multicast.udp import send_multicast, send_unicast

    data = random.Random(int(seed)).randbytes(int(length))
    if mode == "multicast":
        address, group, receivers = args
        result = send_multicast(data, address, int(group), int(receivers))
    else:
        pairs = [item.split(":") for item in args[0].split(",")]
        result = send_unicast(data, [a for a, _ in pairs], [int(g) for _, g in pairs])
    print(json.dumps({"seconds": result.seconds, **asdict(result.stats),
                      "sha256": hashlib.sha256(data).hexdigest()}))


def mcast_recv(group: str, index: str, length: str, sender: str) -> None:
    from dataclasses import asdict

    from netweft.transport.collectives.multicast.udp import receive_multicast

    receiver = receive_multicast(int(length), int(group), int(index), sender,
                                 ready=lambda: print("ready", flush=True))
    print(json.dumps({"sha256": hashlib.sha256(receiver.data).hexdigest(),
                      **asdict(receiver.stats)}), flush=True)


ROLES = {"blast": blast, "sink": sink, "mcast-send": mcast_send, "mcast-recv": mcast_recv}

if __name__ == "__main__":
    ROLES[sys.argv[1]](*sys.argv[2:])
