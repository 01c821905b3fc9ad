"""Configure in-network aggregation jobs on a running switch over P4Runtime: add one
beside the jobs the switch holds (checked against them, its slot range cleared
first, taken back out if the switch refuses part of it), list, remove, read the
event counters.

A job's entries and group are :meth:`.job.AggregationJob.writes`, as in every
switch's plan (:mod:`.plan`). The controller speaks plain P4Runtime (table entries, the packet replication
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
from collections.abc import Iterable

from p4.v1 import p4runtime_pb2

from netweft.testbed.control.aggregation.admission import AdmissionRefused, free_base
from netweft.testbed.control.aggregation.job import (
    EVENTS,
    FIRST_GROUP,
    AggregationConfigError,
    AggregationJob,
    InstalledJob,
    JobParent,
    JobWorker,
    clash,
    program_lanes,
)
from netweft.testbed.control.entity_encoder import EncodeError, EntityEncoder
from netweft.testbed.control.entries import Write
from netweft.testbed.control.p4runtime_installer import Refusal, send, updates_for
from netweft.testbed.control.p4runtime_session import SessionError, SwitchSession

Update = p4runtime_pb2.Update


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
        self.lanes = program_lanes(self.encoder.registers)
        """K, the lanes per packet the switch's program sums (its ``AGG_LANES``): what
        the job's workers must put in a packet (``SwitchGroup(..., lanes=ctl.lanes)``)."""

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

    def _updates(self, kind: int, writes: Iterable[Write]) -> list[tuple[Update, str]]:
        try:
            return updates_for(self.encoder, writes, kind)
        except EncodeError as err:
            raise AggregationConfigError(f"{self.session.name}: {err}") from None

    def _send(self, updates: list[tuple[Update, str]]) -> None:
        """Write ``updates``; raise naming the first refused one (after the whole list:
        a switch applies the updates of a batch independently)."""
        refused = send(self.session, updates)
        if refused:
            raise AggregationConfigError(f"{self.session.name} refused {len(refused)} "
                                         f"update(s); first: {refused[0].describe()}")

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
            why = clash(job, other)
            if why:
                raise AggregationConfigError(f"{self.session.name}: {why}")
        writes = job.writes()
        inserts = self._updates(Update.INSERT, writes)
        self._send(self._updates(Update.MODIFY, job.clearing_writes(self.slots)))
        refused: list[Refusal] = send(self.session, inserts)
        if refused:
            # take back the updates that went in, so that a refused job leaves nothing
            failed = {r.index for r in refused}
            if -1 not in failed:
                send(self.session, self._updates(Update.DELETE, [
                    w for i, w in reversed(list(enumerate(writes))) if i not in failed]))
            raise AggregationConfigError(f"{self.session.name} refused job {job.job_id}: "
                                         f"{refused[0].describe()}")

    def admit(self, job_id: int, service_address: str, workers: list[JobWorker],
              size: int, multicast_group: int | None = None,
              parent: JobParent | None = None) -> AggregationJob:
        """Install a job of ``size`` slots at the lowest free range of the switch's pool
        and return it; raises :class:`~.admission.AdmissionRefused` when no range is
        free (the job's workers then all-reduce by ring)."""
        installed = self.jobs()
        base = free_base(self.slots, [(j.base, j.size) for j in installed], size)
        job = AggregationJob(job_id, service_address, base, size, workers, multicast_group,
                             parent)
        self.add_job(job)
        return job

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
        tables = [("agg_jobs", lambda key: key == (service_address, job_id)),
                  ("agg_workers", lambda key: key[0] == job_id)]
        if self.encoder.has_table("agg_parents"):
            tables.insert(0, ("agg_parents", lambda key: key == (service_address, job_id)))
        for table, keep in tables:
            info = self.encoder.table(table)
            names = {mf.id: mf.name.rsplit(".", 1)[-1] for mf in info.match_fields}
            read = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(
                table_id=info.preamble.id))
            for entity in self.session.read(read):
                values = {names[m.field_id]: int.from_bytes(m.exact.value, "big")
                          for m in entity.table_entry.match}
                key = ((values["job_id"], values["egress_rid"]) if table == "agg_workers"
                       else (str(ipaddress.IPv4Address(values["dstAddr"])), values["job_id"]))
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


__all__ = ["AdmissionRefused", "AggregationConfigError", "AggregationController", "AggregationJob", "EVENTS",
           "FIRST_GROUP", "InstalledJob", "JobWorker", "SessionError"]
