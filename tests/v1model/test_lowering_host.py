"""The lowering's parts use each other only through the declared LoweringHost protocol."""

from netweft.emulation.pipeline.codegen import Lowering
from netweft.emulation.pipeline.lower_calls import CallLowering
from netweft.emulation.pipeline.lower_expressions import ExpressionLowering
from netweft.emulation.pipeline.lower_parsers import ParserLowering
from netweft.emulation.pipeline.lower_statements import StatementLowering
from netweft.emulation.pipeline.lower_tables import TableLowering
from netweft.emulation.pipeline.lowering_host import LoweringHost
from netweft.p4.compiler import compile_p4
from netweft.p4.programs import program
from tests.mixin_host import host_problems

PARTS = [ExpressionLowering, StatementLowering, ParserLowering, CallLowering, TableLowering]


def test_the_parts_are_the_lowerings_bases():
    assert list(Lowering.__bases__) == PARTS


def test_the_parts_share_only_what_the_protocol_declares():
    assert host_problems(Lowering, PARTS, LoweringHost) == []


def test_a_lowering_is_a_lowering_host():
    lowering = Lowering(compile_p4(str(program("basic_forward"))))
    assert isinstance(lowering, LoweringHost)
