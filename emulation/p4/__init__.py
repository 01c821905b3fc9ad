"""netweft's P4-16 front end: preprocessor, parser, IR, name resolution and type checking.

>>> from netweft.emulation.p4 import compile_p4, P4Error
>>> prog = compile_p4("prog.p4")          # raises P4Error("file:line:col: message")
"""

from netweft.emulation.p4.compiler import compile_p4, compile_p4_source
from netweft.emulation.p4.errors import P4Error, SourceLoc
from netweft.emulation.p4.program import Block, ExternInstance, Program

__all__ = ["compile_p4", "compile_p4_source", "P4Error", "SourceLoc", "Program", "Block",
           "ExternInstance"]
