"""An in-network aggregation job as the switch that aggregates it sees it, and the writes
that put it on that switch (docs/aggregation.md).

A job is one ``agg_jobs`` entry (service address, job id -> slot range, worker
count, multicast group), one multicast group with a replica per worker (its
port, rid = worker id) and one ``agg_workers`` entry per worker (job id, worker
id -> MAC, IPv4 address, UDP port of its results). A level of a hierarchical
job (:mod:`.placement`) has a parent too: one ``agg_parents`` entry (service
address, job id -> the port and MAC towards the parent switch, and this
switch's worker id there); its workers are its children, hosts or the
switches below it. Names are the objects' last
names, so the controls may sit under any instance path. Sans-IO: a fabric's plan
(:mod:`.plan`) holds these writes, and the P4Runtime controller
(:mod:`.controller`) adds them to a running switch.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from netweft.testbed.control.entries import MulticastWrite, RegisterWrite, TableWrite, Write
from netweft.transport.collectives.aggregation.layer import AGG_MAX_WORKERS

MAX_WORKERS = AGG_MAX_WORKERS  # one bit per worker in a slot's bitmap
# Multicast groups from here up are the aggregation's; job j uses FIRST_GROUP + j unless told.
FIRST_GROUP = 0x8000
# Index names of the events counter (AGG_EV_* in p4/include/aggregation.p4).
EVENTS = ("contribution", "result", "resent", "duplicate", "malformed", "bad_slot",
          "bad_worker", "stale", "partial", "from_parent")
# Registers whose cells must start from zero for a new job (lanes and exponent need not:
# the first contribution replaces them).
CLEARED_REGISTERS = ("bitmap", "count", "block")


def program_lanes(registers: Iterable[str]) -> int:
    """K, the lanes per packet of a program applying ``p4/include/aggregation.p4``, from
    its register names (one register ``lane<i>`` per lane: compiled with ``-D
    AGG_LANES=K``, 64 by default)."""
    lanes = {name.rsplit(".", 1)[-1] for name in registers}
    count = 0
    while f"lane{count}" in lanes:
        count += 1
    if count == 0:
        raise AggregationConfigError("the program has no lane0 register: it does not "
                                     "aggregate")
    return count


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
class JobParent:
    """Where a level of a hierarchical job sends its partial sums: the port towards the
    parent switch, the parent's MAC on that link, and this switch's worker id at the
    parent (its child id there)."""

    port: int
    mac: str
    child_id: int


@dataclass(frozen=True)
class AggregationJob:
    """A job: its id, service address, slot range ``base .. base+size-1`` and workers
    (ids 0..n-1). ``multicast_group`` defaults to ``FIRST_GROUP + job_id``. ``parent``
    is set on a level below the root of a hierarchical job."""

    job_id: int
    service_address: str
    base: int
    size: int
    workers: Sequence[JobWorker]
    multicast_group: int | None = None
    parent: JobParent | None = None

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
        if self.parent is not None and not 0 <= self.parent.child_id < MAX_WORKERS:
            raise AggregationConfigError(f"{where}: child id {self.parent.child_id} at the "
                                         f"parent outside 0..{MAX_WORKERS - 1}")
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
        if self.parent is not None:
            out.append(TableWrite("agg_parents", (("dstAddr", self.service_address),
                                                  ("job_id", self.job_id)),
                                  "set_parent", (("port", self.parent.port),
                                                 ("mac", self.parent.mac),
                                                 ("child_id", self.parent.child_id))))
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

    @property
    def group(self) -> int:
        """The multicast group the job's results go to."""
        return self.multicast_group


def clash(job: AggregationJob, other: AggregationJob | InstalledJob) -> str | None:
    """Why ``job`` cannot sit beside ``other`` on one switch (same job, overlapping slots,
    the same multicast group), or ``None``."""
    if (other.job_id, other.service_address) == (job.job_id, job.service_address):
        return f"job {job.job_id} at {job.service_address} exists; remove it first"
    if other.base < job.base + job.size and job.base < other.base + other.size:
        return (f"job {job.job_id}'s slots {job.base}..{job.base + job.size - 1} overlap job "
                f"{other.job_id}'s {other.base}..{other.base + other.size - 1}")
    if other.group == job.group:
        return (f"job {other.job_id} already uses multicast group {job.group}; give job "
                f"{job.job_id} another")
    return None
