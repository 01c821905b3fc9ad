"""ValueSetEntry: the members of a parser value set, replaced as a whole by MODIFY."""

from __future__ import annotations

from collections.abc import Iterator

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime import bytestrings
from netweft.emulation.p4runtime.errors import invalid, resource_exhausted
from netweft.emulation.p4runtime.pipeline import Pipeline

MODIFY = p4runtime_pb2.Update.MODIFY
MatchType = p4info_pb2.MatchField.MatchType


class ValueSets:
    """Parser value sets of one pipeline."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    def write(self, kind: int, msg: p4runtime_pb2.ValueSetEntry) -> None:
        info = self.pipeline.index.get("value_sets", msg.value_set_id, "value set entry")
        what = f"value set {info.preamble.name}"
        if kind != MODIFY:
            raise invalid(f"{what}: a value set always exists; MODIFY replaces its members")
        vs = self.pipeline.switch.value_sets[info.preamble.name]
        if info.size and len(msg.members) > info.size:
            raise resource_exhausted(f"{what} holds {info.size} members, got "
                                     f"{len(msg.members)}")
        members = [self._member(info, what, m) for m in msg.members]
        vs.members = []
        for value, mask in members:
            vs.add(value, mask)

    def _member(self, info: p4info_pb2.ValueSet, what: str,
                member: p4runtime_pb2.ValueSetMember) -> tuple[tuple[int, ...], tuple[int, ...]]:
        given = {fm.field_id: fm for fm in member.match}
        if len(given) != len(member.match) or set(given) - {mf.id for mf in info.match}:
            raise invalid(f"{what}: a member's fields must be the P4Info's, each once")
        values, masks = [], []
        for mf in info.match:
            full = (1 << mf.bitwidth) - 1
            fm = given.get(mf.id)
            if fm is None:
                values.append(0)
                masks.append(0)
                continue
            kind = fm.WhichOneof("field_match_type")
            name = f"{what} field {mf.name}"
            if kind == "exact":
                values.append(bytestrings.decode(fm.exact.value, mf.bitwidth, name))
                masks.append(full)
            elif kind == "ternary":
                v = bytestrings.decode(fm.ternary.value, mf.bitwidth, name)
                m = bytestrings.decode(fm.ternary.mask, mf.bitwidth, name)
                values.append(v & m)
                masks.append(m)
            elif kind == "lpm":
                plen = fm.lpm.prefix_len
                if not 0 <= plen <= mf.bitwidth:
                    raise invalid(f"{name}: prefix length {plen} outside 0..{mf.bitwidth}")
                m = full ^ ((1 << (mf.bitwidth - plen)) - 1)
                values.append(bytestrings.decode(fm.lpm.value, mf.bitwidth, name) & m)
                masks.append(m)
            else:
                raise invalid(f"{name}: {kind} matches are not supported in value sets")
        return tuple(values), tuple(masks)

    def read(self, msg: p4runtime_pb2.ValueSetEntry) -> Iterator[p4runtime_pb2.Entity]:
        index = self.pipeline.index
        infos = (index.all("value_sets") if msg.value_set_id == 0
                 else [index.get("value_sets", msg.value_set_id, "value set entry")])
        for info in infos:
            vs = self.pipeline.switch.value_sets[info.preamble.name]
            entity = p4runtime_pb2.Entity()
            out = entity.value_set_entry
            out.value_set_id = info.preamble.id
            for value, mask in vs.members:
                member = out.members.add()
                shift = vs.width
                for mf in info.match:
                    shift -= mf.bitwidth
                    full = (1 << mf.bitwidth) - 1
                    v, m = (value >> shift) & full, (mask >> shift) & full
                    if m == 0:
                        continue
                    fm = member.match.add(field_id=mf.id)
                    if m == full:
                        fm.exact.value = bytestrings.encode(v)
                    else:
                        fm.ternary.value, fm.ternary.mask = (bytestrings.encode(v),
                                                             bytestrings.encode(m))
            yield entity
