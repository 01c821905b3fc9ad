"""netweft's P4-16 front end: preprocessor, parser, IR, name resolution and type checking.

>>> from netweft.p4.compiler import compile_p4, P4Error
>>> prog = compile_p4("prog.p4")          # raises P4Error("file:line:col: message")
"""

from netweft.p4.compiler.compiler import compile_p4, compile_p4_source
from netweft.p4.compiler.errors import P4Error, SourceLoc
from netweft.p4.compiler.program import Block, ExternInstance, Program

__all__ = ["compile_p4", "compile_p4_source", "P4Error", "SourceLoc", "Program", "Block",
           "ExternInstance"]
