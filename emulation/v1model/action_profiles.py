"""v1model ``action_profile`` and ``action_selector``: shared members and hashed groups.

A table with an ``implementation`` holds entries that point at a *member*
(an action with arguments) or, for a selector, at a *group* of members; a
group picks one member per packet by hashing the table's ``selector`` keys
(``hash % group size``, the hash taken over BMv2's field-list packing and
truncated to the selector's output width).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from netweft.emulation.v1model.hash_algorithms import pack_fields

EMPTY_GROUP_WARNING = ("a table entry selected an action selector group with no members; "
                       "such packets are dropped and counted in stats['drop_empty_group']")


class EmptySelectorGroup(LookupError):
    """A packet's table entry points at an action selector group with no members."""


class SelectorGroup:
    """A group of members; :meth:`select` is called by the generated table code."""

    def __init__(self, members: list[Any], hash_fn: Callable[[bytes], int] | None,
                 output_width: int) -> None:
        self.members = members
        self._hash = hash_fn
        self._mask = (1 << output_width) - 1 if output_width else None

    def select(self, fields: Iterable[tuple[int, int]]) -> Any:
        """The bound action of the member chosen for these selector key values."""
        if not self.members:
            raise EmptySelectorGroup("empty action selector group")
        h = self._hash(pack_fields(fields)) if self._hash is not None else 0
        if self._mask is not None:
            h &= self._mask
        return self.members[h % len(self.members)]


class ActionProfile:
    """Members and groups of one action profile or selector."""

    def __init__(self, name: str, hash_fn: Callable[[bytes], int] | None,
                 output_width: int) -> None:
        self.name = name
        self._hash = hash_fn
        self._width = output_width
        self._members: dict[int, tuple[str, tuple[int, ...], Any]] = {}
        self._groups: dict[int, SelectorGroup] = {}
        self._next_member = 0
        self._next_group = 0

    @property
    def is_selector(self) -> bool:
        """Whether groups are allowed (an ``action_selector``)."""
        return self._hash is not None

    def add_member(self, action: str, args: tuple[int, ...], bound: Any) -> int:
        """Create a member; returns its id."""
        mid = self._next_member
        self._next_member += 1
        self._members[mid] = (action, args, bound)
        return mid

    def member(self, member_id: int) -> tuple[str, tuple[int, ...], Any]:
        """``(action, args, bound)`` of a member."""
        if member_id not in self._members:
            raise ValueError(f"action profile {self.name}: no member {member_id}")
        return self._members[member_id]

    def add_group(self, member_ids: list[int]) -> int:
        """Create a group of existing members (selectors only); returns its id."""
        if not self.is_selector:
            raise ValueError(f"{self.name} is an action profile, not a selector: no groups")
        bound = [self.member(m)[2] for m in member_ids]
        gid = self._next_group
        self._next_group += 1
        self._groups[gid] = SelectorGroup(bound, self._hash, self._width)
        return gid

    def new_group(self, bound_members: list[Any]) -> SelectorGroup:
        """A group over already bound members, outside this profile's id space.

        The P4Runtime server keeps its own member and group ids (the
        controller chooses them) and uses this for the data-plane object.
        """
        if not self.is_selector:
            raise ValueError(f"{self.name} is an action profile, not a selector: no groups")
        return SelectorGroup(bound_members, self._hash, self._width)

    def group(self, group_id: int) -> SelectorGroup:
        """A group by id."""
        if group_id not in self._groups:
            raise ValueError(f"action selector {self.name}: no group {group_id}")
        return self._groups[group_id]
