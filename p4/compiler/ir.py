"""The intermediate representation of P4-16 programs (p4c style, one IR for all passes).

The parser builds these nodes; the semantic passes annotate them *in place*.
The back end reads them after :func:`netweft.p4.compiler.compile_p4`.

Conventions
-----------
* Every node has ``loc`` (:class:`SourceLoc`, the original file and line, also
  through ``#include``) and ``annotations`` where P4 allows them.
* Nodes compare by identity (``eq=False``): they can be dict keys.
* Fields marked *annotated* are ``None`` after parsing and filled by the passes.

What the back end can rely on after ``compile_p4``
--------------------------------------------------
* ``Expression.type`` is set on every expression to a *canonical* type node:
  typedefs and ``type`` (newtype) are expanded to their underlying type,
  ``Type_Name`` references are replaced by the declaration they name
  (``Type_Header``, ``Type_Struct``, ``Type_Enum``, ...), generic type variables
  by their instantiation. Canonical types: ``Type_Bits`` (width, signed),
  ``Type_InfInt`` (an untyped integer where no width is implied: array indices,
  shift amounts, arguments of ``int`` parameters), ``Type_Varbits``,
  ``Type_Boolean``, ``Type_String``, ``Type_Error``, ``Type_MatchKind``,
  ``Type_Enum``, ``Type_SerEnum``, ``Type_Header``, ``Type_HeaderUnion``,
  ``Type_Struct``, ``Type_Stack``, ``Type_Tuple``, ``Type_Set`` (keysets),
  ``Type_ExternInstance``, ``Type_Void``, ``Type_State``, ``Type_Table``,
  ``Type_TableApplyResult``, ``Type_ActionEnum``, ``Type_Dontcare``.
* Integer literals in typed positions carry their width (``Constant.type`` is
  ``Type_Bits``); implicit conversions are explicit ``Cast`` nodes.
  Compile-time constant expressions are folded into a ``Constant`` (or
  ``BoolLiteral``), including references to ``const`` declarations and to
  constructor parameters of specialised controls/parsers.
* ``PathExpression.decl`` names the declaration (Parameter,
  Declaration_Variable, Declaration_Constant, Declaration_Instance, P4Action,
  P4Table, ParserState, P4ValueSet, Function, Method, Declaration_ID).
  ``Member.decl`` is set for enum/error/match_kind members (a
  ``Declaration_ID`` or ``SerEnumMember`` with ``.value``) and is ``None`` for
  field accesses. Error codes are indices into ``Program.errors`` (declaration
  order, core.p4 first: NoError=0 ... as BMv2 numbers them).
* ``MethodCallExpression.kind`` classifies the call (see ``CALL_*`` below) with
  ``.target`` (the called declaration), ``.instance`` (the object expression, or
  ``None``), ``.method_name`` and ``.bound_args`` (argument expressions in
  parameter order, defaults filled in; ``None`` for an omitted optional one).
* ``SliceExpr.hi_value``/``lo_value`` are ints; ``Type_Bits.width``,
  ``Type_Varbits.size`` and ``Type_Stack.size`` are ints.
* Controls and parsers are *specialised per instance*: each instantiation gets
  its own deep copy of the declaration (constructor parameters bound to
  constants) with ``.fqn`` set; a sub-instance's ``Declaration_Instance`` has
  ``.instantiated`` pointing at that copy. Tables, actions, extern instances and
  value sets carry ``.fqn``, their fully qualified control-plane name as p4c
  writes it in P4Info (``@name`` honoured).
* The P4Control/P4Parser declarations in ``P4Program.objects`` are unchecked
  *templates*; the checked code is in ``Program.blocks[...].decl`` and in
  ``Declaration_Instance.instantiated`` / ``ConstructorCallExpression.instantiated``.
* Tables: ``P4Table.keys``, ``.action_refs``, ``.default_action``,
  ``.entries``, ``.size``, ``.implementation``, ``.counters``, ``.meters``,
  ``.other_properties`` (see :class:`P4Table`).

Changes after the first commit are additive and listed here:

* ``P4Table.largest_priority_wins`` (the table property, default True):
  how to read ``Entry.priority``; priorities follow the specification's
  rules including ``priority_delta``.
* Tables without ``default_action`` get ``NoAction`` as default and, as the
  specification requires, ``NoAction`` joins ``action_refs`` (``@defaultonly``).
* A header field may be a ``Type_Struct`` whose fields are bits/bool/serializable
  enums (recursively), as p4c accepts; its bits are in declaration order.
* Generic controls/parsers instantiated as ``C<bit<8>>(...)`` are specialised
  with the type arguments bound (parameter types are then concrete).
* A block parameter may be ``in`` where V1Switch declares ``inout`` (p4c accepts it).
* Generic structs/headers: each ``S<bit<8>>`` use is a checked copy of the
  declaration named ``S<bit<8>>`` (no type parameters left).
* ``{f = 1, ...}`` / ``{1, ...}`` / ``{...}`` initialisers (P4 1.2.4): the checker
  fills the missing fields with default values (0, false, error.NoError, the
  first enum member, invalid headers), so the back end sees complete initialisers.
* p4c's older ``@priority(n)`` entry annotation (smaller wins, BMv2's convention) is
  mirrored into ``Entry.priority`` so that, read with the table's
  ``largest_priority_wins`` (default True), it ranks the entries as p4c/BMv2 do.
* ``C.apply(...)`` on a control/parser *type* (direct invocation) is checked as a
  call on an anonymous ``Declaration_Instance`` named like the type (p4c's
  ``@name("C")``), so its tables are ``<enclosing>.C.<table>``.
* A constructor parameter of control/parser type (``(ct c)``) may be bound to an
  instance whose apply parameters match; ``c.apply(...)`` then targets that instance.
* ``Type_List`` (``list<T>``) and ``static_assert`` (folded to ``true``; a false
  condition is a compile error) from P4-16 1.2.4.
* For loops (P4-16 1.2.5): ``ForStatement``, ``ForInStatement``, ``BreakStatement``,
  ``ContinueStatement`` may appear in control, action and function bodies (never
  in parser states); ``break``/``continue`` only inside a loop.
* ``==``/``!=`` are allowed on varbit values and header stacks; a stack index may be a
  signed ``int<W>`` at run time (a negative value is out of bounds).
* ``Annotation.structured``: the annotation was written ``@name[...]`` (P4-16
  structured annotation; P4Info keeps those apart).
* ``StructField.declared_type`` / ``Parameter.declared_type``: the type as written in
  source (``Type_Name`` with ``.decl`` set), kept beside the canonical ``type`` so that
  P4Info can name ``type`` (newtype) declarations and typedefs as p4c does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from netweft.p4.compiler.errors import UNKNOWN_LOC, SourceLoc

# ---------------------------------------------------------------- base nodes


def _ann():  # annotated back-reference field: no repr (avoids cycles), no compare
    return field(default=None, repr=False, compare=False)


@dataclass(eq=False, kw_only=True)
class Node:
    """Base of every IR node."""

    loc: SourceLoc = field(default=UNKNOWN_LOC, repr=False, compare=False)


@dataclass(eq=False, kw_only=True)
class Annotation(Node):
    """``@name`` / ``@name(expr, ...)`` / ``@name[k=v, ...]`` / unstructured body.

    ``args`` holds parsed expressions when the body parses as an expression
    list, ``kv`` the key/value pairs of a structured ``[...]`` annotation, and
    ``body`` the raw token texts.
    """

    name: str
    args: list[Expression] = field(default_factory=list)
    kv: dict[str, Expression] | None = None
    body: list[str] = field(default_factory=list)
    structured: bool = False  # written with square brackets: @name[...]


def find_annotation(node: Node, name: str) -> Annotation | None:
    """The annotation ``@name`` on ``node``, or None."""
    for a in getattr(node, "annotations", None) or ():
        if a.name == name:
            return a
    return None


def name_annotation(node: Node) -> str | None:
    """The string of an ``@name("...")`` annotation, or None."""
    a = find_annotation(node, "name")
    if a is not None and a.args and isinstance(a.args[0], StringLiteral):
        return a.args[0].value
    return None


# ---------------------------------------------------------------- types


@dataclass(eq=False, kw_only=True)
class Type(Node):
    """Base of type nodes."""


@dataclass(eq=False, kw_only=True)
class Type_Bits(Type):
    """``bit<W>`` (signed=False) or ``int<W>`` (signed=True)."""

    width: int = 0
    signed: bool = False
    width_expr: Expression | None = field(default=None, repr=False)


@dataclass(eq=False, kw_only=True)
class Type_InfInt(Type):
    """``int``: arbitrary-precision integer (literals without width)."""


@dataclass(eq=False, kw_only=True)
class Type_Varbits(Type):
    """``varbit<N>``: up to ``size`` bits."""

    size: int = 0
    size_expr: Expression | None = field(default=None, repr=False)


@dataclass(eq=False, kw_only=True)
class Type_Boolean(Type):
    """``bool``."""


@dataclass(eq=False, kw_only=True)
class Type_String(Type):
    """``string`` (compile-time only)."""


@dataclass(eq=False, kw_only=True)
class Type_Void(Type):
    """``void``."""


@dataclass(eq=False, kw_only=True)
class Type_Dontcare(Type):
    """``_`` in type-argument position: infer this argument."""


@dataclass(eq=False, kw_only=True)
class Type_Error(Type):
    """The ``error`` type; its members are ``Program.errors``."""


@dataclass(eq=False, kw_only=True)
class Type_MatchKind(Type):
    """The ``match_kind`` type."""


@dataclass(eq=False, kw_only=True)
class Type_State(Type):
    """Type of a parser state reference."""


@dataclass(eq=False, kw_only=True)
class Type_Name(Type):
    """A reference to a named type; ``decl`` is *annotated* (the declaration)."""

    name: str
    decl: Any = _ann()


@dataclass(eq=False, kw_only=True)
class Type_Specialized(Type):
    """``Base<T1, T2>`` in source (e.g. ``register<bit<32>>``)."""

    base: Type_Name
    args: list[Type] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Type_Stack(Type):
    """Header stack ``T[size]``."""

    element: Type
    size: int = 0
    size_expr: Expression | None = field(default=None, repr=False)


@dataclass(eq=False, kw_only=True)
class Type_Tuple(Type):
    """``tuple<T1, ...>``; also the type of list expressions ``{a, b}``."""

    components: list[Type] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Type_List(Type):
    """``list<T>`` (P4-16 1.2.4): a compile-time list of values of type ``T``.

    netweft accepts it for extern and constructor parameters, constants, casts of
    list expressions and for-in collections, never as the type of a run-time
    variable, field or action/block parameter.
    """

    element: Type


@dataclass(eq=False, kw_only=True)
class Type_Set(Type):
    """Keyset type of select labels and table entry keys (``&&&``, ``..``)."""

    element: Type


@dataclass(eq=False, kw_only=True)
class Type_Var(Type):
    """A generic type parameter ``T`` in a declaration."""

    name: str


@dataclass(eq=False, kw_only=True)
class StructField(Node):
    """A field of a struct, header or header union."""

    name: str
    type: Type
    annotations: list[Annotation] = field(default_factory=list)
    declared_type: Any = _ann()  # the type as written in source (see module docstring)


@dataclass(eq=False, kw_only=True)
class Type_StructLike(Type):
    """Common base of struct, header and header union declarations."""

    name: str
    fields: list[StructField] = field(default_factory=list)
    type_params: list[Type_Var] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)

    def field_named(self, name: str) -> StructField | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None


@dataclass(eq=False, kw_only=True)
class Type_Struct(Type_StructLike):
    """``struct``."""


@dataclass(eq=False, kw_only=True)
class Type_Header(Type_StructLike):
    """``header``; its fields are bit<W>/int<W>/varbit/bool/serializable enums."""


@dataclass(eq=False, kw_only=True)
class Type_HeaderUnion(Type_StructLike):
    """``header_union``; its fields are headers."""


@dataclass(eq=False, kw_only=True)
class Declaration_ID(Node):
    """A member of ``error``, ``match_kind`` or a plain ``enum``.

    ``value`` (*annotated*) is its index: the error code / enum ordinal.
    """

    name: str
    value: int | None = None
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Type_Enum(Type):
    """``enum E { A, B }``."""

    name: str
    members: list[Declaration_ID] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class SerEnumMember(Node):
    """``A = 1`` in a serializable enum; ``value`` (*annotated*) is the int."""

    name: str
    value_expr: Expression
    value: int | None = None


@dataclass(eq=False, kw_only=True)
class Type_SerEnum(Type):
    """``enum bit<8> E { A = 1 }``; ``underlying`` is canonical Type_Bits after checking."""

    name: str
    underlying: Type
    members: list[SerEnumMember] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Declaration_Errors(Node):
    """``error { A, B }`` (all such declarations are merged in ``Program.errors``)."""

    members: list[Declaration_ID] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Declaration_MatchKind(Node):
    """``match_kind { exact, ternary }``."""

    members: list[Declaration_ID] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Type_Typedef(Type):
    """``typedef T Name;`` (an alias)."""

    name: str
    type: Type
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Type_Newtype(Type):
    """``type T Name;`` (a new type; expressions get the underlying type)."""

    name: str
    type: Type
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Parameter(Node):
    """A parameter; ``direction`` is ``""`` (directionless), ``in``, ``out`` or ``inout``."""

    name: str
    direction: str
    type: Type
    default: Expression | None = None
    annotations: list[Annotation] = field(default_factory=list)
    declared_type: Any = _ann()  # the type as written in source (see module docstring)

    @property
    def optional(self) -> bool:
        return find_annotation(self, "optional") is not None


@dataclass(eq=False, kw_only=True)
class Type_Method(Type):
    """Signature of a function, extern method or action."""

    type_params: list[Type_Var] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    return_type: Type | None = None


@dataclass(eq=False, kw_only=True)
class Method(Node):
    """An extern method, extern constructor (return_type None, name == extern
    name) or extern function declaration (top-level ``extern void f(...)``)."""

    name: str
    type: Type_Method
    abstract: bool = False
    annotations: list[Annotation] = field(default_factory=list)
    extern: Type_Extern | None = field(default=None, repr=False)  # owning extern


@dataclass(eq=False, kw_only=True)
class Type_Extern(Type):
    """``extern Name<T> { constructors and methods }``."""

    name: str
    type_params: list[Type_Var] = field(default_factory=list)
    methods: list[Method] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Type_ExternInstance(Type):
    """Canonical type of an extern object: the extern and its type arguments."""

    extern: Type_Extern
    type_args: list[Type] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Type_Parser(Type):
    """``parser P<T>(params);`` prototype (architecture declarations)."""

    name: str
    type_params: list[Type_Var] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Type_Control(Type):
    """``control C<T>(params);`` prototype."""

    name: str
    type_params: list[Type_Var] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Type_Package(Type):
    """``package V1Switch<H, M>(Parser<H, M> p, ...);``."""

    name: str
    type_params: list[Type_Var] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Type_Table(Type):
    """Type of a table name in an expression (only ``.apply()`` is valid)."""

    table: P4Table


@dataclass(eq=False, kw_only=True)
class Type_TableApplyResult(Type):
    """Type of ``t.apply()``: has ``hit``, ``miss`` and ``action_run``."""

    table: P4Table


@dataclass(eq=False, kw_only=True)
class Type_ActionEnum(Type):
    """Type of ``t.apply().action_run``: one of the table's actions."""

    table: P4Table


@dataclass(eq=False, kw_only=True)
class Type_Action(Type):
    """Type of an action name used as a value (table properties)."""

    action: P4Action


# ---------------------------------------------------------------- expressions


@dataclass(eq=False, kw_only=True)
class Expression(Node):
    """Base of expressions; ``type`` is *annotated* (canonical type)."""

    type: Any = _ann()


@dataclass(eq=False, kw_only=True)
class Constant(Expression):
    """Integer literal or folded constant. ``base`` is the literal's radix."""

    value: int
    base: int = 10


@dataclass(eq=False, kw_only=True)
class BoolLiteral(Expression):
    value: bool


@dataclass(eq=False, kw_only=True)
class StringLiteral(Expression):
    value: str


@dataclass(eq=False, kw_only=True)
class PathExpression(Expression):
    """A name; ``decl`` is *annotated*. ``top_level`` for a leading dot (``.x``)."""

    name: str
    top_level: bool = False
    decl: Any = _ann()


@dataclass(eq=False, kw_only=True)
class TypeNameExpression(Expression):
    """A type used as an expression prefix (``error``, ``E`` in ``E.A``, ``H`` in ``H.minSizeInBits()``)."""

    typename: Type


@dataclass(eq=False, kw_only=True)
class Member(Expression):
    """``expr.member``. ``decl`` *annotated* for enum/error/match_kind members."""

    expr: Expression
    member: str
    decl: Any = _ann()


@dataclass(eq=False, kw_only=True)
class ArrayIndex(Expression):
    """``stack[index]``."""

    left: Expression
    index: Expression


@dataclass(eq=False, kw_only=True)
class SliceExpr(Expression):
    """``expr[hi:lo]``; ``hi_value``/``lo_value`` are *annotated* ints."""

    expr: Expression
    hi: Expression
    lo: Expression
    hi_value: int | None = None
    lo_value: int | None = None


UNARY_OPS = ("-", "+", "~", "!")
BINARY_OPS = ("*", "/", "%", "+", "-", "|+|", "|-|", "<<", ">>", "<", "<=", ">", ">=",
              "==", "!=", "&", "^", "|", "++", "&&", "||", "&&&", "..")


@dataclass(eq=False, kw_only=True)
class Unary(Expression):
    """Unary operator: ``-`` (negate), ``+``, ``~`` (complement), ``!`` (not)."""

    op: str
    expr: Expression


@dataclass(eq=False, kw_only=True)
class Binary(Expression):
    """Binary operator, ``op`` one of ``BINARY_OPS``. ``&&&`` (mask) and ``..``
    (range) only occur in keysets and have ``Type_Set`` type; ``++`` is
    concatenation; ``|+|``/``|-|`` saturate."""

    op: str
    left: Expression
    right: Expression


@dataclass(eq=False, kw_only=True)
class Mux(Expression):
    """``cond ? e1 : e2``."""

    cond: Expression
    e1: Expression
    e2: Expression


@dataclass(eq=False, kw_only=True)
class Cast(Expression):
    """``(T) expr``; ``dest_type`` is canonical after checking."""

    dest_type: Type
    expr: Expression


@dataclass(eq=False, kw_only=True)
class Argument(Node):
    """A call argument, optionally named (``f(x = 1)``); ``_`` is DefaultExpression(dontcare=True)."""

    name: str | None
    expr: Expression


CALL_HEADER = "header"              # isValid / setValid / setInvalid on header (or union isValid)
CALL_STACK = "stack"                # push_front / pop_front on a header stack
CALL_PACKET = "packet"              # extract / lookahead / advance / length / emit
CALL_TABLE_APPLY = "table_apply"    # t.apply()
CALL_EXTERN_METHOD = "extern_method"  # instance.method(...) on an extern object
CALL_EXTERN_FUNCTION = "extern_function"  # mark_to_drop(...), hash(...), ...
CALL_ACTION = "action"              # direct action call
CALL_FUNCTION = "function"          # P4 function call
CALL_APPLY_INSTANCE = "apply_instance"  # sub-control / sub-parser instance.apply(...)
CALL_BUILTIN = "builtin"            # minSizeInBits / minSizeInBytes / sizeInBits on types/exprs


@dataclass(eq=False, kw_only=True)
class MethodCallExpression(Expression):
    """A call. *Annotated*: ``kind`` (a ``CALL_*``), ``target`` (the called
    declaration: Method, P4Action, P4Table, Function, or the specialised
    P4Control/P4Parser), ``instance`` (object expression or None),
    ``method_name``, ``bound_args`` (expressions in parameter order) and
    ``type_args_resolved`` (canonical type arguments, inferred ones included)."""

    method: Expression
    type_args: list[Type] = field(default_factory=list)
    args: list[Argument] = field(default_factory=list)
    kind: str | None = None
    target: Any = _ann()
    instance: Any = _ann()
    method_name: str | None = None
    bound_args: Any = _ann()
    type_args_resolved: Any = _ann()


@dataclass(eq=False, kw_only=True)
class ConstructorCallExpression(Expression):
    """``Type(args)`` as an expression (package arguments, table implementations)."""

    ctor_type: Type
    args: list[Argument] = field(default_factory=list)
    instantiated: Any = _ann()  # specialised control/parser, or None for externs


@dataclass(eq=False, kw_only=True)
class ListExpression(Expression):
    """``{a, b, c}`` (a tuple value, or a struct/header initialiser by position).

    ``default_rest`` records a trailing ``...`` in source; after checking, the
    missing elements have been filled with default values.
    """

    components: list[Expression] = field(default_factory=list)
    default_rest: bool = False


@dataclass(eq=False, kw_only=True)
class NamedExpression(Node):
    name: str
    expr: Expression


@dataclass(eq=False, kw_only=True)
class StructExpression(Expression):
    """``{f1 = a, f2 = b}`` or ``(T){...}``; ``type_name`` may be None until checked."""

    type_name: Type | None
    components: list[NamedExpression] = field(default_factory=list)
    default_rest: bool = False  # trailing `...`: missing fields get default values


@dataclass(eq=False, kw_only=True)
class InvalidHeader(Expression):
    """``{#}``: an invalid header of the context's type."""


@dataclass(eq=False, kw_only=True)
class DefaultExpression(Expression):
    """``default`` or ``_`` (``dontcare=True``) in keysets and arguments."""

    dontcare: bool = False


@dataclass(eq=False, kw_only=True)
class ThisExpression(Expression):
    """``this`` inside an abstract method implementation."""


@dataclass(eq=False, kw_only=True)
class SelectCase(Node):
    """``keyset : state;`` ``state.decl`` is the ParserState (or value set for keysets)."""

    keyset: Expression
    state: PathExpression


@dataclass(eq=False, kw_only=True)
class SelectExpression(Expression):
    """``select(e1, e2) { cases }``; ``select`` is a ListExpression."""

    select: ListExpression
    cases: list[SelectCase] = field(default_factory=list)


# ---------------------------------------------------------------- statements


@dataclass(eq=False, kw_only=True)
class Statement(Node):
    """Base of statements."""


@dataclass(eq=False, kw_only=True)
class AssignmentStatement(Statement):
    """``left = right``. A compound assignment ``a op= b`` arrives as ``a = a op b``
    with ``compound_op`` set (``"+="`` ...): ``right`` is then a Binary whose left
    operand is a copy of ``left``, and ``left``'s location is evaluated once."""

    left: Expression
    right: Expression
    compound_op: str | None = None


@dataclass(eq=False, kw_only=True)
class MethodCallStatement(Statement):
    call: MethodCallExpression


@dataclass(eq=False, kw_only=True)
class IfStatement(Statement):
    condition: Expression
    if_true: Statement
    if_false: Statement | None = None


@dataclass(eq=False, kw_only=True)
class BlockStatement(Statement):
    """``{ ... }``: statements and local variable/constant/instance declarations."""

    components: list[Node] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class SwitchCase(Node):
    """``label: { ... }`` or ``label:`` (fall-through, ``statement`` None).

    ``label`` is a PathExpression to an action (``action_run`` switches, with
    ``.decl`` the P4Action), an expression (value switches), or DefaultExpression.
    """

    label: Expression
    statement: BlockStatement | None


@dataclass(eq=False, kw_only=True)
class SwitchStatement(Statement):
    expression: Expression
    cases: list[SwitchCase] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class ExitStatement(Statement):
    pass


@dataclass(eq=False, kw_only=True)
class ReturnStatement(Statement):
    expression: Expression | None = None


@dataclass(eq=False, kw_only=True)
class EmptyStatement(Statement):
    pass


@dataclass(eq=False, kw_only=True)
class ForStatement(Statement):
    """``for (init; condition; updates) body`` (P4-16 1.2.5).

    ``init`` holds Declaration_Variable / AssignmentStatement / MethodCallStatement
    nodes (their variables are scoped to the loop); ``condition`` is a bool
    expression (None: always true); ``updates`` are assignments or method calls
    run after each iteration (also after ``continue``).
    """

    init: list[Node] = field(default_factory=list)
    condition: Expression | None = None
    updates: list[Statement] = field(default_factory=list)
    body: Statement = field(default_factory=EmptyStatement)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class ForInStatement(Statement):
    """``for (T v in collection) body`` (P4-16 1.2.5).

    ``variable`` is the loop variable (a Declaration_Variable without initializer);
    ``collection`` is a range ``lo .. hi`` (a Binary with op ``..``, both ends of the
    variable's type, both inclusive, evaluated once before the loop), a header
    stack (the variable takes each element in index order) or a list/tuple
    expression whose components all have the variable's type.
    """

    variable: Declaration_Variable
    collection: Expression
    body: Statement = field(default_factory=EmptyStatement)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class BreakStatement(Statement):
    """``break;`` inside a for loop: leave the innermost loop."""


@dataclass(eq=False, kw_only=True)
class ContinueStatement(Statement):
    """``continue;`` inside a for loop: run the updates and test the condition."""


# ---------------------------------------------------------------- declarations


@dataclass(eq=False, kw_only=True)
class Declaration_Variable(Statement):
    """``T name [= init];`` (local or control/parser-level)."""

    name: str
    type: Type
    initializer: Expression | None = None
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Declaration_Constant(Node):
    """``const T name = init;``; ``initializer`` is folded to Constant/BoolLiteral/... ."""

    name: str
    type: Type
    initializer: Expression
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class Declaration_Instance(Node):
    """``Type(args) name [= { abstract method impls }];``.

    *Annotated*: ``fqn`` (control-plane name), ``instantiated`` (the specialised
    P4Control/P4Parser for control/parser instances, None for externs),
    ``extern`` (Type_ExternInstance for extern instances), ``bound_args``
    (constructor arguments, folded, in parameter order).
    """

    name: str
    type: Type
    args: list[Argument] = field(default_factory=list)
    initializer: BlockStatement | None = None
    annotations: list[Annotation] = field(default_factory=list)
    fqn: str | None = None
    instantiated: Any = _ann()
    extern: Any = _ann()
    bound_args: Any = _ann()


@dataclass(eq=False, kw_only=True)
class P4Action(Node):
    """``action name(params) { body }``; ``fqn`` *annotated*."""

    name: str
    params: list[Parameter] = field(default_factory=list)
    body: BlockStatement = field(default_factory=BlockStatement)
    annotations: list[Annotation] = field(default_factory=list)
    fqn: str | None = None


@dataclass(eq=False, kw_only=True)
class Function(Node):
    """``T name<TP>(params) { body }`` (P4 function)."""

    name: str
    return_type: Type
    type_params: list[Type_Var] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    body: BlockStatement = field(default_factory=BlockStatement)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class P4ValueSet(Node):
    """``value_set<T>(size) name;``; ``size`` int and ``fqn`` *annotated*."""

    name: str
    element_type: Type
    size_expr: Expression
    size: int | None = None
    annotations: list[Annotation] = field(default_factory=list)
    fqn: str | None = None


@dataclass(eq=False, kw_only=True)
class ParserState(Node):
    """A parser state. ``select_expression`` is None (implicit reject... only for
    accept/reject), a PathExpression (direct transition) or SelectExpression."""

    name: str
    components: list[Node] = field(default_factory=list)
    select_expression: Expression | None = None
    annotations: list[Annotation] = field(default_factory=list)
    builtin: bool = False  # accept / reject


@dataclass(eq=False, kw_only=True)
class P4Parser(Node):
    """``parser Name<TP>(apply params)(ctor params) { locals states }``.

    ``states`` includes the built-in ``accept`` and ``reject`` (``builtin``)
    after checking; ``fqn`` *annotated* for specialised instances.
    """

    name: str
    type_params: list[Type_Var] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    ctor_params: list[Parameter] = field(default_factory=list)
    locals: list[Node] = field(default_factory=list)
    states: list[ParserState] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    fqn: str | None = None

    def state(self, name: str) -> ParserState | None:
        for s in self.states:
            if s.name == name:
                return s
        return None


@dataclass(eq=False, kw_only=True)
class P4Control(Node):
    """``control Name<TP>(apply params)(ctor params) { locals apply { body } }``."""

    name: str
    type_params: list[Type_Var] = field(default_factory=list)
    params: list[Parameter] = field(default_factory=list)
    ctor_params: list[Parameter] = field(default_factory=list)
    locals: list[Node] = field(default_factory=list)
    body: BlockStatement = field(default_factory=BlockStatement)
    annotations: list[Annotation] = field(default_factory=list)
    fqn: str | None = None


# ---- tables


@dataclass(eq=False, kw_only=True)
class KeyElement(Node):
    """``expr : match_kind @name("...");``; ``name`` *annotated* (p4c key name)."""

    expression: Expression
    match_kind: str
    annotations: list[Annotation] = field(default_factory=list)
    name: str | None = None


@dataclass(eq=False, kw_only=True)
class ActionRef(Node):
    """An entry of ``actions = { ... }`` / a ``default_action`` / an entry's action.

    ``expression`` is the source (PathExpression or MethodCallExpression).
    *Annotated*: ``action`` (P4Action) and ``args`` (bound argument expressions
    in parameter order). In a table's ``actions`` list ``args`` binds only the
    directional parameters (the rest come from the control plane); in
    ``default_action`` and entries it binds every parameter.
    """

    expression: Expression
    annotations: list[Annotation] = field(default_factory=list)
    action: Any = _ann()
    args: Any = _ann()

    @property
    def default_only(self) -> bool:
        return find_annotation(self, "defaultonly") is not None

    @property
    def table_only(self) -> bool:
        return find_annotation(self, "tableonly") is not None


@dataclass(eq=False, kw_only=True)
class Entry(Node):
    """A ``const entries``/``entries`` element.

    ``keys`` are keyset expressions per key (exact value, ``v &&& m``,
    ``lo .. hi``, DefaultExpression). *Annotated* ``priority`` (int or None;
    P4Runtime style: larger wins) after checking; p4c's rule gives entries
    without explicit priorities decreasing priorities in source order.
    """

    keys: list[Expression]
    action: ActionRef
    priority_expr: Expression | None = None
    is_const: bool = False
    annotations: list[Annotation] = field(default_factory=list)
    priority: int | None = None


@dataclass(eq=False, kw_only=True)
class Property(Node):
    """A raw table property. ``value`` is a list[KeyElement] (``key``),
    list[ActionRef] (``actions``), list[Entry] (``entries``), an ActionRef
    (``default_action``) or an Expression (anything else)."""

    name: str
    value: Any
    is_const: bool = False
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, kw_only=True)
class DefaultAction(Node):
    """The table's default action: ``action_ref`` plus ``is_const``."""

    action_ref: ActionRef
    is_const: bool = False


@dataclass(eq=False, kw_only=True)
class P4Table(Node):
    """``table name { properties }``.

    *Annotated* by the checker: ``fqn``; ``keys`` (list[KeyElement]);
    ``action_refs`` (list[ActionRef]); ``default_action`` (DefaultAction; if
    absent in source, ``NoAction`` as in p4c); ``entries`` (list[Entry]; the
    ``const entries``/``entries`` property); ``entries_const`` (bool);
    ``size`` (int or None); ``implementation`` (the property's expression or
    None); ``implementation_instance`` (the Declaration_Instance of the
    action_profile/action_selector: the named instance, or for an inline
    constructor call a synthesised one whose fqn is the table's fqn);
    ``counters``/``meters`` (Declaration_Instance of direct_counter/direct_meter or None);
    ``other_properties`` (dict name -> Property).
    """

    name: str
    properties: list[Property] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    fqn: str | None = None
    keys: Any = _ann()
    action_refs: Any = _ann()
    default_action: Any = _ann()
    entries: Any = _ann()
    entries_const: bool = False
    largest_priority_wins: bool = True
    size: int | None = None
    implementation: Any = _ann()
    implementation_instance: Any = _ann()
    counters: Any = _ann()
    meters: Any = _ann()
    other_properties: Any = _ann()

    def property(self, name: str) -> Property | None:
        for p in self.properties:
            if p.name == name:
                return p
        return None


@dataclass(eq=False, kw_only=True)
class P4Program(Node):
    """The whole parsed program (top-level declarations in source order)."""

    objects: list[Node] = field(default_factory=list)
