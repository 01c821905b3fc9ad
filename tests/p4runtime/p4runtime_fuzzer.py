"""A seeded P4Runtime fuzzing client with a model of the state it writes.

It drives a running P4Runtime server the way a careless or hostile controller
would: batches of table entries and action-profile members, valid ones mixed
with duplicates, missing entries and malformed updates (values wider than the
field, bad prefixes and masks, wrong priorities, unknown ids, missing
parameters, direct resources the table lacks, const tables), written by the
primary client while secondary clients read and try to write.

The model says, update by update, what the server must answer (OK, or which
refusal) and what the forwarding state must then be; after every batch a
wildcard read is compared with it, so an update answered with an error but
applied anyway (or the reverse) is found at once. Everything is drawn from
one ``random.Random(seed)``: a failure replays with its seed.
"""

from __future__ import annotations

import queue
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

INSERT, MODIFY, DELETE = (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY,
                          p4runtime_pb2.Update.DELETE)
MF = p4info_pb2.MatchField
OK = "OK"
REFUSED = "REFUSED"  # any refusal the specification allows for a malformed update
# codes that never answer a malformed request: they mean the server failed
SERVER_FAILURES = {"UNKNOWN", "INTERNAL", "DATA_LOSS", "UNAVAILABLE"}


def _bytes(value: int) -> bytes:
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def _int(data: bytes) -> int:
    return int.from_bytes(data, "big")


# ---------------------------------------------------------------------------- the model

@dataclass
class TableModel:
    """What the fuzzer knows of one table and the entries it holds."""

    info: Any
    needs_priority: bool
    profile_id: int | None
    direct_counter: bool
    const: bool
    actions: list[Any]             # actions an entry may name (not DEFAULT_ONLY)
    entries: dict[tuple, tuple] = field(default_factory=dict)  # key -> action


class Model:
    """The forwarding state the server must hold (table entries and profile members)."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self.actions = {a.preamble.id: a for a in p4info.actions}
        direct = {c.direct_table_id for c in p4info.direct_counters}
        self.tables: dict[int, TableModel] = {}
        for t in p4info.tables:
            if not t.match_fields or not (t.action_refs or t.implementation_id):
                continue
            needs = any(mf.match_type in (MF.TERNARY, MF.RANGE, MF.OPTIONAL)
                        for mf in t.match_fields)
            actions = [self.actions[r.id] for r in t.action_refs
                       if r.scope != p4info_pb2.ActionRef.DEFAULT_ONLY]
            self.tables[t.preamble.id] = TableModel(
                t, needs, t.implementation_id or None, t.preamble.id in direct,
                t.is_const_table, actions)
        self.members: dict[int, dict[int, tuple]] = {
            p.preamble.id: {} for p in p4info.action_profiles}

    def member_refs(self, profile_id: int, member_id: int) -> int:
        return sum(1 for t in self.tables.values() if t.profile_id == profile_id
                   for a in t.entries.values() if a == ("member", member_id))

    def snapshot(self) -> dict[str, Any]:
        return {"entries": {tid: dict(t.entries) for tid, t in self.tables.items()},
                "members": {pid: dict(m) for pid, m in self.members.items()}}


def entry_key(te: p4runtime_pb2.TableEntry) -> tuple:
    """A table entry's identity (match and priority) with values as integers."""
    fields = []
    for fm in sorted(te.match, key=lambda f: f.field_id):
        kind = fm.WhichOneof("field_match_type")
        if kind == "exact":
            v = (_int(fm.exact.value),)
        elif kind == "optional":
            v = (_int(fm.optional.value),)
        elif kind == "lpm":
            v = (_int(fm.lpm.value), fm.lpm.prefix_len)
        elif kind == "ternary":
            v = (_int(fm.ternary.value), _int(fm.ternary.mask))
        else:
            v = (_int(fm.range.low), _int(fm.range.high))
        fields.append((fm.field_id, kind, v))
    return tuple(fields), te.priority


def entry_action(te: p4runtime_pb2.TableEntry) -> tuple:
    which = te.action.WhichOneof("type")
    if which == "action_profile_member_id":
        return ("member", te.action.action_profile_member_id)
    a = te.action.action
    return ("action", a.action_id, tuple(sorted((p.param_id, _int(p.value))
                                               for p in a.params)))


# ---------------------------------------------------------------------------- generation

@dataclass
class Planned:
    """One update and what the server must answer (OK, a code name, or REFUSED)."""

    update: p4runtime_pb2.Update
    expect: str
    what: str


class Generator:
    """Draws updates from the model's current state; applies the ones that must succeed."""

    def __init__(self, model: Model, rng: random.Random) -> None:
        self.model = model
        self.rng = rng

    # -- values

    def _value(self, width: int) -> int:
        r = self.rng.random()
        if r < 0.2:
            return self.rng.choice([0, 1, (1 << width) - 1])
        return self.rng.getrandbits(width)

    def _match(self, t: TableModel) -> list[p4runtime_pb2.FieldMatch]:
        out = []
        for mf in t.info.match_fields:
            w = mf.bitwidth
            fm = p4runtime_pb2.FieldMatch(field_id=mf.id)
            if mf.match_type == MF.EXACT:
                fm.exact.value = _bytes(self._value(w))
            elif self.rng.random() < 0.25:
                continue  # a wildcard: omitted
            elif mf.match_type == MF.LPM:
                plen = self.rng.randint(1, w)
                fm.lpm.prefix_len = plen
                fm.lpm.value = _bytes(self._value(w) >> (w - plen) << (w - plen))
            elif mf.match_type == MF.TERNARY:
                mask = self._value(w) or 1
                fm.ternary.mask, fm.ternary.value = _bytes(mask), _bytes(self._value(w) & mask)
            elif mf.match_type == MF.RANGE:
                lo, hi = sorted((self._value(w), self._value(w)))
                if (lo, hi) == (0, (1 << w) - 1):
                    hi -= 1
                fm.range.low, fm.range.high = _bytes(lo), _bytes(hi)
            elif mf.match_type == MF.OPTIONAL:
                fm.optional.value = _bytes(self._value(w))
            else:
                continue
            out.append(fm)
        return out

    def _action(self, t: TableModel, te: p4runtime_pb2.TableEntry) -> tuple:
        if t.profile_id is not None:
            members = self.model.members[t.profile_id]
            if members and self.rng.random() < 0.9:
                mid = self.rng.choice(sorted(members))
            else:
                mid = self.rng.randint(1, 8)
            te.action.action_profile_member_id = mid
            return ("member", mid)
        action = self.rng.choice(t.actions)
        a = te.action.action
        a.action_id = action.preamble.id
        for p in action.params:
            a.params.add(param_id=p.id, value=_bytes(self._value(p.bitwidth)))
        return entry_action(te)

    def _entry(self, t: TableModel, existing: bool) -> p4runtime_pb2.TableEntry:
        te = p4runtime_pb2.TableEntry(table_id=t.info.preamble.id)
        if existing and t.entries:
            key = self.rng.choice(sorted(t.entries, key=repr))
            for fid, kind, v in key[0]:
                fm = te.match.add(field_id=fid)
                if kind == "exact":
                    fm.exact.value = _bytes(v[0])
                elif kind == "optional":
                    fm.optional.value = _bytes(v[0])
                elif kind == "lpm":
                    fm.lpm.value, fm.lpm.prefix_len = _bytes(v[0]), v[1]
                elif kind == "ternary":
                    fm.ternary.value, fm.ternary.mask = _bytes(v[0]), _bytes(v[1])
                else:
                    fm.range.low, fm.range.high = _bytes(v[0]), _bytes(v[1])
            te.priority = key[1]
        else:
            te.match.extend(self._match(t))
            te.priority = self.rng.randint(1, 1000) if t.needs_priority else 0
        return te

    # -- updates

    def table_update(self) -> Planned:
        t = self.rng.choice(list(self.model.tables.values()))
        kind = self.rng.choice([INSERT, INSERT, INSERT, MODIFY, DELETE])
        existing = kind != INSERT
        if self.rng.random() < 0.15:
            existing = not existing  # a duplicate INSERT, or a MODIFY/DELETE of nothing
        te = self._entry(t, existing)
        key = entry_key(te)
        action = self._action(t, te) if kind != DELETE else None
        update = p4runtime_pb2.Update(type=kind)
        update.entity.table_entry.CopyFrom(te)
        name = t.info.preamble.name
        if t.const:
            return Planned(update, "PERMISSION_DENIED", f"write to const table {name}")
        if kind == INSERT and key in t.entries:
            return Planned(update, "ALREADY_EXISTS", f"duplicate insert into {name}")
        if kind != INSERT and key not in t.entries:
            return Planned(update, "NOT_FOUND", f"{'modify' if kind == MODIFY else 'delete'} "
                           f"of a missing entry of {name}")
        if action and action[0] == "member" and action[1] not in self.model.members[
                t.profile_id]:
            return Planned(update, "NOT_FOUND", f"entry of {name} naming a missing member")
        if kind == INSERT and t.info.size and len(t.entries) >= t.info.size:
            return Planned(update, "RESOURCE_EXHAUSTED", f"insert into full {name}")
        if kind == DELETE:
            del t.entries[key]
        else:
            t.entries[key] = action
        return Planned(update, OK, f"{('insert', 'modify', 'delete')[kind - 1]} {name}")

    def member_update(self) -> Planned | None:
        if not self.model.members:
            return None
        pid = self.rng.choice(sorted(self.model.members))
        members = self.model.members[pid]
        kind = self.rng.choice([INSERT, INSERT, MODIFY, DELETE])
        mid = (self.rng.choice(sorted(members)) if members and self.rng.random() < 0.7
               else self.rng.randint(1, 8))
        update = p4runtime_pb2.Update(type=kind)
        m = update.entity.action_profile_member
        m.action_profile_id, m.member_id = pid, mid
        profile = next(p for p in self.model.p4info.action_profiles if p.preamble.id == pid)
        table = self.model.tables.get(profile.table_ids[0])
        action = None
        if kind != DELETE and table is not None:
            chosen = self.rng.choice([self.model.actions[r.id] for r in table.info.action_refs
                                      if r.scope != p4info_pb2.ActionRef.DEFAULT_ONLY])
            m.action.action_id = chosen.preamble.id
            for p in chosen.params:
                m.action.params.add(param_id=p.id, value=_bytes(self._value(p.bitwidth)))
            action = ("action", chosen.preamble.id,
                      tuple(sorted((p.param_id, _int(p.value)) for p in m.action.params)))
        if kind == INSERT and mid in members:
            return Planned(update, "ALREADY_EXISTS", "duplicate member")
        if kind != INSERT and mid not in members:
            return Planned(update, "NOT_FOUND", "missing member")
        if kind == DELETE and self.model.member_refs(pid, mid):
            return Planned(update, "FAILED_PRECONDITION", "delete of a member in use")
        if kind == DELETE:
            del members[mid]
        else:
            members[mid] = action
        return Planned(update, OK, "member write")

    def malformed_update(self) -> Planned:
        """An update the server must refuse whole (the model does not change)."""
        t = self.rng.choice(list(self.model.tables.values()))
        te = self._entry(t, existing=False)
        self._action(t, te)
        how = self.rng.choice(["wide value", "prefix", "mask", "priority", "action id",
                               "missing param", "wide param", "counter_data", "table id",
                               "field id", "huge value"])
        mf = t.info.match_fields[0]
        fm = next((f for f in te.match if f.field_id == mf.id), None)
        if how in ("wide value", "huge value") and fm is not None:
            wide = (b"\x01" + b"\x00" * ((mf.bitwidth + 7) // 8) if how == "wide value"
                    else b"\xff" * (1 << 16))
            kind = fm.WhichOneof("field_match_type")
            target = getattr(fm, kind)
            if kind == "range":
                target.high = wide
            else:
                target.value = wide
        elif how == "prefix" and fm is not None and fm.HasField("lpm"):
            fm.lpm.prefix_len = mf.bitwidth + 1
        elif how == "mask" and fm is not None and fm.HasField("ternary"):
            fm.ternary.mask, fm.ternary.value = b"\x00", b"\x00"
        elif how == "priority":
            te.priority = 0 if t.needs_priority else 5
        elif how == "action id" and t.profile_id is None:
            te.action.action.action_id = 0x01FFFFFF
        elif how in ("missing param", "wide param") and te.action.action.params:
            if how == "missing param":
                del te.action.action.params[0]
            else:
                p = te.action.action.params[0]
                width = next(x.bitwidth for x in self.model.actions[
                    te.action.action.action_id].params if x.id == p.param_id)
                p.value = b"\x01" + b"\x00" * ((width + 7) // 8)
        elif how == "counter_data" and not t.direct_counter:
            te.counter_data.packet_count = 3
        elif how == "field id":
            te.match.add(field_id=999).exact.value = b"\x01"
        else:
            te.table_id = 0x02FFFFFF  # an id of no table
        update = p4runtime_pb2.Update(type=INSERT)
        update.entity.table_entry.CopyFrom(te)
        return Planned(update, REFUSED, f"malformed ({how}) entry of {t.info.preamble.name}")

    def batch(self, size: int) -> list[Planned]:
        out = []
        for _ in range(size):
            r = self.rng.random()
            planned = None
            if r < 0.15:
                planned = self.member_update()
            elif r < 0.35:
                planned = self.malformed_update()
            out.append(planned or self.table_update())
        return out


# ---------------------------------------------------------------------------- the client

class Client:
    """A P4Runtime client: an arbitration stream and Write/Read calls (plain grpc)."""

    def __init__(self, target: str, device_id: int, election: int) -> None:
        self.device_id = device_id
        self.election = election
        self.channel = grpc.insecure_channel(target)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._out: queue.Queue = queue.Queue()
        self.stream_errors = 0
        self._stream = self.stub.StreamChannel(self._requests())
        self.arbitration = next(self._stream).arbitration
        self._drain = threading.Thread(target=self._drain_stream, daemon=True)
        self._drain.start()

    def _requests(self) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id
        req.arbitration.election_id.low = self.election
        yield req
        while (item := self._out.get()) is not None:
            yield item

    def _drain_stream(self) -> None:
        try:
            for msg in self._stream:
                if msg.HasField("error"):
                    self.stream_errors += 1
        except grpc.RpcError:
            pass

    def packet_out(self, payload: bytes, metadata: list[tuple[int, bytes]]) -> None:
        """Send a PacketOut on the stream (answered, if refused, by a StreamError)."""
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = payload
        for mid, value in metadata:
            req.packet.metadata.add(metadata_id=mid, value=value)
        self._out.put(req)

    def write(self, updates: list[p4runtime_pb2.Update]) -> list[str]:
        """One result code name per update."""
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
        req.election_id.low = self.election
        req.updates.extend(updates)
        try:
            self.stub.Write(req, timeout=60)
        except grpc.RpcError as err:
            details = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
            if details is None:
                return [err.code().name] * len(updates)
            status = status_pb2.Status.FromString(details)
            codes = []
            for detail in status.details:
                error = p4runtime_pb2.Error()
                detail.Unpack(error)
                codes.append(code_pb2.Code.Name(error.canonical_code))
            return codes
        return [OK] * len(updates)

    def read(self, entities: list[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id, entities=entities)
        return [e for r in self.stub.Read(req, timeout=60) for e in r.entities]

    def close(self) -> None:
        self._out.put(None)
        self._stream.cancel()
        self.channel.close()


def server_state(client: Client, model: Model) -> dict[str, Any]:
    """The server's table entries and members, in the model's form."""
    entities = client.read([p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()),
                            p4runtime_pb2.Entity(
                                action_profile_member=p4runtime_pb2.ActionProfileMember())])
    entries: dict[int, dict] = {tid: {} for tid in model.tables}
    members: dict[int, dict] = {pid: {} for pid in model.members}
    for e in entities:
        if e.HasField("table_entry"):
            te = e.table_entry
            if te.table_id in entries and not model.tables[te.table_id].const:
                entries[te.table_id][entry_key(te)] = entry_action(te)
        else:
            m = e.action_profile_member
            members[m.action_profile_id][m.member_id] = (
                "action", m.action.action_id,
                tuple(sorted((p.param_id, _int(p.value)) for p in m.action.params)))
    for tid, t in model.tables.items():
        if t.const:
            entries[tid] = dict(t.entries)
    return {"entries": entries, "members": members}


@dataclass
class FuzzReport:
    """What a run did and every discrepancy it found (empty lists: nothing suspicious)."""

    batches: int = 0
    updates: int = 0
    accepted: int = 0
    refused: int = 0
    wrong_answers: list[str] = field(default_factory=list)
    state_mismatches: list[str] = field(default_factory=list)
    server_failures: list[str] = field(default_factory=list)
    secondary_writes_applied: int = 0
    reads_by_others: int = 0
    packet_outs: int = 0
    stream_errors: int = 0


def fuzz(target: str, p4info: p4info_pb2.P4Info, *, seed: int, batches: int,
         max_batch: int = 8, device_id: int = 1, readers: int = 2,
         progress: Callable[[int, FuzzReport], None] | None = None) -> FuzzReport:
    """Fuzz the server at ``target``: ``batches`` seeded batches from the primary client,
    ``readers`` secondary clients reading and trying to write concurrently, the model
    compared with a wildcard read after every batch."""
    rng = random.Random(seed)
    model = Model(p4info)
    gen = Generator(model, rng)
    report = FuzzReport()
    primary = Client(target, device_id, election=1000)
    stop = threading.Event()
    lock = threading.Lock()
    errors: list[str] = []

    def secondary(n: int) -> None:
        client = Client(target, device_id, election=1 + n)
        local = random.Random(seed * 31 + n)
        try:
            while not stop.is_set():
                planned = Generator(Model(p4info), local).batch(2)
                codes = client.write([p.update for p in planned])
                if any(c != "PERMISSION_DENIED" for c in codes):
                    with lock:
                        report.secondary_writes_applied += 1
                        errors.append(f"secondary client's write answered {codes}")
                client.read([p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry())])
                with lock:
                    report.reads_by_others += 1
        except grpc.RpcError as err:
            if not stop.is_set():
                errors.append(f"secondary client {n}: {err.code().name} {err.details()}")
        finally:
            client.close()

    threads = [threading.Thread(target=secondary, args=(n,), daemon=True)
               for n in range(readers)]
    for th in threads:
        th.start()
    try:
        for b in range(batches):
            planned = gen.batch(rng.randint(1, max_batch))
            codes = primary.write([p.update for p in planned])
            report.batches += 1
            report.updates += len(planned)
            if len(codes) != len(planned):
                report.wrong_answers.append(f"batch {b}: {len(codes)} results for "
                                            f"{len(planned)} updates")
            for p, code in zip(planned, codes, strict=False):
                if code in SERVER_FAILURES:
                    report.server_failures.append(f"batch {b}: {p.what}: {code}")
                if code == OK:
                    report.accepted += 1
                else:
                    report.refused += 1
                good = code != OK if p.expect == REFUSED else code == p.expect
                if not good:
                    report.wrong_answers.append(f"batch {b}: {p.what}: expected {p.expect}, "
                                                f"got {code}")
            _packet_out(primary, p4info, rng)
            report.packet_outs += 1
            want, got = model.snapshot(), server_state(primary, model)
            if want != got:
                report.state_mismatches.append(f"batch {b}: {_difference(want, got)}")
                # continue from the server's state, so one bug is reported once
                for tid, entries in got["entries"].items():
                    model.tables[tid].entries = dict(entries)
                model.members = {pid: dict(m) for pid, m in got["members"].items()}
            if progress is not None:
                progress(b + 1, report)
    finally:
        stop.set()
        for th in threads:
            th.join(30)
        report.stream_errors = primary.stream_errors
        primary.close()
    report.server_failures.extend(errors)
    return report


def _packet_out(client: Client, p4info: p4info_pb2.P4Info, rng: random.Random) -> None:
    """A PacketOut: the program's packet_out metadata (valid values, or junk ids and
    widths) and a payload of random bytes (empty to jumbo)."""
    header = next((m for m in p4info.controller_packet_metadata
                   if m.preamble.name == "packet_out"), None)
    metadata = []
    for m in header.metadata if header else ():
        if rng.random() < 0.9:
            metadata.append((m.id, _bytes(rng.getrandbits(m.bitwidth))))
    if rng.random() < 0.2:
        metadata.append((rng.randint(50, 60), b"\xff" * rng.randint(1, 40)))
    size = rng.choice([0, 14, 60, 1500, rng.randint(0, 9000)])
    client.packet_out(rng.randbytes(size), metadata)


def _difference(want: dict[str, Any], got: dict[str, Any]) -> str:
    for part in ("entries", "members"):
        for owner in want[part]:
            w, g = want[part][owner], got[part].get(owner, {})
            extra = [k for k in g if k not in w]
            missing = [k for k in w if k not in g]
            changed = [k for k in w if k in g and w[k] != g[k]]
            if extra or missing or changed:
                return (f"{part} of {owner}: {len(extra)} unexpected, {len(missing)} missing, "
                        f"{len(changed)} different (first: {(extra or missing or changed)[0]})")
    return "?"


def main(argv: list[str] | None = None) -> int:
    """Long runs by hand: ``python -m tests.p4runtime.p4runtime_fuzzer PROGRAM.p4``
    serves the program in this process, fuzzes it, and prints the process's resident
    memory and the installed entries every ``--every`` batches."""
    import argparse
    from pathlib import Path

    from netweft.emulation.p4runtime.device import Device
    from netweft.emulation.p4runtime.server import P4RuntimeServer
    from netweft.emulation.switch import SoftSwitch
    from netweft.p4.compiler import compile_p4
    from netweft.p4.compiler.p4info import build_p4info

    p = argparse.ArgumentParser(prog="p4runtime_fuzzer")
    p.add_argument("program", type=Path)
    p.add_argument("--batches", type=int, default=3000)
    p.add_argument("--every", type=int, default=250)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    root = Path(__file__).resolve().parents[2]
    program = compile_p4(a.program, include_dirs=[root / "p4"])
    p4info = build_p4info(program)
    device = Device(lambda data: None, device_id=1, cpu_port=255)
    switch = SoftSwitch(program)
    device.install(p4info, b"", switch=switch)
    device.transmit = lambda port, frame: None
    server = P4RuntimeServer(device, "127.0.0.1:0").start()

    def show(done: int, report: FuzzReport) -> None:
        if done % a.every:
            return
        rss = int(Path("/proc/self/statm").read_text().split()[1]) * 4096 >> 20
        entries = sum(len(t.entries) for t in switch.tables.values())
        problems = (len(report.wrong_answers) + len(report.state_mismatches)
                    + len(report.server_failures))
        print(f"{done} batches ({report.updates} updates): RSS {rss} MiB, {entries} table "
              f"entries installed, {problems} problems", flush=True)

    try:
        fuzz(server.target, p4info, seed=a.seed, batches=a.batches, progress=show)
    finally:
        server.stop(0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
