"""Python representations of P4 types, as generated source.

Values: ``bit<W>`` is an int in ``[0, 2**W)``, ``int<W>`` a signed int in
range, ``bool`` a bool, enums/errors/serializable enums their number,
tuples Python lists.  Each header, header union and struct type becomes a
generated ``__slots__`` class (``_v`` is a header's validity) with
``_copy``, ``_assign`` and ``_eq``; headers also get ``_extract`` and
``_emit``.  Varbit fields keep their current length in ``<field>__len``.
"""

from __future__ import annotations

import keyword

from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error


def field_attr(name: str) -> str:
    """The Python attribute holding the P4 field ``name``.

    P4 names that are Python keywords (``class``, ``from``, ``None`` ...) get a
    trailing ``_``; names starting with ``_`` get an ``f`` prefix so that
    they cannot collide with the generated ``_v``, ``_copy`` ... members.
    """
    if name.startswith("_"):
        return "f" + name
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return name + "_"
    return name


def unsupported(what: str, node: ir.Node) -> P4Error:
    """The error for a feature the back end does not implement."""
    return P4Error(f"unsupported by the netweft back end: {what}", node.loc)


def bit_width(t: ir.Type) -> int:
    """Width in bits of a scalar or header type (varbit: its maximum)."""
    if isinstance(t, ir.Type_Bits):
        return t.width
    if isinstance(t, ir.Type_Boolean):
        return 1
    if isinstance(t, ir.Type_SerEnum):
        return bit_width(t.underlying)
    if isinstance(t, ir.Type_Varbits):
        return t.size
    if isinstance(t, (ir.Type_Header, ir.Type_Struct)):
        return sum(bit_width(f.type) for f in t.fields)
    if isinstance(t, ir.Type_Error):
        return 32
    if isinstance(t, ir.Type_Enum):
        return 32
    if isinstance(t, ir.Type_Newtype | ir.Type_Typedef):
        return bit_width(t.type)
    raise unsupported(f"a value of type {type(t).__name__} where a width is needed", t)


def is_signed(t: ir.Type) -> bool:
    """Whether values of ``t`` are signed ``int<W>``."""
    return isinstance(t, ir.Type_Bits) and t.signed


def is_aggregate(t: ir.Type) -> bool:
    """Headers, unions, structs and stacks: reference objects assigned by copying into."""
    return isinstance(t, (ir.Type_Header, ir.Type_HeaderUnion, ir.Type_Struct, ir.Type_Stack))


class TypeClasses:
    """Generates (once each) the classes for struct-like types and default values."""

    def __init__(self) -> None:
        self._names: dict[int, str] = {}
        self._by_name: dict[str, int] = {}
        self.source: list[str] = []

    def class_name(self, t: ir.Type_StructLike) -> str:
        """The generated class of a header/union/struct type (generating it if needed)."""
        key = id(t)
        if key not in self._names:
            base = "".join(c if c.isalnum() else "_" for c in t.name)
            name = f"T_{base}"
            n = 1
            while name in self._by_name:
                n += 1
                name = f"T_{base}_{n}"
            self._names[key] = name
            self._by_name[name] = key
            self._generate(t, name)
        return self._names[key]

    def new_expr(self, t: ir.Type) -> str:
        """A Python expression creating the default (zero/invalid) value of ``t``."""
        if isinstance(t, (ir.Type_Bits, ir.Type_InfInt, ir.Type_Varbits, ir.Type_Error,
                          ir.Type_Enum, ir.Type_SerEnum, ir.Type_MatchKind)):
            return "0"
        if isinstance(t, ir.Type_Boolean):
            return "False"
        if isinstance(t, ir.Type_StructLike):
            return f"{self.class_name(t)}()"
        if isinstance(t, ir.Type_Stack):
            return f"HeaderStack({self.class_name(t.element)}, {t.size})"
        if isinstance(t, ir.Type_Tuple):
            return "[" + ", ".join(self.new_expr(c) for c in t.components) + "]"
        if isinstance(t, ir.Type_String):
            return "''"
        if isinstance(t, (ir.Type_Newtype, ir.Type_Typedef)):
            return self.new_expr(t.type)
        if isinstance(t, ir.Type_Name) and t.decl is not None:
            return self.new_expr(t.decl)
        raise unsupported(f"a variable of type {type(t).__name__}", t)

    def _slots(self, t: ir.Type_StructLike) -> list[str]:
        slots = []
        for f in t.fields:
            slots.append(field_attr(f.name))
            if isinstance(f.type, ir.Type_Varbits):
                slots.append(field_attr(f.name) + "__len")
        return slots

    def _generate(self, t: ir.Type_StructLike, name: str) -> None:
        # nested types first, so that their classes exist when this one is defined
        for f in t.fields:
            ft = f.type
            if isinstance(ft, ir.Type_StructLike):
                self.class_name(ft)
            elif isinstance(ft, ir.Type_Stack):
                self.class_name(ft.element)
        header = isinstance(t, ir.Type_Header)
        slots = (["_v"] if header else []) + self._slots(t)
        lines = [f"class {name}:", f"    __slots__ = {tuple(slots)!r}", ""]
        init = ["    def __init__(self):"]
        if header:
            init.append("        self._v = False")
        copy = ["    def _copy(self):", f"        o = {name}.__new__({name})"]
        assign = ["    def _assign(self, s):"]
        eq = ["    def _eq(self, s):"]
        conds = []
        if header:
            copy.append("        o._v = self._v")
            assign.append("        self._v = s._v")
            conds.append("self._v == s._v")
        for f in t.fields:
            ft = f.type
            fn = field_attr(f.name)
            init.append(f"        self.{fn} = {self.new_expr(ft)}")
            if is_aggregate(ft):
                copy.append(f"        o.{fn} = self.{fn}._copy()")
                assign.append(f"        self.{fn}._assign(s.{fn})")
                conds.append(f"self.{fn}._eq(s.{fn})")
            elif isinstance(ft, ir.Type_Tuple):
                copy.append(f"        o.{fn} = list(self.{fn})")
                assign.append(f"        self.{fn} = list(s.{fn})")
                conds.append(f"self.{fn} == s.{fn}")
            else:
                copy.append(f"        o.{fn} = self.{fn}")
                assign.append(f"        self.{fn} = s.{fn}")
                conds.append(f"self.{fn} == s.{fn}")
                if isinstance(ft, ir.Type_Varbits):
                    init.append(f"        self.{fn}__len = 0")
                    copy.append(f"        o.{fn}__len = self.{fn}__len")
                    assign.append(f"        self.{fn}__len = s.{fn}__len")
        copy.append("        return o")
        if len(assign) == 1:
            assign.append("        pass")
        if len(init) == 1:
            init.append("        pass")
        eq.append("        return " + (" and ".join(conds) if conds else "True"))
        # a header equals another when both are invalid, whatever the fields
        if header:
            eq = ["    def _eq(self, s):",
                  "        if not self._v and not s._v:",
                  "            return True",
                  "        return " + " and ".join(conds)]
        make = self._make_method(t, name)
        lines += init + [""] + copy + [""] + assign + [""] + eq + [""] + make
        if header:
            lines += [""] + self._header_codec(t)
        if isinstance(t, ir.Type_HeaderUnion):
            lines += [""] + self._union_members(t)
        self.source.append("\n".join(lines) + "\n")

    def _union_members(self, t: ir.Type_HeaderUnion) -> list[str]:
        """``_emit`` and a ``_v`` property, so that a union can sit in a header stack."""
        names = [field_attr(f.name) for f in t.fields]
        out = ["    def _emit(self, out):"]
        out += [f"        self.{n}._emit(out)" for n in names] or ["        pass"]
        out += ["", "    @property", "    def _v(self):",
                "        return " + (" or ".join(f"self.{n}._v" for n in names) or "False"),
                "", "    @_v.setter", "    def _v(self, valid):", "        if not valid:"]
        out += [f"            self.{n}._v = False" for n in names] or ["            pass"]
        return out

    def _make_method(self, t: ir.Type_StructLike, name: str) -> list[str]:
        params = ", ".join(f"a{i}" for i in range(len(t.fields)))
        out = ["    @staticmethod", f"    def _make({params}):", f"        o = {name}()"]
        if isinstance(t, ir.Type_Header):
            out.append("        o._v = True")
        for i, f in enumerate(t.fields):
            if is_aggregate(f.type):
                out.append(f"        o.{field_attr(f.name)}._assign(a{i})")
            else:
                out.append(f"        o.{field_attr(f.name)} = a{i}")
        out.append("        return o")
        return out

    def _header_codec(self, t: ir.Type_Header) -> list[str]:
        """``_extract(cur, too_short[, varbits, header_too_short])`` and ``_emit(out)``."""
        fixed = 0
        var_field = None
        for f in t.fields:
            if isinstance(f.type, ir.Type_Varbits):
                if var_field is not None:
                    raise unsupported("a header with two varbit fields", f)
                var_field = f
            else:
                fixed += bit_width(f.type)
        out = []
        if var_field is None:
            if fixed % 8:
                raise P4Error(f"header {t.name} is {fixed} bits long, not a whole number of "
                              "bytes (BMv2 requires byte-aligned headers)", t.loc)
            nbytes = fixed // 8
            out.append(f"    _NBITS = {fixed}")
            out.append("    def _extract(self, cur, too_short):")
            out.append(f"        v = cur.take({nbytes}, too_short)")
            shift = fixed
            for ref, ft in _leaf_fields(t.fields):
                w = bit_width(ft)
                shift -= w
                out.append("        " + _unpack_field(ref, ft, "v", shift, w))
            out.append("        self._v = True")
            out.append("")
            out.append("    def _bits(self):")
            out.append("        return " + _pack_fields(t.fields, fixed))
            out.append("")
            out.append("    def _emit(self, out):")
            out.append("        if self._v:")
            if nbytes:
                out.append(f"            out.append(self._bits().to_bytes({nbytes}, 'big'))")
            else:
                out.append("            pass")
            return out
        # header with one varbit field: length known only at extract time
        out.append(f"    _NBITS = {fixed}")
        out.append("    def _extract(self, cur, too_short, vlen=0, header_too_short=0, "
                   "invalid_argument=0):")
        out.append(f"        if vlen > {var_field.type.size} or vlen < 0:")
        out.append("            raise ParserReject(header_too_short)")
        out.append(f"        total = {fixed} + vlen")
        out.append("        if total % 8:  # BMv2: a header must be whole bytes")
        out.append("            raise ParserReject(invalid_argument)")
        out.append("        v = cur.take(total // 8, too_short)")
        shift_expr = "total"
        for f in t.fields:
            if f is var_field:
                out.append(f"        _s = {shift_expr} - vlen")
                out.append(f"        self.{field_attr(f.name)} = (v >> _s) & ((1 << vlen) - 1)")
                out.append(f"        self.{field_attr(f.name)}__len = vlen")
                shift_expr = "_s"
            else:
                for ref, ft in _leaf_fields([f]):
                    w = bit_width(ft)
                    out.append(f"        _s = {shift_expr} - {w}")
                    out.append("        " + _unpack_field(ref, ft, "v", None, w))
                    shift_expr = "_s"
        out.append("        self._v = True")
        out.append("")
        out.append("    def _emit(self, out):")
        out.append("        if not self._v:")
        out.append("            return")
        out.append("        acc = 0")
        out.append("        n = 0")
        for f in t.fields:
            if f is var_field:
                a = field_attr(f.name)
                out.append(f"        acc = (acc << self.{a}__len) | self.{a}")
                out.append(f"        n += self.{a}__len")
            else:
                for ref, ft in _leaf_fields([f]):
                    w = bit_width(ft)
                    out.append(f"        acc = (acc << {w}) | ({_field_bits(ft, ref)})")
                    out.append(f"        n += {w}")
        out.append("        out.append(acc.to_bytes(n // 8, 'big'))")
        return out


def _leaf_fields(fields: list[ir.StructField], ref: str = "self"):
    """(attribute path, type) of each scalar field in wire order; a struct nested
    in a header contributes its own fields (P4-16 7.2.2 allows structs of bit fields)."""
    for f in fields:
        path = f"{ref}.{field_attr(f.name)}"
        ft = f.type
        while isinstance(ft, (ir.Type_Newtype, ir.Type_Typedef)) and \
                isinstance(ft.type, ir.Type_Struct):
            ft = ft.type
        if isinstance(ft, ir.Type_Struct):
            yield from _leaf_fields(ft.fields, path)
        else:
            yield path, f.type


def _unpack_field(ref: str, ft: ir.Type, src: str, shift: int | None, w: int) -> str:
    sh = "_s" if shift is None else str(shift)
    mask = (1 << w) - 1
    raw = f"(({src} >> {sh}) & {mask:#x})" if sh != "0" else f"({src} & {mask:#x})"
    if isinstance(ft, ir.Type_Boolean):
        return f"{ref} = {raw} != 0"
    if is_signed(ft):
        half = 1 << (w - 1)
        return f"{ref} = ({raw} ^ {half:#x}) - {half:#x}"
    return f"{ref} = {raw}"


def _field_bits(ft: ir.Type, ref: str) -> str:
    w = bit_width(ft)
    if isinstance(ft, ir.Type_Boolean):
        return f"(1 if {ref} else 0)"
    if is_signed(ft):
        return f"({ref} & {(1 << w) - 1:#x})"
    return ref


def _pack_fields(fields: list[ir.StructField], total: int) -> str:
    parts = []
    shift = total
    for ref, ft in _leaf_fields(fields):
        w = bit_width(ft)
        shift -= w
        bits = _field_bits(ft, ref)
        parts.append(f"({bits} << {shift})" if shift else bits)
    return " | ".join(parts) if parts else "0"
