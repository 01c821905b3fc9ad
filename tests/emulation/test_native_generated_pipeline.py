"""A pipeline built to pipeline_abi.h runs in the dataplane loop: unicast, multicast
copies with their rid, parser errors and unfinished passes counted by code, the per-packet state carried to egress.

The pipeline here is a small hand-written C object with the generated code's
exports (``nw_ingress``, ``nw_egress``, ``nw_pipeline_state_size``), compiled and
loaded the way the generated back end loads a program.
"""

from __future__ import annotations

import select
import socket
import uuid

import pytest

from netweft.emulation.native.dataplane import Dataplane, GeneratedPipeline
from netweft.emulation.native.dataplane_build import HERE
from netweft.testbed.bench.switch_veth import root_veth_pairs

pytestmark = pytest.mark.netns

FIXTURE = r"""
#include <string.h>
#include "pipeline_abi.h"

#define MAGIC 0x5eedu

size_t nw_pipeline_state_size(void) { return 8; }

/* dst MAC ff..ff: multicast group 1; else unicast to the dst MAC's last byte */
int nw_ingress(void *pipeline, nw_pkt_t *p, uint64_t now_ns)
{
    (void)pipeline; (void)now_ns;
    if (p->len < 20) {   /* Ethernet and a 6-byte header of its own */
        p->flags = NW_F_DROP | NW_F_PARSER_ERROR;
        return NW_OK;
    }
    if (p->data[0] == 0xee)   /* dst MAC ee..: a pass that does not finish, code in byte 1 */
        return p->data[1];
    unsigned st = MAGIC;
    memcpy(p->state, &st, sizeof(st));
    if (p->data[0] == 0xff)
        p->mcast_grp = 1;
    else
        p->egress_spec = p->data[5];
    return NW_OK;
}

/* egress writes what it was given into the frame: instance type, rid, port, state ok;
 * dst MAC byte 4 = 0xcc: clone to session 5 */
int nw_egress(void *pipeline, nw_pkt_t *p, uint64_t now_ns, const nw_queue_meta_t *q)
{
    (void)pipeline; (void)now_ns; (void)q;
    unsigned st;
    memcpy(&st, p->state, sizeof(st));
    if (p->len < 18)
        return NW_ERR_ARG;
    p->data[14] = p->instance_type;
    p->data[15] = (uint8_t)p->egress_rid;
    p->data[16] = (uint8_t)p->egress_port;
    p->data[17] = st == MAGIC;
    if (p->data[4] == 0xcc) {   /* clone every copy, clones too: a chain without end */
        p->flags |= NW_F_CLONE;
        p->clone_session = 5;
    }
    return NW_OK;
}
"""


@pytest.fixture(scope="module")
def fixture_pipeline(tmp_path_factory):
    from cffi import FFI

    folder = tmp_path_factory.mktemp("abi")
    ffi = FFI()
    ffi.cdef("size_t nw_pipeline_state_size(void);"
             "int nw_ingress(void *, void *, uint64_t);"
             "int nw_egress(void *, void *, uint64_t, const void *);")
    name = f"_nw_abi_fixture_{uuid.uuid4().hex[:8]}"
    ffi.set_source(name, FIXTURE, include_dirs=[str(HERE)])
    path = ffi.compile(tmpdir=str(folder))
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def three_ports():
    with root_veth_pairs((1, 2, 3)) as pairs:
        yield pairs


def _socket(ifname: str) -> socket.socket:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    sock.bind((ifname, 0))
    return sock


def _frames(sock: socket.socket, want: int, timeout: float = 10.0) -> list[bytes]:
    """Frames arriving on ``sock`` until ``want`` came (or ``timeout``), then any extra
    one that follows within a moment (there should be none)."""
    got: list[bytes] = []
    while select.select([sock], [], [], timeout if len(got) < want else 0.3)[0]:
        frame, addr = sock.recvfrom(65536)
        if addr[2] != socket.PACKET_OUTGOING:
            got.append(frame)
    return got


def test_a_generated_style_pipeline_unicasts_replicates_and_counts_parser_errors(
        fixture_pipeline, three_ports):
    pipeline = GeneratedPipeline(fixture_pipeline.ffi, fixture_pipeline.lib,
                                 fixture_pipeline.ffi.NULL)
    ports = {n: ends[1] for n, ends in three_ports.items()}
    dp = Dataplane(pipeline, ports)
    dp.set_group(1, [(2, 7), (3, 9)])
    hosts = {n: _socket(ends[0]) for n, ends in three_ports.items()}
    unicast = bytes.fromhex("020000000002" "020000000001" "88b5") + bytes(50)
    broadcast = bytes.fromhex("ffffffffffff" "020000000001" "88b5") + bytes(50)
    try:
        with dp:
            # first (one port's ring is taken in order, so these are counted by the
            # time the last frame below is out): assert, empty group twice, another
            for code in (1, 5, 5, 9):
                hosts[1].send(bytes([0xee, code]) + unicast[2:])
            hosts[1].send(unicast[:16])          # shorter than its headers: parser error
            hosts[1].send(unicast)
            hosts[1].send(broadcast)
            at2 = _frames(hosts[2], 2)
            at3 = _frames(hosts[3], 1)
        counters = dp.counters()
    finally:
        for sock in hosts.values():
            sock.close()
    # (instance type, rid, egress port, state carried from ingress) written by egress
    assert sorted(tuple(f[14:18]) for f in at2) == [(0, 0, 2, 1), (5, 7, 2, 1)]
    assert [tuple(f[14:18]) for f in at3] == [(5, 9, 3, 1)]
    assert counters["drop_malformed"] == 1
    assert counters["copies_multicast"] == 2
    assert counters["tx"] == 3 and counters["rx"] == 7
    assert {code: n for code, n in pipeline.errors.items() if n} == {0: 1, 1: 1, 5: 2}


def test_a_chain_of_egress_clones_ends_at_the_pass_limit(fixture_pipeline, three_ports):
    pipeline = GeneratedPipeline(fixture_pipeline.ffi, fixture_pipeline.lib,
                                 fixture_pipeline.ffi.NULL)
    dp = Dataplane(pipeline, {n: ends[1] for n, ends in three_ports.items()})
    dp.set_clone_session(5, port=3)
    hosts = {n: _socket(ends[0]) for n, ends in three_ports.items()}
    try:
        with dp:
            hosts[1].send(bytes.fromhex("02000000cc02" "020000000001" "88b5") + bytes(50))
            at2 = _frames(hosts[2], 1)
            at3 = _frames(hosts[3], 62)
        counters = dp.counters()
    finally:
        for sock in hosts.values():
            sock.close()
    assert [tuple(f[14:18]) for f in at2] == [(0, 0, 2, 1)]
    assert len(at3) == 62 and {tuple(f[14:18]) for f in at3} == {(2, 0, 3, 1)}
    # as the in-process driver counts: every pass, the unicast one too (clones 2..64)
    assert counters["copies_clone"] == 63 and counters["drop_pass_limit"] == 1


def test_basic_forward_compiled_to_c_in_the_loop_sends_what_the_python_switch_sends(tmp_path):
    from netweft.emulation.native.dataplane import _generated_pipeline
    from netweft.emulation.p4runtime.runtime_file import apply_runtime_file
    from netweft.emulation.switch import SoftSwitch
    from netweft.p4.compiler import compile_p4
    from netweft.p4.programs import source_dir
    from netweft.testbed.bench.switch_veth import runtime_file, udp_frame, veth_links

    source = source_dir() / "basic_forward.p4"
    runtime = runtime_file(tmp_path)
    reference = SoftSwitch(compile_p4(str(source), include_dirs=(str(source_dir()),)),
                           backend="python")
    apply_runtime_file(reference, runtime)
    frames = [udp_frame(64 + 7 * k, dst=f"10.{k}.0.1") for k in range(12)]
    frames.append(udp_frame(64, dst="192.168.0.1"))          # no route: dropped
    frames.append(frames[0][:14 + 8] + b"\x01" + frames[0][23:])   # TTL 1: dropped
    expected = [out for f in frames for port, out in reference.process(1, f) if port == 2]
    assert len(expected) == 12
    pipeline = _generated_pipeline(source, runtime)
    with veth_links() as links:
        tx, rx = _socket(links.generator), _socket(links.sink)
        try:
            with Dataplane(pipeline, {1: links.port1, 2: links.port2}) as dp:
                for frame in frames:
                    tx.send(frame)
                got = _frames(rx, len(expected))
            counters = dp.counters()
        finally:
            tx.close()
            rx.close()
    assert got == expected
    assert counters["drop_program"] == 2 and counters["tx"] == 12
