"""C representations of P4 types, as generated source.

Values: ``bit<W>``/``int<W>`` with W <= 64 are computed in ``uint64_t`` and
wider ones (up to 128 bits, IPv6 addresses) in ``nw_u128``; a value is kept
in its *canonical* form, the low W bits (an ``int<W>`` in two's complement),
and operations that care about the sign extend it first.  ``bool`` is 0/1,
enums and errors their number.  Headers and structs become C structs (a
header's validity is ``_v``); in storage a field uses the smallest unsigned
type that holds it.  Every value's default is all-zero bytes (headers
invalid, ``error.NoError``, the first enum member), so state starts from
``memset(0)``.
"""

from __future__ import annotations

from netweft.emulation.pipeline.types import bit_width
from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error

MAX_BITS = 128


def unsupported(what: str, node: ir.Node | None) -> P4Error:
    """The error for a construct the native back end does not cover (the switch falls
    back to the Python back end under ``backend="auto"``)."""
    return P4Error(f"not covered by the native (C) back end: {what}",
                   getattr(node, "loc", None))


def c_name(text: str) -> str:
    """``text`` (a P4 name, possibly dotted) made into a C identifier."""
    return "".join(c if c.isalnum() else "_" for c in text)


def scalar_width(t: ir.Type, node: ir.Node | None = None) -> int:
    """Width in bits of a scalar value of type ``t`` (bool: 1, error/enum: 32)."""
    if isinstance(t, (ir.Type_InfInt,)):
        return 64
    w = bit_width(t)
    if w > MAX_BITS:
        raise unsupported(f"a {w}-bit value (at most {MAX_BITS} bits)", node or t)
    return w


def value_type(t: ir.Type, node: ir.Node | None = None) -> str:
    """The C type a scalar of type ``t`` is computed in."""
    return "nw_u128" if scalar_width(t, node) > 64 else "uint64_t"


def storage_type(w: int) -> str:
    """The C type a ``w``-bit field is stored in."""
    if w <= 8:
        return "uint8_t"
    if w <= 16:
        return "uint16_t"
    if w <= 32:
        return "uint32_t"
    if w <= 64:
        return "uint64_t"
    return "nw_u128"


def mask_literal(w: int) -> str:
    """A C literal of the low ``w`` bits set (empty for a full 64/128-bit value)."""
    if w == 64 or w == 128:
        return ""
    if w < 64:
        return f"{(1 << w) - 1:#x}ULL"
    return f"NW_MASK128({w})"


def is_signed(t: ir.Type) -> bool:
    return isinstance(t, ir.Type_Bits) and t.signed


def is_aggregate(t: ir.Type) -> bool:
    """Headers, unions, structs, stacks and tuples: C structs, copied by value."""
    return isinstance(t, (ir.Type_Header, ir.Type_HeaderUnion, ir.Type_Struct, ir.Type_Stack,
                          ir.Type_Tuple))


def is_scalar(t: ir.Type) -> bool:
    return isinstance(t, (ir.Type_Bits, ir.Type_Boolean, ir.Type_Error, ir.Type_Enum,
                          ir.Type_SerEnum, ir.Type_InfInt))


def header_fields(t: ir.Type_Header) -> list[tuple[ir.StructField, int]]:
    """The fixed-width fields of a header with their widths (a trailing varbit field is
    left out: see :func:`header_varbit`); refuses what the C codec lacks."""
    out = []
    var = header_varbit(t)
    for f in t.fields:
        ft = f.type
        if f is var:
            continue
        if isinstance(ft, ir.Type_Varbits):
            raise unsupported(f"the varbit field {t.name}.{f.name} (only a last one is "
                              "covered)", f)
        if not isinstance(ft, (ir.Type_Bits, ir.Type_Boolean, ir.Type_SerEnum)):
            raise unsupported(f"the field {t.name}.{f.name} of type {type(ft).__name__}", f)
        w = bit_width(ft)
        if w > MAX_BITS:
            # a wide field is bytes: copied, extracted, emitted and hashed, nothing else
            if w % 8 or sum(x for _, x in out) % 8:
                raise unsupported(f"the {w}-bit field {t.name}.{f.name} (wide fields must be "
                                  "whole bytes at a byte offset)", f)
            out.append((f, w))
            continue
        out.append((f, scalar_width(ft, f)))
    total = sum(w for _, w in out)
    if total % 8:
        if var is not None:
            raise unsupported(f"header {t.name}: a varbit field after fields that are not "
                              "whole bytes", t)
        raise P4Error(f"header {t.name} is {total} bits long, not a whole number of bytes",
                      t.loc)
    return out


def header_varbit(t: ir.Type_Header) -> ir.StructField | None:
    """The header's varbit field if it is the last one (the case the C codec covers)."""
    if t.fields and isinstance(t.fields[-1].type, ir.Type_Varbits):
        return t.fields[-1]
    return None


class CTypes:
    """Generates (once each) the C structs of headers and structs, in dependency order."""

    def __init__(self) -> None:
        self._names: dict[int, str] = {}
        self._used: set[str] = set()
        self._stacks: dict[tuple, str] = {}   # stacks and tuples, by their C layout
        self._eqs: set[str] = set()
        self.source: list[str] = []

    def name(self, t: ir.Type) -> str:
        """The C type of a value of any supported type (generating structs as needed)."""
        if is_scalar(t):
            return value_type(t)
        if isinstance(t, (ir.Type_Header, ir.Type_Struct)):
            return self._struct(t)
        if isinstance(t, ir.Type_HeaderUnion):
            return self._union(t)
        if isinstance(t, ir.Type_Stack):
            return self._stack(t)
        if isinstance(t, ir.Type_Tuple):
            return self._tuple(t)
        raise unsupported(f"a value of type {type(t).__name__}", t)

    def _tuple(self, t: ir.Type_Tuple) -> str:
        """A tuple: a struct of its components ``c0``, ``c1`` ... (by value, as the
        Python back end's lists are copied on assignment)."""
        comps = [self.name(c) if is_aggregate(c) else storage_type(scalar_width(c, t))
                 for c in t.components]
        key = ("tuple", *comps)
        if key in self._stacks:
            return self._stacks[key]
        name = self._fresh(f"Q_{len(self._stacks)}")
        self._stacks[key] = name
        lines = [f"typedef struct {name} {{"]
        lines += [f"    {c} c{i};" for i, c in enumerate(comps)]
        if not comps:
            lines.append("    uint8_t _empty;")
        lines.append(f"}} {name};")
        self.source.append("\n".join(lines) + "\n")
        return name

    def _fresh(self, base: str) -> str:
        name, n = base, 1
        while name in self._used:
            n += 1
            name = f"{base}_{n}"
        self._used.add(name)
        return name

    def _union(self, t: ir.Type_HeaderUnion) -> str:
        """A header union: a struct of its member headers (each with its validity)."""
        key = id(t)
        if key in self._names:
            return self._names[key]
        members = [(f, self.name(f.type)) for f in t.fields]
        name = self._fresh("U_" + c_name(t.name))
        self._names[key] = name
        lines = [f"typedef struct {name} {{"]
        lines += [f"    {ctype} {field_name(f.name)};" for f, ctype in members]
        if not members:
            lines.append("    uint8_t _empty;")
        lines.append(f"}} {name};")
        self.source.append("\n".join(lines) + "\n")
        return name

    def _stack(self, t: ir.Type_Stack) -> str:
        """A header stack ``H[n]``: its elements and nextIndex (``nxt``)."""
        element = self.name(t.element)
        key = (element, t.size)
        if key in self._stacks:
            return self._stacks[key]
        if t.size <= 0:
            raise unsupported("a header stack of no elements", t)
        name = self._fresh(f"K_{element}_{t.size}")
        self._stacks[key] = name
        self.source.append(f"typedef struct {name} {{\n    {element} e[{t.size}];\n"
                           f"    uint32_t nxt;\n}} {name};\n")
        return name

    def eq(self, t: ir.Type) -> str:
        """The C function ``int <f>(const T *a, const T *b)`` of P4's ``==`` on an
        aggregate of type ``t``, as the Python back end's ``_eq`` (headers: both invalid,
        or same validity and fields; structs, unions, stacks: every member)."""
        ctype = self.name(t)
        fname = ctype + "_eq"
        if fname in self._eqs:
            return fname
        self._eqs.add(fname)
        terms: list[str] = []
        if isinstance(t, ir.Type_Stack):
            sub = self.eq(t.element)
            terms = [f"{sub}(&a->e[{i}], &b->e[{i}])" for i in range(t.size)]
        elif isinstance(t, ir.Type_Tuple):
            for i, c in enumerate(t.components):
                terms.append(f"{self.eq(c)}(&a->c{i}, &b->c{i})" if is_aggregate(c)
                             else f"a->c{i} == b->c{i}")
        else:
            var = header_varbit(t) if isinstance(t, ir.Type_Header) else None
            for f in t.fields:
                m = field_name(f.name)
                if f is var:
                    terms.append(f"nw_varbit_eq(a->{m}, a->{m}__len, b->{m}, b->{m}__len, "
                                 f"sizeof a->{m})")
                elif is_scalar(f.type) and bit_width(f.type) <= MAX_BITS:
                    terms.append(f"a->{m} == b->{m}")
                elif is_scalar(f.type):
                    terms.append(f"memcmp(a->{m}, b->{m}, sizeof a->{m}) == 0")
                else:
                    terms.append(f"{self.eq(f.type)}(&a->{m}, &b->{m})")
        test = " && ".join(terms) or "1"
        lines = [f"static inline int {fname}(const {ctype} *a, const {ctype} *b) {{"]
        if isinstance(t, ir.Type_Header):
            lines.append("    if (!a->_v && !b->_v)")
            lines.append("        return 1;")
            test = "a->_v == b->_v" + (f" && {test}" if terms else "")
        lines.append(f"    return {test};")
        lines.append("}")
        self.source.append("\n".join(lines) + "\n")
        return fname

    def _struct(self, t: ir.Type_Header | ir.Type_Struct) -> str:
        key = id(t)
        if key in self._names:
            return self._names[key]
        name = self._fresh("S_" + c_name(t.name))
        self._names[key] = name
        lines = [f"typedef struct {name} {{"]
        if isinstance(t, ir.Type_Header):
            for f, w in header_fields(t):
                if w > MAX_BITS:
                    lines.append(f"    uint8_t {field_name(f.name)}[{w // 8}];")
                else:
                    lines.append(f"    {storage_type(w)} {field_name(f.name)};")
            var = header_varbit(t)
            if var is not None:
                nb = (var.type.size + 7) // 8
                lines.append(f"    uint8_t {field_name(var.name)}[{nb or 1}];")
                lines.append(f"    uint32_t {field_name(var.name)}__len;   /* bits */")
            lines.append("    uint8_t _v;")
        else:
            for f in t.fields:
                ft = f.type
                if is_scalar(ft):
                    lines.append(f"    {storage_type(scalar_width(ft, f))} {field_name(f.name)};")
                else:
                    lines.append(f"    {self.name(ft)} {field_name(f.name)};")
            if not t.fields:
                lines.append("    uint8_t _empty;")
        lines.append(f"}} {name};")
        self.source.append("\n".join(lines) + "\n")
        if isinstance(t, ir.Type_Header):
            self.source.append(_codec(t, name))
        return name


def field_name(name: str) -> str:
    """The C member holding the P4 field ``name`` (prefixed: no clash with C keywords)."""
    return "f_" + c_name(name)


def _codec(t: ir.Type_Header, name: str) -> str:
    """``<name>_extract(h, p[, vbytes])`` and ``<name>_emit(h, p)`` (returns the bytes
    written); ``<name>_BYTES`` the fixed part, ``<name>_VARBYTES`` the varbit maximum."""
    fields = header_fields(t)
    var = header_varbit(t)
    nbytes = sum(w for _, w in fields) // 8
    vmax = (var.type.size + 7) // 8 if var is not None else 0
    vparam = ", uint32_t vbytes" if var is not None else ""
    ex = [f"static inline void {name}_extract({name} *h, const uint8_t *p{vparam}) {{"]
    em = [f"static inline uint32_t {name}_emit(const {name} *h, uint8_t *p) {{",
          f"    memset(p, 0, {nbytes});"]
    off = 0
    for f, w in fields:
        m = field_name(f.name)
        if w > MAX_BITS:
            ex.append(f"    memcpy(h->{m}, p + {off // 8}, {w // 8});")
            em.append(f"    memcpy(p + {off // 8}, h->{m}, {w // 8});")
            off += w
            continue
        fn = "nw_rd128" if w > 64 else "nw_rd64"
        wn = "nw_wr128" if w > 64 else "nw_wr64"
        ex.append(f"    h->{m} = ({storage_type(w)}){fn}(p, {off}, {w});")
        em.append(f"    {wn}(p, {off}, {w}, h->{m});")
        off += w
    if var is not None:
        m = field_name(var.name)
        ex.append(f"    memset(h->{m}, 0, sizeof h->{m});")
        ex.append(f"    memcpy(h->{m}, p + {nbytes}, vbytes);")
        ex.append(f"    h->{m}__len = vbytes * 8u;")
        em.append(f"    uint32_t vb = h->{m}__len / 8u;")
        em.append(f"    memcpy(p + {nbytes}, h->{m}, vb);")
        em.append(f"    return {nbytes}u + vb;")
    else:
        em.append(f"    return {nbytes}u;")
    ex.append("}")
    em.append("}")
    return "\n".join(ex) + "\n" + "\n".join(em) + "\n" + \
        f"#define {name}_BYTES {nbytes}u\n#define {name}_VARBYTES {vmax}u\n"
