"""netweft's nesting limits: how deep statements and expressions may nest.

Every stage after the parser (type checking, the back end, the Python code the
back end generates) recurses over the program tree, and CPython refuses source
nested too deeply (100 indentation levels, 200 parentheses).  Rather than
letting one of those fail somewhere inside, the tree is measured once, right
after parsing, and a program beyond the limits is refused at the node that
crosses them.  An ``else if`` chain does not nest: it is a list of branches; nor do the
braces of an ``if``, ``for`` or ``switch`` body.
"""

from __future__ import annotations

from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error

MAX_STATEMENT_NESTING = 32
MAX_LOOP_NESTING = 12  # each loop is a Python block; CPython allows 20 nested blocks
MAX_EXPRESSION_NESTING = 64


def check_nesting(program: ir.P4Program) -> None:
    """Raise P4Error at the first statement or expression nested beyond the limits.

    Runs on the parsed, unchecked tree; a node reachable twice (the parser shares
    some, e.g. declared types) is measured once.
    """
    stack: list[tuple[ir.Node, int, int, int]] = [(program, 0, 0, 0)]
    seen: set[int] = {id(program)}
    while stack:
        node, statements, expressions, loops = stack.pop()
        for value in vars(node).values():
            children = value if isinstance(value, list) else (value,)
            for child in children:
                if not isinstance(child, ir.Node) or id(child) in seen:
                    continue
                seen.add(id(child))
                s, e, loops_here = statements, expressions, loops
                if isinstance(child, ir.Expression):
                    e += 1
                    if e > MAX_EXPRESSION_NESTING:
                        raise P4Error(f"expression nested more than {MAX_EXPRESSION_NESTING} "
                                      "levels deep (netweft's limit); split it into steps "
                                      "with local variables", child.loc)
                elif _nests(node, child):
                    s += 1
                    if s > MAX_STATEMENT_NESTING:
                        raise P4Error(f"statements nested more than {MAX_STATEMENT_NESTING} "
                                      "levels deep (netweft's limit); move inner parts into "
                                      "actions or functions", child.loc)
                if isinstance(child, (ir.ForStatement, ir.ForInStatement)):
                    loops_here += 1
                    if loops_here > MAX_LOOP_NESTING:
                        raise P4Error(f"loops nested more than {MAX_LOOP_NESTING} deep "
                                      "(netweft's limit); move inner loops into functions",
                                      child.loc)
                stack.append((child, s, e, loops_here))


def _nests(parent: ir.Node, child: ir.Node) -> bool:
    """Whether ``child`` is one statement level deeper than ``parent``'s statements.

    The braces of an ``if``/``for``/``switch`` body are part of that statement, and
    the ``if`` of an ``else if`` continues its chain.
    """
    if isinstance(child, ir.BlockStatement):
        return isinstance(parent, ir.BlockStatement)
    if isinstance(child, ir.IfStatement) and isinstance(parent, ir.IfStatement):
        return child is not parent.if_false
    return isinstance(child, ir.Statement)
