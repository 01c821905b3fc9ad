"""P4 types in P4Info: ``P4DataTypeSpec``, the ``type_info`` registry, the widths of
match fields and parameters, and values as P4Runtime byte strings (p4c's
``TypeSpecConverter``, ``getTypeWidth``, ``getTypeName`` and ``stringRepr``).

Types come in two forms here: the *declared* type as written in source (a
``Type_Name`` naming a typedef, a ``type`` declaration, a struct...) and the
canonical type of the checked IR. P4Info names ``type`` declarations and keeps
typedefs transparent, so both are needed.
"""

from __future__ import annotations

from p4.config.v1 import p4types_pb2

from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.p4info_annotations import add_annotations
from netweft.p4.compiler.typesys import bit_width, type_str


def resolve_declared(declared: ir.Type | None) -> ir.Node | None:
    """Follow typedefs from a declared type to the declaration it names (a
    ``Type_Newtype``, struct, header, enum ...) or the type itself."""
    seen = 0
    t = declared
    while isinstance(t, ir.Type_Name) and seen < 64:
        seen += 1
        d = t.decl
        if isinstance(d, ir.Type_Typedef):
            t = d.type
            continue
        return d
    if isinstance(t, ir.Type_Typedef):
        return resolve_declared(t.type)
    return t


def newtype_of(declared: ir.Type | None) -> ir.Type_Newtype | None:
    """The ``type`` declaration a declared type names (through typedefs), or None."""
    d = resolve_declared(declared)
    return d if isinstance(d, ir.Type_Newtype) else None


def translation(newtype: ir.Type_Newtype) -> tuple[str, int | None] | None:
    """``@p4runtime_translation(uri, W)`` (also ``bit<W>`` or ``string`` as the second
    argument, as p4c accepts) as (uri, W), or (uri, None) for ``string``."""
    a = ir.find_annotation(newtype, "p4runtime_translation")
    if a is None:
        return None
    if len(a.args) == 2 and isinstance(a.args[0], ir.StringLiteral):
        second = a.args[1]
        if isinstance(second, ir.Constant):
            return a.args[0].value, second.value
        if isinstance(second, ir.StringLiteral):
            return a.args[0].value, None
    body = a.body
    if len(body) >= 3 and body[0].startswith('"') and body[1] == ",":
        uri = body[0][1:-1]
        rest = body[2:]
        if rest == ["string"]:
            return uri, None
        if len(rest) == 1 and rest[0].isdigit():
            return uri, int(rest[0])
        if len(rest) == 4 and rest[0] == "bit" and rest[1] == "<" and rest[2].isdigit() \
                and rest[3] == ">":
            return uri, int(rest[2])
    raise P4Error("@p4runtime_translation needs a URI string and a width (W or bit<W>) or "
                  "'string'", a.loc)


def type_width(declared: ir.Type | None, canonical: ir.Type) -> int:
    """P4Info ``bitwidth`` of a value: the controller width of a translated ``type``,
    0 for ``error``, else the width of the canonical type."""
    nt = newtype_of(declared)
    tr = translation(nt) if nt is not None else None
    if tr is not None:
        return tr[1] or 0
    if isinstance(canonical, ir.Type_Error):
        return 0
    w = bit_width(canonical)
    return w if w is not None else 0


def type_name(declared: ir.Type | None) -> str | None:
    """The name of the ``type`` declaration a value has (P4Info ``type_name``)."""
    nt = newtype_of(declared)
    return _cp_name(nt) if nt is not None else None


def _cp_name(node: ir.Node) -> str:
    n = ir.name_annotation(node)
    if n is not None:
        return n[1:] if n.startswith(".") else n
    return node.name  # type: ignore[attr-defined]


def bytes_of(value: int, width: int) -> bytes:
    """A P4Runtime byte string padded to the width, as p4c writes values."""
    if value < 0:
        raise ValueError("negative values are not supported in P4Runtime byte strings")
    nbytes = max(1, (width + 7) // 8)
    return value.to_bytes(nbytes, "big")


class TypeInfo:
    """Builds P4DataTypeSpecs and fills ``P4Info.type_info`` as a side effect."""

    def __init__(self, info: p4types_pb2.P4TypeInfo, errors: list[str]) -> None:
        self.info = info
        self.errors = errors

    # ---------------------------------------------------------------- entry points
    def convert(self, declared: ir.Type | None, canonical: ir.Type) -> p4types_pb2.P4DataTypeSpec:
        """The spec of a type written as ``declared`` (canonical form ``canonical``)."""
        d = resolve_declared(declared) if declared is not None else None
        if isinstance(d, ir.Type_Newtype):
            self.register_newtype(d)
            spec = p4types_pb2.P4DataTypeSpec()
            spec.new_type.name = _cp_name(d)
            return spec
        return self._canonical(canonical)

    def register(self, declared: ir.Type | None, canonical: ir.Type) -> None:
        """Record the named types a value of this type needs in ``type_info``, as
        p4c's converter does when handed a value's type (nothing for bit<W>)."""
        d = resolve_declared(declared) if declared is not None else None
        if isinstance(d, ir.Type_Newtype):
            self.register_newtype(d)
        else:
            self._register_canonical(canonical)

    # ---------------------------------------------------------------- canonical types
    def _canonical(self, t: ir.Type) -> p4types_pb2.P4DataTypeSpec:
        spec = p4types_pb2.P4DataTypeSpec()
        if isinstance(t, ir.Type_Bits):
            if t.signed:
                spec.bitstring.int.bitwidth = t.width
            else:
                spec.bitstring.bit.bitwidth = t.width
        elif isinstance(t, ir.Type_Varbits):
            spec.bitstring.varbit.max_bitwidth = t.size
        elif isinstance(t, ir.Type_Boolean):
            spec.bool.SetInParent()
        elif isinstance(t, ir.Type_Struct):
            spec.struct.name = _cp_name(t)
        elif isinstance(t, ir.Type_Header):
            spec.header.name = _cp_name(t)
        elif isinstance(t, ir.Type_HeaderUnion):
            spec.header_union.name = _cp_name(t)
        elif isinstance(t, ir.Type_SerEnum):
            spec.serializable_enum.name = _cp_name(t)
        elif isinstance(t, ir.Type_Enum):
            spec.enum.name = _cp_name(t)
        elif isinstance(t, ir.Type_Error):
            spec.error.SetInParent()
        elif isinstance(t, ir.Type_Tuple):
            for c in t.components:
                spec.tuple.members.add().CopyFrom(self._canonical(c))
            return spec
        elif isinstance(t, ir.Type_Stack):
            el = t.element
            if isinstance(el, ir.Type_HeaderUnion):
                spec.header_union_stack.header_union.name = _cp_name(el)
                spec.header_union_stack.size = t.size
            else:
                spec.header_stack.header.name = _cp_name(el)
                spec.header_stack.size = t.size
            self._register_canonical(el)
            return spec
        else:
            raise P4Error(f"type {type_str(t)} cannot be described in P4Info", t.loc)
        self._register_canonical(t)
        return spec

    def _register_canonical(self, t: ir.Type) -> None:
        if isinstance(t, ir.Type_Struct):
            self._register_struct(t)
        elif isinstance(t, ir.Type_Header):
            self._register_header(t)
        elif isinstance(t, ir.Type_HeaderUnion):
            self._register_header_union(t)
        elif isinstance(t, ir.Type_SerEnum):
            self._register_ser_enum(t)
        elif isinstance(t, ir.Type_Enum):
            self._register_enum(t)
        elif isinstance(t, ir.Type_Error):
            if not self.info.HasField("error"):
                self.info.error.members.extend(self.errors)
        elif isinstance(t, ir.Type_Tuple):
            for c in t.components:
                self._register_canonical(c)
        elif isinstance(t, ir.Type_Stack):
            self._register_canonical(t.element)

    def _register_struct(self, t: ir.Type_Struct) -> None:
        name = _cp_name(t)
        if name in self.info.structs:
            return
        spec = p4types_pb2.P4StructTypeSpec()
        self.info.structs[name].CopyFrom(spec)  # placeholder against recursion
        for f in t.fields:
            m = spec.members.add(name=_cp_name(f))
            m.type_spec.CopyFrom(self.convert(f.declared_type, f.type))
        self.info.structs[name].CopyFrom(spec)

    def _register_header(self, t: ir.Type_Header) -> None:
        name = _cp_name(t)
        if name in self.info.headers:
            return
        spec = p4types_pb2.P4HeaderTypeSpec()
        for fname, _decl, ftype, _anns in flatten_header(t):
            m = spec.members.add(name=fname)
            fs = self._canonical(ftype)
            if fs.HasField("bitstring"):
                m.type_spec.CopyFrom(fs.bitstring)
        self.info.headers[name].CopyFrom(spec)

    def _register_header_union(self, t: ir.Type_HeaderUnion) -> None:
        name = _cp_name(t)
        if name in self.info.header_unions:
            return
        spec = p4types_pb2.P4HeaderUnionTypeSpec()
        for f in t.fields:
            m = spec.members.add(name=_cp_name(f))
            m.header.name = _cp_name(f.type)
            self._register_canonical(f.type)
        self.info.header_unions[name].CopyFrom(spec)

    def _register_enum(self, t: ir.Type_Enum) -> None:
        name = _cp_name(t)
        if name in self.info.enums:
            return
        spec = p4types_pb2.P4EnumTypeSpec()
        for m in t.members:
            spec.members.add(name=_cp_name(m))
        self.info.enums[name].CopyFrom(spec)

    def _register_ser_enum(self, t: ir.Type_SerEnum) -> None:
        name = _cp_name(t)
        if name in self.info.serializable_enums:
            return
        spec = p4types_pb2.P4SerializableEnumTypeSpec()
        width = t.underlying.width if isinstance(t.underlying, ir.Type_Bits) else 0
        spec.underlying_type.bitwidth = width
        for m in t.members:
            mm = spec.members.add(name=m.name)
            if m.value is not None and m.value >= 0:
                mm.value = bytes_of(m.value, width)
        self.info.serializable_enums[name].CopyFrom(spec)

    def register_newtype(self, nt: ir.Type_Newtype) -> None:
        name = _cp_name(nt)
        if name in self.info.new_types:
            return
        spec = p4types_pb2.P4NewTypeSpec()
        add_annotations(spec, nt, lambda n: n == "p4runtime_translation")
        tr = translation(nt)
        underlying = getattr(nt, "_canon", None)
        if tr is not None:
            if not isinstance(underlying, ir.Type_Bits):
                raise P4Error(f"{name}: P4Runtime requires the underlying type for a "
                              "user-defined type with the @p4runtime_translation annotation "
                              "to be bit<W>", nt.loc)
            spec.translated_type.uri = tr[0]
            if tr[1] is None:
                spec.translated_type.sdn_string.SetInParent()
            else:
                spec.translated_type.sdn_bitwidth = tr[1]
        elif underlying is not None:
            spec.original_type.CopyFrom(self._canonical(underlying))
        self.info.new_types[name].CopyFrom(spec)


def flatten_header(t: ir.Type_Header) -> list[tuple[str, ir.StructField, ir.Type, list]]:
    """A header's fields with nested struct fields flattened as p4c's FlattenHeader:
    (control-plane name ``a.b``, leaf field, canonical type, merged annotations
    innermost first)."""
    out: list[tuple[str, ir.StructField, ir.Type, list]] = []

    def walk(st: ir.Type_StructLike, path: list[str], anns: list[list]) -> None:
        for f in st.fields:
            names = path + [f.name]
            stack = anns + [f.annotations]
            if isinstance(f.type, ir.Type_Struct):
                walk(f.type, names, stack)
                continue
            merged: list = []
            seen: set[str] = set()
            for group in reversed(stack):
                for a in group:
                    if a.name not in seen:
                        seen.add(a.name)
                        merged.append(a)
            if len(names) == 1:
                cp = _cp_name(f)
            else:
                cp = ".".join(names)
            out.append((cp, f, f.type, merged))

    walk(t, [], [])
    return out
