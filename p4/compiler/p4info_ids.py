"""P4Runtime ids and aliases as p4c assigns them (its ``P4RuntimeSymbolTable``).

An id is the object kind (``P4Ids.Prefix``) in the top byte and the low 24 bits of
the Jenkins one-at-a-time hash of the fully qualified name. ``@id(n)`` on a
declaration fixes the id (the kind's prefix is added if the top byte is empty).
Ids are handed out per kind in sorted name order after every ``@id`` is taken; a
collision probes the next hash value, as p4c does. An alias is the shortest
dot-separated suffix of a name that no other symbol of any kind shares.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2

from netweft.p4.compiler.errors import P4Error, SourceLoc

P4Ids = p4info_pb2.P4Ids

ACTION = P4Ids.ACTION
TABLE = P4Ids.TABLE
VALUE_SET = P4Ids.VALUE_SET
CONTROLLER_HEADER = P4Ids.CONTROLLER_HEADER
ACTION_PROFILE = P4Ids.ACTION_PROFILE
COUNTER = P4Ids.COUNTER
DIRECT_COUNTER = P4Ids.DIRECT_COUNTER
METER = P4Ids.METER
DIRECT_METER = P4Ids.DIRECT_METER
REGISTER = P4Ids.REGISTER
DIGEST = P4Ids.DIGEST

_MASK32 = 0xFFFFFFFF


def jenkins_one_at_a_time(name: str) -> int:
    """Bob Jenkins' one-at-a-time hash over the UTF-8 bytes of ``name`` (32 bits)."""
    h = 0
    for b in name.encode():
        h = (h + b) & _MASK32
        h = (h + (h << 10)) & _MASK32
        h ^= h >> 6
    h = (h + (h << 3)) & _MASK32
    h ^= h >> 11
    h = (h + (h << 15)) & _MASK32
    return h


def hashed_id(kind: int, name: str) -> int:
    """The id p4c gives ``name`` of object kind ``kind`` when nothing collides."""
    return (kind << 24) | (jenkins_one_at_a_time(name) & 0xFFFFFF)


class SuffixSet:
    """Dot-separated names, answering each one's shortest unique suffix (p4c's alias)."""

    def __init__(self) -> None:
        self._names: set[str] = set()
        self._root: dict = {}  # component -> [instances, children]

    def add(self, name: str) -> None:
        if name in self._names:
            return
        self._names.add(name)
        node = self._root
        for comp in reversed(name.split(".")):
            entry = node.setdefault(comp, [0, {}])
            entry[0] += 1
            node = entry[1]

    def shortest_unique_suffix(self, name: str) -> str:
        comps = name.split(".")
        node = self._root
        needed = 0
        for comp in reversed(comps):
            entry = node[comp]
            needed += 1
            node = entry[1]
            if entry[0] < 2:
                break
        return ".".join(comps[len(comps) - needed:])


@dataclass
class SymbolTable:
    """Collects (kind, name, optional @id) symbols, then assigns ids as p4c does."""

    _symbols: dict[int, dict[str, int | None]] = field(default_factory=dict)
    _suffixes: SuffixSet = field(default_factory=SuffixSet)
    _taken: set[int] = field(default_factory=set)
    _frozen: bool = False

    def add(self, kind: int, name: str, explicit_id: int | None = None,
            loc: SourceLoc | None = None) -> None:
        """Declare a symbol; a repeated (kind, name) is ignored as in p4c."""
        if self._frozen:
            raise RuntimeError("symbol table already has its ids")
        table = self._symbols.setdefault(kind, {})
        if name in table:
            return
        ident = None
        if explicit_id is not None:
            ident = self._external_id(kind, explicit_id, name, loc)
        table[name] = ident
        self._suffixes.add(name)

    def _external_id(self, kind: int, value: int, name: str, loc: SourceLoc | None) -> int:
        where = loc or SourceLoc("<p4info>", 0, 0)
        if value < 0 or value > _MASK32:
            raise P4Error(f"{name}: @id should be an unsigned integer", where)
        prefix = value & 0xFF000000
        if prefix not in (0, kind << 24):
            raise P4Error(f"{name}: @id has the wrong 8-bit prefix", where)
        ident = value | (kind << 24)
        if ident in self._taken:
            raise P4Error(f"@id {ident} is assigned to multiple declarations", where)
        self._taken.add(ident)
        return ident

    def assign_ids(self) -> None:
        """Give every symbol without ``@id`` its hashed id, probing past collisions."""
        for kind in sorted(self._symbols):
            table = self._symbols[kind]
            for name in sorted((n for n, i in table.items() if i is None),
                               key=lambda n: n.encode()):
                start = jenkins_one_at_a_time(name)
                value = start
                while True:
                    ident = (kind << 24) | (value & 0xFFFFFF)
                    if ident not in self._taken:
                        break
                    value = (value + 1) & _MASK32
                    if value == start:
                        raise P4Error(f"No available id to represent {name} in P4Runtime",
                                      SourceLoc("<p4info>", 0, 0))
                self._taken.add(ident)
                table[name] = ident
        self._frozen = True

    def id_of(self, kind: int, name: str) -> int:
        ident = self._symbols[kind][name]
        assert ident is not None, "assign_ids() first"
        return ident

    def has(self, kind: int, name: str) -> bool:
        return name in self._symbols.get(kind, {})

    def alias(self, name: str) -> str:
        return self._suffixes.shortest_unique_suffix(name)
