"""Lowering of a checked P4 program into Python callables, compiled once per program.

:func:`netweft.emulation.pipeline.compiled.compile_pipeline` generates Python
source for every parser, control, action, table apply and deparser of the
program, compiles it once, and returns the block functions; nothing walks
the IR per packet.
"""
