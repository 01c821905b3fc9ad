"""Configure in-network aggregation jobs on a switch over P4Runtime.

A job (docs/aggregation.md) is one ``agg_jobs`` entry (service address, job id →
slot range, worker count, multicast group), one multicast group with a
replica per worker (its port, rid = worker id) and one ``agg_workers`` entry
per worker (job id, worker id → MAC, IPv4 address, UDP port of its results).
The controller speaks plain P4Runtime (table entries, the packet replication
engine, register and counter entries) through
:class:`~netweft.testbed.control.p4runtime_session.SwitchSession`, so the same
calls configure netweft's switch processes (``unix:PATH``), ``netweft-switch``
and BMv2's ``simple_switch_grpc`` (``HOST:PORT``) running ``aggregation.p4``
or any program that applies its controls::

    job = AggregationJob(job_id=1, service_address="10.0.0.254", base=0, size=64,
                         workers=[JobWorker(0, port=1, mac="02:00:00:00:00:01",
                                            address="10.0.1.1", udp_port=40000), ...])
    with AggregationController.connect("s1", "unix:/run/netweft/s1.grpc") as ctl:
        ctl.add_job(job)
        ctl.events()        # {"contribution": 0, "result": 0, ...}

Tables and registers are found by their last name (``agg_jobs``, ``bitmap``
...), so the controls may sit under any instance path.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from p4.v1 import p4runtime_pb2

from netweft.testbed.control.entity_encoder import EncodeError, EntityEncoder
from netweft.testbed.control.entries import MulticastWrite, RegisterWrite, TableWrite, Write
from netweft.testbed.control.p4runtime_session import SessionError, SwitchSession
from netweft.transport.aggregation_layer import AGG_MAX_WORKERS

Update = p4runtime_pb2.Update

MAX_WORKERS = AGG_MAX_WORKERS  # one bit per worker in a slot's bitmap
# Multicast groups from here up are the aggregation's; job j uses FIRST_GROUP + j unless told.
FIRST_GROUP = 0x8000
# Index names of the events counter (AGG_EV_* in p4/include/aggregation.p4).
EVENTS = ("contribution", "result", "resent", "duplicate", "malformed", "bad_slot",
          "bad_worker", "stale")
# Registers whose cells must start from zero for a new job (lanes and exponent need not:
# the first contribution replaces them).
CLEARED_REGISTERS = ("bitmap", "count", "block")
BATCH = 256


class AggregationConfigError(ValueError):
    """A job the switch cannot take, or a switch that refused it; the message says why."""


@dataclass(frozen=True)
class JobWorker:
    """A worker of a job as the switch sees it: where its results go.

    ``mac`` is the destination MAC of its result copies (the worker's own MAC on a
    single switch, the next hop's when the worker is further away); ``port`` the
    switch port towards it; ``udp_port`` the port its socket is bound to."""

    worker_id: int
    port: int
    mac: str
    address: str
    udp_port: int


@dataclass(frozen=True)
class AggregationJob:
    """A job: its id, service address, slot range ``base .. base+size-1`` and workers
    (ids 0..n-1). ``multicast_group`` defaults to ``FIRST_GROUP + job_id``."""

    job_id: int
    service_address: str
    base: int
    size: int
    workers: Sequence[JobWorker]
    multicast_group: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "workers", tuple(self.workers))
        self.validate()

    @property
    def group(self) -> int:
        """The multicast group the job's results go to."""
        if self.multicast_group is None:
            return FIRST_GROUP + self.job_id
        return self.multicast_group

    def validate(self, slots: int | None = None) -> None:
        """Raise :class:`AggregationConfigError` for a job no switch (or, with ``slots``,
        no switch with that many slots per pool) can take."""
        where = f"job {self.job_id}"
        if not 0 <= self.job_id <= 0xFFFF:
            raise AggregationConfigError(f"{where}: job id outside 0..65535")
        try:
            ipaddress.IPv4Address(self.service_address)
        except ValueError:
            raise AggregationConfigError(f"{where}: service address {self.service_address!r} "
                                         "is not an IPv4 address") from None
        n = len(self.workers)
        if not 1 <= n <= MAX_WORKERS:
            raise AggregationConfigError(f"{where}: {n} workers; a job has 1..{MAX_WORKERS} "
                                         "(one bit each in a slot's bitmap)")
        ids = sorted(w.worker_id for w in self.workers)
        if ids != list(range(n)):
            raise AggregationConfigError(f"{where}: worker ids must be 0..{n - 1}, each once; "
                                         f"got {ids}")
        for w in self.workers:
            try:
                ipaddress.IPv4Address(w.address)
            except ValueError:
                raise AggregationConfigError(f"{where}: worker {w.worker_id}: address "
                                             f"{w.address!r} is not IPv4") from None
            if not 0 < w.udp_port <= 0xFFFF:
                raise AggregationConfigError(f"{where}: worker {w.worker_id}: UDP port "
                                             f"{w.udp_port} outside 1..65535")
        if self.base < 0 or self.size < 1:
            raise AggregationConfigError(f"{where}: slot range base {self.base}, size "
                                         f"{self.size}: base must be >= 0 and size >= 1")
        if slots is not None and self.base + self.size > slots:
            raise AggregationConfigError(f"{where}: slots {self.base}..{self.base + self.size - 1}"
                                         f" do not fit the switch's pool of {slots} slots")
        if not 1 <= self.group <= 0xFFFF:
            raise AggregationConfigError(f"{where}: multicast group {self.group} outside "
                                         "1..65535")

    def writes(self) -> list[Write]:
        """The job's table entries and multicast group, the agg_jobs entry last (the job
        goes live once everything it needs is in place)."""
        out: list[Write] = [MulticastWrite(self.group, tuple(
            (w.port, w.worker_id) for w in sorted(self.workers, key=lambda w: w.worker_id)))]
        for w in self.workers:
            out.append(TableWrite("agg_workers", (("agg.job_id", self.job_id),
                                                  ("egress_rid", w.worker_id)),
                                  "to_worker", (("mac", w.mac), ("addr", w.address),
                                                ("udp_port", w.udp_port))))
        out.append(TableWrite("agg_jobs", (("dstAddr", self.service_address),
                                           ("job_id", self.job_id)),
                              "set_job", (("base", self.base), ("size", self.size),
                                          ("workers", len(self.workers)),
                                          ("mcast_grp", self.group))))
        return out

    def clearing_writes(self, slots: int) -> list[Write]:
        """Zero the bitmap, count and block cells of the job's range in both pools."""
        cells = [pool * slots + self.base + s for pool in (0, 1) for s in range(self.size)]
        return [RegisterWrite(reg, cell, 0) for reg in CLEARED_REGISTERS for cell in cells]


@dataclass(frozen=True)
class InstalledJob:
    """A job as the switch holds it (read back from ``agg_jobs``)."""

    job_id: int
    service_address: str
    base: int
    size: int
    workers: int
    multicast_group: int


class AggregationController:
    """Adds, lists and removes aggregation jobs on one switch; reads its event counters."""

    def __init__(self, session: SwitchSession) -> None:
        self.session = session
        self.encoder = EntityEncoder(session.p4info())
        if not self.encoder.has_table("agg_jobs") or not self.encoder.has_table("agg_workers"):
            raise AggregationConfigError(
                f"{session.name}: its program has no agg_jobs/agg_workers tables; run "
                "aggregation.p4 (or a program that applies p4/include/aggregation.p4)")
        bitmap = self.encoder.registers[self._name(self.encoder.registers, "bitmap")]
        self.slots = bitmap.size // 2

    @classmethod
    def connect(cls, name: str, address: str, *, device_id: int = 0, election_id: int = 1,
                role: str = "", timeout: float = 10.0) -> AggregationController:
        """A controller with its own session (closed by :meth:`close` or ``with``)."""
        session = SwitchSession(name, address, device_id, election_id, role, timeout)
        try:
            return cls(session)
        except BaseException:
            session.close()
            raise

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> AggregationController:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ names
    def _name(self, objects: dict, last: str) -> str:
        found = [n for n in objects if n.rsplit(".", 1)[-1] == last]
        if len(found) != 1:
            raise AggregationConfigError(f"{self.session.name}: expected one object named "
                                         f"{last}, found {found or 'none'}")
        return found[0]

    def _entity(self, write: Write) -> p4runtime_pb2.Entity:
        if isinstance(write, RegisterWrite):
            write = RegisterWrite(self._name(self.encoder.registers, write.register),
                                  write.index, write.value)
        try:
            return self.encoder.entity(write)
        except EncodeError as err:
            raise AggregationConfigError(f"{self.session.name}: {err}") from None

    def _send(self, updates: list[tuple[Update, str]]) -> None:
        """Write ``updates``; raise naming the first refused one (after the whole list:
        a switch applies the updates of a batch independently)."""
        refused = self._write(updates)
        if refused:
            index, code, message = refused[0]
            raise AggregationConfigError(
                f"{self.session.name} refused {len(refused)} update(s); first: "
                f"{updates[index][1] if index >= 0 else 'write'}: {code}: {message}")

    def _write(self, updates: list[tuple[Update, str]]) -> list[tuple[int, str, str]]:
        """(index, code, message) of each refused update; index -1: the whole batch."""
        refused = []
        for start in range(0, len(updates), BATCH):
            batch = updates[start:start + BATCH]
            for error in self.session.write([u for u, _ in batch]):
                index = start + error.index if error.index >= 0 else -1
                refused.append((index, error.code, error.message))
        return refused

    def _updates(self, kind: int, writes: Iterable[Write]) -> list[tuple[Update, str]]:
        out = []
        for write in writes:
            update = Update(type=kind)
            update.entity.CopyFrom(self._entity(write))
            out.append((update, write.describe()))
        return out

    # ------------------------------------------------------------------ jobs
    def jobs(self) -> list[InstalledJob]:
        """The jobs the switch aggregates, by job id."""
        table = self.encoder.table("agg_jobs")
        fields = {mf.id: mf.name for mf in table.match_fields}
        action = self.encoder.actions[self._name(self.encoder.actions, "set_job")]
        params = {p.id: p.name for p in action.params}
        read = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(
            table_id=table.preamble.id))
        out = []
        for entity in self.session.read(read):
            entry = entity.table_entry
            key = {fields[m.field_id].rsplit(".", 1)[-1]: int.from_bytes(m.exact.value, "big")
                   for m in entry.match}
            args = {params[p.param_id]: int.from_bytes(p.value, "big")
                    for p in entry.action.action.params}
            out.append(InstalledJob(key["job_id"], str(ipaddress.IPv4Address(key["dstAddr"])),
                                    args["base"], args["size"], args["workers"],
                                    args["mcast_grp"]))
        return sorted(out, key=lambda j: (j.job_id, j.service_address))

    def add_job(self, job: AggregationJob) -> None:
        """Install ``job``: checks it against the switch's pool and the jobs it holds,
        clears the range's slot state, then writes the group and entries."""
        job.validate(self.slots)
        for other in self.jobs():
            if (other.job_id, other.service_address) == (job.job_id, job.service_address):
                raise AggregationConfigError(
                    f"{self.session.name}: job {job.job_id} at {job.service_address} exists; "
                    "remove it first")
            if other.base < job.base + job.size and job.base < other.base + other.size:
                raise AggregationConfigError(
                    f"{self.session.name}: job {job.job_id}'s slots {job.base}.."
                    f"{job.base + job.size - 1} overlap job {other.job_id}'s "
                    f"{other.base}..{other.base + other.size - 1}")
            if other.multicast_group == job.group:
                raise AggregationConfigError(
                    f"{self.session.name}: job {other.job_id} already uses multicast group "
                    f"{job.group}; give job {job.job_id} another")
        writes = job.writes()
        inserts = self._updates(Update.INSERT, writes)
        self._send(self._updates(Update.MODIFY, job.clearing_writes(self.slots)))
        refused = self._write(inserts)
        if refused:
            # take back the updates that went in, so that a refused job leaves nothing
            failed = {index for index, _, _ in refused}
            if -1 not in failed:
                self._write(self._updates(Update.DELETE, [
                    w for i, w in reversed(list(enumerate(writes))) if i not in failed]))
            index, code, message = refused[0]
            raise AggregationConfigError(
                f"{self.session.name} refused job {job.job_id}: "
                f"{inserts[index][1] if index >= 0 else 'write'}: {code}: {message}")

    def remove_job(self, job: AggregationJob) -> None:
        """Remove ``job``'s entries and group (the agg_jobs entry first, so that no
        contribution is summed while the rest goes)."""
        self._send(self._updates(Update.DELETE, reversed(job.writes())))

    def remove(self, job_id: int, service_address: str) -> InstalledJob:
        """Remove the job the switch holds for (``job_id``, ``service_address``), as read
        back from the switch: its agg_jobs entry, its agg_workers entries and its group."""
        installed = [j for j in self.jobs()
                     if (j.job_id, j.service_address) == (job_id, service_address)]
        if not installed:
            raise AggregationConfigError(f"{self.session.name}: no job {job_id} at "
                                         f"{service_address}")
        job = installed[0]
        updates: list[tuple[Update, str]] = []
        for table, keep in (("agg_jobs", lambda key: key == (service_address, job_id)),
                            ("agg_workers", lambda key: key[0] == job_id)):
            info = self.encoder.table(table)
            names = {mf.id: mf.name.rsplit(".", 1)[-1] for mf in info.match_fields}
            read = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(
                table_id=info.preamble.id))
            for entity in self.session.read(read):
                values = {names[m.field_id]: int.from_bytes(m.exact.value, "big")
                          for m in entity.table_entry.match}
                key = ((str(ipaddress.IPv4Address(values["dstAddr"])), values["job_id"])
                       if table == "agg_jobs" else (values["job_id"], values["egress_rid"]))
                if keep(key):
                    update = Update(type=Update.DELETE)
                    update.entity.table_entry.CopyFrom(entity.table_entry)
                    updates.append((update, f"table {table} entry {key}"))
        group = Update(type=Update.DELETE)
        group.entity.packet_replication_engine_entry.multicast_group_entry \
            .multicast_group_id = job.multicast_group
        updates.append((group, f"multicast group {job.multicast_group}"))
        self._send(updates)
        return job

    # ------------------------------------------------------------------ counters
    def events(self) -> dict[str, int]:
        """Packets per aggregation event (``EVENTS``) since the switch started."""
        counters = self.encoder.p4info.counters
        name = self._name({c.preamble.name: c for c in counters}, "events")
        counter = next(c for c in counters if c.preamble.name == name)
        read = p4runtime_pb2.Entity(counter_entry=p4runtime_pb2.CounterEntry(
            counter_id=counter.preamble.id))
        out = dict.fromkeys(EVENTS, 0)
        for entity in self.session.read(read):
            entry = entity.counter_entry
            if entry.index.index < len(EVENTS):
                out[EVENTS[entry.index.index]] = entry.data.packet_count
        return out


__all__ = ["AggregationConfigError", "AggregationController", "AggregationJob", "EVENTS",
           "FIRST_GROUP", "InstalledJob", "JobWorker", "SessionError"]
