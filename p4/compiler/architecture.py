"""Resolve the top-level package instance (v1model's ``V1Switch(...) main``) into blocks."""

from __future__ import annotations

from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error
from netweft.p4.compiler.program import BLOCK_ROLES, Block, Program
from netweft.p4.compiler.typecheck import TypeChecker
from netweft.p4.compiler.typesys import same_type, type_str

SUPPORTED_PACKAGES = {"V1Switch": BLOCK_ROLES}


def resolve_main(checker: TypeChecker, result: Program) -> None:
    """Find ``main``, check its arguments against the package and fill ``result.blocks``."""
    ast = checker.ast
    mains = [o for o in ast.objects if isinstance(o, ir.Declaration_Instance)
             and o.name == "main"]
    if not mains:
        loc = ast.objects[-1].loc if ast.objects else ast.loc
        raise P4Error("the program has no 'main' package instance "
                      "(e.g. V1Switch(MyParser(), ...) main;)", loc)
    main = mains[0]
    t = main.type
    base = t.base if isinstance(t, ir.Type_Specialized) else t
    pkg = base.decl if isinstance(base, ir.Type_Name) else None
    if not isinstance(pkg, ir.Type_Package):
        raise P4Error("'main' must be an instance of a package such as V1Switch", main.loc)
    roles = SUPPORTED_PACKAGES.get(pkg.name)
    if roles is None:
        raise P4Error(f"unsupported architecture package '{pkg.name}' "
                      "(netweft supports v1model's V1Switch)", main.loc)
    if len(main.args) != len(pkg.params):
        raise P4Error(f"{pkg.name} takes {len(pkg.params)} arguments, got {len(main.args)}",
                      main.loc)
    result.main = main
    result.package = pkg.name
    bindings: dict[str, ir.Type] = {}
    if isinstance(t, ir.Type_Specialized):
        if len(t.args) != len(pkg.type_params):
            raise P4Error(f"{pkg.name} takes {len(pkg.type_params)} type arguments, "
                          f"got {len(t.args)}", main.loc)
        for tp, ta in zip(pkg.type_params, t.args, strict=True):
            bindings[tp.name] = checker.canon(ta, checker.globals)
    ordered = _args_in_parameter_order(main.args, pkg)
    blocks: list = []
    for arg, param, role in zip(ordered, pkg.params, roles, strict=True):
        e = arg.expr
        checker.node_stack.append(e)
        try:
            if isinstance(e, ir.ConstructorCallExpression):
                e = checker.expr(e, checker.globals)
                decl = e.instantiated
            elif isinstance(e, ir.PathExpression):
                d = checker.globals.lookup(e.name)
                if not isinstance(d, ir.Declaration_Instance) or d.instantiated is None:
                    raise P4Error(f"argument '{param.name}' of {pkg.name} must be a parser or "
                                  "control instance", e.loc)
                e.decl = d
                decl = d.instantiated
                e.type = decl
            else:
                raise P4Error(f"argument '{param.name}' of {pkg.name} must be a parser or "
                              "control instance", e.loc)
        finally:
            checker.node_stack.pop()
        arg.expr = e
        _match_block(decl, param, bindings, pkg.name, arg.loc)
        blocks.append(Block(role=role, name=decl.fqn or decl.name, decl=decl))
    main.bound_args = [a.expr for a in ordered]
    main.fqn = main.name
    result.blocks = {b.role: b for b in blocks}


def _args_in_parameter_order(args: list[ir.Argument], pkg: ir.Type_Package) -> list[ir.Argument]:
    """Package arguments by position, or all by name in any order."""
    if all(a.name is None for a in args):
        return list(args)
    if any(a.name is None for a in args):
        first = next(a for a in args if a.name is None)
        raise P4Error(f"{pkg.name}: mix of named and positional arguments", first.loc)
    by_name = {}
    for a in args:
        if a.name in by_name:
            raise P4Error(f"{pkg.name}: argument '{a.name}' given twice", a.loc)
        by_name[a.name] = a
    ordered = []
    for p in pkg.params:
        if p.name not in by_name:
            raise P4Error(f"{pkg.name}: missing argument '{p.name}'", args[0].loc)
        ordered.append(by_name.pop(p.name))
    if by_name:
        extra = next(iter(by_name.values()))
        raise P4Error(f"{pkg.name} has no parameter named '{extra.name}'", extra.loc)
    return ordered


def _match_block(decl, param: ir.Parameter, bindings: dict[str, ir.Type], pkg: str,
                 loc) -> None:
    ptype = param.type
    proto = ptype.base.decl if isinstance(ptype, ir.Type_Specialized) else ptype
    targs = ptype.args if isinstance(ptype, ir.Type_Specialized) else []
    want_parser = isinstance(proto, ir.Type_Parser)
    if want_parser != isinstance(decl, ir.P4Parser):
        kind = "parser" if want_parser else "control"
        raise P4Error(f"argument '{param.name}' of {pkg} must be a {kind}, but "
                      f"'{decl.name}' is not", loc)
    if len(decl.params) != len(proto.params):
        raise P4Error(f"'{decl.name}' has {len(decl.params)} parameters but {pkg} expects "
                      f"{len(proto.params)} for '{param.name}' ({proto.name})", loc)
    sub = {tp.name: ta for tp, ta in zip(proto.type_params, targs, strict=False)}
    for mine, theirs in zip(decl.params, proto.params, strict=True):
        # p4c accepts an `in` parameter where the architecture says `inout`
        relaxed = mine.direction == "in" and theirs.direction == "inout"
        if mine.direction != theirs.direction and not relaxed:
            raise P4Error(f"parameter '{mine.name}' of '{decl.name}' must be "
                          f"'{theirs.direction or 'directionless'}' to match {proto.name}",
                          mine.loc)
        expected = theirs.type
        if isinstance(expected, ir.Type_Var):
            expected = sub.get(expected.name, expected)
        if isinstance(expected, ir.Type_Name):
            var = expected.name
            expected = bindings.get(var)
            if expected is None:
                bindings[var] = mine.type
                continue
        if isinstance(expected, ir.Type_Var):
            var = expected.name
            if var not in bindings:
                bindings[var] = mine.type
                continue
            expected = bindings[var]
        if not same_type(mine.type, expected):
            raise P4Error(f"parameter '{mine.name}' of '{decl.name}' has type "
                          f"{type_str(mine.type)} but {pkg} needs {type_str(expected)} here",
                          mine.loc)
