"""The v1model packet-flow externs in C: clones, resubmit, recirculate, digests, log_msg.

The generated code only records a request (in the pass's context ``X``, as
the Python back end records it in its ``PacketContext``); the drivers
(:mod:`.driver` in process, ``dataplane_flow.c`` in the C packet loop) act on
it between the passes, as BMv2 ``simple_switch`` does.  Field lists are
copied by generated code (``nw_copy_field_list``): the ``@field_list(n)``
fields of the user metadata, or the metadata fields listed in the data
argument of ``clone3``/``resubmit(data)``/``recirculate(data)``.

Digests and ``log_msg`` messages leave the pipeline through two bounded
rings in the pipeline object (single producer: the pass; single consumer:
Python), counted when full; :class:`FlowSites` tells Python how to turn a
ring entry back into the value the Python back end would have produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from netweft.emulation.native.c_body import CBody
from netweft.emulation.native.c_types import field_name, is_scalar, scalar_width, unsupported
from netweft.p4.compiler import ir

FLOW_EXTERNS = ("clone", "clone3", "clone_preserving_field_list", "resubmit",
                "resubmit_preserving_field_list", "recirculate",
                "recirculate_preserving_field_list", "digest", "log_msg")
DATA_FIELD_LIST_BASE = 1_000_000   # ids of data-argument field lists (as the Python back end)
NO_FIELD_LIST = 0xFFFFFFFF
MAX_LOG_VALUES = 32                 # presence bits in a ring entry
RING_SLOTS = 1024                   # entries per ring (a power of two)


@dataclass
class DigestSite:
    """How a digest call's words become the Python back end's value."""

    kind: str                                  # "dict", "tuple" or "scalar"
    fields: list[tuple[str | None, int, bool]]  # (name, width, is_bool)


@dataclass
class LogSite:
    """A log_msg call: its message and the widths of its values."""

    message: str
    widths: list[int]


@dataclass
class FlowSites:
    """What the generated code records and Python decodes."""

    field_lists: dict[int, list[tuple[str, ...]]] = field(default_factory=dict)
    digests: list[DigestSite] = field(default_factory=list)
    logs: list[LogSite] = field(default_factory=list)
    uses_flow: bool = False     # clone, resubmit or recirculate appear in the program

    @property
    def words(self) -> int:
        """uint64_t words of one ring entry's values."""
        n = [sum(2 if w > 64 else 1 for _n, w, _b in d.fields) for d in self.digests]
        n += [sum(2 if w > 64 else 1 for w in s.widths) for s in self.logs]
        return max([1, *n])

    def digest_value(self, site: int, words: list[int]) -> Any:
        """The value ``X.digest`` gets in the Python back end."""
        d = self.digests[site]
        values = []
        i = 0
        for _name, width, is_bool in d.fields:
            v = words[i]
            if width > 64:
                v = (v << 64) | words[i + 1]
                i += 2
            else:
                i += 1
            values.append(bool(v) if is_bool else v)
        if d.kind == "scalar":
            return values[0]
        if d.kind == "tuple":
            return tuple(values)
        return {name: v for (name, _w, _b), v in zip(d.fields, values, strict=True)}

    def log_values(self, site: int, present: int, words: list[int]) -> tuple[str, list[int]]:
        """``(message, values)`` of a log_msg ring entry (values of invalid headers absent)."""
        s = self.logs[site]
        values = []
        i = 0
        for k, width in enumerate(s.widths):
            v = words[i]
            if width > 64:
                v = (v << 64) | words[i + 1]
                i += 2
            else:
                i += 1
            if present >> k & 1:
                values.append(v)
        return s.message, values


def _user_meta_type(prog: Any) -> Any:
    ingress = prog.blocks.get("ingress")
    if ingress is not None and len(ingress.decl.params) > 1:
        return ingress.decl.params[1].type
    return None


def annotated_field_lists(prog: Any) -> dict[int, list[tuple[str, ...]]]:
    """``@field_list(n)`` paths (P4 names) in the user metadata struct."""
    out: dict[int, list[tuple[str, ...]]] = {}

    def visit(t: Any, path: tuple[str, ...]) -> None:
        if not isinstance(t, ir.Type_Struct):
            return
        for f in t.fields:
            ann = ir.find_annotation(f, "field_list")
            if ann is not None:
                for a in ann.args:
                    if isinstance(a, ir.Constant):
                        out.setdefault(a.value, []).append(("meta", *path, f.name))
            visit(f.type, (*path, f.name))

    visit(_user_meta_type(prog), ())
    return out


class CFlowLowering:
    """Mixin of :class:`~netweft.emulation.native.c_codegen.CLowering`."""

    prog: Any

    @property
    def flow(self) -> FlowSites:
        sites = self.__dict__.get("_flow_sites")
        if sites is None:
            sites = FlowSites(annotated_field_lists(self.prog))
            self.__dict__["_flow_sites"] = sites
        return sites

    def _data_field_list(self, e: Any) -> int:
        """A field-list id for the data argument of clone3/resubmit/recirculate(data)."""
        user_meta = _user_meta_type(self.prog)
        comps = e.components if isinstance(e, (ir.ListExpression, ir.StructExpression)) else [e]
        paths: list[tuple[str, ...]] = []
        for c in comps:
            c = c.expr if isinstance(c, ir.NamedExpression) else c
            path: list[str] = []
            node = c
            while isinstance(node, ir.Member):
                path.insert(0, node.member)
                node = node.expr
            root_t = getattr(node, "type", None)
            if not isinstance(node, ir.PathExpression) or not path:
                raise unsupported("a preserved field that is not a metadata field", c)
            if root_t is user_meta or (isinstance(root_t, ir.Type_Struct)
                                       and getattr(user_meta, "name", None) == root_t.name):
                paths.append(("meta", *path))
            elif getattr(root_t, "name", "") == "standard_metadata_t":
                paths.append(("sm", *path))
            else:
                raise unsupported("a preserved field that is not a metadata field", c)
        index = DATA_FIELD_LIST_BASE + sum(1 for k in self.flow.field_lists
                                           if k >= DATA_FIELD_LIST_BASE)
        self.flow.field_lists[index] = paths
        return index

    def flow_extern(self, name: str, c: Any, args: list[Any], body: CBody) -> str | None:
        """C for a flow extern call, or None if ``name`` is not one."""
        if name not in FLOW_EXTERNS:
            return None
        lw: Any = self
        if name in ("clone", "clone3", "clone_preserving_field_list"):
            self.flow.uses_flow = True
            session = lw.expr(args[1], body)
            if name == "clone_preserving_field_list":
                fl = f"(uint32_t)({lw.expr(args[2], body)})"
            elif name == "clone3":
                fl = str(self._data_field_list(args[2]))
            else:
                fl = f"{NO_FIELD_LIST}u"
            body.emit(f"X->has_clone = 1; X->clone_session = (uint64_t)({session}); "
                      f"X->clone_fl = {fl};")
            return ""
        if name in ("resubmit", "resubmit_preserving_field_list",
                    "recirculate", "recirculate_preserving_field_list"):
            self.flow.uses_flow = True
            fl = (f"(uint32_t)({lw.expr(args[0], body)})" if name.endswith("list")
                  else str(self._data_field_list(args[0])))
            what = "resubmit" if name.startswith("resubmit") else "recirc"
            body.emit(f"X->has_{what} = 1; X->{what}_fl = {fl};")
            return ""
        if name == "digest":
            return self._digest(c, args, body)
        return self._log_msg(c, args, body)

    # ------------------------------------------------------------- digest

    def _digest(self, c: Any, args: list[Any], body: CBody) -> str:
        lw: Any = self
        receiver = lw.expr(args[0], body)
        e = args[1]
        t = e.type
        items: list[tuple[str | None, Any, str]] = []   # (name, type, C value)
        if isinstance(e, ir.StructExpression):
            kind = "dict"
            for comp in e.components:
                items.append((comp.name, comp.expr.type, lw.expr(comp.expr, body)))
        elif isinstance(e, ir.ListExpression):
            names = [f.name for f in t.fields] if isinstance(t, ir.Type_StructLike) else None
            kind = "dict" if names else "tuple"
            for i, comp in enumerate(e.components):
                items.append((names[i] if names else None, comp.type, lw.expr(comp, body)))
        elif isinstance(t, ir.Type_StructLike):
            kind = "dict"
            ref = lw.lvalue(e, body)
            for f in t.fields:
                items.append((f.name, f.type, f"{ref}.{field_name(f.name)}"))
        else:
            kind = "scalar"
            items.append((None, t, lw.expr(e, body)))
        site = DigestSite(kind, [])
        words: list[str] = []
        for name, ft, value in items:
            if not (isinstance(ft, ir.Type_Boolean)
                    or (isinstance(ft, ir.Type_Bits) and not ft.signed)):
                raise unsupported("a digest field that is not bit<W> or bool", c)
            w = scalar_width(ft, c)
            site.fields.append((name, w, isinstance(ft, ir.Type_Boolean)))
            if w > 64:
                words += [f"(uint64_t)(((nw_u128)({value})) >> 64)", f"(uint64_t)({value})"]
            else:
                words.append(f"(uint64_t)({value})")
        index = len(self.flow.digests)
        self.flow.digests.append(site)
        body.emit(f"X->has_digest = 1; X->digest_site = {index}; "
                  f"X->digest_receiver = (uint32_t)({receiver});")
        for i, v in enumerate(words):
            body.emit(f"X->digest[{i}] = {v};")
        return ""

    # ------------------------------------------------------------- log_msg

    def _log_msg(self, c: Any, args: list[Any], body: CBody) -> str:
        lw: Any = self
        msg = args[0]
        if not isinstance(msg, ir.StringLiteral):
            raise unsupported("log_msg with a message that is not a string literal", c)
        parts: list[tuple[str | None, str, int]] = []
        if len(args) > 1 and args[1] is not None:
            for comp in _log_components(args[1]):
                if not is_scalar(comp.type) or isinstance(comp.type, (ir.Type_Enum,
                                                                      ir.Type_Error)):
                    raise unsupported("a log_msg value that is not a bit string or bool", c)
            lw._flatten(args[1], body, parts)
        if len(parts) > MAX_LOG_VALUES:
            raise unsupported(f"log_msg with more than {MAX_LOG_VALUES} values", c)
        widths = []
        n = 0
        body.open("")
        body.emit("uint64_t _lw[NW_FLOW_WORDS] = {0}; uint32_t _lp = 0;")
        for k, (cond, value, w) in enumerate(parts):
            if w <= 0:
                raise unsupported("a log_msg value wider than 128 bits or a varbit", c)
            widths.append(w)
            if w > 64:
                m = f"((nw_u128)({value}) & NW_MASK128({w}))"
                code = (f"_lw[{n}] = (uint64_t)({m} >> 64); _lw[{n + 1}] = (uint64_t)({m}); "
                        f"_lp |= 1u << {k};")
                n += 2
            else:
                mask = "" if w == 64 else f" & {(1 << w) - 1:#x}ULL"
                code = f"_lw[{n}] = (uint64_t)({value}){mask}; _lp |= 1u << {k};"
                n += 1
            body.emit(f"if ({cond}) {{ {code} }}" if cond else code)
        index = len(self.flow.logs)
        self.flow.logs.append(LogSite(msg.value, widths))
        body.emit(f"nw_flow_push(&X->P->logs, {index}u, _lp, _lw);")
        body.close()
        return ""


def _log_components(e: Any) -> list[Any]:
    """The scalar expressions and field types a log_msg data argument lists (for checks)."""
    if isinstance(e, (ir.ListExpression, ir.StructExpression)):
        out = []
        for comp in e.components:
            out += _log_components(comp.expr if isinstance(comp, ir.NamedExpression) else comp)
        return out
    t = e.type
    if isinstance(t, ir.Type_StructLike):
        return [_Typed(f.type) for f in _leaf_fields(t)]
    return [e]


@dataclass
class _Typed:
    type: Any


def _leaf_fields(t: Any) -> list[Any]:
    out = []
    for f in t.fields:
        if isinstance(f.type, ir.Type_StructLike):
            out += _leaf_fields(f.type)
        else:
            out.append(f)
    return out


def field_list_copier(sites: FlowSites) -> str:
    """``nw_copy_field_list(D, S, id)``: copy field list ``id`` from state S to state D."""
    lines = ["static void nw_copy_field_list(nw_st_t *D, const nw_st_t *S, uint32_t fl) {",
             "    switch (fl) {"]
    for index in sorted(sites.field_lists):
        lines.append(f"    case {index}u:")
        for path in sites.field_lists[index]:
            ref = path[0] + "".join("." + field_name(p) for p in path[1:])
            lines.append(f"        memcpy(&D->{ref}, &S->{ref}, sizeof D->{ref});")
        lines.append("        break;")
    lines += ["    default:", "        break;", "    }", "    (void)D; (void)S;", "}"]
    return "\n".join(lines)


def ring_source(sites: FlowSites) -> str:
    """The digest and log rings (types, push) and their entry points for Python."""
    return f"""
#define NW_FLOW_WORDS {sites.words}u
#define NW_FLOW_SLOTS {RING_SLOTS}u
typedef struct nw_flow_entry {{
    uint32_t site, aux;          /* digest: receiver; log_msg: values present (bits) */
    uint64_t w[NW_FLOW_WORDS];
}} nw_flow_entry_t;
typedef struct nw_flow_ring {{
    uint64_t head;               /* written by the pass (producer) */
    uint64_t tail;               /* written by the consumer (Python) */
    uint64_t dropped;            /* entries refused because the ring was full */
    nw_flow_entry_t e[NW_FLOW_SLOTS];
}} nw_flow_ring_t;

static void nw_flow_push(nw_flow_ring_t *r, uint32_t site, uint32_t aux, const uint64_t *w) {{
    uint64_t head = r->head;
    if (head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >= NW_FLOW_SLOTS) {{
        r->dropped++;
        return;
    }}
    nw_flow_entry_t *e = &r->e[head % NW_FLOW_SLOTS];
    e->site = site;
    e->aux = aux;
    memcpy(e->w, w, sizeof e->w);
    __atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
}}

static int32_t nw_flow_pop_ring(nw_flow_ring_t *r, uint32_t *site, uint32_t *aux,
                                uint64_t *w) {{
    uint64_t tail = r->tail;
    if (tail == __atomic_load_n(&r->head, __ATOMIC_ACQUIRE))
        return 0;
    const nw_flow_entry_t *e = &r->e[tail % NW_FLOW_SLOTS];
    *site = e->site;
    *aux = e->aux;
    memcpy(w, e->w, sizeof e->w);
    __atomic_store_n(&r->tail, tail + 1, __ATOMIC_RELEASE);
    return 1;
}}
"""


def ring_entry_points() -> str:
    """C entry points over the rings (``P`` is ``nw_pl_t``; defined after it)."""
    return """
uint32_t nw_flow_words(void) { return NW_FLOW_WORDS; }
/* which: 0 digests, 1 log_msg messages; 1 and the entry, or 0 when empty */
int32_t nw_flow_pop(void *p, uint32_t which, uint32_t *site, uint32_t *aux, uint64_t *w) {
    nw_pl_t *P = p;
    return nw_flow_pop_ring(which ? &P->logs : &P->digests, site, aux, w);
}
uint64_t nw_flow_pending(void *p) {
    nw_pl_t *P = p;
    return (__atomic_load_n(&P->digests.head, __ATOMIC_ACQUIRE) - P->digests.tail)
         + (__atomic_load_n(&P->logs.head, __ATOMIC_ACQUIRE) - P->logs.tail);
}
uint64_t nw_flow_dropped(void *p, uint32_t which) {
    nw_pl_t *P = p;
    return __atomic_load_n(which ? &P->logs.dropped : &P->digests.dropped, __ATOMIC_RELAXED);
}
"""


def pass_helpers(sites: FlowSites) -> str:
    """What nw_ingress / nw_egress call at the end of a pass: the requests into nw_pkt_t."""
    return f"""
uint32_t nw_pipeline_uses_flow(void) {{ return {int(sites.uses_flow)}u; }}

static void nw_flow_after_ingress(nw_ctx_t *X, nw_pkt_t *pkt) {{
    if (X->has_clone) {{
        pkt->flags |= NW_F_CLONE;
        pkt->clone_session = X->clone_session > 0x7FFFFFFFu ? 0x7FFFFFFF
                                                            : (int32_t)X->clone_session;
        pkt->clone_fl = X->clone_fl;
    }}
    if (X->has_resubmit) {{
        pkt->flags |= NW_F_RESUBMIT;
        pkt->resubmit_fl = X->resubmit_fl;
    }}
    if (X->has_digest)   /* the last digest of an ingress pass is sent (simple_switch) */
        nw_flow_push(&X->P->digests, X->digest_site, X->digest_receiver, X->digest);
}}

/* An E2E clone: the headers as egress left them, metadata reset except the field list;
 * its payload is data[clone_payload_at..+clone_payload_len) when nw_egress returns. */
static void nw_flow_egress_clone(nw_ctx_t *X, nw_pkt_t *pkt, const nw_st_t *S) {{
    if (!X->has_clone)
        return;
    pkt->flags |= NW_F_CLONE;
    pkt->clone_session = X->clone_session > 0x7FFFFFFFu ? 0x7FFFFFFF : (int32_t)X->clone_session;
    pkt->clone_fl = X->clone_fl;
    pkt->clone_payload_at = S->payload_off;
    pkt->clone_payload_len = pkt->len - S->payload_off;
    nw_st_t *C = pkt->clone_state;
    if (!C)
        return;
    memcpy(&C->hdr, &S->hdr, sizeof C->hdr);
    memset(&C->meta, 0, sizeof C->meta);
    memset(&C->sm, 0, sizeof C->sm);
    C->payload_off = 0;
    C->ilen = S->ilen;
    nw_copy_field_list(C, S, X->clone_fl);
    C->sm.f_instance_type = NW_INSTANCE_EGRESS_CLONE;
}}
"""


def clone_i2e_source(parser_call: str, fr_parser: str, sm: Any) -> str:
    """``nw_clone_i2e``: an ingress-to-egress clone, BMv2's way: the frame as received,
    parsed again (from the same port), metadata reset except the field list."""
    return f"""
int nw_clone_i2e(void *pipeline, nw_pkt_t *pkt, void *clone_state, uint64_t now_ns) {{
    nw_pl_t *P = pipeline;
    const nw_st_t *O = pkt ? pkt->state : NULL;
    nw_st_t *S = clone_state;
    if (!P || !O || !S || !pkt->data || pkt->len > pkt->cap)
        return NW_ERR_ARG;
    nw_ctx_t ctx;
    nw_ctx_t *X = &ctx;
    uint64_t now = now_ns / 1000u;
    memset(S, 0, sizeof *S);
    {sm("ingress_port")} = pkt->ingress_port;
    {sm("instance_type")} = NW_INSTANCE_INGRESS_CLONE;
    {sm("packet_length")} = pkt->len;
    nw_ctx_start(X, P, now, pkt->len);
    X->data = pkt->data;
    X->len = pkt->len;
    X->pos = 0;
{fr_parser}
    {parser_call}(X, &fp);
    S->payload_off = X->pos;
    S->ilen = pkt->len;
    memset(&S->meta, 0, sizeof S->meta);
    memset(&S->sm, 0, sizeof S->sm);
    nw_copy_field_list(S, O, pkt->clone_fl);
    {sm("instance_type")} = NW_INSTANCE_INGRESS_CLONE;
    return NW_OK;
}}
"""
