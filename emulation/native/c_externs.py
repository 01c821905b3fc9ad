"""v1model extern calls in C: drop, verify, hash (also ``crc16_custom`` and
``crc32_custom``), checksums (also over the payload), random, truncate,
assert/assume, registers (cells up to 128 bits), counters, meters, direct counters and
meters, the deprecated ``Checksum16`` (clone, resubmit, recirculate, digest and
log_msg: :mod:`.c_flow`).

What the native back end does not cover is refused at load, so that
``backend="auto"`` falls back to the Python back end.
"""

from __future__ import annotations

from typing import Any

from netweft.emulation.native.c_body import CBody
from netweft.emulation.native.c_types import (
    field_name,
    is_scalar,
    mask_literal,
    scalar_width,
    unsupported,
)
from netweft.emulation.pipeline.externs import enum_member_name, struct_register_refusal
from netweft.emulation.v1model.hash_algorithms import bmv2_refusal
from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error

_ALGORITHMS = {"crc16": "nw_crc(&X->P->crc16, {b}, {n})",
               "crc32": "nw_crc(&X->P->crc32, {b}, {n})",
               "crc16_custom": "nw_crc(&X->P->crc16_custom, {b}, {n})",
               "crc32_custom": "nw_crc(&X->P->crc32_custom, {b}, {n})",
               "csum16": "nw_csum16({b}, {n})",
               "xor16": "nw_xor16({b}, {n})",
               "identity": "nw_identity({b}, {n})"}

# the same over the field list then the payload (the bytes after the parsed headers)
_WITH_PAYLOAD = {"crc16": "nw_crc2(&X->P->crc16, {b}, {n}, X->payload, X->payload_len)",
                 "crc32": "nw_crc2(&X->P->crc32, {b}, {n}, X->payload, X->payload_len)",
                 "crc16_custom": "nw_crc2(&X->P->crc16_custom, {b}, {n}, X->payload, "
                                 "X->payload_len)",
                 "crc32_custom": "nw_crc2(&X->P->crc32_custom, {b}, {n}, X->payload, "
                                 "X->payload_len)",
                 "csum16": "nw_csum16_2({b}, {n}, X->payload, X->payload_len)",
                 "xor16": "nw_xor16_2({b}, {n}, X->payload, X->payload_len)",
                 "identity": "nw_identity2({b}, {n}, X->payload, X->payload_len)"}


def algorithm_call(name: str, buf: str, nbytes: str, with_payload: bool = False) -> str:
    """C computing HashAlgorithm ``name`` over ``nbytes`` bytes at ``buf`` (then the payload)."""
    return (_WITH_PAYLOAD if with_payload else _ALGORITHMS)[name].format(b=buf, n=nbytes)


def _algorithm(e: Any) -> str:
    name = enum_member_name(e)
    if name is None:
        raise unsupported("a hash algorithm that is not a HashAlgorithm constant", e)
    refusal = bmv2_refusal(name)
    if refusal is not None:
        raise P4Error(refusal, e.loc)
    if name not in _ALGORITHMS:
        raise unsupported(f"HashAlgorithm.{name}", e)
    return name


class CExternLowering:
    """Mixin of :class:`~netweft.emulation.native.c_codegen.CLowering`."""

    types: Any
    flow_extern: Any   # c_flow.CFlowLowering

    # ------------------------------------------------------------- field lists

    def _flatten(self, e: Any, body: CBody, out: list[tuple[str | None, str, int]]) -> None:
        if isinstance(e, (ir.ListExpression, ir.StructExpression)):
            for c in e.components:
                self._flatten(c.expr if isinstance(c, ir.NamedExpression) else c, body, out)
            return
        t = e.type
        valid = None
        if isinstance(e, ir.Member) and isinstance(e.expr.type, ir.Type_Header):
            valid = f"{self.lvalue(e.expr, body)}._v"
        if isinstance(t, (ir.Type_Header, ir.Type_Struct, ir.Type_Stack, ir.Type_Tuple)):
            ref = self.lvalue(e, body) if not isinstance(e, ir.MethodCallExpression) \
                else self.pin(self.expr(e, body), t, body)
            self._flatten_ref(ref, t, valid, out)
            return
        if isinstance(t, ir.Type_Bits) and t.width > 128 and isinstance(e, ir.Member):
            out.append((valid, f"WIDE:{self.lvalue(e, body)}", -t.width))
            return
        if isinstance(t, ir.Type_Varbits) and isinstance(e, ir.Member):
            out.append((valid, f"VAR:{self.lvalue(e, body)}", -t.size))
            return
        if not is_scalar(t):
            raise unsupported(f"a {type(t).__name__} in a field list", e)
        out.append((valid, self.expr(e, body), scalar_width(t, e)))

    def _flatten_ref(self, ref: str, t: Any, valid: str | None,
                     out: list[tuple[str | None, str, int]]) -> None:
        if isinstance(t, ir.Type_Header):
            valid = f"{ref}._v"
        if isinstance(t, (ir.Type_Stack, ir.Type_Tuple)):   # elements in order (c_aggregates)
            subs = [(f"{ref}.e[{i}]", t.element) for i in range(t.size)] \
                if isinstance(t, ir.Type_Stack) else \
                [(f"{ref}.c{i}", c) for i, c in enumerate(t.components)]
            for sub, st in subs:
                if isinstance(st, (ir.Type_Header, ir.Type_Struct, ir.Type_Stack,
                                   ir.Type_Tuple)):
                    self._flatten_ref(sub, st, valid, out)
                elif is_scalar(st):
                    w = scalar_width(st, None)
                    out.append((valid, f"(({'nw_u128' if w > 64 else 'uint64_t'}){sub})", w))
                else:
                    raise unsupported(f"a {type(st).__name__} in a field list", None)
            return
        for f in t.fields:
            sub = f"{ref}.{field_name(f.name)}"
            if isinstance(f.type, (ir.Type_Header, ir.Type_Struct, ir.Type_Stack,
                                   ir.Type_Tuple)):
                self._flatten_ref(sub, f.type, valid, out)
            elif isinstance(f.type, ir.Type_Varbits):
                out.append((valid, f"VAR:{sub}", -f.type.size))
            elif isinstance(f.type, ir.Type_Bits) and f.type.width > 128:
                out.append((valid, f"WIDE:{sub}", -f.type.width))
            elif is_scalar(f.type):
                w = scalar_width(f.type, f)
                out.append((valid, f"(({'nw_u128' if w > 64 else 'uint64_t'}){sub})", w))
            else:
                raise unsupported(f"a {type(f.type).__name__} in a field list", f)

    def field_bits(self, e: Any, body: CBody, node: Any) -> str:
        """Emit code packing a data argument into ``X->bits``; returns the byte count
        expression (BMv2's BufBuilder: fields of invalid headers are skipped)."""
        parts: list[tuple[str | None, str, int]] = []
        self._flatten(e, body, parts)
        total = sum(abs(w) for _c, _v, w in parts)
        if total > 8 * 4096:
            raise unsupported("a field list longer than 4096 bytes", node)
        body.emit(f"X->bits.nbits = 0; memset(X->bits.buf, 0, {(total + 7) // 8 or 1});")
        for cond, value, w in parts:
            if value.startswith("WIDE:"):   # a wide field: its bytes
                line = f"nw_bits_put_var(&X->bits, {value[5:]}, {-w});"
            elif w < 0:   # a varbit field: its current bits
                ref = value[4:]
                line = f"nw_bits_put_var(&X->bits, {ref}, {ref}__len);"
            else:
                put = "nw_bits_put128" if w > 64 else "nw_bits_put64"
                line = f"{put}(&X->bits, {value}, {w});"
            body.emit(f"if ({cond}) {line}" if cond else line)
        return "((X->bits.nbits + 7) / 8)"

    def _target(self, e: Any, value: str, body: CBody) -> None:
        t = e.type
        if isinstance(t, ir.Type_Bits):
            m = mask_literal(t.width)
            value = f"(({value}) & {m})" if m else value
        self.assign_raw(e, value, body)

    # ------------------------------------------------------------- functions

    def extern_function(self, c: ir.MethodCallExpression, args: list[Any], body: CBody) -> str:
        name = c.method_name or getattr(c.target, "name", "")
        if name == "mark_to_drop":
            if not args:
                raise unsupported("mark_to_drop() without standard_metadata", c)
            sm = self.lvalue(args[0], body)
            body.emit(f"{sm}.f_egress_spec = 511; {sm}.f_mcast_grp = 0;")
            return ""
        if name == "verify":
            cond = self.expr(args[0], body)
            code = self.expr(args[1], body)
            body.emit(f"if (!({cond})) {{ X->perr = (int32_t)({code}); return NW_RC_REJECT; }}")
            return ""
        if name == "hash":
            algo = _algorithm(args[1])
            base = self.expr(args[2], body)
            mx = self.expr(args[4], body)
            n = self.field_bits(args[3], body, c)
            raw = _ALGORITHMS[algo].format(b="X->bits.buf", n=n)
            self._target(args[0], f"nw_hash_offset({raw}, (uint64_t)({base}), "
                                  f"(uint64_t)({mx}))", body)
            return ""
        if name == "random":
            lo = self.expr(args[1], body)
            hi = self.expr(args[2], body)
            self._target(args[0], f"nw_mt_randint(&X->P->rng, (uint64_t)({lo}), "
                                  f"(uint64_t)({hi}))", body)
            return ""
        if name in ("verify_checksum", "verify_checksum_with_payload"):
            cond = self.expr(args[0], body)
            value = self.expr(args[2], body)
            algo = _algorithm(args[3])
            body.open(f"if ({cond})")
            n = self.field_bits(args[1], body, c)
            raw = algorithm_call(algo, "X->bits.buf", n, name.endswith("_with_payload"))
            body.emit(f"if ({raw} != (uint64_t)({value})) X->checksum_error = 1;")
            body.close()
            return ""
        if name in ("update_checksum", "update_checksum_with_payload"):
            cond = self.expr(args[0], body)
            algo = _algorithm(args[3])
            body.open(f"if ({cond})")
            n = self.field_bits(args[1], body, c)
            self._target(args[2], algorithm_call(algo, "X->bits.buf", n,
                                                 name.endswith("_with_payload")), body)
            body.close()
            return ""
        if name == "truncate":
            v = self.tmp("tr")
            body.emit(f"uint64_t {v} = {self.expr(args[0], body)};")
            body.emit(f"if (!X->has_truncate || {v} < X->truncate) "
                      f"{{ X->truncate = {v}; X->has_truncate = 1; }}")
            return ""
        if name in ("assert", "assume"):
            body.emit(f"if (!({self.expr(args[0], body)})) {{ X->assert_failed = 1; "
                      "return NW_RC_EXIT; }")
            return ""
        flow = self.flow_extern(name, c, args, body)   # c_flow.py
        if flow is not None:
            return flow
        raise unsupported(f"the extern function {name}", c)

    # ------------------------------------------------------------- methods

    def extern_method(self, c: ir.MethodCallExpression, args: list[Any], body: CBody) -> str:
        inst = c.instance
        decl = getattr(inst, "decl", None)
        info = self.externs.get(id(decl)) if decl is not None else None
        if info is None:
            raise unsupported(f"the method {c.method_name} on this object", c)
        kind, index, size, width = info
        m = c.method_name
        if kind == "register":
            ext = getattr(decl, "extern", None)
            refusal = struct_register_refusal(
                decl.name, ext.type_args[0] if ext is not None and ext.type_args else None,
                c, args)
            if refusal is not None:
                raise refusal
            arr = f"X->P->reg[{index}]"
            if width > 64:    # two words a cell, an unsigned __int128
                arr = f"((nw_u128 *)X->P->reg[{index}])"
            stride = self.register_layout[index][2]   # cells interleaved with its block's

            def cell_at(ix: str) -> str:
                return f"{arr}[{ix}]" if stride == 1 else f"{arr}[{ix} * {stride}u]"

            if m == "read":
                if len(args) == 2:
                    ix = self.tmp("ix")
                    body.emit(f"uint64_t {ix} = {self.expr(args[1], body)};")
                    self._target(args[0], f"({ix} < {size}ULL ? {cell_at(ix)} : 0)", body)
                    return ""
                ix = self.tmp("ix")
                body.emit(f"uint64_t {ix} = {self.expr(args[0], body)};")
                return f"({ix} < {size}ULL ? {cell_at(ix)} : 0)"
            if m == "write":
                ix = self.tmp("ix")
                body.emit(f"uint64_t {ix} = {self.expr(args[0], body)};")
                value = self.expr(args[1], body)
                m_ = mask_literal(width)
                cell = "nw_u128" if width > 64 else "uint64_t"
                body.emit(f"if ({ix} < {size}ULL) {cell_at(ix)} = "
                          + (f"({cell})({value}) & {m_};" if m_ else f"({cell})({value});"))
                return ""
        if kind == "Checksum16" and m == "get":     # the deprecated v1model extern
            n = self.field_bits(args[0], body, c)
            v = self.tmp("ck")
            body.emit(f"uint64_t {v} = nw_csum16(X->bits.buf, {n});")
            return v
        if kind in ("meter", "direct_meter", "direct_counter"):
            return self.stateful_method(kind, index, size, c, args, body)
        if kind == "counter" and m == "count":
            ix = self.tmp("ix")
            body.emit(f"uint64_t {ix} = {self.expr(args[0], body)};")
            body.emit(f"if ({ix} < {size}ULL) {{ X->P->ctr[{index}][2 * {ix}] += 1; "
                      f"X->P->ctr[{index}][2 * {ix} + 1] += X->ilen; }}")
            return ""
        raise unsupported(f"the method {kind}.{m}", c)

    # ------------------------------------------------------------- meters, direct resources

    def set_stateful_extern(self, inst: Any) -> bool:
        """Record a meter, direct counter/meter or action profile/selector instance;
        False when ``inst`` is none of these."""
        from netweft.emulation.switch import _const, _enum_name
        from netweft.emulation.v1model.meters import METER_TYPES

        kind = inst.extern_type
        if kind == "meter":
            size = int(_const(inst.args[0]))
            mtype = _enum_name(inst.args[1], METER_TYPES)
            self.externs[id(inst.decl)] = ("meter", len(self.meters), size, 0)
            self.meters.append((inst.name, size, mtype))
            return True
        if kind in ("direct_counter", "direct_meter", "Checksum16"):
            self.externs[id(inst.decl)] = (kind, 0, 0, 0)
            return True
        if kind in ("action_profile", "action_selector"):
            if kind == "action_selector":
                _algorithm(inst.args[0])
            return True
        return False

    def stateful_method(self, kind: str, index: int, size: int, c: ir.MethodCallExpression,
                        args: list[Any], body: CBody) -> str:
        """``meter.execute_meter``, ``direct_meter.read``, ``direct_counter.count``
        (counted by the table apply, as the Python back end)."""
        m = c.method_name
        if kind == "meter" and m == "execute_meter":
            ix = self.tmp("ix")
            body.emit(f"uint64_t {ix} = {self.expr(args[0], body)};")
            self._target(args[1], f"({ix} < {size}ULL ? nw_meter_execute(&X->P->mtr[{index}]"
                                  f"[{ix}], X->now, X->ilen) : NW_GREEN)", body)
            return ""
        if kind == "direct_meter" and m == "read":
            self._target(args[0], "X->dmeter", body)
            return ""
        if kind == "direct_counter" and m == "count":
            return ""
        raise unsupported(f"the method {kind}.{m}", c)
