"""The native switch's packet I/O: a C loop over every port's AF_PACKET rings.

Python builds the pieces (a pipeline, the traffic manager, multicast groups and
clone sessions), starts the loop on a thread of its own and reads counters;
the loop itself (``dataplane_loop.c``) moves every frame in C, so Python is off
the per-packet path.  Pipelines plug in through one function table
(``dataplane_pipeline.h``): the minimal forwarder (no P4: the physical limit),
the stand-in ``basic_forward`` pipeline, or a generated P4 pipeline passed by
address.

Run by hand (root; offloads off on the interfaces)::

    python -m netweft.emulation.native.dataplane --port 1=veth1 --port 2=veth2 \\
        --pipeline standin --route 10.0.0.0/8=2,08:00:00:00:01:11 --stats-out s.json
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import signal
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from netweft.emulation.native.dataplane_build import load
from netweft.emulation.native.dataplane_tm import NativeTrafficManager

NO_PORT = 0xFFFFFFFF
DROP_PORT = 511


class DataplaneError(RuntimeError):
    """The loop could not open a port or start."""


class Pipeline:
    """A pipeline the loop can run: ``ptr`` is its ``nw_dp_pipeline_t *``."""

    ptr: Any
    direct: bool = False


class MinimalForwarder(Pipeline):
    """Ring to ring, no P4: frames from port A go to ``pairs[A]``."""

    direct = True

    def __init__(self, pairs: Mapping[int, int]) -> None:
        mod = load()
        self._fwd = mod.ffi.gc(mod.lib.nw_dp_forwarder_new(), mod.lib.nw_dp_forwarder_free)
        for a, b in pairs.items():
            if mod.lib.nw_dp_forwarder_map(self._fwd, a, b) < 0:
                raise ValueError(f"bad port pair {a} -> {b}")
        self.ptr = mod.lib.nw_dp_forwarder_pipeline(self._fwd)


class StandinPipeline(Pipeline):
    """basic_forward.p4 by hand in C: IPv4 LPM routes ``(prefix, next-hop MAC, port)``."""

    def __init__(self, routes: Iterable[tuple[str, str, int]] = (), priority: int = 0) -> None:
        mod = load()
        self._mod = mod
        self._s = mod.ffi.gc(mod.lib.nw_dp_standin_new(), mod.lib.nw_dp_standin_free)
        for prefix, mac, port in routes:
            self.add_route(prefix, mac, port)
        mod.lib.nw_dp_standin_set_priority(self._s, priority)
        self.ptr = mod.lib.nw_dp_standin_pipeline(self._s)

    def add_route(self, prefix: str, mac: str, port: int) -> None:
        """``ipv4_forward(mac, port)`` for ``prefix`` (``10.0.0.0/8``)."""
        net = ipaddress.IPv4Network(prefix, strict=False)
        dmac = bytes.fromhex(mac.replace(":", ""))
        if len(dmac) != 6:
            raise ValueError(f"bad MAC address {mac!r}")
        if self._mod.lib.nw_dp_standin_add_route(self._s, int(net.network_address),
                                                 net.prefixlen, dmac, port) < 0:
            raise ValueError(f"cannot add route {prefix} -> {port} (table full or bad port)")


class GeneratedPipeline(Pipeline):
    """A generated P4 pipeline (``pipeline_abi.h``) run by the loop.

    ``ffi``/``lib``: the cffi handles of the loaded generated object (it exports
    ``nw_ingress``, ``nw_egress`` and ``nw_pipeline_state_size``); ``pipeline``:
    its ``nw_pipeline_new()`` object.  Both must outlive this one (kept here).
    """

    def __init__(self, ffi: Any, lib: Any, pipeline: Any) -> None:
        mod = load()
        self._keep = (ffi, lib, pipeline)

        def address(name: str) -> int:
            return int(ffi.cast("uintptr_t", ffi.addressof(lib, name)))

        adapter = mod.lib.nw_dp_p4_from_addresses(
            mod.ffi.cast("void *", int(ffi.cast("uintptr_t", pipeline))),
            address("nw_ingress"), address("nw_egress"), int(lib.nw_pipeline_state_size()))
        if adapter == mod.ffi.NULL:
            raise ValueError("the generated pipeline's functions are missing or its state "
                             "is too large")
        # an ingress clone parses the received frame again (BMv2), not a copy of ingress's;
        # a hand-written pipeline without nw_clone_i2e clones a copy
        if hasattr(lib, "nw_clone_i2e"):
            mod.lib.nw_dp_p4_set_clone_i2e(adapter, address("nw_clone_i2e"))
        self._adapter = mod.ffi.gc(adapter, mod.lib.nw_dp_p4_free)
        self._mod = mod
        self.ptr = mod.lib.nw_dp_p4_pipeline(self._adapter)

    @property
    def errors(self) -> dict[int, int]:
        """Passes the generated code did not finish, by its return code (1: a failed
        assert, 2: no room, 3: bad argument, 4: a stack index out of bounds, 5: an empty
        action selector group; 0: any other)."""
        lib = self._mod.lib
        return {code: int(lib.nw_dp_p4_errors(self._adapter, code))
                for code in range(int(lib.NW_DP_P4_ERROR_CODES))}


class ExternalPipeline(Pipeline):
    """A pipeline built elsewhere (the generated P4 pipeline): its table's address.

    ``owner`` is kept alive as long as this object (it owns the table's memory).
    """

    def __init__(self, address: int, owner: Any = None, direct: bool = False) -> None:
        mod = load()
        self.ptr = mod.ffi.cast("nw_dp_pipeline_t *", address)
        self.owner = owner
        self.direct = direct


class WireTable:
    """Per-port link models for the loop (``dataplane_wire.c`` over the one C wire model).

    :meth:`set` takes a :class:`~netweft.nic_offload.wire_model.WireConfig` (None: an
    ideal link) and the 64-bit seed; the egress side is the wire only (the traffic
    manager's port rate is the transmitter), the ingress side the transmitter and the
    wire, as :mod:`netweft.emulation.links` runs them.
    """

    IN, OUT = 0, 1

    def __init__(self) -> None:
        mod = self._mod = load()
        table = mod.lib.nw_dp_wires_new()
        if table == mod.ffi.NULL:
            raise MemoryError("no memory for the link table")
        self.ptr = mod.ffi.gc(table, mod.lib.nw_dp_wires_free)
        self.egress_hook = mod.ffi.new("nw_dp_wire_t *")
        self.ingress_hook = mod.ffi.new("nw_dp_wire_t *")
        mod.lib.nw_dp_wires_egress_hook(self.ptr, self.egress_hook)
        mod.lib.nw_dp_wires_ingress_hook(self.ptr, self.ingress_hook)

    def set(self, port: int, direction: int, config: Any, seed: int) -> None:
        """Port ``port``'s link ``direction`` (:attr:`IN`/:attr:`OUT`) runs ``config``."""
        ffi, lib = self._mod.ffi, self._mod.lib
        cfg = ffi.NULL
        if config is not None:
            cfg = ffi.new("nw_link_config_t *", {
                "rate_bps": config.rate_bps, "limit": config.limit,
                "delay_ns": config.delay_ns, "jitter_ns": config.jitter_ns,
                "loss": config.loss, "corrupt": config.corrupt})
            if config.gemodel is not None:
                cfg.gemodel = 1
                cfg.ge_p, cfg.ge_r, cfg.ge_loss_good, cfg.ge_loss_bad = config.gemodel
        if lib.nw_dp_wires_set(self.ptr, port, direction, cfg, seed) < 0:
            raise ValueError(f"bad link for port {port}: {config!r}")

    def stats(self, direction: int) -> dict[str, int]:
        """Frames by outcome over every link of one direction."""
        st = self._mod.ffi.new("nw_link_stats_t *")
        self._mod.lib.nw_dp_wires_stats(self.ptr, direction, st)
        return {name: int(getattr(st, name)) for name in
                ("delivered", "dropped_limit", "lost", "burst_lost", "corrupted")}


class HostChannel:
    """The CPU port's channel between the loop and Python (``dataplane_host.c``).

    Frames the pipeline sends to ``cpu_port`` wait in a bounded ring for
    :meth:`take` (a P4Runtime server turns them into PacketIn); :meth:`inject`
    queues a frame the loop receives on ``cpu_port`` (PacketOut).  Full rings drop
    and count (:meth:`stats`).  :attr:`fd` is readable when frames wait.
    """

    def __init__(self, cpu_port: int, slots: int = 1024, frame_max: int = 16384) -> None:
        mod = self._mod = load()
        host = mod.lib.nw_dp_host_new(cpu_port, slots, frame_max)
        if host == mod.ffi.NULL:
            raise ValueError(f"cannot make the CPU port channel (port {cpu_port})")
        self.ptr = mod.ffi.gc(host, mod.lib.nw_dp_host_free)
        self.cpu_port = cpu_port
        self.fd = int(mod.lib.nw_dp_host_fd(self.ptr))
        self._buf = mod.ffi.new("uint8_t[]", frame_max)
        self._frame_max = frame_max
        self.wake: Any = None       # set by the Dataplane: wakes the loop after inject

    def take(self) -> bytes | None:
        """The next frame the loop sent to the CPU port, or None."""
        n = self._mod.lib.nw_dp_host_take(self.ptr, self._buf, self._frame_max)
        return None if n < 0 else bytes(self._mod.ffi.buffer(self._buf, n))

    def inject(self, frame: bytes) -> bool:
        """Queue ``frame`` as received on the CPU port; False if it was dropped."""
        ok = self._mod.lib.nw_dp_host_inject(self.ptr, frame, len(frame)) == 0
        if ok and self.wake is not None:
            self.wake()
        return ok

    def stats(self) -> dict[str, int]:
        st = self._mod.ffi.new("nw_dp_host_stats_t *")
        self._mod.lib.nw_dp_host_stats(self.ptr, st)
        return {name: int(getattr(st, name))
                for name in ("punted", "punt_drops", "injected", "inject_drops")}


class PortPcaps:
    """``<iface>_in.pcap`` and ``<iface>_out.pcap`` per port, written by the loop."""

    def __init__(self, folder: Path, ports: Mapping[int, str]) -> None:
        import os

        mod = self._mod = load()
        self.ptr = mod.ffi.gc(mod.lib.nw_dp_pcap_new(), mod.lib.nw_dp_pcap_free)
        folder.mkdir(parents=True, exist_ok=True)
        for number, ifname in sorted(ports.items()):
            rc = mod.lib.nw_dp_pcap_open(self.ptr, number,
                                         str(folder / f"{ifname}_in.pcap").encode(),
                                         str(folder / f"{ifname}_out.pcap").encode())
            if rc < 0:
                raise OSError(-rc, f"cannot write the pcaps of {ifname} in {folder}: "
                              f"{os.strerror(-rc)}")

    def close(self) -> None:
        """Flush and close every file (the loop must be stopped)."""
        if self.ptr is not None:
            ptr, self.ptr = self.ptr, None
            self._mod.ffi.gc(ptr, None)       # no second free when it is collected
            self._mod.lib.nw_dp_pcap_free(ptr)


class Dataplane:
    """The C loop serving ``ports`` ({switch port: interface}) with ``pipeline``.

    The traffic manager (:attr:`tm`), multicast groups and clone sessions live
    as long as this object and survive :meth:`stop`/:meth:`start`; sockets and
    the loop's thread exist only between the two.
    """

    def __init__(self, pipeline: Pipeline, ports: Mapping[int, str], *,
                 priority_queues: int = 1, queue_depth: int = 64, rx_frames: int = 1024,
                 tx_frames: int = 1024, batch: int = 64, pool_packets: int = 4096,
                 tapped: bool = False) -> None:
        mod = self._mod = load()
        self.pipeline = pipeline
        self.ports = dict(ports)
        self.tm = NativeTrafficManager(priority_queues, depth_packets=queue_depth)
        self._rep = mod.ffi.gc(mod.lib.nw_dp_replication_new(), mod.lib.nw_dp_replication_free)
        if self._rep == mod.ffi.NULL:
            raise MemoryError("no memory for the replication tables")
        self._config = mod.ffi.new("nw_dp_loop_config_t *", {
            "rx_frames": rx_frames, "tx_frames": tx_frames, "batch": batch,
            "pool_packets": pool_packets, "tapped": int(tapped)})
        self._loop: Any = None
        self._thread: threading.Thread | None = None
        self._result: int | None = None
        self._final: dict[str, int] = {}
        self.wires: WireTable | None = None
        self.host: HostChannel | None = None
        self.pcaps: PortPcaps | None = None
        self._guard: Any = None

    # ------------------------------------------------------------------ attachments

    def attach_wires(self, wires: WireTable) -> None:
        """Run the links of ``wires`` on every port (set before :meth:`start`)."""
        self.wires = wires

    def attach_host(self, host: HostChannel) -> None:
        """The CPU port's channel (set before :meth:`start`)."""
        self.host = host
        host.wake = self.wake

    def attach_pcaps(self, pcaps: PortPcaps) -> None:
        """Per-port captures written by the loop (set before :meth:`start`)."""
        self.pcaps = pcaps

    def set_guard(self, owner: Any, lock_address: int, unlock_address: int) -> None:
        """Hold ``lock(owner)`` around every pass (a generated pipeline's
        ``nw_pipeline_lock``), so a thread that takes it updates between passes."""
        ffi = self._mod.ffi
        self._guard = ffi.new("nw_dp_guard_t *", {
            "self": ffi.cast("void *", owner),
            "lock": ffi.cast("void (*)(void *)", lock_address),
            "unlock": ffi.cast("void (*)(void *)", unlock_address)})

    def wake(self) -> None:
        """Make a sleeping loop look at its queues again (after a change)."""
        if self._loop is not None:
            self._mod.lib.nw_dp_loop_wake(self._loop)

    # ------------------------------------------------------------------ control plane

    def set_group(self, group: int, copies: Iterable[tuple[int, int]]) -> None:
        """Multicast group ``group`` -> ``(port, rid)`` copies (empty: delete)."""
        members = list(copies)
        arr = self._mod.ffi.new("nw_dp_copy_t[]", [{"port": p, "rid": r} for p, r in members]
                                or 1)
        if self._mod.lib.nw_dp_group_set(self._rep, group, arr, len(members)) < 0:
            raise ValueError(f"bad multicast group {group} or member in {members}")

    def set_clone_session(self, session: int, port: int | None = None,
                          mc_group: int | None = None, truncate: int | None = None) -> None:
        """Clone session -> a port and/or a multicast group, truncated to ``truncate`` bytes."""
        if self._mod.lib.nw_dp_session_set(self._rep, session,
                                           NO_PORT if port is None else port,
                                           mc_group or 0, truncate or 0) < 0:
            raise ValueError(f"bad clone session {session}")

    # ------------------------------------------------------------------ running

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Open every port and run the loop on its own thread."""
        if self._loop is not None:
            raise DataplaneError("the dataplane is already running")
        ffi, lib = self._mod.ffi, self._mod.lib
        err = ffi.new("int32_t *")
        direct = self.pipeline.direct
        loop = lib.nw_dp_loop_new(self.pipeline.ptr, ffi.NULL if direct else self.tm.ptr,
                                  ffi.NULL if direct else self._rep, self._config, err)
        if loop == ffi.NULL:
            raise DataplaneError(f"cannot make the loop: {_strerror(err[0])}")
        try:
            for number, ifname in sorted(self.ports.items()):
                rc = lib.nw_dp_loop_add_port(loop, number, ifname.encode())
                if rc < 0:
                    raise DataplaneError(f"cannot open port {number} on {ifname}: "
                                         f"{_strerror(rc)}")
        except BaseException:
            lib.nw_dp_loop_free(loop)
            raise
        if self.wires is not None:
            lib.nw_dp_loop_set_wire(loop, self.wires.egress_hook)
            lib.nw_dp_loop_set_ingress_wire(loop, self.wires.ingress_hook)
        if self._guard is not None:
            lib.nw_dp_loop_set_guard(loop, self._guard)
        if self.host is not None:
            lib.nw_dp_loop_set_host(loop, self.host.ptr)
        if self.pcaps is not None and self.pcaps.ptr is not None:
            lib.nw_dp_loop_set_pcap(loop, self.pcaps.ptr)
        self._loop = loop
        self._result = None
        self._thread = threading.Thread(target=self._run, name="netweft-dataplane", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self._result = int(self._mod.lib.nw_dp_loop_run(self._loop))  # GIL released

    def stop(self) -> dict[str, int]:
        """Stop the loop, close every port; returns the final counters."""
        if self._loop is None:
            return dict(self._final)
        self._mod.lib.nw_dp_loop_stop(self._loop)
        if self._thread is not None:
            self._thread.join()
        self._final = self._read(self._loop)
        self._mod.lib.nw_dp_loop_free(self._loop)
        self._loop = None
        self._thread = None
        if self._result not in (None, 0):
            raise DataplaneError(f"the loop failed: {_strerror(self._result)}")
        return dict(self._final)

    def counters(self) -> dict[str, int]:
        """What the loop did so far (as of its last pass); the final ones once stopped."""
        return self._read(self._loop) if self._loop is not None else dict(self._final)

    def _read(self, loop: Any) -> dict[str, int]:
        ffi, lib = self._mod.ffi, self._mod.lib
        c = ffi.new("nw_dp_counters_t *")
        lib.nw_dp_loop_counters(loop, c)
        out = {name: int(getattr(c, name)) for name, _ in ffi.typeof("nw_dp_counters_t").fields}
        pc = ffi.new("nw_dp_port_counters_t *")
        for index, number in enumerate(sorted(self.ports)):
            if lib.nw_dp_loop_port_counters(loop, index, pc) == 0:
                for name, _ in ffi.typeof("nw_dp_port_counters_t").fields:
                    out[f"{name}_port{number}"] = int(getattr(pc, name))
        return out

    def __enter__(self) -> Dataplane:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _strerror(rc: int) -> str:
    import os

    return os.strerror(-rc) if rc < 0 else f"status {rc}"


# ---------------------------------------------------------------------- command line

def _parse_port(text: str) -> tuple[int, str]:
    number, sep, ifname = text.partition("=")
    if not sep or not number.isdigit() or not ifname:
        raise argparse.ArgumentTypeError(f"--port wants NUMBER=IFNAME, got {text!r}")
    return int(number), ifname


def _parse_route(text: str) -> tuple[str, str, int]:
    prefix, sep, rest = text.partition("=")
    port, comma, mac = rest.partition(",")
    if not sep or not comma or not port.isdigit():
        raise argparse.ArgumentTypeError(f"--route wants PREFIX=PORT,MAC, got {text!r}")
    return prefix, mac, int(port)


def serve(dataplane: Dataplane, stop_after: float | None = None) -> dict[str, int]:
    """Run until SIGTERM/SIGINT (or ``stop_after`` seconds); returns the final counters."""
    stop = threading.Event()
    old = {sig: signal.signal(sig, lambda *_: stop.set())
           for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        dataplane.start()
        print("ready", flush=True)
        deadline = time.monotonic() + stop_after if stop_after else None
        while not stop.is_set() and dataplane.running:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                break
            stop.wait(0.2 if remaining is None else min(0.2, remaining))
        return dataplane.stop()
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if dataplane.running:
            dataplane.stop()


def _generated_pipeline(program: Path, runtime: Path | None) -> GeneratedPipeline:
    """``program`` on the native back end (its tables filled from ``runtime``)."""
    from netweft.emulation.p4runtime.runtime_file import apply_runtime_file
    from netweft.emulation.switch import SoftSwitch
    from netweft.p4.compiler import compile_p4

    switch = SoftSwitch(compile_p4(str(program), include_dirs=(str(program.parent),)),
                        backend="c")
    if runtime is not None:
        apply_runtime_file(switch, runtime)
    native = switch.native
    generated = GeneratedPipeline(native.library.ffi, native.library.lib, native.pointer)
    generated.owner = switch          # the tables live in the switch's native pipeline
    return generated


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", action="append", type=_parse_port, default=[],
                        help="NUMBER=IFNAME, repeated")
    parser.add_argument("--pipeline", choices=("forwarder", "standin", "p4"), default="standin",
                        help="forwarder: ring to ring between the first two ports, no P4; "
                             "standin: basic_forward.p4 by hand in C (default); "
                             "p4: --program compiled to C by the native back end")
    parser.add_argument("--program", type=Path, help="with --pipeline p4: the P4-16 source")
    parser.add_argument("--runtime", type=Path,
                        help="with --pipeline p4: a runtime file (sX-runtime.json style)")
    parser.add_argument("--route", action="append", type=_parse_route, default=[],
                        metavar="PREFIX=PORT,MAC", help="a stand-in route, repeated")
    parser.add_argument("--queue-depth", type=int, default=64,
                        help="packets per egress queue (default 64)")
    parser.add_argument("--ring-frames", type=int, default=4096,
                        help="RX and TX ring slots per port (default 4096: room for a few "
                             "milliseconds without the CPU at a million frames/s)")
    parser.add_argument("--stats-out", type=Path, help="write counters as JSON on exit")
    parser.add_argument("--stop-after", type=float, help="seconds to run (default: until killed)")
    args = parser.parse_args(argv)
    ports = dict(args.port)
    if len(ports) < 1:
        parser.error("give at least one --port")
    pipeline: Pipeline
    if args.pipeline == "forwarder":
        numbers = sorted(ports)
        if len(numbers) != 2:
            parser.error("the forwarder joins exactly two ports")
        pipeline = MinimalForwarder({numbers[0]: numbers[1], numbers[1]: numbers[0]})
    elif args.pipeline == "p4":
        if args.program is None:
            parser.error("--pipeline p4 needs --program")
        try:
            pipeline = _generated_pipeline(args.program, args.runtime)
        except Exception as err:  # noqa: BLE001 - any refusal ends the command with its cause
            print(f"error: {err}", file=sys.stderr)
            return 2
    else:
        pipeline = StandinPipeline(args.route)
    try:
        counters = serve(Dataplane(pipeline, ports, queue_depth=args.queue_depth,
                                   rx_frames=args.ring_frames, tx_frames=args.ring_frames),
                         args.stop_after)
    except DataplaneError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.stats_out:
        args.stats_out.write_text(json.dumps(counters, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
