"""ECN on real sockets: the I/O driver hands a datagram's CE mark (IP_RECVTOS) to the
engine, and ECN-using modes send ECT(0)."""

from __future__ import annotations

import socket
import time

import numpy as np

from netweft.nic_offload import ffi
from netweft.transport import udp_endpoint
from netweft.transport.engine_handle import EngineHandle, make_config


def _first_data_packet(dst: tuple[str, int]) -> bytes:
    """A real RUD request (a SYN opening a PDC) for ``dst``, from a sans-IO engine."""
    eng = EngineHandle(make_config(local_ip="127.0.0.1", mtu=1472, seed=5))
    peer = eng.peer_add(dst[0], dst[1], 0)
    src = ffi.from_buffer(np.ones(100, np.uint8))
    eng.post_send(peer, 1, src, 100)
    out = eng.output(1000)
    assert out is not None
    return out[0]


def test_a_ce_marked_datagram_reaches_the_engine_through_the_io_driver():
    ep = udp_endpoint(("127.0.0.1", 0), cc_mode="nscc")
    try:
        pkt = _first_data_packet(ep.address)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 3)  # CE
            s.sendto(pkt, ep.address)
        deadline = time.monotonic() + 5
        while ep.stats()["ce_pkts_in"] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ep.stats()["ce_pkts_in"] == 1
    finally:
        ep.close()


def test_ect_capable_modes_send_ect0_and_others_do_not():
    for mode, want in (("nscc", 2), ("none", 0)):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx:
            rx.bind(("127.0.0.1", 0))
            rx.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
            rx.settimeout(5)
            ep = udp_endpoint(("127.0.0.1", 0), cc_mode=mode, rto_init_ns=5_000_000)
            try:
                src = ep.register(np.ones(100, np.uint8))
                ep.connect(rx.getsockname()).send(src)
                _, anc, _, _ = rx.recvmsg(2048, socket.CMSG_SPACE(1))
                tos = [c[2][0] for c in anc if c[0] == socket.IPPROTO_IP and c[1] == socket.IP_TOS]
                assert tos and tos[0] & 3 == want, (mode, tos)
            finally:
                ep.close()
