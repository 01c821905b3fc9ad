"""A switch process's packets moved by the native (C) loop, its control plane in Python.

When the switch runs on the native back end (``backend="c"``, or ``auto`` with the
program covered), :func:`serve_native` hands the packets to
:class:`~netweft.emulation.native.dataplane.Dataplane`: the generated pipeline in
the C loop over per-port AF_PACKET rings, with the C traffic manager and the
one C wire model as the ports' links, so Python never touches a packet.  Python
keeps the control plane on its own threads (the P4Runtime server, the control
channel, runtime files, ``netweft cli``) and:

- configures the C traffic manager and links from the switch's own settings (the
  :class:`~netweft.emulation.switch.SoftSwitch`'s queue limits, port rates and
  link directions, seeds included, so a seeded run draws what the Python path
  draws), again after every control-channel change;
- mirrors multicast groups and clone sessions into the C tables as they are written;
- takes the pipeline lock (``nw_pipeline_lock``) the loop holds per pass around
  every change, so a change lands between passes;
- takes frames the pipeline sends to the CPU port from a bounded ring (P4Runtime
  PacketIn) and injects PacketOut frames into another (drops counted);
- drains the pipeline's digest and ``log_msg`` rings every control-loop turn
  (``nw_flow_pop`` under the pipeline lock, through the switch's
  :class:`~netweft.emulation.native.driver.NativeDriver`): digests go to the
  P4Runtime device as the Python path's do, ``log_msg`` lines to the v1model logger;
- reports the loop's counters under the names the Python path uses.

Pcaps (``--pcap``) are written by the loop.  A per-packet log
(``--log-console``/``--log-file``) keeps the switch on the Python back end, which
alone produces packet traces.
"""

from __future__ import annotations

import json
import re
import selectors
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from netweft.emulation.links.port_options import PortOptions
from netweft.emulation.native.dataplane import (
    Dataplane,
    DataplaneError,
    GeneratedPipeline,
    HostChannel,
    PortPcaps,
    WireTable,
)
from netweft.emulation.native.driver import ERR_ASSERT, ERR_EMPTY_GROUP
from netweft.emulation.v1model.context import LOG
from netweft.nic_offload.wire_model import seed64

IDLE_WAKEUP_S = 0.2
SWAP_WAIT_S = 30.0    # longest a SetForwardingPipelineConfig waits for the loop's swap
_PER_PORT = re.compile(r"_port\d+$")
_NOT_PACKETS = ("passes", "sleeps")   # the loop's own activity: they change while idle
RING_FRAMES = 1024
MAX_PASSES = 64       # the C loop's NW_DP_MAX_PASSES, the Python driver's max_passes


def native_switch(target: Any) -> Any:
    """The switch ``target`` runs if it is on the native back end, else None.

    ``target`` is a :class:`SoftSwitch` or a P4Runtime device holding one."""
    switch = target.switch if _is_device(target) else target
    return switch if getattr(switch, "backend", None) == "c" else None


def _is_device(target: Any) -> bool:
    return hasattr(target, "pipeline") and hasattr(target, "packet_out")


class NativeSwitchLoop:
    """One switch on the C loop: the pipeline, traffic manager, links, CPU port, pcaps."""

    def __init__(self, switch: Any, ports: Mapping[int, str], cpu_port: int | None = None,
                 pcap_dir: Path | None = None) -> None:
        native = switch.native
        self.switch = switch
        self.ports = dict(ports)
        self.cpu_port = cpu_port
        lib, ffi = native.library.lib, native.library.ffi
        self._lib, self._pointer = lib, native.pointer
        self.pipeline = GeneratedPipeline(ffi, lib, native.pointer)
        self.dataplane = Dataplane(self.pipeline, self.ports,
                                   priority_queues=switch.tm.priority_queues,
                                   rx_frames=RING_FRAMES, tx_frames=RING_FRAMES,
                                   tapped=True)   # `netweft up`'s captures see what it sends
        self.dataplane.set_guard(native.pointer,
                                 int(ffi.cast("uintptr_t", ffi.addressof(lib, "nw_pipeline_lock"))),
                                 int(ffi.cast("uintptr_t",
                                              ffi.addressof(lib, "nw_pipeline_unlock"))))
        self.wires = WireTable()
        self.dataplane.attach_wires(self.wires)
        self.host = HostChannel(cpu_port) if cpu_port is not None else None
        if self.host is not None:
            self.dataplane.attach_host(self.host)
        self.pcaps = PortPcaps(pcap_dir, self.ports) if pcap_dir else None
        if self.pcaps is not None:
            self.dataplane.attach_pcaps(self.pcaps)
        self._links: dict[tuple[int, int], Any] = {}
        self._groups: dict[int, list[tuple[int, int]]] = {}
        self._sessions: dict[int, Any] = {}
        self.flow_counts = {"digests": 0, "digests_discarded": 0, "log_msgs": 0}
        self._pass_limit_seen = 0
        self.sync()
        self._mirror_replication()

    # ------------------------------------------------------------------ configuration

    def locked(self) -> _PipelineLock:
        """The pipeline lock: the loop is between passes while it is held."""
        return _PipelineLock(self._lib, self._pointer)

    def sync(self) -> None:
        """Copy the switch's queue limits, port rates, links, groups and sessions into C."""
        with self.locked():
            self._sync_queues()
            self._sync_links()
            self._sync_replication()
        self.dataplane.wake()

    def _served(self) -> list[int]:
        served = sorted(self.ports)
        return served + ([self.cpu_port] if self.cpu_port is not None else [])

    def _sync_queues(self) -> None:
        tm, ctm = self.switch.tm, self.dataplane.tm
        for port in self._served():
            for priority in range(tm.priority_queues):
                cfg = tm.queue_config(port, priority)
                ctm.configure_queue(port, priority, depth_packets=cfg.depth_packets,
                                    depth_bytes=cfg.depth_bytes, rate_pps=cfg.rate_pps,
                                    rate_bps=cfg.rate_bps)
            link = tm.link(port)
            ctm.set_port_rate(port, None if link is None else link.config.rate_bps)

    def _sync_links(self) -> None:
        ingress = getattr(self.switch, "_ingress_links", {})
        for port in self._served():
            out = self.switch.tm.link(port)
            if out is not None and not out.config.has_wire_effects:
                out = None          # a rate alone is the traffic manager's transmitter
            self._set_link(port, WireTable.OUT, out)
            self._set_link(port, WireTable.IN, ingress.get(port))

    def _set_link(self, port: int, direction: int, link: Any) -> None:
        if self._links.get((port, direction)) is link:
            return              # the same direction keeps its random streams
        self._links[(port, direction)] = link
        if link is None:
            self.wires.set(port, direction, None, 0)
        else:
            self.wires.set(port, direction, link.config.wire(), seed64(link.seed))

    def _sync_replication(self) -> None:
        groups = {g: list(c) for g, c in self.switch.pre.groups.items()}
        for group in set(self._groups) - set(groups):
            self.dataplane.set_group(group, [])
        for group, copies in groups.items():
            if self._groups.get(group) != copies:
                self.dataplane.set_group(group, copies)
        self._groups = groups
        sessions = dict(self.switch.clone_sessions.sessions)
        for sid, session in sessions.items():
            if self._sessions.get(sid) != session:
                self.dataplane.set_clone_session(sid, session.port, session.mc_group,
                                                 session.truncate)
        self._sessions = sessions

    def _mirror_replication(self) -> None:
        """Groups and sessions written later (P4Runtime, the control channel) reach C at once."""
        pre, sessions = self.switch.pre, self.switch.clone_sessions
        set_group, set_session = pre.set_group, sessions.set

        def group_written(*args: Any, **kwargs: Any) -> None:
            set_group(*args, **kwargs)
            with self.locked():
                self._sync_replication()

        def session_written(*args: Any, **kwargs: Any) -> None:
            set_session(*args, **kwargs)
            with self.locked():
                self._sync_replication()

        pre.set_group = group_written
        sessions.set = session_written

    # ------------------------------------------------------------------ digests, log_msg

    def drain_flow(self, device: Any = None) -> list[tuple[int, Any]]:
        """Digests and log_msg messages the loop's passes left in the pipeline's rings.

        ``log_msg`` lines go to the v1model logger (as on the Python back end) and are
        counted; digests go to ``device`` (a P4Runtime device) as the Python path's do,
        else they are counted as discarded.  Returns the digests taken.
        """
        switch = self.switch
        self._warn_pass_limit()
        with self.locked():
            switch.driver.take_rings()
        logs, digests = switch.logs, switch.digests
        if logs:
            self.flow_counts["log_msgs"] += len(logs)
            logs.clear()
        taken = list(digests)
        if not taken:
            return taken
        self.flow_counts["digests"] += len(taken)
        if device is not None and hasattr(device, "collect_digests"):
            with device.lock:
                device.collect_digests()      # to the P4Runtime digest stream (clears the list)
        else:
            self.flow_counts["digests_discarded"] += len(taken)
        digests.clear()
        return taken

    def _warn_pass_limit(self) -> None:
        """One warning line for the packets the pass limit dropped since the last call
        (the Python path logs one per packet)."""
        dropped = self.dataplane.counters().get("drop_pass_limit", 0)
        if dropped > self._pass_limit_seen:
            LOG.warning("%d packet(s) exceeded %d pipeline passes; dropped",
                        dropped - self._pass_limit_seen, MAX_PASSES)
            self._pass_limit_seen = dropped

    # ------------------------------------------------------------------ running

    def start(self) -> None:
        self.dataplane.start()

    def stop(self) -> dict[str, int]:
        final = self.dataplane.stop()
        if self.pcaps is not None:
            self.pcaps.close()
        return final

    @property
    def running(self) -> bool:
        return self.dataplane.running

    def now_ns(self) -> int:
        """The loop's clock (ns since it was made)."""
        loop = self.dataplane._loop
        return int(self.dataplane._mod.lib.nw_dp_loop_now(loop)) if loop is not None else 0

    def stats(self) -> dict[str, int]:
        """The loop's counters under the Python switch process's names, and its own."""
        c = self.dataplane.counters()
        out: dict[str, int] = {f"dataplane_{k}": v for k, v in c.items()
                               if not _PER_PORT.search(k) and k not in _NOT_PACKETS}
        for number in sorted(self.ports):
            out[f"rx_port{number}"] = c.get(f"rx_port{number}", 0)
            out[f"tx_port{number}"] = c.get(f"tx_port{number}", 0)
            out[f"kernel_drops_port{number}"] = c.get(f"rx_kernel_drops_port{number}", 0)
        wire_in, wire_out = self.wires.stats(WireTable.IN), self.wires.stats(WireTable.OUT)
        lost = sum(s["lost"] + s["burst_lost"] for s in (wire_in, wire_out))
        # frames a port refused after egress (the Python path's failed send()s)
        refused = (c.get("drop_tx_ring_full", 0) + c.get("drop_tx_too_long", 0)
                   + c.get("drop_tx_runt", 0))
        no_port = c.get("drop_no_port", 0)
        out.update({
            "received": c.get("rx", 0), "sent": c.get("tx", 0) + refused + no_port,
            "tx_errors": refused, "dropped_no_such_port": no_port,
            "drop_program": c.get("drop_program", 0),
            "drop_parser_error": c.get("drop_malformed", 0),
            "drop_queue_full": c.get("drop_queue_full", 0),
            "drop_priority": c.get("drop_priority", 0),
            "drop_link_loss": lost, "drop_link_limit": wire_in["dropped_limit"],
            "link_corrupted": wire_in["corrupted"] + wire_out["corrupted"],
        })
        failed = self.pipeline.errors     # passes the generated code did not finish, by code
        out["assert_failed"] = failed[ERR_ASSERT]
        out["drop_empty_group"] = failed[ERR_EMPTY_GROUP]
        out["internal_error"] = sum(failed.values()) - failed[ERR_ASSERT] - failed[ERR_EMPTY_GROUP]
        out["dropped"] = (out["drop_program"] + out["drop_parser_error"] + out["drop_empty_group"]
                          + out["drop_queue_full"] + out["drop_priority"] + lost
                          + wire_in["dropped_limit"])
        if self.host is not None:
            out.update({f"cpu_{k}": v for k, v in self.host.stats().items()})
        out.update(self.flow_counts)
        return out


class _PipelineLock:
    """``with``: holds the generated pipeline's C mutex (``nw_pipeline_lock``)."""

    def __init__(self, lib: Any, pointer: Any) -> None:
        self._lib, self._pointer = lib, pointer

    def __enter__(self) -> None:
        self._lib.nw_pipeline_lock(self._pointer)

    def __exit__(self, *exc: object) -> None:
        self._lib.nw_pipeline_unlock(self._pointer)


def _then_sync(name: str) -> Callable[..., Any]:
    """A method calling the switch's ``name``, then copying its settings into the loop."""
    def call(self: NativeControlTarget, *args: Any, **kwargs: Any) -> Any:
        result = getattr(self._loop.switch, name)(*args, **kwargs)
        self._loop.sync()
        return result
    call.__name__ = name
    return call


class NativeControlTarget:
    """What the control channel runs its commands on for a switch on the C loop.

    Settings go to the switch (its own record of them), then to the loop; queue
    depths, time and counters come from the loop; everything else is the switch's.
    """

    def __init__(self, loop: NativeSwitchLoop, extra: Callable[[], dict[str, int]]) -> None:
        self._loop = loop
        self._extra = extra
        self.tm = _NativeDepths(loop)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loop.switch, name)

    set_queue_depth = _then_sync("set_queue_depth")
    set_queue_rate = _then_sync("set_queue_rate")
    set_queue_depth_bytes = _then_sync("set_queue_depth_bytes")
    set_queue_rate_bps = _then_sync("set_queue_rate_bps")
    configure_port = _then_sync("configure_port")
    set_link = _then_sync("set_link")

    @property
    def time_ns(self) -> int:
        return self._loop.now_ns()

    @property
    def stats(self) -> dict[str, int]:
        out = self._loop.stats()
        out.update(self._extra())
        return out


class _NativeDepths:
    """``queue_depth``/``queue_depths`` of the control channel, from the C traffic manager."""

    def __init__(self, loop: NativeSwitchLoop) -> None:
        self._loop = loop

    def depth(self, port: int, priority: int | None = None) -> int:
        with self._loop.locked():
            return self._loop.dataplane.tm.depth(port, priority)

    def depths(self) -> dict[int, list[int]]:
        tm, n = self._loop.dataplane.tm, self._loop.switch.tm.priority_queues
        with self._loop.locked():
            return {port: [tm.depth(port), *(tm.depth(port, p) for p in range(n))]
                    for port in self._loop._served()}


def serve_native(target: Any, ports: dict[int, str], running: Callable[[], bool],
                 deadline: float | None, stats_out: Path | None = None,
                 pcap_dir: Path | None = None, control: Path | None = None,
                 port_options: dict[int, PortOptions] | None = None,
                 on_ready: Callable[[Any], None] | None = None) -> str:
    """Serve ``ports`` with the C loop until ``running()`` is false or ``deadline``.

    ``target``: a native :class:`SoftSwitch`, or a P4Runtime device holding one.
    Returns ``"stopped"``, or ``"changed"`` when a device's pipeline was replaced by
    one on the Python back end (the caller goes on with the Python loop).  A start
    that fails (a missing port) raises :class:`OSError` with nothing left open.
    """
    device = target if _is_device(target) else None
    switch = native_switch(target)
    loop = _start(switch, ports, device, pcap_dir)
    server = None
    sel = selectors.DefaultSelector()
    stats_final: dict[str, int] = {}
    # A SetForwardingPipelineConfig returns only once the loop runs the new pipeline
    # (the loop looks every IDLE_WAKEUP_S): a controller that writes entries and sends
    # packets right after it must not meet the old one.
    swapped = threading.Event()
    swapped.set()

    def pipeline_changed() -> None:
        if device.switch is not loop.switch:
            swapped.clear()
            if device.switch is not loop.switch:
                swapped.wait(SWAP_WAIT_S)

    if device is not None:
        device.pipeline_changed = pipeline_changed
        started = getattr(device, "native_loop_started", None)
        if started is not None:        # the Python loop handed over: its RPC may go on
            device.native_loop_started = None
            started()
    try:
        options = port_options if port_options is not None else {}
        control_target = NativeControlTarget(loop, lambda: dict(getattr(device, "stats", {})))
        if loop.host is not None:
            sel.register(loop.host.fd, selectors.EVENT_READ, "cpu")
        if control is not None:
            from netweft.emulation.process.control import ControlServer, execute

            server = ControlServer(control)
            sel.register(server.listener, selectors.EVENT_READ, "control")

            def run_command(line: str) -> str:
                if device is None:
                    return execute(control_target, line, options)
                with device.lock:
                    return execute(control_target, line, options)

        if on_ready is not None:
            on_ready(None)
        print("ready", flush=True)
        outcome = "stopped"
        while running() and (deadline is None or time.monotonic() < deadline):
            if not loop.running:
                raise DataplaneError("the native loop ended on its own")
            for key, _ in sel.select(timeout=IDLE_WAKEUP_S):
                if key.data == "cpu":
                    _punt(loop, device)
                elif key.data == "control":
                    conn = server.accept()
                    if conn is not None:
                        sel.register(conn, selectors.EVENT_READ, "client")
                elif not server.handle(key.fileobj, run_command):
                    sel.unregister(key.fileobj)
            loop.drain_flow(device)
            if device is not None and device.switch is not loop.switch:
                replacement = native_switch(device)
                stats_final = _stop(loop, device)
                sel.close()
                sel = selectors.DefaultSelector()
                if replacement is None:
                    print("netweft switch: the new pipeline runs on the Python back end: "
                          "packets move in Python from now on", file=sys.stderr, flush=True)
                    outcome = "changed"
                    break
                loop = _start(replacement, ports, device, pcap_dir)
                control_target._loop = loop
                control_target.tm = _NativeDepths(loop)
                if loop.host is not None:
                    sel.register(loop.host.fd, selectors.EVENT_READ, "cpu")
                if server is not None:
                    sel.register(server.listener, selectors.EVENT_READ, "control")
            if device is None or device.switch is loop.switch:
                swapped.set()      # no change pending (or the swap is done)
        return outcome
    finally:
        if device is not None:
            device.pipeline_changed = None
        swapped.set()
        sel.close()
        try:
            if loop.dataplane._loop is not None:
                stats_final = _stop(loop, device)
        finally:
            if server is not None:
                server.close()
        if stats_out:
            counters = dict(stats_final)
            counters.update(getattr(device, "stats", {}) or {})
            stats_out.write_text(json.dumps(counters, indent=2, sort_keys=True))


def _start(switch: Any, ports: dict[int, str], device: Any,
           pcap_dir: Path | None) -> NativeSwitchLoop:
    cpu_port = getattr(device, "cpu_port", None)
    loop = NativeSwitchLoop(switch, ports, cpu_port, pcap_dir)
    try:
        loop.start()
    except DataplaneError as err:
        if loop.pcaps is not None:       # nothing was captured: leave no files behind
            loop.pcaps.close()
            for ifname in ports.values():
                for direction in ("in", "out"):
                    (pcap_dir / f"{ifname}_{direction}.pcap").unlink(missing_ok=True)
        raise OSError(str(err)) from None
    if device is not None and loop.host is not None:
        device.inject = loop.host.inject
    return loop


def _stop(loop: NativeSwitchLoop, device: Any) -> dict[str, int]:
    if device is not None:
        device.inject = None
    stats = loop.stats()
    loop.stop()
    loop.drain_flow(device)
    stats.update(loop.stats())
    return stats


def _punt(loop: NativeSwitchLoop, device: Any) -> None:
    """PacketIn: frames the pipeline sent to the CPU port, to the controller."""
    host = loop.host
    while (frame := host.take()) is not None:   # all of them: the wake-up was consumed
        if device is not None:
            device.packet_in_frame(frame)
