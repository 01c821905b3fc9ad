"""The type checker's parts use each other only through the declared CheckerHost protocol."""

from netweft.p4.compiler.calls import CallChecker
from netweft.p4.compiler.checker_host import CheckerHost
from netweft.p4.compiler.expressions import ExpressionChecker
from netweft.p4.compiler.program import Program
from netweft.p4.compiler.tables import TableChecker
from netweft.p4.compiler.typecheck import TypeChecker
from tests.mixin_host import host_problems

PARTS = [ExpressionChecker, TableChecker, CallChecker]


def test_the_parts_are_the_checkers_bases():
    assert list(TypeChecker.__bases__) == PARTS


def test_the_parts_share_only_what_the_protocol_declares():
    assert host_problems(TypeChecker, PARTS, CheckerHost) == []


def test_a_type_checker_is_a_checker_host():
    from netweft.p4.compiler import ir

    ast = ir.P4Program(objects=[])
    checker = TypeChecker(ast, Program(source_path="empty.p4", ast=ast))
    assert isinstance(checker, CheckerHost)
