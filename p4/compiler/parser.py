"""Recursive-descent parser for P4-16 (spec 1.2.x): tokens to IR nodes.

Like p4c, the parser knows which identifiers name types (declared so far,
including generic type parameters in scope); that settles ``T x;`` versus
``f(x);`` and casts versus parenthesised expressions. Generic arguments on
calls (``p.lookahead<bit<8>>()``) are parsed speculatively and backtracked if
they turn out to be a comparison. Every syntax error is a :class:`P4Error` at
the offending token.
"""

from __future__ import annotations

import copy

from netweft.p4.compiler import ir
from netweft.p4.compiler.errors import P4Error, SourceLoc
from netweft.p4.compiler.lexer import EOF, IDENT, INTEGER, KEYWORD, OP, STRING, Token
from netweft.p4.compiler.scopes import did_you_mean

BUILTIN_TYPE_KEYWORDS = ("bit", "int", "varbit", "bool", "error", "string", "void",
                         "match_kind", "tuple")
NAME_KEYWORDS = ("apply", "state", "type")  # keywords that may still name things

BINARY_PRECEDENCE = {
    "||": 2, "&&": 3, "==": 4, "!=": 4, "<": 5, ">": 5, "<=": 5, ">=": 5,
    "|": 6, "^": 7, "&": 8, "<<": 9, ">>": 9,
    "++": 10, "+": 10, "-": 10, "|+|": 10, "|-|": 10, "*": 11, "/": 11, "%": 11,
}

_MAX_DEPTH = 250

# Types an architecture declares only in some versions.
_ARCHITECTURE_HINTS = {
    "PortId_t": " (v1model.p4 declares PortId_t from V1MODEL_VERSION 20200408 on: put "
                "'#define V1MODEL_VERSION 20200408' before '#include <v1model.p4>')",
}

# ``a op= b`` is ``a = a op b`` with ``a`` evaluated once (P4-16 1.2.5, 8.18).
COMPOUND_ASSIGNMENTS = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "&=": "&",
                        "|=": "|", "^=": "^", "<<=": "<<", ">>=": ">>", "|+|=": "|+|",
                        "|-|=": "|-|"}


class _Backtrack(Exception):
    """Internal: a speculative parse failed."""


class Parser:
    """Parses a token list into an :class:`ir.P4Program`."""

    def __init__(self, tokens: list[Token]) -> None:
        self.toks = tokens
        self.pos = 0
        self.type_names: set[str] = set()
        self.type_var_scopes: list[set[str]] = []
        self.depth = 0
        self.speculating = 0

    # ------------------------------------------------------------- token helpers
    def peek(self, k: int = 0) -> Token:
        i = self.pos + k
        return self.toks[i] if i < len(self.toks) else self.toks[-1]

    def advance(self) -> Token:
        t = self.toks[self.pos]
        if t.kind != EOF:
            self.pos += 1
        return t

    def error(self, msg: str, tok: Token | None = None) -> P4Error:
        tok = tok or self.peek()
        if self.speculating:
            return _Backtrack()  # type: ignore[return-value]
        return P4Error(msg, tok.loc)

    def at_op(self, text: str, k: int = 0) -> bool:
        return self.peek(k).is_op(text)

    def at_kw(self, text: str, k: int = 0) -> bool:
        return self.peek(k).is_kw(text)

    def accept_op(self, text: str) -> bool:
        if self.peek().is_op(text):
            self.advance()
            return True
        return False

    def accept_kw(self, text: str) -> bool:
        if self.peek().is_kw(text):
            self.advance()
            return True
        return False

    def expect_op(self, text: str, what: str = "") -> Token:
        t = self.peek()
        if not t.is_op(text):
            ctx = f" {what}" if what else ""
            raise self.error(f"expected '{text}'{ctx} but found {t.describe()}")
        return self.advance()

    def expect_kw(self, text: str) -> Token:
        t = self.peek()
        if not t.is_kw(text):
            raise self.error(f"expected '{text}' but found {t.describe()}")
        return self.advance()

    def is_name_token(self, t: Token) -> bool:
        return t.kind == IDENT or (t.kind == KEYWORD and t.text in NAME_KEYWORDS)

    def expect_name(self, what: str = "a name") -> Token:
        t = self.peek()
        if not self.is_name_token(t):
            raise self.error(f"expected {what} but found {t.describe()}")
        return self.advance()

    def is_type_name(self, name: str) -> bool:
        if name in self.type_names:
            return True
        return any(name in s for s in self.type_var_scopes)

    def unknown_type(self, name: str) -> str:
        known = set(self.type_names).union(*self.type_var_scopes) if self.type_var_scopes \
            else self.type_names
        return f"unknown type '{name}'{_ARCHITECTURE_HINTS.get(name) or did_you_mean(name, known)}"

    def enter(self) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise P4Error(f"program nested too deeply: more than {_MAX_DEPTH} levels of "
                          "parentheses, blocks or declarations (netweft's limit)",
                          self.peek().loc)

    def leave(self) -> None:
        self.depth -= 1

    # ------------------------------------------------------------- program
    def parse_program(self) -> ir.P4Program:
        loc = self.peek().loc
        objects: list[ir.Node] = []
        while self.peek().kind != EOF:
            if self.accept_op(";"):
                continue
            decl = self.parse_declaration()
            if decl is not None:
                objects.append(decl)
        return ir.P4Program(objects=objects, loc=loc)

    def parse_declaration(self) -> ir.Node:
        annotations = self.parse_annotations()
        t = self.peek()
        loc = t.loc
        if t.kind == KEYWORD:
            kw = t.text
            if kw == "const":
                return self.parse_constant(annotations)
            if kw in ("header", "struct", "header_union"):
                return self.parse_struct_like(annotations)
            if kw == "enum":
                return self.parse_enum(annotations)
            if kw in ("typedef", "type"):
                return self.parse_typedef(annotations)
            if kw == "error":
                if self.at_op("{", 1):
                    self.advance()
                    return ir.Declaration_Errors(members=self.parse_id_list(), loc=loc)
            if kw == "match_kind":
                self.advance()
                return ir.Declaration_MatchKind(members=self.parse_id_list(), loc=loc)
            if kw == "extern":
                return self.parse_extern(annotations)
            if kw == "parser":
                return self.parse_parser(annotations)
            if kw == "control":
                return self.parse_control(annotations)
            if kw == "package":
                return self.parse_package(annotations)
            if kw == "action":
                return self.parse_action(annotations)
        if self.starts_type():
            return self.parse_typed_declaration(annotations, top_level=True)
        if t.kind == IDENT and self.is_name_token(self.peek(1)) and self.at_op("<", 2):
            # generic function whose return type is one of its type parameters: T f<T>(...)
            self.type_var_scopes.append(set(self._method_type_params_ahead()))
            try:
                if self.starts_type():
                    return self.parse_typed_declaration(annotations, top_level=True)
            finally:
                self.type_var_scopes.pop()
        raise self.error(f"expected a declaration but found {t.describe()}")

    # ------------------------------------------------------------- annotations
    def parse_annotations(self) -> list[ir.Annotation]:
        result: list[ir.Annotation] = []
        while self.at_op("@"):
            at = self.advance()
            name_tok = self.peek()
            if name_tok.kind not in (IDENT, KEYWORD):
                raise self.error(f"expected an annotation name but found {name_tok.describe()}")
            self.advance()
            ann = ir.Annotation(name=name_tok.text, loc=at.loc)
            if name_tok.text == "pragma":
                # unstructured: the rest of the source line is the body
                while self.peek().kind != EOF and self.peek().loc.line == name_tok.loc.line \
                        and self.peek().loc.file == name_tok.loc.file:
                    ann.body.append(self.advance().text)
                if ann.body:
                    ann.name = ann.body.pop(0)
                result.append(ann)
                continue
            if self.at_op("(") and name_tok.adjacent_next:
                ann.body, ann.args = self.parse_annotation_body("(", ")")
            elif self.at_op("[") and name_tok.adjacent_next:
                ann.body, ann.args, ann.kv = self.parse_structured_annotation()
                ann.structured = True
            result.append(ann)
        return result

    def _balanced(self, open_: str, close: str) -> list[Token]:
        start = self.expect_op(open_)
        depth = 1
        body: list[Token] = []
        while True:
            t = self.peek()
            if t.kind == EOF:
                raise P4Error(f"unterminated annotation: missing '{close}'", start.loc)
            self.advance()
            if t.is_op(open_):
                depth += 1
            elif t.is_op(close):
                depth -= 1
                if depth == 0:
                    return body
            body.append(t)

    def _sub_parser(self, tokens: list[Token]) -> Parser:
        end = Token(EOF, "", tokens[-1].loc if tokens else self.peek().loc)
        sub = Parser(tokens + [end])
        sub.type_names = self.type_names
        sub.type_var_scopes = self.type_var_scopes
        return sub

    def parse_annotation_body(self, open_: str, close: str) -> tuple[list[str], list]:
        body = self._balanced(open_, close)
        texts = [t.text for t in body]
        if not body:
            return texts, []
        sub = self._sub_parser(body)
        try:
            sub.speculating = 1
            args = [sub.parse_expression()]
            while sub.accept_op(","):
                args.append(sub.parse_expression())
            if sub.peek().kind != EOF:
                return texts, []
            for a in args:  # literal annotation arguments carry their types too
                if isinstance(a, ir.StringLiteral):
                    a.type = ir.Type_String()
                elif isinstance(a, ir.BoolLiteral):
                    a.type = ir.Type_Boolean()
                elif isinstance(a, ir.Constant) and a.type is None:
                    a.type = ir.Type_InfInt()
            return texts, args
        except (_Backtrack, P4Error):
            return texts, []

    def parse_structured_annotation(self) -> tuple[list[str], list, dict | None]:
        body = self._balanced("[", "]")
        texts = [t.text for t in body]
        sub = self._sub_parser(body)
        try:
            sub.speculating = 1
            if len(body) >= 2 and body[1].is_op("="):
                kv: dict[str, ir.Expression] = {}
                while sub.peek().kind != EOF:
                    k = sub.advance().text
                    sub.expect_op("=")
                    kv[k] = sub.parse_expression()
                    if not sub.accept_op(","):
                        break
                return texts, [], kv
            args = []
            while sub.peek().kind != EOF:
                args.append(sub.parse_expression())
                if not sub.accept_op(","):
                    break
            return texts, args, None
        except (_Backtrack, P4Error):
            return texts, [], None

    # ------------------------------------------------------------- simple decls
    def parse_id_list(self) -> list[ir.Declaration_ID]:
        self.expect_op("{")
        members: list[ir.Declaration_ID] = []
        while not self.at_op("}"):
            anns = self.parse_annotations()
            t = self.expect_name("a member name")
            members.append(ir.Declaration_ID(name=t.text, annotations=anns, loc=t.loc))
            if not self.accept_op(","):
                break
        self.expect_op("}")
        return members

    def parse_constant(self, annotations: list[ir.Annotation]) -> ir.Declaration_Constant:
        loc = self.expect_kw("const").loc
        typ = self.parse_type()
        name = self.expect_name("a constant name")
        self.expect_op("=", "in constant declaration")
        init = self.parse_expression()
        self.expect_op(";", "after constant declaration")
        return ir.Declaration_Constant(name=name.text, type=typ, initializer=init,
                                       annotations=annotations, loc=loc)

    def parse_type_params(self) -> list[ir.Type_Var]:
        params: list[ir.Type_Var] = []
        if self.accept_op("<"):
            while True:
                t = self.expect_name("a type parameter")
                params.append(ir.Type_Var(name=t.text, loc=t.loc))
                if not self.accept_op(","):
                    break
            self.expect_op(">", "after type parameters")
        return params

    def parse_struct_like(self, annotations: list[ir.Annotation]) -> ir.Type_StructLike:
        kw = self.advance()
        name = self.expect_name("a type name")
        self.type_names.add(name.text)
        tparams = self.parse_type_params()
        self.type_var_scopes.append({p.name for p in tparams})
        try:
            self.expect_op("{")
            fields: list[ir.StructField] = []
            while not self.at_op("}"):
                anns = self.parse_annotations()
                ftype = self.parse_type()
                fname = self.expect_name("a field name")
                self.expect_op(";", "after field")
                fields.append(ir.StructField(name=fname.text, type=ftype, annotations=anns,
                                             loc=fname.loc))
            self.expect_op("}")
        finally:
            self.type_var_scopes.pop()
        cls = {"header": ir.Type_Header, "struct": ir.Type_Struct,
               "header_union": ir.Type_HeaderUnion}[kw.text]
        return cls(name=name.text, fields=fields, type_params=tparams, annotations=annotations,
                   loc=name.loc)

    def parse_enum(self, annotations: list[ir.Annotation]) -> ir.Type:
        self.expect_kw("enum")
        underlying = None
        if not (self.is_name_token(self.peek()) and self.at_op("{", 1)):
            underlying = self.parse_type()
        name = self.expect_name("an enum name")
        self.type_names.add(name.text)
        if underlying is None:
            members = self.parse_id_list()
            return ir.Type_Enum(name=name.text, members=members, annotations=annotations,
                                loc=name.loc)
        self.expect_op("{")
        smembers: list[ir.SerEnumMember] = []
        while not self.at_op("}"):
            self.parse_annotations()
            t = self.expect_name("an enum member")
            self.expect_op("=", "in serializable enum member")
            smembers.append(ir.SerEnumMember(name=t.text, value_expr=self.parse_expression(),
                                             loc=t.loc))
            if not self.accept_op(","):
                break
        self.expect_op("}")
        return ir.Type_SerEnum(name=name.text, underlying=underlying, members=smembers,
                               annotations=annotations, loc=name.loc)

    def parse_typedef(self, annotations: list[ir.Annotation]) -> ir.Type:
        kw = self.advance()
        typ = self.parse_type()
        name = self.expect_name("a type name")
        self.expect_op(";", f"after {kw.text} declaration")
        self.type_names.add(name.text)
        cls = ir.Type_Typedef if kw.text == "typedef" else ir.Type_Newtype
        return cls(name=name.text, type=typ, annotations=annotations, loc=name.loc)

    # ------------------------------------------------------------- parameters
    def parse_params(self) -> list[ir.Parameter]:
        self.expect_op("(")
        params: list[ir.Parameter] = []
        if self.accept_op(")"):
            return params
        while True:
            anns = self.parse_annotations()
            direction = ""
            if self.peek().kind == KEYWORD and self.peek().text in ("in", "out", "inout"):
                direction = self.advance().text
            typ = self.parse_type()
            name = self.expect_name("a parameter name")
            default = None
            if self.accept_op("="):
                default = self.parse_expression()
            params.append(ir.Parameter(name=name.text, direction=direction, type=typ,
                                       default=default, annotations=anns, loc=name.loc))
            if not self.accept_op(","):
                break
        self.expect_op(")", "after parameters")
        return params

    # ------------------------------------------------------------- extern/package
    def parse_extern(self, annotations: list[ir.Annotation]) -> ir.Node:
        self.expect_kw("extern")
        annotations = annotations + self.parse_annotations()
        t = self.peek()
        if self.is_name_token(t) and (self.at_op("{", 1) or self.at_op("<", 1)) \
                and not self.is_type_name(t.text):
            name = self.advance()
            self.type_names.add(name.text)
            tparams = self.parse_type_params()
            return self._extern_body(name, tparams, annotations)
        return self.parse_method_decl(annotations, extern=None, top_level=True)

    def _extern_body(self, name: Token, tparams: list[ir.Type_Var],
                     annotations: list[ir.Annotation]) -> ir.Type_Extern:
        ext = ir.Type_Extern(name=name.text, type_params=tparams, annotations=annotations,
                             loc=name.loc)
        self.expect_op("{")
        self.type_var_scopes.append({p.name for p in tparams})
        try:
            while not self.at_op("}"):
                anns = self.parse_annotations()
                if self.peek().kind == EOF:
                    raise self.error("expected '}' at end of extern")
                ext.methods.append(self.parse_method_decl(anns, extern=ext, top_level=False))
        finally:
            self.type_var_scopes.pop()
        self.expect_op("}")
        return ext

    def parse_method_decl(self, annotations: list[ir.Annotation], extern: ir.Type_Extern | None,
                          top_level: bool) -> ir.Method:
        abstract = self.accept_kw("abstract")
        # constructor: Name(params);
        if extern is not None and self.peek().text == extern.name and self.at_op("(", 1):
            name = self.advance()
            params = self.parse_params()
            self.expect_op(";", "after constructor declaration")
            return ir.Method(name=name.text, type=ir.Type_Method(params=params, loc=name.loc),
                             annotations=annotations, extern=extern, loc=name.loc)
        # the return type may mention the method's own type parameters (T f<T>(...))
        self.type_var_scopes.append(set(self._method_type_params_ahead()))
        try:
            ret = self.parse_type()
            name = self.expect_name("a method name")
            tparams = self.parse_type_params()
            self.type_var_scopes[-1].update(p.name for p in tparams)
            params = self.parse_params()
            self.expect_op(";", "after method declaration")
        finally:
            self.type_var_scopes.pop()
        mtype = ir.Type_Method(type_params=tparams, params=params, return_type=ret, loc=name.loc)
        return ir.Method(name=name.text, type=mtype, abstract=abstract, annotations=annotations,
                         extern=extern, loc=name.loc)

    def _method_type_params_ahead(self) -> list[str]:
        """Names in ``name<A, B>(`` ahead of the cursor (a generic method's type params)."""
        i = self.pos
        while i < len(self.toks) and not (self.toks[i].is_op("(") or self.toks[i].is_op(";")
                                          or self.toks[i].kind == EOF):
            i += 1
        names: list[str] = []
        if i >= 2 and self.toks[i - 1].is_op(">"):
            j = i - 2
            while j > self.pos and not self.toks[j].is_op("<"):
                if self.toks[j].kind == IDENT:
                    names.append(self.toks[j].text)
                j -= 1
        return names

    def parse_package(self, annotations: list[ir.Annotation]) -> ir.Type_Package:
        self.expect_kw("package")
        name = self.expect_name("a package name")
        self.type_names.add(name.text)
        tparams = self.parse_type_params()
        self.type_var_scopes.append({p.name for p in tparams})
        try:
            params = self.parse_params()
        finally:
            self.type_var_scopes.pop()
        self.expect_op(";", "after package declaration")
        return ir.Type_Package(name=name.text, type_params=tparams, params=params,
                               annotations=annotations, loc=name.loc)

    # ------------------------------------------------------------- parser
    def parse_parser(self, annotations: list[ir.Annotation]) -> ir.Node:
        self.expect_kw("parser")
        name = self.expect_name("a parser name")
        self.type_names.add(name.text)
        tparams = self.parse_type_params()
        self.type_var_scopes.append({p.name for p in tparams})
        try:
            params = self.parse_params()
            if self.accept_op(";"):
                return ir.Type_Parser(name=name.text, type_params=tparams, params=params,
                                      annotations=annotations, loc=name.loc)
            ctor = self.parse_params() if self.at_op("(") else []
            p = ir.P4Parser(name=name.text, type_params=tparams, params=params,
                            ctor_params=ctor, annotations=annotations, loc=name.loc)
            self.expect_op("{", "to start the parser body")
            while not self.at_op("}"):
                anns = self.parse_annotations()
                if self.at_kw("state"):
                    p.states.append(self.parse_state(anns))
                elif self.peek().kind == EOF:
                    raise self.error("expected '}' at end of parser")
                else:
                    p.locals.append(self.parse_local_declaration(anns, in_parser=True))
            self.expect_op("}")
            return p
        finally:
            self.type_var_scopes.pop()

    def parse_state(self, annotations: list[ir.Annotation]) -> ir.ParserState:
        self.expect_kw("state")
        name = self.expect_name("a state name")
        st = ir.ParserState(name=name.text, annotations=annotations, loc=name.loc)
        self.expect_op("{")
        while not self.at_kw("transition") and not self.at_op("}"):
            if self.peek().kind == EOF:
                raise self.error("expected '}' at end of state")
            st.components.append(self.parse_statement(in_parser=True))
        if self.accept_kw("transition"):
            st.select_expression = self.parse_transition()
        self.expect_op("}", "at end of state")
        return st

    def parse_transition(self) -> ir.Expression:
        t = self.peek()
        if t.is_kw("select"):
            self.advance()
            self.expect_op("(")
            exprs: list[ir.Expression] = []
            if not self.at_op(")"):
                exprs.append(self.parse_expression())
                while self.accept_op(","):
                    exprs.append(self.parse_expression())
            self.expect_op(")")
            self.expect_op("{", "to start select cases")
            cases: list[ir.SelectCase] = []
            while not self.at_op("}"):
                if self.peek().kind == EOF:
                    raise self.error("expected '}' at end of select")
                keyset = self.parse_keyset_tuple()
                self.expect_op(":", "after select keyset")
                st = self.expect_name("a state name")
                self.expect_op(";", "after select case")
                cases.append(ir.SelectCase(keyset=keyset, loc=keyset.loc,
                                           state=ir.PathExpression(name=st.text, loc=st.loc)))
            self.expect_op("}")
            sel = ir.ListExpression(components=exprs, loc=t.loc)
            return ir.SelectExpression(select=sel, cases=cases, loc=t.loc)
        st = self.expect_name("a state name or select")
        self.expect_op(";", "after transition")
        return ir.PathExpression(name=st.text, loc=st.loc)

    def parse_keyset_tuple(self) -> ir.Expression:
        """A select/entry keyset: ``(k1, k2)`` or a single keyset expression."""
        if self.at_op("("):
            save = self.pos
            loc = self.peek().loc
            self.speculating += 1
            try:
                self.advance()
                items = [self.parse_keyset()]
                while self.accept_op(","):
                    items.append(self.parse_keyset())
                self.expect_op(")")
                if self.at_op(":"):
                    if len(items) == 1:  # (v &&& m) or (lo .. hi): a parenthesised keyset
                        return items[0]
                    return ir.ListExpression(components=items, loc=loc)
            except _Backtrack:
                pass
            finally:
                self.speculating -= 1
            self.pos = save
        return self.parse_keyset()

    def parse_keyset(self) -> ir.Expression:
        t = self.peek()
        if t.is_kw("default") or t.is_kw("_"):
            self.advance()
            return ir.DefaultExpression(dontcare=t.text == "_", loc=t.loc)
        e = self.parse_expression()
        for op in ("&&&", ".."):
            if self.at_op(op):
                ot = self.advance()
                r = self.parse_expression()
                return ir.Binary(op=op, left=e, right=r, loc=ot.loc)
        return e

    # ------------------------------------------------------------- control
    def parse_control(self, annotations: list[ir.Annotation]) -> ir.Node:
        self.expect_kw("control")
        name = self.expect_name("a control name")
        self.type_names.add(name.text)
        tparams = self.parse_type_params()
        self.type_var_scopes.append({p.name for p in tparams})
        try:
            params = self.parse_params()
            if self.accept_op(";"):
                return ir.Type_Control(name=name.text, type_params=tparams, params=params,
                                       annotations=annotations, loc=name.loc)
            ctor = self.parse_params() if self.at_op("(") else []
            c = ir.P4Control(name=name.text, type_params=tparams, params=params,
                             ctor_params=ctor, annotations=annotations, loc=name.loc)
            self.expect_op("{", "to start the control body")
            while not self.at_kw("apply"):
                if self.peek().kind == EOF or self.at_op("}"):
                    raise self.error("expected 'apply' block in control")
                anns = self.parse_annotations()
                if self.at_kw("action"):
                    c.locals.append(self.parse_action(anns))
                elif self.at_kw("table"):
                    c.locals.append(self.parse_table(anns))
                elif self.at_kw("apply"):
                    break
                else:
                    c.locals.append(self.parse_local_declaration(anns, in_parser=False))
            self.expect_kw("apply")
            c.body = self.parse_block()
            self.expect_op("}", "at end of control")
            return c
        finally:
            self.type_var_scopes.pop()

    def parse_local_declaration(self, annotations: list[ir.Annotation],
                                in_parser: bool) -> ir.Node:
        if self.at_kw("const"):
            return self.parse_constant(annotations)
        if self.at_kw("value_set"):
            vt = self.advance()
            self.expect_op("<")
            etype = self.parse_type()
            self.expect_op(">")
            self.expect_op("(")
            size = self.parse_expression()
            self.expect_op(")")
            name = self.expect_name("a value_set name")
            self.expect_op(";", "after value_set declaration")
            return ir.P4ValueSet(name=name.text, element_type=etype, size_expr=size,
                                 annotations=annotations, loc=vt.loc)
        if self.at_kw("action") and not in_parser:
            return self.parse_action(annotations)
        if self.starts_type():
            return self.parse_typed_declaration(annotations, top_level=False)
        t = self.peek()
        if t.kind == IDENT and (self.is_name_token(self.peek(1)) or self.at_op("(", 1)
                                or self.at_op("<", 1)):
            raise self.error(self.unknown_type(t.text))
        raise self.error(f"expected a declaration but found {t.describe()}")

    def parse_action(self, annotations: list[ir.Annotation]) -> ir.P4Action:
        self.expect_kw("action")
        name = self.expect_name("an action name")
        params = self.parse_params()
        body = self.parse_block()
        return ir.P4Action(name=name.text, params=params, body=body, annotations=annotations,
                           loc=name.loc)

    def parse_table(self, annotations: list[ir.Annotation]) -> ir.P4Table:
        self.expect_kw("table")
        name = self.expect_name("a table name")
        table = ir.P4Table(name=name.text, annotations=annotations, loc=name.loc)
        if self.at_op("(") and self.at_op(")", 1):  # legacy `table t() { ... }`
            self.advance()
            self.advance()
        self.expect_op("{")
        while not self.at_op("}"):
            if self.peek().kind == EOF:
                raise self.error("expected '}' at end of table")
            table.properties.append(self.parse_table_property())
        self.expect_op("}")
        return table

    def parse_table_property(self) -> ir.Property:
        anns = self.parse_annotations()
        is_const = self.accept_kw("const")
        t = self.peek()
        if t.kind not in (IDENT, KEYWORD):
            raise self.error(f"expected a table property but found {t.describe()}")
        self.advance()
        pname = t.text
        self.expect_op("=", f"after table property '{pname}'")
        if pname == "key":
            self.expect_op("{")
            keys: list[ir.KeyElement] = []
            while not self.at_op("}"):
                if self.peek().kind == EOF:
                    raise self.error("expected '}' at end of key")
                e = self.parse_expression()
                self.expect_op(":", "after key expression")
                mk = self.expect_name("a match kind")
                kanns = self.parse_annotations()
                self.expect_op(";", "after key element")
                keys.append(ir.KeyElement(expression=e, match_kind=mk.text, annotations=kanns,
                                          loc=e.loc))
            self.expect_op("}")
            return ir.Property(name=pname, value=keys, is_const=is_const, annotations=anns,
                               loc=t.loc)
        if pname == "actions":
            self.expect_op("{")
            refs: list[ir.ActionRef] = []
            while not self.at_op("}"):
                if self.peek().kind == EOF:
                    raise self.error("expected '}' at end of actions")
                aanns = self.parse_annotations()
                e = self.parse_action_ref_expr()
                self.expect_op(";", "after action in actions list")
                refs.append(ir.ActionRef(expression=e, annotations=aanns, loc=e.loc))
            self.expect_op("}")
            return ir.Property(name=pname, value=refs, is_const=is_const, annotations=anns,
                               loc=t.loc)
        if pname == "entries":
            self.expect_op("{")
            entries: list[ir.Entry] = []
            while not self.at_op("}"):
                if self.peek().kind == EOF:
                    raise self.error("expected '}' at end of entries")
                entries.append(self.parse_entry(is_const))
            self.expect_op("}")
            return ir.Property(name=pname, value=entries, is_const=is_const, annotations=anns,
                               loc=t.loc)
        if pname == "default_action":
            e = self.parse_action_ref_expr()
            self.expect_op(";", "after default_action")
            return ir.Property(name=pname, value=ir.ActionRef(expression=e, loc=e.loc),
                               is_const=is_const, annotations=anns, loc=t.loc)
        e = self.parse_expression()
        self.expect_op(";", f"after table property '{pname}'")
        return ir.Property(name=pname, value=e, is_const=is_const, annotations=anns, loc=t.loc)

    def parse_action_ref_expr(self) -> ir.Expression:
        t = self.peek()
        top = self.accept_op(".")
        name = self.expect_name("an action name")
        e: ir.Expression = ir.PathExpression(name=name.text, top_level=top, loc=t.loc)
        if self.at_op("("):
            args = self.parse_arguments()
            e = ir.MethodCallExpression(method=e, args=args, loc=t.loc)
        return e

    def parse_entry(self, table_const: bool) -> ir.Entry:
        anns = self.parse_annotations()
        loc = self.peek().loc
        is_const = self.accept_kw("const") or table_const
        prio = None
        if self.peek().text == "priority" and self.at_op("=", 1):
            self.advance()
            self.advance()
            prio = self.parse_expression()
            self.expect_op(":", "after entry priority")
        ks = self.parse_keyset_tuple()
        keys = list(ks.components) if isinstance(ks, ir.ListExpression) else [ks]
        self.expect_op(":", "after entry keyset")
        e = self.parse_action_ref_expr()
        eanns = self.parse_annotations()
        self.expect_op(";", "after entry")
        return ir.Entry(keys=keys, action=ir.ActionRef(expression=e, loc=e.loc),
                        priority_expr=prio, is_const=is_const, annotations=anns + eanns, loc=loc)

    # ------------------------------------------------------------- typed decls
    def starts_type(self) -> bool:
        t = self.peek()
        if t.is_op("."):
            t2 = self.peek(1)
            return t2.kind == IDENT and self.is_type_name(t2.text)
        if t.kind == KEYWORD:
            if t.text == "error" and self.at_op(".", 1):
                return False
            return t.text in BUILTIN_TYPE_KEYWORDS or t.text == "_"
        if t.kind == IDENT and self.is_type_name(t.text):
            return not self.at_op(".", 1)
        return self._at_list_type()

    def parse_typed_declaration(self, annotations: list[ir.Annotation],
                                top_level: bool) -> ir.Node:
        """``T x [= e];``, ``T(args) x [= {...}];``, or (top level) a function."""
        typ = self.parse_type()
        if self.at_op("("):
            args = self.parse_arguments()
            name = self.expect_name("an instance name")
            init = None
            if self.accept_op("="):
                init = self.parse_instance_initializer()
            self.expect_op(";", "after instantiation")
            return ir.Declaration_Instance(name=name.text, type=typ, args=args, initializer=init,
                                           annotations=annotations, loc=name.loc)
        name = self.expect_name("a name")
        if top_level and (self.at_op("(") or self.at_op("<")):
            tparams = self.parse_type_params()
            self.type_var_scopes.append({p.name for p in tparams})
            try:
                params = self.parse_params()
                body = self.parse_block()
            finally:
                self.type_var_scopes.pop()
            return ir.Function(name=name.text, return_type=typ, type_params=tparams,
                               params=params, body=body, annotations=annotations, loc=name.loc)
        init = None
        if self.accept_op("="):
            init = self.parse_expression()
        self.expect_op(";", "after variable declaration")
        return ir.Declaration_Variable(name=name.text, type=typ, initializer=init,
                                       annotations=annotations, loc=name.loc)

    def parse_instance_initializer(self) -> ir.BlockStatement:
        loc = self.expect_op("{").loc
        block = ir.BlockStatement(loc=loc)
        while not self.at_op("}"):
            anns = self.parse_annotations()
            if self.peek().kind == EOF:
                raise self.error("expected '}' at end of instance initializer")
            if self.starts_type():
                block.components.append(self.parse_typed_declaration(anns, top_level=True))
            else:
                raise self.error("expected an abstract method implementation "
                                 f"but found {self.peek().describe()}")
        self.expect_op("}")
        return block

    # ------------------------------------------------------------- types
    def parse_type(self) -> ir.Type:
        self.enter()
        try:
            t = self.parse_base_type()
            while self.at_op("["):
                lb = self.advance()
                size = self.parse_expression()
                self.expect_op("]", "after header stack size")
                t = ir.Type_Stack(element=t, size_expr=size, loc=lb.loc)
            return t
        finally:
            self.leave()

    def parse_width(self) -> ir.Expression:
        self.expect_op("<")
        t = self.peek()
        if t.kind == INTEGER:
            self.advance()
            e: ir.Expression = self._int_constant(t)
        elif t.is_op("("):
            self.advance()
            e = self.parse_expression()
            self.expect_op(")")
        elif t.kind == IDENT:
            self.advance()
            e = ir.PathExpression(name=t.text, loc=t.loc)
        else:
            raise self.error(f"expected a width but found {t.describe()}")
        self.expect_op(">", "after width")
        return e

    def parse_base_type(self) -> ir.Type:
        t = self.peek()
        loc = t.loc
        if t.kind == KEYWORD:
            kw = t.text
            if kw in ("bit", "int"):
                self.advance()
                if self.at_op("<"):
                    w = self.parse_width()
                    return ir.Type_Bits(width_expr=w, signed=kw == "int", loc=loc)
                if kw == "bit":
                    return ir.Type_Bits(width=1, signed=False, loc=loc)
                return ir.Type_InfInt(loc=loc)
            if kw == "varbit":
                self.advance()
                return ir.Type_Varbits(size_expr=self.parse_width(), loc=loc)
            if kw == "bool":
                self.advance()
                return ir.Type_Boolean(loc=loc)
            if kw == "string":
                self.advance()
                return ir.Type_String(loc=loc)
            if kw == "void":
                self.advance()
                return ir.Type_Void(loc=loc)
            if kw == "error":
                self.advance()
                return ir.Type_Error(loc=loc)
            if kw == "match_kind":
                self.advance()
                return ir.Type_MatchKind(loc=loc)
            if kw == "_":
                self.advance()
                return ir.Type_Dontcare(loc=loc)
            if kw == "tuple":
                self.advance()
                return ir.Type_Tuple(components=self.parse_type_args(), loc=loc)
        top = False
        if t.is_op("."):
            self.advance()
            top = True
            t = self.peek()
        if self._at_list_type():
            self.advance()
            self.expect_op("<", "after 'list'")
            elem = self.parse_type()
            self.expect_op(">", "after the list element type")
            return ir.Type_List(element=elem, loc=loc)
        if t.kind == IDENT and (self.is_type_name(t.text) or top):
            self.advance()
            base = ir.Type_Name(name=t.text, loc=loc)
            if self.at_op("<"):
                return ir.Type_Specialized(base=base, args=self.parse_type_args(), loc=loc)
            return base
        if t.kind == IDENT:
            raise self.error(self.unknown_type(t.text))
        raise self.error(f"expected a type but found {t.describe()}")

    def _at_list_type(self) -> bool:
        """``list<T>`` ahead (``list`` is contextual unless a type of that name exists)."""
        t = self.peek()
        if t.kind != IDENT or t.text != "list" or self.is_type_name("list") or \
                not self.at_op("<", 1):
            return False
        nxt = self.peek(2)
        return (nxt.kind == KEYWORD and nxt.text in BUILTIN_TYPE_KEYWORDS + ("tuple",)) or (
            nxt.kind == IDENT and (self.is_type_name(nxt.text) or nxt.text == "list"))

    def parse_type_args(self) -> list[ir.Type]:
        self.expect_op("<")
        args: list[ir.Type] = []
        if self.accept_op(">"):
            return args
        while True:
            args.append(self.parse_type())
            if not self.accept_op(","):
                break
        self.expect_op(">", "after type arguments")
        return args

    # ------------------------------------------------------------- statements
    def parse_block(self) -> ir.BlockStatement:
        anns = self.parse_annotations()
        start = self.expect_op("{", "to start a block")
        block = ir.BlockStatement(annotations=anns, loc=start.loc)
        self.enter()
        try:
            while not self.at_op("}"):
                if self.peek().kind == EOF:
                    raise P4Error("expected '}' but reached the end of input "
                                  "(unbalanced braces)", start.loc)
                block.components.append(self.parse_statement())
        finally:
            self.leave()
        self.advance()
        return block

    def parse_statement(self, in_parser: bool = False) -> ir.Node:
        anns = self.parse_annotations()
        t = self.peek()
        loc = t.loc
        if t.is_op("{"):
            b = self.parse_block()
            b.annotations = anns + b.annotations
            return b
        if t.is_op(";"):
            self.advance()
            return ir.EmptyStatement(loc=loc)
        if t.kind == KEYWORD:
            if t.text == "if":
                self.advance()
                self.expect_op("(", "after 'if'")
                cond = self.parse_expression()
                self.expect_op(")", "after if condition")
                then = self.parse_statement(in_parser)
                other = None
                if self.accept_kw("else"):
                    other = self.parse_statement(in_parser)
                return ir.IfStatement(condition=cond, if_true=then, if_false=other, loc=loc)
            if t.text == "switch":
                return self.parse_switch()
            if t.text == "exit":
                self.advance()
                self.expect_op(";", "after 'exit'")
                return ir.ExitStatement(loc=loc)
            if t.text == "return":
                self.advance()
                e = None if self.at_op(";") else self.parse_expression()
                self.expect_op(";", "after return")
                return ir.ReturnStatement(expression=e, loc=loc)
            if t.text == "const":
                return self.parse_constant(anns)
            if t.text in ("transition",):
                raise self.error("'transition' is only allowed at the end of a parser state")
        if t.kind == IDENT and t.text == "for" and self.at_op("(", 1):
            return self.parse_for(anns)
        if t.kind == IDENT and t.text in ("break", "continue") and self.at_op(";", 1):
            self.advance()
            self.advance()
            if t.text == "break":
                return ir.BreakStatement(loc=loc)
            return ir.ContinueStatement(loc=loc)
        if self.starts_type():
            return self.parse_typed_declaration(anns, top_level=False)
        left = self.parse_expression()
        if self.at_op("="):
            self.advance()
            right = self.parse_expression()
            self.expect_op(";", "after assignment")
            return ir.AssignmentStatement(left=left, right=right, loc=loc)
        compound = self.parse_compound_assignment(left, loc)
        if compound is not None:
            self.expect_op(";", "after assignment")
            return compound
        if isinstance(left, ir.MethodCallExpression):
            self.expect_op(";", "after method call")
            return ir.MethodCallStatement(call=left, loc=loc)
        if isinstance(left, ir.PathExpression) and self.is_name_token(self.peek()):
            raise P4Error(self.unknown_type(left.name), left.loc)
        if isinstance(left, ir.Binary) and left.op == "==" and not self.speculating:
            raise P4Error("expected '=' (assignment) but found '=='", left.loc)
        raise self.error(f"expected '=' or a method call but found {self.peek().describe()}")

    def parse_for(self, anns: list[ir.Annotation]) -> ir.ForStatement | ir.ForInStatement:
        """``for (init; cond; update) stmt`` or ``for (T v in collection) stmt``
        (P4-16 1.2.5; ``for``, ``break`` and ``continue`` are read in context so that
        older programs may still use them as names)."""
        loc = self.advance().loc
        self.expect_op("(", "after 'for'")
        if (self.starts_type() or self.at_op("@")) and self._for_in_ahead():
            var_anns = self.parse_annotations()
            typ = self.parse_type()
            name = self.expect_name("a loop variable name")
            self.expect_kw("in")
            coll = self.parse_expression()
            if self.at_op(".."):
                op = self.advance()
                coll = ir.Binary(op="..", left=coll, right=self.parse_expression(), loc=op.loc)
            self.expect_op(")", "after the for-in collection")
            var = ir.Declaration_Variable(name=name.text, type=typ, annotations=var_anns,
                                          loc=name.loc)
            body = self.parse_statement()
            return ir.ForInStatement(variable=var, collection=coll, body=body,
                                     annotations=anns, loc=loc)
        init: list[ir.Node] = []
        if not self.at_op(";"):
            while True:
                init.append(self._for_clause(declaration_allowed=True))
                if not self.accept_op(","):
                    break
        self.expect_op(";", "after the for-loop initialisation")
        cond = None if self.at_op(";") else self.parse_expression()
        self.expect_op(";", "after the for-loop condition")
        updates: list[ir.Statement] = []
        if not self.at_op(")"):
            while True:
                updates.append(self._for_clause(declaration_allowed=False))
                if not self.accept_op(","):
                    break
        self.expect_op(")", "after the for-loop updates")
        body = self.parse_statement()
        return ir.ForStatement(init=init, condition=cond, updates=updates, body=body,
                               annotations=anns, loc=loc)

    def _for_in_ahead(self) -> bool:
        """True if the tokens up to the matching ')' contain ``in`` at depth 0."""
        depth = 0
        i = 0
        while True:
            t = self.peek(i)
            if t.kind == EOF:
                return False
            if t.is_op("(") or t.is_op("[") or t.is_op("{"):
                depth += 1
            elif t.is_op(")") or t.is_op("]") or t.is_op("}"):
                if depth == 0:
                    return False
                depth -= 1
            elif t.is_op(";") and depth == 0:
                return False
            elif t.kind == KEYWORD and t.text == "in" and depth == 0:
                return True
            i += 1

    def _for_clause(self, declaration_allowed: bool) -> ir.Node:
        """One comma-separated part of a for loop's initialisation or update list."""
        t = self.peek()
        if declaration_allowed and self.starts_type():
            anns = self.parse_annotations()
            typ = self.parse_type()
            name = self.expect_name("a variable name")
            init = self.parse_expression() if self.accept_op("=") else None
            return ir.Declaration_Variable(name=name.text, type=typ, initializer=init,
                                           annotations=anns, loc=name.loc)
        left = self.parse_expression()
        if self.accept_op("="):
            right = self.parse_expression()
            return ir.AssignmentStatement(left=left, right=right, loc=t.loc)
        compound = self.parse_compound_assignment(left, t.loc)
        if compound is not None:
            return compound
        if isinstance(left, ir.MethodCallExpression):
            return ir.MethodCallStatement(call=left, loc=t.loc)
        raise P4Error("a for-loop initialisation or update must be an assignment, a method "
                      "call" + (" or a variable declaration" if declaration_allowed else ""),
                      t.loc)

    def parse_compound_assignment(self, left: ir.Expression,
                                  loc: SourceLoc) -> ir.AssignmentStatement | None:
        """``left op= right`` (the operator is next) as ``left = left op right``, or None.

        The copy of ``left`` on the right reads the same location: the back end
        evaluates the run-time parts of that location (``a[f(x)]``) once.
        """
        t = self.peek()
        if t.is_op(">") and t.adjacent_next and self.at_op(">=", 1):
            op_text = ">>="
        elif t.kind == OP and t.text in COMPOUND_ASSIGNMENTS:
            op_text = t.text
        else:
            return None
        self.advance()
        if op_text == ">>=":
            self.advance()
        right = self.parse_expression()
        value = ir.Binary(op=COMPOUND_ASSIGNMENTS[op_text], left=copy.deepcopy(left),
                          right=right, loc=t.loc)
        return ir.AssignmentStatement(left=left, right=value, compound_op=op_text, loc=loc)

    def parse_switch(self) -> ir.SwitchStatement:
        loc = self.expect_kw("switch").loc
        self.expect_op("(")
        e = self.parse_expression()
        self.expect_op(")")
        self.expect_op("{")
        cases: list[ir.SwitchCase] = []
        while not self.at_op("}"):
            t = self.peek()
            if t.kind == EOF:
                raise self.error("expected '}' at end of switch")
            if t.is_kw("default"):
                self.advance()
                label: ir.Expression = ir.DefaultExpression(loc=t.loc)
            else:
                label = self.parse_expression()
            self.expect_op(":", "after switch label")
            stmt = self.parse_block() if self.at_op("{") else None
            cases.append(ir.SwitchCase(label=label, statement=stmt, loc=t.loc))
        self.expect_op("}")
        return ir.SwitchStatement(expression=e, cases=cases, loc=loc)

    # ------------------------------------------------------------- expressions
    def parse_arguments(self) -> list[ir.Argument]:
        self.expect_op("(")
        args: list[ir.Argument] = []
        if self.accept_op(")"):
            return args
        while True:
            t = self.peek()
            name = None
            if self.is_name_token(t) and self.at_op("=", 1):
                name = t.text
                self.advance()
                self.advance()
            if self.at_kw("_") and (self.at_op(",", 1) or self.at_op(")", 1)):
                u = self.advance()
                e: ir.Expression = ir.DefaultExpression(dontcare=True, loc=u.loc)
            else:
                e = self.parse_expression()
            args.append(ir.Argument(name=name, expr=e, loc=t.loc))
            if not self.accept_op(","):
                break
        self.expect_op(")", "after arguments")
        return args

    def parse_expression(self) -> ir.Expression:
        self.enter()
        try:
            cond = self.parse_binary(2)
            if self.at_op("?"):
                q = self.advance()
                e1 = self.parse_expression()
                self.expect_op(":", "in conditional expression")
                e2 = self.parse_expression()
                return ir.Mux(cond=cond, e1=e1, e2=e2, loc=q.loc)
            return cond
        finally:
            self.leave()

    def _binary_op_here(self) -> str | None:
        t = self.peek()
        if t.kind != OP:
            return None
        if t.text == ">" and t.adjacent_next and self.at_op(">", 1):
            return ">>"
        if t.text == ">" and t.adjacent_next and self.at_op(">=", 1):
            return None  # ``>>=``, a compound assignment
        return t.text if t.text in BINARY_PRECEDENCE else None

    def parse_binary(self, min_prec: int) -> ir.Expression:
        left = self.parse_unary()
        while True:
            op = self._binary_op_here()
            if op is None:
                return left
            prec = BINARY_PRECEDENCE[op]
            if prec < min_prec:
                return left
            optok = self.advance()
            if op == ">>":
                self.advance()
            right = self.parse_binary(prec + 1)
            left = ir.Binary(op=op, left=left, right=right, loc=optok.loc)

    def parse_unary(self) -> ir.Expression:
        t = self.peek()
        if t.kind == OP and t.text in ("!", "~", "-", "+"):
            self.advance()
            self.enter()
            try:
                operand = self.parse_unary()
            finally:
                self.leave()
            return ir.Unary(op=t.text, expr=operand, loc=t.loc)
        if t.is_op("(") and self._looks_like_cast():
            self.advance()
            typ = self.parse_type()
            self.expect_op(")")
            self.enter()
            try:
                operand = self.parse_unary()
            finally:
                self.leave()
            return ir.Cast(dest_type=typ, expr=operand, loc=t.loc)
        return self.parse_postfix(self.parse_primary())

    def _looks_like_cast(self) -> bool:
        save = self.pos
        self.speculating += 1
        try:
            self.advance()
            if not self.starts_type():
                return False
            self.parse_type()
            return self.at_op(")")
        except _Backtrack:
            return False
        finally:
            self.speculating -= 1
            self.pos = save

    def _int_constant(self, t: Token) -> ir.Constant:
        value, width, signed, base = t.value  # type: ignore[misc]
        c = ir.Constant(value=value, base=base, loc=t.loc)
        if width is not None:
            c.type = ir.Type_Bits(width=width, signed=signed, loc=t.loc)
        return c

    def parse_primary(self) -> ir.Expression:
        t = self.peek()
        loc = t.loc
        if t.kind == INTEGER:
            self.advance()
            return self._int_constant(t)
        if t.kind == STRING:
            self.advance()
            return ir.StringLiteral(value=str(t.value), loc=loc)
        if t.kind == KEYWORD:
            kw = t.text
            if kw in ("true", "false"):
                self.advance()
                return ir.BoolLiteral(value=kw == "true", loc=loc)
            if kw == "this":
                self.advance()
                return ir.ThisExpression(loc=loc)
            if kw in ("default", "_"):
                self.advance()
                return ir.DefaultExpression(dontcare=kw == "_", loc=loc)
            if kw == "error" and self.at_op(".", 1):
                self.advance()
                return ir.TypeNameExpression(typename=ir.Type_Error(loc=loc), loc=loc)
            if kw in ("bit", "int", "varbit", "bool", "tuple") and not self.at_op(".", 1):
                typ = self.parse_type()
                return ir.TypeNameExpression(typename=typ, loc=loc)
            if kw in NAME_KEYWORDS:
                self.advance()
                return ir.PathExpression(name=kw, loc=loc)
        if t.is_op("("):
            self.advance()
            e = self.parse_expression()
            self.expect_op(")", "to close parenthesis")
            return e
        if t.is_op("{"):
            return self.parse_brace_expression()
        if t.is_op("."):
            self.advance()
            n = self.expect_name("a name after '.'")
            return ir.PathExpression(name=n.text, top_level=True, loc=loc)
        if t.kind == IDENT:
            if self.is_type_name(t.text):
                if self.at_op("(", 1) or self.at_op("<", 1):
                    typ = self.parse_type()
                    args = self.parse_arguments()
                    return ir.ConstructorCallExpression(ctor_type=typ, args=args, loc=loc)
                self.advance()
                return ir.TypeNameExpression(typename=ir.Type_Name(name=t.text, loc=loc), loc=loc)
            self.advance()
            return ir.PathExpression(name=t.text, loc=loc)
        raise self.error(f"expected an expression but found {t.describe()}")

    def parse_brace_expression(self) -> ir.Expression:
        """``{a, b}``, ``{f = a, ...}``, ``{#}``; a trailing ``...`` (P4 1.2.4) asks for
        default values of the remaining fields/elements."""
        start = self.expect_op("{")
        if self.at_op("#") and self.at_op("}", 1):
            self.advance()
            self.advance()
            return ir.InvalidHeader(loc=start.loc)
        if self.accept_op("}"):
            return ir.ListExpression(components=[], loc=start.loc)
        if self.at_op("...") and self.at_op("}", 1):
            self.advance()
            self.advance()
            return ir.StructExpression(type_name=None, components=[], loc=start.loc,
                                       default_rest=True)
        if self.is_name_token(self.peek()) and self.at_op("=", 1):
            comps: list[ir.NamedExpression] = []
            dots = False
            while not self.at_op("}"):
                if self.accept_op("..."):
                    dots = True
                    break
                n = self.expect_name("a field name")
                self.expect_op("=", "in structure initializer")
                comps.append(ir.NamedExpression(name=n.text, expr=self.parse_expression(),
                                                loc=n.loc))
                if not self.accept_op(","):
                    break
            self.expect_op("}", "at end of structure initializer")
            return ir.StructExpression(type_name=None, components=comps, loc=start.loc,
                                       default_rest=dots)
        items: list[ir.Expression] = []
        dots = False
        while not self.at_op("}"):
            if self.accept_op("..."):
                dots = True
                break
            items.append(self.parse_expression())
            if not self.accept_op(","):
                break
        self.expect_op("}", "at end of list expression")
        return ir.ListExpression(components=items, loc=start.loc, default_rest=dots)

    def parse_postfix(self, e: ir.Expression) -> ir.Expression:
        while True:
            t = self.peek()
            if t.is_op("."):
                self.advance()
                n = self.peek()
                if n.kind not in (IDENT, KEYWORD):
                    raise self.error(f"expected a member name after '.' but found {n.describe()}")
                self.advance()
                e = ir.Member(expr=e, member=n.text, loc=e.loc)
            elif t.is_op("["):
                self.advance()
                idx = self.parse_expression()
                if self.accept_op(":"):
                    lo = self.parse_expression()
                    self.expect_op("]", "after slice")
                    e = ir.SliceExpr(expr=e, hi=idx, lo=lo, loc=e.loc)
                else:
                    self.expect_op("]", "after index")
                    e = ir.ArrayIndex(left=e, index=idx, loc=e.loc)
            elif t.is_op("("):
                args = self.parse_arguments()
                e = ir.MethodCallExpression(method=e, args=args, loc=e.loc)
            elif t.is_op("<") and isinstance(e, (ir.PathExpression, ir.Member)):
                targs = self._try_call_type_args()
                if targs is None:
                    return e
                args = self.parse_arguments()
                e = ir.MethodCallExpression(method=e, type_args=targs, args=args, loc=e.loc)
            else:
                return e

    def _try_call_type_args(self) -> list[ir.Type] | None:
        save = self.pos
        self.speculating += 1
        try:
            targs = self.parse_type_args()
            if self.at_op("("):
                return targs
        except _Backtrack:
            pass
        finally:
            self.speculating -= 1
        self.pos = save
        return None


def parse_tokens(tokens: list[Token]) -> ir.P4Program:
    """Parse a token list (from :func:`lexer.tokenize`) into a program."""
    return Parser(tokens).parse_program()
