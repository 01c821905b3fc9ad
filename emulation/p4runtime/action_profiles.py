"""ActionProfileMember and ActionProfileGroup: controller-chosen ids over the
switch's action profiles and selectors.

Members are ``(action, arguments)``; a table entry that points at a member is
bound to it per table, and rebound when the member is modified.  A group is a
weighted set of members (a member of weight *w* appears *w* times in the
data-plane group, as BMv2's PI does); entries share the group's data-plane
object, which is updated in place when the group changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime.actions import action_from_proto, action_to_proto
from netweft.emulation.p4runtime.errors import (
    P4RuntimeError,
    already_exists,
    failed_precondition,
    invalid,
    not_found,
    resource_exhausted,
)
from netweft.emulation.p4runtime.pipeline import Pipeline
from netweft.emulation.v1model.action_profiles import SelectorGroup
from netweft.emulation.v1model.match_table import MatchTable, TableEntry, TableError

INSERT, MODIFY, DELETE = (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY,
                          p4runtime_pb2.Update.DELETE)


@dataclass
class Member:
    """A member: the action by name, its arguments, and who points at it."""

    action: p4runtime_pb2.Action
    name: str
    args: tuple[int, ...]
    entries: list[tuple[MatchTable, TableEntry]] = field(default_factory=list)
    groups: set[int] = field(default_factory=set)


@dataclass
class Group:
    """A group: member id -> weight, and its data-plane object per table."""

    members: dict[int, int]
    max_size: int = 0
    selectors: dict[str, SelectorGroup] = field(default_factory=dict)
    entries: int = 0


class ActionProfiles:
    """Members and groups of every action profile in the P4Info."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline
        self.members: dict[int, dict[int, Member]] = {}
        self.groups: dict[int, dict[int, Group]] = {}
        for prof in pipeline.index.all("action_profiles"):
            self.members[prof.preamble.id] = {}
            self.groups[prof.preamble.id] = {}

    # ---------------------------------------------------------------- members

    def _profile(self, profile_id: int) -> Any:
        prof = self.pipeline.index.get("action_profiles", profile_id, "action profile")
        if not prof.table_ids:
            raise failed_precondition(f"action profile {prof.preamble.name} has no table")
        return prof

    def _first_table(self, prof: Any) -> MatchTable:
        return self.pipeline.match_table(prof.table_ids[0])

    def write_member(self, kind: int, msg: p4runtime_pb2.ActionProfileMember) -> None:
        prof = self._profile(msg.action_profile_id)
        members = self.members[prof.preamble.id]
        mid = msg.member_id
        if kind == DELETE:
            member = members.get(mid)
            if member is None:
                raise not_found(f"action profile {prof.preamble.name}: no member {mid}")
            if member.entries or member.groups:
                raise failed_precondition(
                    f"action profile {prof.preamble.name}: member {mid} is used by "
                    f"{len(member.entries)} table entr(ies) and {len(member.groups)} group(s)")
            del members[mid]
            return
        if kind == INSERT and mid in members:
            raise already_exists(f"action profile {prof.preamble.name}: member {mid} exists")
        if kind == MODIFY and mid not in members:
            raise not_found(f"action profile {prof.preamble.name}: no member {mid}")
        if not msg.HasField("action"):
            raise invalid(f"action profile {prof.preamble.name}: member {mid} has no action")
        table = self._first_table(prof)
        name, args = action_from_proto(self.pipeline, prof.table_ids[0], msg.action)
        try:
            table.bind_action(name, args)
        except TableError as err:
            raise invalid(str(err)) from None
        if kind == INSERT:
            if prof.size and len(members) >= prof.size:
                raise resource_exhausted(f"action profile {prof.preamble.name} is full "
                                         f"({prof.size} members)")
            members[mid] = Member(_copy(msg.action), name, args)
            return
        member = members[mid]
        member.action, member.name, member.args = _copy(msg.action), name, args
        for mt, entry in member.entries:
            mt.set_bound(entry, *mt.bind_action(name, args))
        for gid in member.groups:
            self._refresh_group(prof.preamble.id, gid)

    def read_members(self, msg: p4runtime_pb2.ActionProfileMember
                     ) -> Iterator[p4runtime_pb2.Entity]:
        for pid, members in self._select(self.members, msg.action_profile_id):
            for mid, member in sorted(members.items()):
                if msg.member_id and mid != msg.member_id:
                    continue
                entity = p4runtime_pb2.Entity()
                out = entity.action_profile_member
                out.action_profile_id, out.member_id = pid, mid
                out.action.CopyFrom(action_to_proto(self.pipeline, member.name, member.args))
                yield entity

    # ---------------------------------------------------------------- groups

    def write_group(self, kind: int, msg: p4runtime_pb2.ActionProfileGroup) -> None:
        prof = self._profile(msg.action_profile_id)
        pid, gid = prof.preamble.id, msg.group_id
        groups = self.groups[pid]
        if not prof.with_selector:
            raise invalid(f"{prof.preamble.name} is an action profile without a selector: "
                          "it has no groups")
        if kind == DELETE:
            group = groups.get(gid)
            if group is None:
                raise not_found(f"action selector {prof.preamble.name}: no group {gid}")
            if group.entries:
                raise failed_precondition(f"action selector {prof.preamble.name}: group {gid} "
                                          f"is used by {group.entries} table entr(ies)")
            for mid in group.members:
                self.members[pid][mid].groups.discard(gid)
            del groups[gid]
            return
        if kind == INSERT and gid in groups:
            raise already_exists(f"action selector {prof.preamble.name}: group {gid} exists")
        if kind == MODIFY and gid not in groups:
            raise not_found(f"action selector {prof.preamble.name}: no group {gid}")
        weights: dict[int, int] = {}
        for m in msg.members:
            if m.member_id not in self.members[pid]:
                raise not_found(f"action selector {prof.preamble.name}: group {gid} names "
                                f"member {m.member_id}, which does not exist")
            if m.member_id in weights:
                raise invalid(f"group {gid}: member {m.member_id} is listed twice")
            if m.weight < 0:
                raise invalid(f"group {gid}: member {m.member_id} has a negative weight")
            weights[m.member_id] = m.weight or 1
        max_size = msg.max_size or prof.max_group_size
        if prof.max_group_size and msg.max_size > prof.max_group_size:
            raise invalid(f"group {gid}: max_size {msg.max_size} exceeds the selector's "
                          f"max_group_size {prof.max_group_size}")
        if max_size and sum(weights.values()) > max_size:
            raise resource_exhausted(f"group {gid}: {sum(weights.values())} member weight(s) "
                                     f"exceed the maximum group size {max_size}")
        if kind == INSERT:
            if prof.size and len(groups) >= prof.size:
                raise resource_exhausted(f"action selector {prof.preamble.name} is full")
            groups[gid] = Group(weights, msg.max_size)
        else:
            for mid in groups[gid].members:
                self.members[pid][mid].groups.discard(gid)
            groups[gid].members, groups[gid].max_size = weights, msg.max_size
        for mid in weights:
            self.members[pid][mid].groups.add(gid)
        self._refresh_group(pid, gid)

    def _bound_members(self, pid: int, group: Group, table: MatchTable) -> list[Any]:
        bound = []
        for mid, weight in sorted(group.members.items()):
            member = self.members[pid][mid]
            bound += [table.bind_action(member.name, member.args)[2]] * weight
        return bound

    def _refresh_group(self, pid: int, gid: int) -> None:
        group = self.groups[pid][gid]
        for table_name, selector in group.selectors.items():
            selector.members = self._bound_members(pid, group, self.pipeline.switch.tables[
                table_name])

    def read_groups(self, msg: p4runtime_pb2.ActionProfileGroup
                    ) -> Iterator[p4runtime_pb2.Entity]:
        for pid, groups in self._select(self.groups, msg.action_profile_id):
            for gid, group in sorted(groups.items()):
                if msg.group_id and gid != msg.group_id:
                    continue
                entity = p4runtime_pb2.Entity()
                out = entity.action_profile_group
                out.action_profile_id, out.group_id, out.max_size = pid, gid, group.max_size
                for mid, weight in sorted(group.members.items()):
                    out.members.add(member_id=mid, weight=weight)
                yield entity

    def _select(self, pool: dict[int, Any], profile_id: int) -> list[tuple[int, Any]]:
        if profile_id == 0:
            return sorted(pool.items())
        self._profile(profile_id)
        return [(profile_id, pool[profile_id])]

    # ---------------------------------------------------------------- table entries

    def profile_of_table(self, table_id: int) -> int:
        """The action profile id implementing a table (0 if none)."""
        return self.pipeline.index.table(table_id).implementation_id

    def bind_member(self, table_id: int, member_id: int) -> tuple[str, tuple[int, ...], Any]:
        """``(action, args, bound)`` for an entry of ``table_id`` pointing at a member."""
        pid = self.profile_of_table(table_id)
        member = self.members[pid].get(member_id)
        if member is None:
            raise not_found(f"table entry: action profile member {member_id} does not exist")
        return self.pipeline.match_table(table_id).bind_action(member.name, member.args)

    def selector(self, table_id: int, group_id: int) -> SelectorGroup:
        """The data-plane group for an entry of ``table_id`` pointing at a group."""
        pid = self.profile_of_table(table_id)
        group = self.groups[pid].get(group_id)
        if group is None:
            raise not_found(f"table entry: action profile group {group_id} does not exist")
        table = self.pipeline.match_table(table_id)
        selector = group.selectors.get(table.name)
        if selector is None:
            profile = self.pipeline.switch.profiles[table.name]
            selector = profile.new_group(self._bound_members(pid, group, table))
            group.selectors[table.name] = selector
        return selector

    def attach(self, table_id: int, ref: tuple[str, int], table: MatchTable,
               entry: TableEntry) -> None:
        """Record that ``entry`` points at member or group ``ref``."""
        pid = self.profile_of_table(table_id)
        kind, rid = ref
        if kind == "member":
            self.members[pid][rid].entries.append((table, entry))
        else:
            self.groups[pid][rid].entries += 1

    def detach(self, table_id: int, ref: tuple[str, int], entry: TableEntry) -> None:
        """Forget that ``entry`` points at ``ref``."""
        pid = self.profile_of_table(table_id)
        kind, rid = ref
        if kind == "member":
            member = self.members[pid].get(rid)
            if member is not None:
                member.entries = [(t, e) for t, e in member.entries if e is not entry]
        elif rid in self.groups[pid]:
            self.groups[pid][rid].entries -= 1


def _copy(action: p4runtime_pb2.Action) -> p4runtime_pb2.Action:
    out = p4runtime_pb2.Action()
    out.CopyFrom(action)
    return out


__all__ = ["ActionProfiles", "P4RuntimeError"]
