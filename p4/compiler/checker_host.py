"""What the parts of the type checker share: the :class:`CheckerHost` protocol.

:class:`~netweft.p4.compiler.typecheck.TypeChecker` is one class assembled
from parts: declarations, types and statements in ``typecheck.py``,
expressions (``expressions.py``), tables (``tables.py``) and calls
(``calls.py``).  A part calls the others and reads the checker's state
through ``self``; :class:`CheckerHost` declares everything one part uses of
another, so a part's dependencies are read here and a type checker can check
them.  Each mixin derives from :data:`CheckerPart`, which is this protocol for
a type checker and ``object`` at run time (the parts stay plain mixins).  What
a part uses only of itself is not listed; no part calls another's
``_private`` method (``tests/p4_frontend/test_checker_host.py`` holds both
rules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from netweft.p4.compiler import ir
    from netweft.p4.compiler.errors import P4Error
    from netweft.p4.compiler.program import Program
    from netweft.p4.compiler.scopes import Scope

__all__ = ["CheckerHost", "CheckerPart"]


@runtime_checkable
class CheckerHost(Protocol):
    """The checker's state and the methods its parts call on each other."""

    # state, set up by TypeChecker.__init__
    result: Program                          # the checked program being filled
    globals: Scope
    errors: dict[str, ir.Declaration_ID]     # the program's error members
    match_kinds: dict[str, ir.Declaration_ID]
    node_stack: list[ir.Node]                # nodes being checked, outermost first
    registering: bool                        # False while checking never-instantiated blocks
    current_parser_states: list[dict[str, ir.ParserState]]
    action_depth: int                        # > 0 while checking an action body

    # TypeChecker (typecheck.py): errors, types, instances, statements
    def err(self, msg: str, node: ir.Node | None = None) -> P4Error: ...
    def lookup_type_decl(self, name: str, scope: Scope, node: ir.Node) -> ir.Node: ...
    def canon(self, t: ir.Type, scope: Scope) -> ir.Type: ...
    def subst(self, t: ir.Type, bindings: dict[str, ir.Type]) -> ir.Type: ...
    def unify(self, param: ir.Type, arg: ir.Type, bindings: dict[str, ir.Type]) -> bool: ...
    def is_compile_time(self, e: ir.Expression) -> bool: ...
    def check_instance(self, d: ir.Declaration_Instance, scope: Scope,
                       prefix: str | None) -> None: ...
    def specialize(self, decl: ir.P4Control | ir.P4Parser, fqn: str | None,
                   args: list[ir.Argument], call_scope: Scope, site: ir.Node,
                   type_args: list[ir.Type] | None = None,
                   placeholder_ctor_args: bool = False) -> ir.P4Control | ir.P4Parser: ...
    def keyset(self, k: ir.Expression, key_types: list[ir.Type], scope: Scope,
               what: str) -> ir.Expression: ...
    def in_parser_state(self) -> bool: ...
    def require_lvalue(self, e: ir.Expression, what: str) -> None: ...

    # ExpressionChecker (expressions.py)
    def expr(self, e: ir.Expression, scope: Scope,
             expected: ir.Type | None = None) -> ir.Expression: ...
    def convert(self, e: ir.Expression, target: ir.Type | None, what: str) -> ir.Expression: ...

    # CallChecker (calls.py)
    def bind_args(self, params: list[ir.Parameter], args: list[ir.Argument], scope: Scope,
                  bindings: dict[str, ir.Type], what: str,
                  site: ir.Node) -> list[ir.Expression | None]: ...
    def pick_overload(self, candidates: list, args: list[ir.Argument], what: str,
                      site: ir.Node) -> ir.Node: ...

    # TableChecker (tables.py)
    def check_table(self, t: ir.P4Table, scope: Scope, prefix: str | None) -> None: ...


if TYPE_CHECKING:
    CheckerPart = CheckerHost
else:
    CheckerPart = object
