"""p4c's STF packet tests, run against netweft's embedded switch.

STF ("simple test framework") files sit beside p4c's sample programs: table
entries, packets in, packets expected out.  This module parses them the way
p4c's ``backends/bmv2`` test driver understands them and runs them through
:class:`~netweft.emulation.switch.SoftSwitch`'s public API only, so that
programs and tests nobody in this project wrote can measure the switch.

>>> result = run_stf_files("prog.p4", "prog.stf")
>>> result.passed, [v.describe() for v in result.verdicts]

Commands (one per line, ``#`` starts a comment, keywords are case-blind):

* ``packet PORT HEX...`` -- send a packet (hex digits, spaces ignored; as in
  p4c's driver, a lone last digit is a byte of its own); a packet without
  data is not sent (BMv2 under p4c's driver receives nothing).
* ``expect PORT HEX...[$]`` -- the next packet out of ``PORT``; ``*`` is a
  wildcard nibble; a trailing ``$`` requires the exact length (otherwise the
  packet may be longer than the expectation, as in p4c, which also compares
  an odd number of nibbles as a prefix).  ``expect PORT``
  without data allows any packets on that port.  Packets on a port with no
  expectation fail the test.
* ``add TABLE [PRIORITY] KEY:VALUE... ACTION(PARAM:VALUE, ...) [= HANDLE]``;
  values: numbers (decimal, ``0x``, ``0b``, ``0o``), ``value/prefix_len``
  (lpm; without ``/`` the prefix covers the digits written), ``0x0a**``
  (ternary: ``*`` nibbles are wildcards, the mask covers the digits
  written), ``value&&&mask``, ``lo->hi`` or ``lo..hi`` (range).  Key names
  may be the p4c name or any suffix (``hdr.ipv4.dstAddr``, ``dstAddr``);
  ``h.$valid$`` and ``h.valid`` mean ``h.isValid()``, ``stack$0`` means
  ``stack[0]``.  A larger priority wins, as in P4Runtime (p4c's driver sends
  ``10000 - priority`` to BMv2, where the smaller number wins).
* ``setdefault TABLE ACTION(PARAM:VALUE, ...)``.
* ``mirroring_add SESSION PORT``; ``mc_mgrp_create GROUP``,
  ``mc_node_create RID PORT...`` (nodes are numbered 0, 1, ... in creation
  order), ``mc_node_associate GROUP NODE``, ``mc_node_dissociate GROUP NODE``.
* ``register_write NAME INDEX VALUE``, ``register_reset NAME``,
  ``register_read NAME INDEX [OP VALUE]``.
* ``counter_read NAME INDEX``, ``counter_reset NAME``,
  ``check_counter NAME(INDEX) [packets|bytes] [OP N]`` (``OP`` one of
  ``== != < <= > >=``; without a check the counter must be zero).
* ``wait`` -- nothing to do: the embedded switch runs packets to completion.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class STFError(ValueError):
    """A malformed STF file; ``str()`` is ``file.stf:line: message``."""

    def __init__(self, filename: str, line: int, message: str) -> None:
        self.filename, self.line, self.msg = filename, line, message
        super().__init__(f"{filename}:{line}: {message}")


# ---------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class Command:
    """One STF statement: its keyword, line number and parsed arguments."""

    keyword: str
    line: int
    args: dict[str, Any] = field(default_factory=dict)


_COMPARISONS: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge,
}

_NAME = r"[A-Za-z_$][A-Za-z0-9_$.\[\]]*"
_ACTION = re.compile(rf"^({_NAME})\s*\((.*)\)\s*$", re.S)
_CHECK_COUNTER = re.compile(
    rf"^({_NAME})\s*\(\s*([^)]*?)\s*\)\s*(?:(packets|bytes)\s*)?(?:(==|!=|<=|>=|<|>)\s*(\S+))?$",
    re.I)


def parse_stf(text: str, filename: str = "<stf>") -> list[Command]:
    """Parse STF text into commands; raises :class:`STFError` on malformed lines."""
    commands = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        word, *tail = line.split(None, 1)
        rest = tail[0] if tail else ""
        keyword = word.lower()
        parse = _PARSERS.get(keyword)
        if parse is None:
            raise STFError(filename, number, f"unknown STF command {word!r}")
        try:
            commands.append(Command(keyword, number, parse(rest)))
        except _LineError as err:
            raise STFError(filename, number, f"{keyword}: {err}") from None
    return commands


class _LineError(ValueError):
    """A problem inside one line; turned into :class:`STFError` with the location."""


def _int(text: str, what: str) -> int:
    try:
        return int(text, 0) if not re.fullmatch(r"0\d+", text) else int(text, 10)
    except ValueError:
        raise _LineError(f"{what} {text!r} is not a number") from None


def _port(text: str) -> int:
    port = _int(text, "port")
    if not 0 <= port < 512:
        raise _LineError(f"port {port} is outside 0..511")
    return port


def _split_first(rest: str) -> tuple[str, str]:
    words = rest.split(None, 1)
    return (words[0], words[1] if len(words) > 1 else "") if words else ("", "")


def _parse_packet(rest: str) -> dict[str, Any]:
    port, data = _split_first(rest)
    if not port:
        raise _LineError("expected 'packet PORT HEX...'")
    digits = "".join(data.split())  # empty: a zero-length packet, as p4c's driver sends
    if not re.fullmatch(r"[0-9a-fA-F]*", digits):
        bad = re.search(r"[^0-9a-fA-F]", digits)
        raise _LineError(f"invalid hex digit {bad.group()!r} in packet data")
    # p4c's HexToByte reads digit pairs, so a lone last digit is a byte of its own (0x0N)
    data_bytes = bytes(int(digits[i:i + 2], 16) for i in range(0, len(digits), 2))
    return {"port": _port(port), "data": data_bytes}


def _parse_expect(rest: str) -> dict[str, Any]:
    port, data = _split_first(rest)
    if not port:
        raise _LineError("expected 'expect PORT [HEX...]'")
    pattern = "".join(data.split())
    exact = pattern.endswith("$")
    if exact:
        pattern = pattern[:-1]
    if not re.fullmatch(r"[0-9a-fA-F*]*", pattern):
        bad = re.search(r"[^0-9a-fA-F*]", pattern)
        raise _LineError(f"invalid character {bad.group()!r} in expected packet data")
    if exact and not pattern:
        raise _LineError("'$' needs packet data before it")
    return {"port": _port(port), "pattern": pattern.upper() or None, "exact": exact}


def _split_action(text: str) -> tuple[str, list[tuple[str, str]]]:
    m = _ACTION.match(text.strip())
    if not m:
        raise _LineError(f"expected ACTION(PARAM:VALUE, ...), got {text.strip()!r}")
    args = []
    for part in m.group(2).split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition(":")
        if not sep or not name.strip() or not value.strip():
            raise _LineError(f"action argument {part!r} is not NAME:VALUE")
        args.append((name.strip(), value.strip()))
    return m.group(1), args


def _parse_add(rest: str) -> dict[str, Any]:
    rest = re.sub(r"\)\s*=\s*\S+\s*$", ")", rest)  # '= HANDLE' names the entry; unused
    table, rest = _split_first(rest)
    if not table or "(" in table:
        raise _LineError("expected 'add TABLE [PRIORITY] KEY:VALUE... ACTION(...)'")
    paren = rest.find("(")
    if paren < 0:
        raise _LineError("missing ACTION(...)")
    head = rest[:paren].split()
    if not head:
        raise _LineError("missing action name")
    action_text = head[-1] + rest[paren:]
    words = head[:-1]
    priority = None
    if words and re.fullmatch(r"\d+", words[0]):
        priority = int(words.pop(0))
    keys = []
    for word in words:
        name, sep, value = word.partition(":")
        if not sep or not name or not value:
            raise _LineError(f"match {word!r} is not KEY:VALUE")
        keys.append((name, value))
    action, args = _split_action(action_text)
    return {"table": table, "priority": priority, "keys": keys, "action": action,
            "params": args}


def _parse_setdefault(rest: str) -> dict[str, Any]:
    table, rest = _split_first(rest)
    if not table or not rest.strip():
        raise _LineError("expected 'setdefault TABLE ACTION(...)'")
    action, args = _split_action(rest)
    return {"table": table, "action": action, "params": args}


def _words(rest: str, names: Sequence[str], minimum: int | None = None) -> list[str]:
    """The words of ``rest``: exactly ``names`` of them, or at least ``minimum``."""
    words = rest.split()
    wrong = len(words) < minimum if minimum is not None else len(words) != len(names)
    if wrong:
        raise _LineError(f"expected {' '.join(n.upper() for n in names)}")
    return words


def _parse_mirroring_add(rest: str) -> dict[str, Any]:
    session, port = _words(rest, ["session", "port"])
    return {"session": _int(session, "session"), "port": _port(port)}


def _parse_mgrp(rest: str) -> dict[str, Any]:
    (group,) = _words(rest, ["group"])
    return {"group": _int(group, "group")}


def _parse_node_create(rest: str) -> dict[str, Any]:
    words = _words(rest, ["rid", "port..."], minimum=1)
    ports = [w for w in words[1:] if w != "|"]
    return {"rid": _int(words[0], "rid"), "ports": [_port(p) for p in ports]}


def _parse_node_associate(rest: str) -> dict[str, Any]:
    group, node = _words(rest, ["group", "node"])
    return {"group": _int(group, "group"), "node": _int(node, "node")}


def _parse_register_write(rest: str) -> dict[str, Any]:
    name, index, value = _words(rest, ["register", "index", "value"])
    return {"name": name, "index": _int(index, "index"), "value": _int(value, "value")}


def _parse_register_read(rest: str) -> dict[str, Any]:
    m = re.fullmatch(r"(\S+)\s+(\S+)(?:\s*(==|!=|<=|>=|<|>)\s*(\S+))?", rest.strip())
    if not m:
        raise _LineError("expected 'register_read REGISTER INDEX [OP VALUE]'")
    op, value = m.group(3), m.group(4)
    return {"name": m.group(1), "index": _int(m.group(2), "index"), "op": op,
            "value": _int(value, "value") if value is not None else None}


def _parse_name(rest: str) -> dict[str, Any]:
    (name,) = _words(rest, ["name"])
    return {"name": name}


def _parse_counter_read(rest: str) -> dict[str, Any]:
    name, index = _words(rest, ["counter", "index"])
    return {"name": name, "index": _int(index, "index")}


def _parse_check_counter(rest: str) -> dict[str, Any]:
    m = _CHECK_COUNTER.match(rest.strip())
    if not m:
        raise _LineError("expected 'check_counter NAME(INDEX) [packets|bytes] [OP N]'")
    kind = (m.group(3) or "packets").lower()
    op = m.group(4) or "=="
    value = _int(m.group(5), "value") if m.group(5) is not None else 0
    return {"name": m.group(1), "index": _int(m.group(2), "index"), "kind": kind, "op": op,
            "value": value}


def _parse_nothing(rest: str) -> dict[str, Any]:
    if rest.strip():
        raise _LineError(f"takes no arguments, got {rest.strip()!r}")
    return {}


_PARSERS: dict[str, Callable[[str], dict[str, Any]]] = {
    "packet": _parse_packet,
    "expect": _parse_expect,
    "add": _parse_add,
    "setdefault": _parse_setdefault,
    "mirroring_add": _parse_mirroring_add,
    "mc_mgrp_create": _parse_mgrp,
    "mc_mgrp_destroy": _parse_mgrp,
    "mc_node_create": _parse_node_create,
    "mc_node_associate": _parse_node_associate,
    "mc_node_dissociate": _parse_node_associate,
    "register_write": _parse_register_write,
    "register_read": _parse_register_read,
    "register_reset": _parse_name,
    "counter_read": _parse_counter_read,
    "counter_reset": _parse_name,
    "check_counter": _parse_check_counter,
    "wait": _parse_nothing,
}


# ---------------------------------------------------------------------------- values


def _key_value(text: str, kind: str, width: int) -> Any:
    """An STF key value as the tuple form ``SoftSwitch.table_add`` takes."""
    full = (1 << width) - 1
    if "&&&" in text:
        value, mask = text.split("&&&", 1)
        v, m = _int(value, "key value") & full, _int(mask, "key mask") & full
        if kind == "lpm":
            plen = bin(m).count("1")
            if m != full ^ ((1 << (width - plen)) - 1):
                raise _LineError(f"mask {mask!r} of an lpm key is not a prefix mask")
            return (v, plen)
        if kind not in ("ternary", "optional"):
            raise _LineError(f"value&&&mask needs a ternary or lpm key, not {kind}")
        return (v, m)
    for sep in ("->", ".."):
        if sep in text and kind == "range":
            lo, hi = text.split(sep, 1)
            return (_int(lo, "range low"), _int(hi, "range high"))
    if kind == "lpm":
        if "/" in text:
            value, plen = text.split("/", 1)
            return (_wild_int(value), _int(plen, "prefix length"))
        return (_wild_int(text), min(width, _written_bits(text)))
    if kind == "ternary":
        if "*" in text or text[:2].lower() in ("0x", "0b", "0o"):
            return _ternary(text, width)
        return (_int(text, "key value"), full)
    if "*" in text:
        raise _LineError(f"wildcards in {text!r} need a ternary or lpm key, not {kind}")
    if kind == "range":
        value = _int(text, "key value")
        return (value, value)
    return _int(text, "key value")


def _bits_per_digit(text: str) -> tuple[str, int]:
    prefix = text[:2].lower()
    if prefix == "0x":
        return text[2:], 4
    if prefix == "0b":
        return text[2:], 1
    if prefix == "0o":
        return text[2:], 3
    return "", 0


def _written_bits(text: str) -> int:
    digits, bits = _bits_per_digit(text)
    if not bits:  # a decimal: as many bits as its hex spelling (p4c's rule)
        return 4 * len(f"{_int(text, 'key value'):x}")
    return bits * len(digits.replace("*", ""))


def _wild_int(text: str) -> int:
    return _int(text.replace("*", "0"), "key value")


def _ternary(text: str, width: int) -> tuple[int, int]:
    digits, bits = _bits_per_digit(text)
    if not digits:
        raise _LineError(f"ternary value {text!r} has no digits")
    base = {4: 16, 1: 2, 3: 8}[bits]
    value = mask = 0
    for d in digits:
        if d == "*":
            nibble_value, nibble_mask = 0, 0
        else:
            try:
                nibble_value = int(d, base)
            except ValueError:
                raise _LineError(f"invalid digit {d!r} in {text!r}") from None
            nibble_mask = (1 << bits) - 1
        value = (value << bits) | nibble_value
        mask = (mask << bits) | nibble_mask
    full = (1 << width) - 1
    return (value & full, mask & full)


# ---------------------------------------------------------------------------- results


@dataclass
class Verdict:
    """The outcome of one ``expect`` line (or of unexpected output on a port)."""

    line: int | None
    port: int
    index: int
    ok: bool
    expected: str | None
    actual: bytes | None
    reason: str = ""

    def describe(self) -> str:
        """One line: PASS/FAIL, where, and why."""
        where = f"line {self.line}: " if self.line is not None else ""
        status = "PASS" if self.ok else "FAIL"
        text = f"{status} {where}port {self.port} packet #{self.index + 1}"
        return f"{text}: {self.reason}" if self.reason else text

    def diff(self) -> str:
        """Expected against actual bytes, with ``^^`` under each byte that differs."""
        if self.actual is None or self.expected is None:
            what, data = (("expected", self.expected) if self.actual is None
                          else ("actual", _pattern_hex(self.actual)))
            return f"  {what}: {' '.join(data[i:i + 2] for i in range(0, len(data), 2))}"
        return format_diff(self.expected, self.actual)


@dataclass
class STFResult:
    """Everything a run produced: verdicts per expectation, errors, and reads."""

    verdicts: list[Verdict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    outputs: dict[int, list[bytes]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when no error occurred and every verdict is a pass."""
        return not self.errors and all(v.ok for v in self.verdicts)


def _pattern_hex(data: bytes) -> str:
    return data.hex().upper()


def match_packet(pattern: str, data: bytes, exact: bool) -> str:
    """Empty when ``data`` satisfies ``pattern`` (nibbles, ``*`` wildcards), else why not."""
    actual = _pattern_hex(data)
    if len(actual) < len(pattern):
        return f"too short: {len(data)} bytes, expected {(len(pattern) + 1) // 2}"
    for i, nibble in enumerate(pattern):
        if nibble != "*" and nibble != actual[i]:
            return f"differs at byte {i // 2}"
    if exact and len(actual) > len(pattern):
        return f"too long: {len(data)} bytes, expected exactly {len(pattern) // 2}"
    return ""


def format_diff(pattern: str | None, data: bytes | None, per_row: int = 16) -> str:
    """Rows of expected and actual hex bytes, with ``^^`` marking differences."""
    exp = pattern or ""
    act = _pattern_hex(data) if data is not None else ""
    exp_bytes = [exp[i:i + 2].ljust(2) for i in range(0, len(exp), 2)]
    act_bytes = [act[i:i + 2] for i in range(0, len(act), 2)]
    n = max(len(exp_bytes), len(act_bytes))
    lines = []
    for start in range(0, n, per_row):
        e_row, a_row, marks = [], [], []
        for i in range(start, min(n, start + per_row)):
            e = exp_bytes[i] if i < len(exp_bytes) else "  "
            a = act_bytes[i] if i < len(act_bytes) else "  "
            e_row.append(e)
            a_row.append(a)
            same = i >= len(exp_bytes) or (i < len(act_bytes) and all(
                x in "* " or x == y for x, y in zip(e, a, strict=True)))
            marks.append("  " if same else "^^")
        lines.append(f"  {start:04x} expected: {' '.join(e_row)}".rstrip())
        lines.append(f"  {start:04x} actual:   {' '.join(a_row)}".rstrip())
        if any(m.strip() for m in marks):
            lines.append(f"  {'':4}           {' '.join(marks)}".rstrip())
    return "\n".join(lines)


# ---------------------------------------------------------------------------- runner


class STFRunner:
    """Runs parsed STF commands against a switch and checks what comes out.

    ``switch`` is a :class:`~netweft.emulation.switch.SoftSwitch` (or anything
    with the same public methods).  Control-plane errors and crashes while
    processing a packet are recorded as errors with the STF line; the run
    goes on so that one report shows everything.
    """

    def __init__(self, switch: Any, filename: str = "<stf>") -> None:
        self.switch = switch
        self.filename = filename
        self.result = STFResult()
        self._expected: dict[int, list[Command]] = {}
        self._any_ports: set[int] = set()
        self._nodes: list[tuple[int, list[int]]] = []
        self._groups: dict[int, list[int]] = {}

    def run(self, commands: Sequence[Command]) -> STFResult:
        """Execute every command in order, then compare outputs with expectations."""
        for cmd in commands:
            try:
                getattr(self, f"_do_{cmd.keyword}")(cmd)
            except _LineError as err:
                self._error(cmd, str(err))
            except Exception as err:  # the switch's own errors, or a crash in it
                self._error(cmd, f"{type(err).__name__}: {err}")
        self._check_outputs()
        return self.result

    def _error(self, cmd: Command, message: str) -> None:
        self.result.errors.append(f"{self.filename}:{cmd.line}: {cmd.keyword}: {message}")

    # -- packets

    def _do_packet(self, cmd: Command) -> None:
        if not cmd.args["data"]:
            # p4c's driver writes it to BMv2's pcap input, and BMv2 receives nothing
            self.result.notes.append(f"line {cmd.line}: zero-length packet not sent")
            return
        before = self._internal_errors()
        for port, data in self.switch.process(cmd.args["port"], cmd.args["data"]):
            self.result.outputs.setdefault(port, []).append(bytes(data))
        if self._internal_errors() > before:
            raise _LineError("the switch hit an internal error and dropped the packet "
                             "(its log has the traceback)")

    def _internal_errors(self) -> int:
        stats = getattr(self.switch, "stats", None)
        return stats.get("internal_error", 0) if isinstance(stats, dict) else 0

    def _do_expect(self, cmd: Command) -> None:
        if cmd.args["pattern"] is None:
            self._any_ports.add(cmd.args["port"])
        else:
            self._expected.setdefault(cmd.args["port"], []).append(cmd)

    def _do_wait(self, cmd: Command) -> None:
        """Packets run to completion in ``process``: nothing is in flight."""

    def _check_outputs(self) -> None:
        outputs = self.result.outputs
        for port in sorted(set(outputs) | set(self._expected)):
            got = outputs.get(port, [])
            wanted = self._expected.get(port, [])
            if not wanted and port in self._any_ports:
                continue
            for i, cmd in enumerate(wanted):
                pattern, exact = cmd.args["pattern"], cmd.args["exact"]
                if i >= len(got):
                    self.result.verdicts.append(Verdict(cmd.line, port, i, False, pattern,
                                                         None, "no packet came out"))
                    continue
                why = match_packet(pattern, got[i], exact)
                self.result.verdicts.append(Verdict(cmd.line, port, i, not why, pattern,
                                                    got[i], why))
            for i in range(len(wanted), len(got)):
                self.result.verdicts.append(Verdict(None, port, i, False, None, got[i],
                                                    "unexpected packet"))
        self.result.verdicts.sort(key=lambda v: (v.line is None, v.line or 0, v.port, v.index))

    # -- tables

    def _table_spec(self, name: str) -> Any:
        """The switch's table ``name`` (full name or unique suffix), for its key kinds.

        ``None`` when unknown or ambiguous: ``table_add`` then says why in the
        switch's own words.
        """
        tables = getattr(self.switch, "tables", None) or {}
        if name in tables:
            return tables[name]
        found = [t for full, t in tables.items() if full.endswith("." + name)]
        return found[0] if len(found) == 1 else None

    def _key_name(self, table: Any, name: str) -> tuple[str, str, int]:
        """``(p4c key name, match kind, width)`` of an STF key name."""
        keys = list(table.keys)
        candidates = [name]
        m = re.fullmatch(r"(.*)\$(\d+)(.*)", name)
        if m and not name.endswith("$valid$"):
            candidates.append(f"{m.group(1)}[{m.group(2)}]{m.group(3)}")
        for c in list(candidates):
            if c.endswith(".$valid$") or c.endswith("$valid$"):
                candidates.append(re.sub(r"\.?\$valid\$$", "", c) + ".isValid()")
            elif c.endswith(".valid"):  # p4c names an isValid() key h.$valid$
                candidates.append(c[:-len(".valid")] + ".$valid$")
                candidates.append(c[:-len(".valid")] + ".isValid()")
        for c in candidates:
            exact = [k for k in keys if k.name == c]
            suffix = [k for k in keys if k.name.endswith("." + c)]
            found = exact or (suffix if len(suffix) == 1 else [])
            if found:
                k = found[0]
                return k.name, k.match_kind, k.width
        known = ", ".join(k.name for k in keys) or "none"
        raise _LineError(f"table {table.name} has no key {name!r} (keys: {known})")

    def _do_add(self, cmd: Command) -> None:
        a = cmd.args
        table = self._table_spec(a["table"])
        match: dict[str, Any] = {}
        for name, text in a["keys"]:
            if table is None:
                match[name] = _int(text, "key value")
                continue
            key, kind, width = self._key_name(table, name)
            match[key] = _key_value(text, kind, width)
        params = {n: _param_value(v) for n, v in a["params"]}
        self.switch.table_add(a["table"], match, a["action"], params, priority=a["priority"])

    def _do_setdefault(self, cmd: Command) -> None:
        a = cmd.args
        params = {n: _param_value(v) for n, v in a["params"]}
        self.switch.table_set_default(a["table"], a["action"], params)

    # -- replication and mirroring

    def _do_mirroring_add(self, cmd: Command) -> None:
        self.switch.clone_session_set(cmd.args["session"], cmd.args["port"])

    def _do_mc_mgrp_create(self, cmd: Command) -> None:
        self._groups[cmd.args["group"]] = []
        self._push_group(cmd.args["group"])

    def _do_mc_mgrp_destroy(self, cmd: Command) -> None:
        self._groups.pop(cmd.args["group"], None)
        self.switch.mc_group_set(cmd.args["group"], [])

    def _do_mc_node_create(self, cmd: Command) -> None:
        self._nodes.append((cmd.args["rid"], sorted(set(cmd.args["ports"]))))
        self.result.notes.append(f"line {cmd.line}: multicast node {len(self._nodes) - 1}")

    def _do_mc_node_associate(self, cmd: Command) -> None:
        group, node = cmd.args["group"], cmd.args["node"]
        if not 0 <= node < len(self._nodes):
            raise _LineError(f"no multicast node {node} (created: {len(self._nodes)})")
        self._groups.setdefault(group, []).append(node)
        self._push_group(group)

    def _do_mc_node_dissociate(self, cmd: Command) -> None:
        group, node = cmd.args["group"], cmd.args["node"]
        if node not in self._groups.get(group, []):
            raise _LineError(f"node {node} is not in multicast group {group}")
        self._groups[group].remove(node)
        self._push_group(group)

    def _push_group(self, group: int) -> None:
        copies = [(port, self._nodes[n][0]) for n in self._groups[group]
                  for port in self._nodes[n][1]]
        self.switch.mc_group_set(group, copies)

    # -- registers and counters

    def _do_register_write(self, cmd: Command) -> None:
        a = cmd.args
        self.switch.register_write(a["name"], a["index"], a["value"])

    def _do_register_reset(self, cmd: Command) -> None:
        self.switch.register_reset(cmd.args["name"])

    def _do_register_read(self, cmd: Command) -> None:
        a = cmd.args
        value = self.switch.register_read(a["name"], a["index"])
        self.result.notes.append(f"line {cmd.line}: {a['name']}[{a['index']}] = {value}")
        if a["op"] is not None and not _COMPARISONS[a["op"]](value, a["value"]):
            raise _LineError(f"{a['name']}[{a['index']}] is {value}, expected "
                             f"{a['op']} {a['value']}")

    def _do_counter_read(self, cmd: Command) -> None:
        a = cmd.args
        packets, nbytes = self.switch.counter_read(a["name"], a["index"])
        self.result.notes.append(f"line {cmd.line}: {a['name']}[{a['index']}] = "
                                 f"{packets} packets, {nbytes} bytes")

    def _do_counter_reset(self, cmd: Command) -> None:
        self.switch.counter_reset(cmd.args["name"])

    def _do_check_counter(self, cmd: Command) -> None:
        a = cmd.args
        packets, nbytes = self.switch.counter_read(a["name"], a["index"])
        value = packets if a["kind"] == "packets" else nbytes
        if not _COMPARISONS[a["op"]](value, a["value"]):
            raise _LineError(f"{a['name']}[{a['index']}] {a['kind']} is {value}, expected "
                             f"{a['op']} {a['value']}")


def _param_value(text: str) -> Any:
    """An action parameter: a number, or an address string the switch parses."""
    if re.fullmatch(r"[0-9]+|0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+", text):
        return _int(text, "parameter")
    if re.fullmatch(r"-[0-9]+", text):
        return int(text)
    return text


# ---------------------------------------------------------------------------- entry points


def run_stf(switch: Any, text: str, filename: str = "<stf>") -> STFResult:
    """Parse ``text`` and run it on ``switch``; raises :class:`STFError` if malformed."""
    commands = parse_stf(text, filename)
    return STFRunner(switch, filename).run(commands)


def run_stf_files(program: str | Path, stf: str | Path,
                  include_dirs: Sequence[str | Path] = ()) -> STFResult:
    """Compile ``program``, build a fresh switch and run the STF file ``stf`` on it.

    Raises :class:`~netweft.p4.compiler.P4Error` for a bad program and
    :class:`STFError` for a malformed STF file.
    """
    from netweft.emulation.switch import SoftSwitch
    from netweft.p4.compiler import compile_p4

    stf_path = Path(stf)
    try:
        text = stf_path.read_text()
    except OSError as err:
        raise STFError(str(stf_path), 0, f"cannot read: {err.strerror or err}") from None
    commands = parse_stf(text, str(stf_path))
    prog = compile_p4(program, include_dirs=tuple(str(d) for d in include_dirs))
    return STFRunner(SoftSwitch(prog), str(stf_path)).run(commands)
