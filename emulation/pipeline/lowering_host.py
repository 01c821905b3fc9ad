"""What the parts of the lowering share: the :class:`LoweringHost` protocol.

:class:`~netweft.emulation.pipeline.codegen.Lowering` is one class assembled
from parts, one per kind of IR: expressions, statements, parsers, calls and
tables (``lower_*.py``).  A part calls the others and reads the lowering's
state through ``self``; :class:`LoweringHost` declares everything one part
uses of another or of ``Lowering`` itself, so a part's dependencies are read
here and a type checker can check them.  Each part derives from
:data:`LoweringPart`, which is this protocol for a type checker and ``object``
at run time (the parts stay plain mixins).  What a part uses only of itself
is not listed; no part calls another's ``_private`` method
(``tests/v1model/test_lowering_host.py`` holds both rules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from netweft.emulation.pipeline.aliasing import AliasAnalysis
    from netweft.emulation.pipeline.emitter import Body
    from netweft.emulation.pipeline.lower_tables import TableInfo
    from netweft.emulation.pipeline.types import TypeClasses
    from netweft.p4.compiler import ir

__all__ = ["LoweringHost", "LoweringPart"]


@runtime_checkable
class LoweringHost(Protocol):
    """The lowering's state and the methods its parts call on each other."""

    # state, set up by Lowering.__init__
    trace: bool                              # parser states call TRACE_STATE
    types: TypeClasses
    aliases: AliasAnalysis
    chunks: list[str]                        # the generated module, piece by piece
    pins: dict[int, str]                     # lvalue parts evaluated ahead of time
    expr_depth: int
    extern_vars: dict[int, str]              # id(extern declaration) -> its global
    value_set_vars: dict[int, str]           # id(value set) -> its global
    value_sets: dict[str, ir.P4ValueSet]
    action_funcs: dict[int, str]             # id(declaration) -> generated function
    function_funcs: dict[int, str]
    table_funcs: dict[int, str]
    tables: dict[str, TableInfo]
    action_owner: dict[int, ir.P4Control]    # id(action) -> control whose frame it uses
    table_owner: dict[int, ir.P4Control]

    # Lowering (codegen.py)
    def tmp(self, prefix: str = "t") -> str: ...
    def fresh_number(self) -> int: ...
    def ecode(self, name: str) -> int: ...
    def lower_block(self, decl: ir.P4Control | ir.P4Parser) -> str: ...
    def frame_of(self, decl: ir.P4Control | ir.P4Parser
                 ) -> tuple[str, dict[int, str], dict[int, str]]: ...
    def alias_prologue(self, decl: ir.P4Control | ir.P4Parser, body: Body) -> None: ...
    def initial_value(self, var: ir.Declaration_Variable, body: Body) -> str: ...

    # ExpressionLowering (lower_expressions.py)
    def expr(self, e: ir.Expression, body: Body) -> str: ...
    def cond(self, e: ir.Expression, body: Body) -> str: ...
    def unsigned(self, value: str, t: Any) -> str: ...
    def to_signed(self, x: str, w: int) -> str: ...
    def lowered_apart(self, e: ir.Expression, body: Body) -> tuple[str, list[str]]: ...
    def make_struct(self, t: ir.Type_StructLike, values: list[Any], body: Body) -> str: ...

    # StatementLowering (lower_statements.py)
    def stmt(self, s: ir.Node, body: Body) -> None: ...
    def assign_to(self, target: str, t: Any, right: ir.Expression, body: Body,
                  reads_root_of: ir.Expression | None = None) -> None: ...
    def assign_raw(self, left: ir.Expression, value: str, body: Body) -> None: ...
    def lvalue(self, e: ir.Expression, body: Body) -> str: ...
    def pin_location(self, lvalue: ir.Expression, body: Body) -> list[int]: ...
    def unpin(self, keys: list[int]) -> None: ...

    # ParserLowering (lower_parsers.py)
    def lower_parser_states(self, decl: ir.P4Parser, body: Body) -> None: ...
    def value_set_var(self, vs: ir.P4ValueSet) -> str: ...
    def call_packet(self, c: ir.MethodCallExpression, args: list[Any], body: Body) -> str: ...

    # CallLowering (lower_calls.py)
    def call(self, c: ir.MethodCallExpression, body: Body, as_statement: bool = False
             ) -> str: ...
    def lower_action(self, a: ir.P4Action, owner: ir.P4Control | None) -> str: ...
    def owner_of_action(self, a: ir.P4Action) -> ir.P4Control | None: ...
    def call_with_outs(self, fname: str, params: list[ir.Parameter], args: list[Any],
                       body: Body, lead: list[str], has_retval: bool = False,
                       tail: list[str] | None = None, action: ir.P4Action | None = None
                       ) -> str: ...

    # TableLowering (lower_tables.py)
    def lower_table(self, t: ir.P4Table, body: Body | None = None) -> str: ...


if TYPE_CHECKING:
    LoweringPart = LoweringHost
else:
    LoweringPart = object
