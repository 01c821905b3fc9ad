"""A P4 match-action table: entries, priorities and fast lookup.

Semantics follow P4Runtime on BMv2: among matching entries of a table
with ternary, range or optional keys the one with the largest
``priority`` wins (ties: the earlier entry); a table whose only
non-exact key is one ``lpm`` key picks the longest prefix; an all-exact
table is a dictionary.  A miss runs the default action.

The table is independent of how actions run: the pipeline gives a
``bind`` callback that turns ``(action name, argument tuple)`` into
whatever it wants to call per packet, and :meth:`MatchTable.lookup`
returns that bound object.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from netweft.emulation.v1model.key_values import BadValueError, parse_value
from netweft.emulation.v1model.masked_index import MaskedIndex
from netweft.emulation.v1model.names import resolve_name

MATCH_KINDS = ("exact", "lpm", "ternary", "range", "optional", "selector")


class TableError(ValueError):
    """A control-plane request a table cannot honour (bad key, action or value)."""


@dataclass(frozen=True)
class KeySpec:
    """One key of a table: p4c control-plane name, match kind and width in bits."""

    name: str
    match_kind: str
    width: int


@dataclass(frozen=True)
class ActionSpec:
    """An action a table can run: fq name, ``(param name, width)`` list, scope flags."""

    name: str
    params: tuple[tuple[str, int], ...]
    default_only: bool = False
    table_only: bool = False


@dataclass
class TableEntry:
    """An installed entry. ``match`` holds one normalised tuple per key.

    Normalised forms: exact ``(value,)``, lpm ``(value, prefix_len)``,
    ternary ``(value, mask)``, range ``(lo, hi)``, optional ``(value,)`` or
    ``None`` for a wildcard.  ``hits`` counts the lookups the entry won, in
    tables that support idle timeouts only (``support_timeout = true``): the
    P4Runtime server's idle-timeout sweep compares it between sweeps.
    """

    match: tuple[Any, ...]
    action: str
    args: tuple[int, ...]
    priority: int
    seq: int
    bound: Any = None
    counter: list[int] = field(default_factory=lambda: [0, 0])
    meter: Any = None
    hits: int = 0


class MatchTable:
    """One table's entries and default action."""

    def __init__(self, name: str, keys: Sequence[KeySpec], actions: Sequence[ActionSpec],
                 bind: Callable[[str, tuple[int, ...]], Any] | None = None,
                 size: int | None = None) -> None:
        for key in keys:
            if key.match_kind not in MATCH_KINDS:
                raise TableError(f"table {name}: unsupported match kind {key.match_kind!r}")
        self.name = name
        self.keys = tuple(keys)
        self.actions = {a.name: a for a in actions}
        self.size = size
        self._bind = bind or (lambda action, args: (action, args))
        self._entries: list[TableEntry] = []
        self._seq = 0
        self.default_action: str | None = None
        self.default_args: tuple[int, ...] = ()
        self.default_bound: Any = None
        self.default_const = False
        kinds = [k.match_kind for k in self.keys]
        self._all_exact = all(k == "exact" for k in kinds)
        self._lpm_index = kinds.index("lpm") if kinds.count("lpm") == 1 and all(
            k in ("exact", "lpm") for k in kinds) else None
        self._uses_priority = any(k in ("ternary", "range", "optional") for k in kinds)
        self._maskable = "range" not in kinds and "selector" not in kinds
        self._exact: dict[tuple[int, ...], TableEntry] = {}
        self._lpm_levels: list[tuple[int, int, dict[tuple[int, ...], TableEntry]]] = []
        self._ordered: list[TableEntry] = []
        self._masked = MaskedIndex(_order_key)

    # -- control plane -------------------------------------------------------------

    def set_default(self, action: str, params: Mapping[str, object] | Sequence[object] = (),
                    const: bool = False, force: bool = False) -> None:
        """Set the action (and its arguments) run on a miss."""
        if self.default_const and not force:
            raise TableError(f"table {self.name}: the default action is const")
        spec = self._action(action)
        if spec.table_only:
            raise TableError(f"table {self.name}: action {spec.name} is @tableonly")
        args = self._args(spec, params)
        self.default_action, self.default_args = spec.name, args
        self.default_bound = self._bind(spec.name, args)
        self.default_const = const

    def bind_action(self, action: str, params: Mapping[str, object] | Sequence[object] = ()
                    ) -> tuple[str, tuple[int, ...], Any]:
        """``(fq action name, argument tuple, bound)`` for an action of this table."""
        spec = self._action(action)
        args = self._args(spec, params)
        return spec.name, args, self._bind(spec.name, args)

    @property
    def needs_priority(self) -> bool:
        """Whether entries need a priority (a ternary, range or optional key)."""
        return self._uses_priority

    def check_control_plane_priority(self, priority: int | None) -> None:
        """Reject an entry priority that is missing or meaningless.

        Tables with ternary, range or optional keys need a priority, as P4Runtime
        and simple_switch_CLI's table_add require.  P4Runtime further excludes 0
        (a P4Runtime front must refuse it itself); p4c's STF tests use 0 as the
        lowest rank, so this API accepts it.  Other tables take none (``None`` or
        0).  Const entries are ranked by the compiler and skip this.
        """
        if self._uses_priority:
            if priority is None:
                raise TableError(f"table {self.name} has ternary, range or optional keys: "
                                 "the entry needs a priority (the larger wins)")
            if int(priority) < 0:
                raise TableError(f"table {self.name}: priority {priority} is invalid "
                                 "(a non-negative number; the larger wins)")
        elif priority not in (None, 0):
            raise TableError(f"table {self.name} has only exact/lpm keys: its entries take "
                             f"no priority (got {priority})")

    def add(self, match: Mapping[str, object] | Sequence[object], action: str,
            params: Mapping[str, object] | Sequence[object] = (),
            priority: int | None = None) -> TableEntry:
        """Install an entry; returns it. Raises :class:`TableError` on bad input."""
        spec = self._action(action)
        if spec.default_only:
            raise TableError(f"table {self.name}: action {spec.name} is @defaultonly")
        args = self._args(spec, params)
        return self.add_bound(match, spec.name, args, self._bind(spec.name, args), priority)

    def add_bound(self, match: Mapping[str, object] | Sequence[object], action: str,
                  args: tuple[int, ...], bound: Any, priority: int | None) -> TableEntry:
        """Install an entry whose action was already bound (action profiles use this)."""
        if not self.keys:
            raise TableError(f"table {self.name} has no key: only its default action can be set")
        norm = self._normalise(match)
        if self.size is not None and len(self._entries) >= self.size:
            raise TableError(f"table {self.name}: full ({self.size} entries)")
        if self._uses_priority:
            prio = 0 if priority is None else int(priority)
        else:
            prio = 0
        if self._exists(norm, prio):
            raise TableError(f"table {self.name}: an entry with this match already exists")
        entry = self._new_entry(norm, action, args, prio, self._seq, bound)
        self._seq += 1
        self._entries.append(entry)
        self._index(entry)
        return entry

    def _new_entry(self, match: tuple[Any, ...], action: str, args: tuple[int, ...],
                   priority: int, seq: int, bound: Any) -> TableEntry:
        """A new entry object (a back end may keep entries of its own kind)."""
        return TableEntry(match, action, args, priority, seq, bound)

    def modify(self, entry: TableEntry, action: str,
               params: Mapping[str, object] | Sequence[object] = ()) -> None:
        """Change the action (and arguments) of an installed entry; its counters stay."""
        if entry not in self._entries:
            raise TableError(f"table {self.name}: no such entry")
        spec = self._action(action)
        if spec.default_only:
            raise TableError(f"table {self.name}: action {spec.name} is @defaultonly")
        args = self._args(spec, params)
        entry.action, entry.args, entry.bound = spec.name, args, self._bind(spec.name, args)

    def set_bound(self, entry: TableEntry, action: str, args: tuple[int, ...],
                  bound: Any) -> None:
        """Give an installed entry an action already checked and bound (P4Runtime's
        MODIFY); a back end that keeps entries elsewhere (the native one) is told."""
        entry.action, entry.args, entry.bound = action, args, bound

    def delete(self, entry: TableEntry) -> None:
        """Remove an installed entry."""
        self._entries.remove(entry)
        self._rebuild()

    def clear(self) -> None:
        """Remove all entries (the default action stays)."""
        self._entries.clear()
        self._rebuild()

    @property
    def entries(self) -> list[TableEntry]:
        """Installed entries in insertion order."""
        return list(self._entries)

    # -- data plane ----------------------------------------------------------------

    def lookup(self, key: tuple[int, ...]) -> TableEntry | None:
        """The winning entry for a key tuple (values in key order), or ``None``."""
        if self._all_exact:
            return self._exact.get(key)
        i = self._lpm_index
        if i is not None:
            value = key[i]
            head, tail = key[:i], key[i + 1:]
            for _plen, mask, level in self._lpm_levels:
                hit = level.get(head + (value & mask,) + tail)
                if hit is not None:
                    return hit
            return None
        if self._maskable:
            return self._masked.lookup(key)
        for entry in self._ordered:
            if _matches(entry.match, key, self.keys):
                return entry
        return None

    # -- internals -----------------------------------------------------------------

    def _action(self, action: str) -> ActionSpec:
        try:
            return self.actions[resolve_name(action, self.actions, f"action of table {self.name}")]
        except LookupError as err:
            raise TableError(str(err)) from None

    def _args(self, spec: ActionSpec, params: Mapping[str, object] | Sequence[object]
              ) -> tuple[int, ...]:
        if isinstance(params, Mapping):
            unknown = set(params) - {n for n, _ in spec.params}
            if unknown:
                raise TableError(f"action {spec.name}: unknown parameter(s) "
                                 f"{', '.join(sorted(unknown))}")
            missing = [n for n, _ in spec.params if n not in params]
            if missing:
                raise TableError(f"action {spec.name}: missing parameter(s) {', '.join(missing)}")
            values = [params[n] for n, _ in spec.params]
        else:
            values = list(params)
            if len(values) != len(spec.params):
                raise TableError(f"action {spec.name}: expects {len(spec.params)} "
                                 f"argument(s), got {len(values)}")
        try:
            return tuple(parse_value(v, w, f"action {spec.name} parameter {n}")
                         for v, (n, w) in zip(values, spec.params, strict=True))
        except BadValueError as err:
            raise TableError(str(err)) from None

    def _normalise(self, match: Mapping[str, object] | Sequence[object]) -> tuple[Any, ...]:
        if isinstance(match, Mapping):
            by_name: dict[str, object] = {}
            names = [k.name for k in self.keys]
            for given, value in match.items():
                if given not in names and given.endswith(".isValid()"):
                    given = given[:-len("isValid()")] + "$valid$"  # p4c's key name
                try:
                    by_name[resolve_name(given, names, f"key of table {self.name}")] = value
                except LookupError as err:
                    raise TableError(str(err)) from None
            values = []
            for key in self.keys:
                if key.name in by_name:
                    values.append(by_name[key.name])
                elif key.match_kind in ("ternary", "optional", "lpm", "range"):
                    values.append(None)  # wildcard, as P4Runtime's omitted field
                else:
                    raise TableError(f"table {self.name}: missing exact key {key.name}")
        else:
            values = list(match)
            if len(values) != len(self.keys):
                raise TableError(f"table {self.name}: expects {len(self.keys)} key value(s), "
                                 f"got {len(values)}")
        try:
            return tuple(_normalise_one(key, v, self.name) for key, v in zip(self.keys, values,
                                                                            strict=True))
        except BadValueError as err:
            raise TableError(str(err)) from None

    def _exists(self, norm: tuple[Any, ...], prio: int) -> bool:
        if self._all_exact:
            return tuple(m[0] for m in norm) in self._exact
        if self._lpm_index is not None:
            plen = norm[self._lpm_index][1]
            key = tuple(m[0] for m in norm)
            return any(lp == plen and key in level for lp, _m, level in self._lpm_levels)
        if self._maskable:
            return self._masked.contains(*self._masks_and_values(norm), prio)
        return any(e.match == norm and e.priority == prio for e in self._ordered)

    def _masks_and_values(self, norm: tuple[Any, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        masks, values = [], []
        for m, spec in zip(norm, self.keys, strict=True):
            full = (1 << spec.width) - 1
            kind = spec.match_kind
            if kind == "ternary":
                mask, value = m[1], m[0]
            elif kind == "lpm":
                mask, value = full ^ ((1 << (spec.width - m[1])) - 1), m[0]
            elif m is None:  # optional wildcard
                mask, value = 0, 0
            else:            # exact, optional value
                mask, value = full, m[0]
            masks.append(mask)
            values.append(value & mask)
        return tuple(masks), tuple(values)

    def _index(self, entry: TableEntry) -> None:
        if self._all_exact:
            self._exact[tuple(m[0] for m in entry.match)] = entry
        elif self._lpm_index is not None:
            i = self._lpm_index
            plen = entry.match[i][1]
            width = self.keys[i].width
            mask = ((1 << width) - 1) ^ ((1 << (width - plen)) - 1)
            k = tuple(m[0] for m in entry.match)
            for lp, _mask, level in self._lpm_levels:
                if lp == plen:
                    level[k] = entry
                    return
            self._lpm_levels.append((plen, mask, {k: entry}))
            self._lpm_levels.sort(key=lambda t: -t[0])
        elif self._maskable:
            self._masked.add(*self._masks_and_values(entry.match), entry)
        else:
            insort(self._ordered, entry, key=_order_key)

    def _rebuild(self) -> None:
        self._exact = {}
        self._lpm_levels = []
        self._ordered = []
        self._masked = MaskedIndex(_order_key)
        for entry in self._entries:
            self._index(entry)


def _order_key(entry: TableEntry) -> tuple[int, int]:
    """Scan order of prioritised entries: larger priority first, then insertion order."""
    return (-entry.priority, entry.seq)


def _normalise_one(key: KeySpec, value: object, table: str) -> tuple[Any, ...] | None:
    what = f"table {table} key {key.name}"
    w = key.width
    full = (1 << w) - 1
    kind = key.match_kind
    if kind == "exact":
        return (parse_value(value, w, what),)
    if kind == "lpm":
        if value is None:
            return (0, 0)
        if isinstance(value, tuple):
            if len(value) != 2:
                raise BadValueError(f"{what}: an lpm value is (value, prefix_len)")
            raw, plen = value
            plen = int(plen)
        else:
            raw, plen = value, w
        if not 0 <= plen <= w:
            raise BadValueError(f"{what}: prefix length {plen} outside 0..{w}")
        mask = full ^ ((1 << (w - plen)) - 1)
        return (parse_value(raw, w, what) & mask, plen)
    if kind == "ternary":
        if value is None:
            return (0, 0)
        if isinstance(value, tuple):
            if len(value) != 2:
                raise BadValueError(f"{what}: a ternary value is (value, mask)")
            v, m = parse_value(value[0], w, what), parse_value(value[1], w, what)
        else:
            v, m = parse_value(value, w, what), full
        return (v & m, m)
    if kind == "range":
        if value is None:
            return (0, full)
        if not isinstance(value, tuple) or len(value) != 2:
            raise BadValueError(f"{what}: a range value is (low, high)")
        lo, hi = parse_value(value[0], w, what), parse_value(value[1], w, what)
        if lo > hi:
            raise BadValueError(f"{what}: range low {lo} is above high {hi}")
        return (lo, hi)
    if kind == "optional":
        if value is None:
            return None
        return (parse_value(value, w, what),)
    raise BadValueError(f"{what}: match kind {kind} takes no entries")


def _matches(match: tuple[Any, ...], key: tuple[int, ...], specs: tuple[KeySpec, ...]) -> bool:
    for m, v, spec in zip(match, key, specs, strict=False):
        kind = spec.match_kind
        if kind == "exact":
            if v != m[0]:
                return False
        elif kind == "ternary":
            if v & m[1] != m[0]:
                return False
        elif kind == "lpm":
            plen = m[1]
            if plen and (v >> (spec.width - plen)) != (m[0] >> (spec.width - plen)):
                return False
        elif kind == "range":
            if not m[0] <= v <= m[1]:
                return False
        elif kind == "optional":
            if m is not None and v != m[0]:
                return False
    return True
