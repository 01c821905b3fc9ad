"""The front end's result: a checked program with its v1model blocks and control-plane objects."""

from __future__ import annotations

from dataclasses import dataclass, field

from netweft.p4.compiler import ir

BLOCK_ROLES = ("parser", "verify_checksum", "ingress", "egress", "compute_checksum", "deparser")


@dataclass(eq=False)
class Block:
    """One programmable block of the package, e.g. role ``ingress``.

    ``decl`` is the specialised P4Parser/P4Control (its ``fqn`` is the
    control-plane prefix, e.g. ``MyIngress``); ``params`` its apply parameters
    with canonical types.
    """

    role: str
    name: str
    decl: ir.P4Parser | ir.P4Control = field(repr=False)

    @property
    def params(self) -> list[ir.Parameter]:
        return self.decl.params


@dataclass(eq=False)
class ExternInstance:
    """An extern object instance: fully qualified name, extern type name
    (``register``, ``counter`` ...), canonical type arguments and constructor
    argument values (folded expressions, e.g. Constant/Member of an enum)."""

    name: str
    extern_type: str
    type_args: list[ir.Type]
    args: list[ir.Expression | None]
    decl: ir.Declaration_Instance


@dataclass(eq=False)
class Program:
    """A compiled P4 program (see ``ir`` for the node contract).

    Dicts are keyed by fully qualified control-plane names and keep source order.
    """

    source_path: str
    ast: ir.P4Program
    package: str = ""
    main: ir.Declaration_Instance | None = None
    blocks: dict[str, Block] = field(default_factory=dict)
    tables: dict[str, ir.P4Table] = field(default_factory=dict)
    actions: dict[str, ir.P4Action] = field(default_factory=dict)
    externs: dict[str, ExternInstance] = field(default_factory=dict)
    value_sets: dict[str, ir.P4ValueSet] = field(default_factory=dict)
    header_types: dict[str, ir.Type_Header] = field(default_factory=dict)
    header_union_types: dict[str, ir.Type_HeaderUnion] = field(default_factory=dict)
    struct_types: dict[str, ir.Type_Struct] = field(default_factory=dict)
    enum_types: dict[str, ir.Type_Enum | ir.Type_SerEnum] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    match_kinds: list[str] = field(default_factory=list)

    @property
    def parser(self) -> Block:
        return self.blocks["parser"]

    @property
    def verify_checksum(self) -> Block:
        return self.blocks["verify_checksum"]

    @property
    def ingress(self) -> Block:
        return self.blocks["ingress"]

    @property
    def egress(self) -> Block:
        return self.blocks["egress"]

    @property
    def compute_checksum(self) -> Block:
        return self.blocks["compute_checksum"]

    @property
    def deparser(self) -> Block:
        return self.blocks["deparser"]

    def error_code(self, name: str) -> int:
        """The numeric code of ``error.<name>`` (declaration order, NoError = 0)."""
        return self.errors.index(name)
