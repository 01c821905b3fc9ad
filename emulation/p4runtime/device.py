"""The device a P4Runtime server controls: the pipeline, its entities and packet I/O.

:class:`Device` is sans-IO toward the network: the switch process hands it
frames (:meth:`Device.process`) and sends what it returns; frames for the CPU
port, digests and idle-timeout notifications go to the ``packet_in``,
``digest`` and ``idle_timeout`` callbacks (the server's stream channel).  Every switch access holds :attr:`Device.lock`, so
gRPC threads and the packet loop never meet inside the switch.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import grpc
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime.action_profiles import ActionProfiles
from netweft.emulation.p4runtime.digests import Digests
from netweft.emulation.p4runtime.errors import (
    P4RuntimeError,
    failed_precondition,
    invalid,
    unimplemented,
)
from netweft.emulation.p4runtime.idle_timeouts import DEFAULT_SWEEP_S, IdleTimeouts
from netweft.emulation.p4runtime.indexed_externs import IndexedExterns
from netweft.emulation.p4runtime.packet_io import PacketIO
from netweft.emulation.p4runtime.pipeline import Pipeline
from netweft.emulation.p4runtime.replication import Replication
from netweft.emulation.p4runtime.tables import TableEntries
from netweft.emulation.p4runtime.value_sets import ValueSets
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.program import Program

LOG = logging.getLogger("netweft.p4runtime")
SetAction = p4runtime_pb2.SetForwardingPipelineConfigRequest.Action
ProgramLoader = Callable[[bytes], Program]


@dataclass
class _Entities:
    """The entity translators of one pipeline."""

    profiles: ActionProfiles
    tables: TableEntries
    replication: Replication
    externs: IndexedExterns
    value_sets: ValueSets
    digests: Digests
    packet_io: PacketIO
    idle_timeouts: IdleTimeouts

    def start(self) -> _Entities:
        """Start the idle-timeout sweep (the pipeline is committed)."""
        self.idle_timeouts.start()
        return self

    def close(self) -> None:
        """Stop the timers of a pipeline being replaced."""
        self.digests.close()
        self.idle_timeouts.close()


class Device:
    """One P4Runtime device: a SoftSwitch behind a lock, with P4Runtime state."""

    def __init__(self, load_program: ProgramLoader, device_id: int = 1,
                 cpu_port: int | None = None,
                 switch_factory: Callable[[Program], SoftSwitch] = SoftSwitch,
                 idle_sweep_s: float = DEFAULT_SWEEP_S) -> None:
        """``idle_sweep_s``: how often idle timeouts are checked (0: never by a thread;
        the caller sweeps, see :class:`.idle_timeouts.IdleTimeouts`)."""
        self.device_id = device_id
        self.idle_sweep_s = idle_sweep_s
        self.cpu_port = cpu_port
        self.lock = threading.RLock()
        self._load_program = load_program
        self._switch_factory = switch_factory
        self.pipeline: Pipeline | None = None
        self._entities: _Entities | None = None
        self._saved: tuple[p4info_pb2.P4Info, bytes, int | None] | None = None
        self.packet_in: Callable[[p4runtime_pb2.PacketIn], None] = lambda _msg: None
        self.digest: Callable[[p4runtime_pb2.DigestList], None] = lambda _msg: None
        self.idle_timeout: Callable[[p4runtime_pb2.IdleTimeoutNotification], None] = \
            lambda _msg: None
        self.transmit: Callable[[int, bytes], None] = lambda _port, _frame: None
        # set by a switch process whose packets a C loop moves: PacketOut frames are
        # queued into that loop (received on the CPU port) instead of run here
        self.inject: Callable[[bytes], bool] | None = None
        # set by such a switch process: called (outside the lock) once a new pipeline
        # is committed, returning when the loop runs it
        self.pipeline_changed: Callable[[], None] | None = None
        self.stats = {"packet_in": 0, "packet_in_errors": 0, "packet_out": 0}
        self._loop_offset: int | None = None   # monotonic_ns() - the switch loop's clock

    # ---------------------------------------------------------------- pipeline

    @property
    def switch(self) -> SoftSwitch | None:
        """The running switch (None before a pipeline is committed)."""
        return self.pipeline.switch if self.pipeline else None

    def install(self, p4info: p4info_pb2.P4Info, device_config: bytes,
                cookie: int | None = None, switch: SoftSwitch | None = None) -> None:
        """Build and commit a pipeline (``switch`` given: use it instead of building one)."""
        pipeline = self._verify(p4info, device_config, cookie, switch)
        with self.lock:
            if self._entities is not None:
                self._entities.close()
            self.pipeline = pipeline
            self._entities = self._build_entities(pipeline).start()

    def _verify(self, p4info: p4info_pb2.P4Info, device_config: bytes,
                cookie: int | None, switch: SoftSwitch | None = None) -> Pipeline:
        if switch is None:
            try:
                program = self._load_program(device_config)
                switch = self._switch_factory(program)
            except P4Error as err:
                raise invalid(f"device config: {err}") from None
            except (ValueError, KeyError) as err:
                raise invalid(f"device config: {err}") from None
        return Pipeline(p4info, switch, device_config, cookie)

    def _build_entities(self, pipeline: Pipeline) -> _Entities:
        profiles = ActionProfiles(pipeline)
        tables = TableEntries(pipeline, profiles)
        return _Entities(profiles, tables, Replication(pipeline),
                         IndexedExterns(pipeline), ValueSets(pipeline),
                         Digests(pipeline, lambda msg: self.digest(msg), self.lock),
                         PacketIO(pipeline.index),
                         IdleTimeouts(tables, lambda msg: self.idle_timeout(msg), self.lock,
                                      self.idle_sweep_s))

    def set_pipeline(self, action: int, config: p4runtime_pb2.ForwardingPipelineConfig) -> None:
        """SetForwardingPipelineConfig's actions on this device."""
        cookie = config.cookie.cookie if config.HasField("cookie") else None
        if action == SetAction.VERIFY:
            self._verify(config.p4info, config.p4_device_config, cookie)
        elif action == SetAction.VERIFY_AND_SAVE:
            self._verify(config.p4info, config.p4_device_config, cookie)
            self._saved = (config.p4info, config.p4_device_config, cookie)
        elif action == SetAction.VERIFY_AND_COMMIT:
            self.install(config.p4info, config.p4_device_config, cookie)
        elif action == SetAction.COMMIT:
            if self._saved is None:
                if self.pipeline is None:
                    raise failed_precondition("COMMIT: no config was saved (VERIFY_AND_SAVE)")
                return
            saved, self._saved = self._saved, None
            self.install(*saved)
        elif action == SetAction.RECONCILE_AND_COMMIT:
            self._reconcile(config, cookie)
        else:
            raise invalid(f"SetForwardingPipelineConfig: unknown action {action}")
        if action in (SetAction.VERIFY_AND_COMMIT, SetAction.COMMIT,
                      SetAction.RECONCILE_AND_COMMIT) and self.pipeline_changed is not None:
            self.pipeline_changed()

    def _reconcile(self, config: p4runtime_pb2.ForwardingPipelineConfig,
                   cookie: int | None) -> None:
        """Commit a new pipeline and replay the old forwarding state that still fits it."""
        old = self.read_all() if self.pipeline is not None else []
        pipeline = self._verify(config.p4info, config.p4_device_config, cookie)
        entities = self._build_entities(pipeline)
        order = ("action_profile_member", "action_profile_group",
                 "packet_replication_engine_entry", "table_entry", "counter_entry",
                 "direct_counter_entry", "meter_entry", "direct_meter_entry",
                 "register_entry", "value_set_entry", "digest_entry")
        for kind in order:
            for entity in old:
                if entity.WhichOneof("entity") != kind:
                    continue
                if kind == "table_entry" and entity.table_entry.is_const:
                    continue
                update_kind = (p4runtime_pb2.Update.MODIFY
                               if kind in _MODIFY_ONLY or (kind == "table_entry" and
                                                           entity.table_entry.is_default_action)
                               else p4runtime_pb2.Update.INSERT)
                try:
                    _write_one(entities, update_kind, entity)
                except P4RuntimeError as err:
                    raise failed_precondition(f"RECONCILE_AND_COMMIT: the new pipeline cannot "
                                              f"keep the forwarding state: {err}") from None
        with self.lock:
            if self._entities is not None:
                self._entities.close()
            self.pipeline, self._entities = pipeline, entities.start()

    def get_config(self) -> p4runtime_pb2.ForwardingPipelineConfig:
        """The committed P4Info, device config and cookie."""
        out = p4runtime_pb2.ForwardingPipelineConfig()
        if self.pipeline is not None:
            out.p4info.CopyFrom(self.pipeline.p4info)
            out.p4_device_config = self.pipeline.device_config
            if self.pipeline.cookie is not None:
                out.cookie.cookie = self.pipeline.cookie
        return out

    def _ready(self) -> _Entities:
        if self._entities is None:
            raise failed_precondition("no forwarding pipeline is set: "
                                      "SetForwardingPipelineConfig first")
        return self._entities

    # ---------------------------------------------------------------- write and read

    def write(self, updates: list[p4runtime_pb2.Update]) -> list[P4RuntimeError | None]:
        """Apply updates in order (CONTINUE_ON_ERROR); one result per update."""
        results: list[P4RuntimeError | None] = []
        with self.lock:
            entities = self._ready()
            for update in updates:
                try:
                    if update.type not in (p4runtime_pb2.Update.INSERT,
                                           p4runtime_pb2.Update.MODIFY,
                                           p4runtime_pb2.Update.DELETE):
                        raise invalid("update type must be INSERT, MODIFY or DELETE")
                    _write_one(entities, update.type, update.entity)
                    results.append(None)
                except P4RuntimeError as err:
                    results.append(err)
                except Exception as exc:  # noqa: BLE001 - one update must not fail the batch
                    LOG.exception("P4Runtime update failed inside netweft")
                    results.append(P4RuntimeError(
                        grpc.StatusCode.INTERNAL,
                        f"netweft failed on this update ({type(exc).__name__}; logged by the "
                        "switch): please report it"))
        return results

    def read(self, entities: list[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
        """Every entity matching the read filters, in request order."""
        out: list[p4runtime_pb2.Entity] = []
        with self.lock:
            state = self._ready()
            for entity in entities:
                out.extend(_read_one(state, entity))
        return out

    def read_wire(self, entities: list[p4runtime_pb2.Entity]) -> list[bytes]:
        """:meth:`read` with each result serialized (counters, meters and registers are
        encoded without building messages: see :mod:`.entity_wire`)."""
        out: list[bytes] = []
        with self.lock:
            state = self._ready()
            for entity in entities:
                out.extend(_read_one_wire(state, entity))
        return out

    def read_all(self) -> list[p4runtime_pb2.Entity]:
        """The whole forwarding state (wildcard reads of every entity kind)."""
        wildcard = []
        for kind in _READ_ALL:
            entity = p4runtime_pb2.Entity()
            getattr(entity, kind).SetInParent()
            wildcard.append(entity)
        default = p4runtime_pb2.Entity()
        default.table_entry.is_default_action = True
        return self.read(wildcard + [default])

    # ---------------------------------------------------------------- data plane

    def process(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        """Run one frame through the switch; CPU-port frames go to ``packet_in``."""
        with self.lock:
            if self.pipeline is None:
                return []
            outputs = self.pipeline.switch.process(port, frame)
            return self._deliver(outputs)

    # The switch process's timed loop (traffic manager, links) drives these three.

    def receive(self, port: int, frame: bytes, now: int) -> list[tuple[int, bytes]]:
        """A frame arrives at ``now`` (ns, the loop's clock); see ``SoftSwitch.receive``."""
        with self.lock:
            self._loop_offset = time.monotonic_ns() - now
            if self.pipeline is None:
                return []
            return self._deliver(self.pipeline.switch.receive(port, frame, now))

    def advance(self, now: int) -> list[tuple[int, bytes]]:
        """Frames due by ``now``; see ``SoftSwitch.advance``."""
        with self.lock:
            self._loop_offset = time.monotonic_ns() - now
            if self.pipeline is None:
                return []
            return self._deliver(self.pipeline.switch.advance(now))

    def next_deadline(self) -> int | None:
        """When :meth:`advance` next has work (ns), or None."""
        with self.lock:
            if self.pipeline is None:
                return None
            return self.pipeline.switch.next_deadline()

    @property
    def logs(self) -> list[str]:
        """The switch's ``log_msg`` texts (the loop drains them)."""
        return self.pipeline.switch.logs if self.pipeline else []

    @property
    def trace(self) -> object:
        """The switch's packet trace, if any."""
        return getattr(self.switch, "trace", None)

    def collect_digests(self) -> None:
        """Hand the switch's pending digests to the P4Runtime digest stream (clears them);
        the native loop calls it (under :attr:`lock`) once it has drained its rings."""
        entities = self._entities
        assert entities is not None and self.pipeline is not None
        switch = self.pipeline.switch
        if switch.digests:
            raw = list(switch.digests)
            switch.digests.clear()
            entities.digests.collect(raw)

    def _deliver(self, outputs: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
        self.collect_digests()
        entities = self._entities
        assert entities is not None
        if self.cpu_port is None:
            return outputs
        forward = []
        for out_port, data in outputs:
            if out_port != self.cpu_port:
                forward.append((out_port, data))
                continue
            try:
                msg = entities.packet_io.packet_in(data)
            except P4RuntimeError:
                self.stats["packet_in_errors"] += 1
                continue
            self.stats["packet_in"] += 1
            self.packet_in(msg)
        return forward

    def packet_out(self, msg: p4runtime_pb2.PacketOut) -> list[tuple[int, bytes]]:
        """Inject a PacketOut on the CPU port; returns the frames to send (also transmitted)."""
        with self.lock:
            entities = self._ready()
            if self.cpu_port is None:
                raise failed_precondition("packet out: the switch has no CPU port "
                                          "(start it with --cpu-port)")
            frame = entities.packet_io.frame(msg)
            self.stats["packet_out"] += 1
            if self.inject is not None:
                if not self.inject(frame):
                    self.stats["packet_out_dropped"] = self.stats.get("packet_out_dropped",
                                                                      0) + 1
                return []
            switch = self.pipeline.switch
            if self._loop_offset is None:
                outputs = self._deliver(switch.process(self.cpu_port, frame))
            else:   # a timed loop runs the switch: enter through its queues and links
                now = time.monotonic_ns() - self._loop_offset
                outputs = self._deliver(switch.receive(self.cpu_port, frame, now))
        for port, data in outputs:
            self.transmit(port, data)
        return outputs

    def packet_in_frame(self, frame: bytes) -> None:
        """A frame the switch sent to the CPU port (from a C loop): PacketIn to the controller."""
        with self.lock:
            if self._entities is None or self.cpu_port is None:
                return
            self._deliver([(self.cpu_port, frame)])

    def digest_ack(self, msg: p4runtime_pb2.DigestListAck) -> None:
        """The controller acknowledged a DigestList."""
        with self.lock:
            if self._entities is not None:
                self._entities.digests.ack(msg)


_MODIFY_ONLY = {"counter_entry", "direct_counter_entry", "meter_entry", "direct_meter_entry",
                "register_entry", "value_set_entry"}
_READ_ALL = ("table_entry", "action_profile_member", "action_profile_group",
             "packet_replication_engine_entry", "counter_entry", "direct_counter_entry",
             "meter_entry", "direct_meter_entry", "register_entry", "value_set_entry",
             "digest_entry")


def _write_one(e: _Entities, kind: int, entity: p4runtime_pb2.Entity) -> None:
    which = entity.WhichOneof("entity")
    if which == "table_entry":
        e.tables.write(kind, entity.table_entry)
    elif which == "action_profile_member":
        e.profiles.write_member(kind, entity.action_profile_member)
    elif which == "action_profile_group":
        e.profiles.write_group(kind, entity.action_profile_group)
    elif which == "packet_replication_engine_entry":
        e.replication.write(kind, entity.packet_replication_engine_entry)
    elif which == "counter_entry":
        e.externs.write_counter(kind, entity.counter_entry)
    elif which == "direct_counter_entry":
        e.tables.write_direct_counter(kind, entity.direct_counter_entry)
    elif which == "meter_entry":
        e.externs.write_meter(kind, entity.meter_entry)
    elif which == "direct_meter_entry":
        e.tables.write_direct_meter(kind, entity.direct_meter_entry)
    elif which == "register_entry":
        e.externs.write_register(kind, entity.register_entry)
    elif which == "value_set_entry":
        e.value_sets.write(kind, entity.value_set_entry)
    elif which == "digest_entry":
        e.digests.write(kind, entity.digest_entry)
    elif which == "extern_entry":
        raise unimplemented("extern entries: the v1model target has no P4Runtime externs")
    else:
        raise invalid("the update has no entity")


def _read_one_wire(e: _Entities, entity: p4runtime_pb2.Entity) -> Iterator[bytes]:
    which = entity.WhichOneof("entity")
    if which == "counter_entry":
        return e.externs.read_counters_wire(entity.counter_entry)
    if which == "meter_entry":
        return e.externs.read_meters_wire(entity.meter_entry)
    if which == "register_entry":
        return e.externs.read_registers_wire(entity.register_entry)
    return (found.SerializeToString() for found in _read_one(e, entity))


def _read_one(e: _Entities, entity: p4runtime_pb2.Entity) -> Iterator[p4runtime_pb2.Entity]:
    which = entity.WhichOneof("entity")
    if which == "table_entry":
        return e.tables.read(entity.table_entry)
    if which == "action_profile_member":
        return e.profiles.read_members(entity.action_profile_member)
    if which == "action_profile_group":
        return e.profiles.read_groups(entity.action_profile_group)
    if which == "packet_replication_engine_entry":
        return e.replication.read(entity.packet_replication_engine_entry)
    if which == "counter_entry":
        return e.externs.read_counters(entity.counter_entry)
    if which == "direct_counter_entry":
        return e.tables.read_direct("counter", entity.direct_counter_entry)
    if which == "meter_entry":
        return e.externs.read_meters(entity.meter_entry)
    if which == "direct_meter_entry":
        return e.tables.read_direct("meter", entity.direct_meter_entry)
    if which == "register_entry":
        return e.externs.read_registers(entity.register_entry)
    if which == "value_set_entry":
        return e.value_sets.read(entity.value_set_entry)
    if which == "digest_entry":
        return e.digests.read(entity.digest_entry)
    if which == "extern_entry":
        raise unimplemented("extern entries: the v1model target has no P4Runtime externs")
    raise invalid("the read request has an empty entity")
