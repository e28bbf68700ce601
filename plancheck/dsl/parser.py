"""Parse workflow-DSL source (toolsets and plans) into the IR, keeping a span on every node.

The grammar is ``grammar.lark`` (Lark, LALR, with positions). Syntax errors become ``PC114``
diagnostics that name what the parser expected; definitions that clash become ``PC702``.
The parser is built once per process and only when DSL source is actually read, so checking a
JSON plan never pays for it; it is read from the tables shipped with the package as JSON data
(:mod:`.tables`), never from a cache another user could write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from plancheck.diagnostics.limits import MAX_FIELDS, MAX_RULES, MAX_STEPS, MAX_TOOLS, too_many
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import NO_SPAN, Span
from plancheck.dsl.literals import BadLiteral, integer_literal, string_literal
from plancheck.dsl.policy_ast import PolicyDecl
from plancheck.ir.nodes import (
    Argument,
    Family,
    Flow,
    JSONValue,
    Literal,
    Param,
    Plan,
    Reference,
    Step,
    Toolset,
    ToolSignature,
    TypeDecl,
)

# Deeper literal values are refused (PC114): the checker and the printers walk values
# recursively, and within Python's default recursion limit they must still fit.
MAX_VALUE_DEPTH = 400


class _TooDeep(Exception):
    def __init__(self, span: Span) -> None:
        super().__init__(span)
        self.span = span


@dataclass(slots=True)
class DslModule:
    """Everything one DSL file defines."""

    toolsets: list[Toolset] = field(default_factory=list)
    plans: list[Plan] = field(default_factory=list)
    policies: list[PolicyDecl] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


@cache
def _parser() -> Any:
    from plancheck.dsl.tables import parser

    return parser()


def parse_dsl(text: str, filename: str = "<dsl>") -> DslModule:
    """Parse DSL source. Never raises on bad input: problems come back as diagnostics."""
    import lark

    module = DslModule()
    too_large = _over_limits(text, filename)
    if too_large is not None:
        module.diagnostics.append(too_large)
        return module
    try:
        tree = _parser().parse(text)
    except lark.exceptions.UnexpectedInput as error:
        module.diagnostics.append(_syntax_error(error, text, filename))
        return module
    builder = _Builder(filename, module)
    try:
        for item in tree.children:
            if item.data == "toolset":
                module.toolsets.append(builder.toolset(item))
            elif item.data == "policy":
                from plancheck.dsl.policy_builder import build_policy

                module.policies.append(build_policy(item, builder.span, builder.json_value))
            else:
                module.plans.append(builder.plan(item))
    except BadLiteral as error:
        module.toolsets.clear()
        module.plans.clear()
        module.policies.clear()
        module.diagnostics.append(error.diagnostic(filename))
    except _TooDeep as error:
        module.toolsets.clear()
        module.plans.clear()
        module.policies.clear()
        module.diagnostics.append(make(
            "PC114", f"syntax error: a value nested more than {MAX_VALUE_DEPTH} levels deep",
            primary=error.span, label="this value", data={"max_depth": MAX_VALUE_DEPTH}))
    return module


# Strings and comments, whose commas and parentheses are text, not syntax.
_NOT_SYNTAX = re.compile(r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"|#[^\n]*+|//[^\n]*+')


def _over_limits(text: str, filename: str) -> Diagnostic | None:
    """The ``PC006`` of source holding more calls and declarations (parentheses), more
    values (commas) or more policy rules than one plan, pool and policy file may: Lark's tree
    costs a few hundred bytes a token, so a 16M file of tiny steps would take gigabytes before
    a step was checked. Counted at the speed of ``re`` and ``str.count``."""
    if text.count("(") <= _MAX_GROUPS and text.count(",") <= MAX_FIELDS and \
            sum(text.count(word) for word in _RULE_WORDS) <= MAX_RULES:
        return None  # the common case: no need to look past strings and comments
    syntax = _NOT_SYNTAX.sub("", text)
    whole = Span(filename, start_line=1, start_col=1, end_line=1, end_col=1)
    if syntax.count("(") > _MAX_GROUPS:
        return too_many("calls and tool declarations", syntax.count("("), _MAX_GROUPS, whole)
    if syntax.count(",") > MAX_FIELDS:
        return too_many("values", syntax.count(","), MAX_FIELDS, whole)
    rules = sum(1 for _ in _RULE_START.finditer(syntax))
    if rules > MAX_RULES:
        return too_many("policy rules", rules, MAX_RULES, whole)
    return None


# Every policy rule begins with `require`, `forbid` or `at most` (after `deny` or `warn`).
_RULE_WORDS = ("require", "forbid", "most")
_RULE_START = re.compile(r"\b(?:require|forbid|at\s+most)\b")


_MAX_GROUPS = MAX_STEPS + MAX_TOOLS


# --------------------------------------------------------------------------- syntax errors

_TOKEN_DESCRIPTIONS = {
    "NAME": "a name",
    "STRING": "a string",
    "INT": "an integer",
    "NUMBER": "a number",
    "REF": "a reference like step0.key",
    "QREF": 'a reference like step0["key"]',
    "LBRACE": "`{`",
    "RBRACE": "`}`",
    "LPAR": "`(`",
    "RPAR": "`)`",
    "LSQB": "`[`",
    "RSQB": "`]`",
    "COMMA": "`,`",
    "EQUAL": "`=`",
    "COLON": "`:`",
    "__ANON_0": "`<:`",
    "TOOLGLOB": "a tool glob like delete_*",
    "COMPARISON": "a comparison (<, <=, ==, !=, >=, >)",
}


def _describe_expected(names: set[str]) -> str:
    described = sorted({_TOKEN_DESCRIPTIONS.get(n, _describe_anonymous(n)) for n in names})
    if len(described) > 8:
        described = [*described[:8], "..."]
    return ", ".join(described)


def _describe_anonymous(name: str) -> str:
    if name.startswith("__ANON") or not name.isupper():
        return name
    return f"`{name.lower()}`"


def _syntax_error(error: Any, text: str, filename: str) -> Diagnostic:
    import lark

    line = int(getattr(error, "line", 1) or 1)
    column = int(getattr(error, "column", 1) or 1)
    if line < 1:  # unexpected end of input
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
    span = Span(filename, line, column, line, column + 1)
    expected: set[str] = set()
    if isinstance(error, lark.exceptions.UnexpectedToken):
        found = (
            f"unexpected `{error.token}`" if error.token.type != "$END" else "unexpected end"
        )
        expected = set(error.accepts or error.expected or ())
    elif isinstance(error, lark.exceptions.UnexpectedCharacters):
        found = f"unexpected character {text[error.pos_in_stream or 0]!r}"
        expected = set(error.allowed or ())
    else:
        found = "unexpected end of input"
        expected = set(getattr(error, "expected", ()) or ())
    help_lines = [f"expected {_describe_expected(expected)}"] if expected else []
    return make(
        "PC114",
        f"syntax error: {found}",
        primary=span,
        label="here",
        help=help_lines,
        data={"line": line, "column": column},
    )


# --------------------------------------------------------------------------- tree -> IR


def _unquote(token: Any) -> str:
    return string_literal(token)


def _text(token: Any) -> str:
    """A name as written: a NAME token, or a JSON string for a name NAME cannot spell."""
    return _unquote(token) if token.type == "STRING" else str(token)


class _Builder:
    def __init__(self, filename: str, module: DslModule) -> None:
        self.filename = filename
        self.module = module

    def span(self, node: Any) -> Span:
        # A tree carries its positions in .meta; a token carries them itself.
        meta = getattr(node, "meta", None)
        where = meta if meta is not None and not getattr(meta, "empty", True) else node
        return Span(
            self.filename,
            where.line,
            where.column,
            where.end_line,
            where.end_column,
            start_offset=where.start_pos,
            end_offset=where.end_pos,
        )

    def duplicate(self, kind: str, name: str, span: Span, first: Span) -> None:
        self.module.diagnostics.append(
            make(
                "PC702",
                f"{kind} `{name}` is defined more than once",
                primary=span,
                label="defined again here",
                secondary=[(first, "first defined here")],
                data={"kind": kind, "name": name},
            )
        )

    # ---------------------------------------------------------------- toolsets

    def toolset(self, node: Any) -> Toolset:
        name_token, *rest = node.children
        toolset = Toolset(name=_text(name_token), span=self.span(node))
        for child in rest:
            kind = child.data
            if kind == "doc":
                toolset.description = _unquote(child.children[0])
            elif kind == "max_predecessors":
                toolset.max_predecessors = integer_literal(child.children[0])
            elif kind == "family_decl":
                self.family(toolset, child)
            elif kind == "alias_decl":
                alias, target = (_text(t) for t in child.children)
                toolset.aliases[alias] = target
            elif kind == "type_decl":
                self.type_decl(toolset, child)
            elif kind == "tool_decl":
                self.tool(toolset, child)
            elif kind == "flow_decl":
                source, *targets = child.children
                for target in targets:
                    flow = Flow(_text(source), _text(target), self.span(target))
                    toolset.flow_decls.append(flow)
                    toolset.flows.add((flow.source, flow.target))
        return toolset

    def family(self, toolset: Toolset, node: Any) -> None:
        name = _text(node.children[0])
        doc = _unquote(node.children[1].children[0]) if len(node.children) > 1 else ""
        span = self.span(node)
        if name in toolset.families:
            self.duplicate("family", name, span, toolset.families[name].span)
            return
        toolset.families[name] = Family(name, doc, span)

    def type_decl(self, toolset: Toolset, node: Any) -> None:
        name = _text(node.children[0])
        parents: tuple[str, ...] = ()
        conversions: tuple[str, ...] = ()
        formats: tuple[str, ...] = ()
        doc = ""
        parent_spans: tuple[Span, ...] = ()
        conversion_spans: tuple[Span, ...] = ()
        for child in node.children[1:]:
            if child.data == "supertypes":
                parents = tuple(_text(t) for t in child.children)
                parent_spans = tuple(self.span(t) for t in child.children)
            elif child.data == "conversions":
                conversions = tuple(_text(t) for t in child.children)
                conversion_spans = tuple(self.span(t) for t in child.children)
            elif child.data == "formats":
                formats = tuple(_unquote(t).lower() for t in child.children)
            elif child.data == "doc":
                doc = _unquote(child.children[0])
        span = self.span(node)
        if name in toolset.types:
            self.duplicate("type", name, span, toolset.types[name].span)
            return
        toolset.types[name] = TypeDecl(name, parents, doc, span, conversions, formats,
                                       (*parent_spans, *conversion_spans))

    def tool(self, toolset: Toolset, node: Any) -> None:
        name = _text(node.children[0])
        inputs: list[Param] = []
        outputs: list[Param] = []
        category = family = description = ""
        for child in node.children[1:]:
            kind = child.data
            if kind in ("input_decl", "output_decl"):
                param = self.param(child)
                target = inputs if kind == "input_decl" else outputs
                clash = next((p for p in target if p.name == param.name), None)
                if clash is not None:
                    self.duplicate(f"{'input' if target is inputs else 'output'} of {name}",
                                   param.name, param.span, clash.span)
                    continue
                target.append(param)
            elif kind == "category":
                category = _unquote(child.children[0])
            elif kind == "tool_family":
                family = _text(child.children[0])
            elif kind == "description":
                description = _unquote(child.children[0])
        span = self.span(node)
        if name in toolset.tools:
            self.duplicate("tool", name, span, toolset.tools[name].span)
            return
        toolset.tools[name] = ToolSignature(
            name, tuple(inputs), tuple(outputs), category, family, description, span
        )

    def param(self, node: Any) -> Param:
        tokens = list(node.children)
        name = _text(tokens.pop(0))
        required = True
        polymorphic = False
        doc = ""
        type_name = ""
        type_span = NO_SPAN
        for token in tokens:
            kind = getattr(token, "type", None)
            if kind == "OPTIONAL":
                required = False
            elif kind == "ANY":
                polymorphic = True
            elif kind in ("NAME", "STRING"):  # (a doc is a tree, not a token)
                type_name, type_span = _text(token), self.span(token)
            elif getattr(token, "data", None) == "doc":
                doc = _unquote(token.children[0])
        return Param(name, type_name, required, doc, self.span(node), polymorphic,
                     type_span=type_span)

    # ---------------------------------------------------------------- plans

    def plan(self, node: Any) -> Plan:
        name: str | None = None
        toolset: str | None = None
        steps: list[Step] = []
        for child in node.children:
            if child.data == "plan_name":
                token = child.children[0]
                name = _unquote(token) if token.type == "STRING" else str(token)
            elif child.data == "uses":
                toolset = _text(child.children[0])
            elif child.data == "step":
                steps.append(self.step(child, len(steps)))
        return Plan(tuple(steps), self.span(node), name=name, toolset=toolset)

    def step(self, node: Any, position: int) -> Step:
        index_token, tool_token, *rest = node.children
        tool = _text(tool_token)
        args: list[Argument] = []
        outputs: tuple[str, ...] | None = None
        outputs_span: Span | None = None
        for child in rest:
            if child.data == "argument":
                argument = self.argument(child)
                first = next((a for a in args if a.name == argument.name), None)
                if first is not None:
                    self.module.diagnostics.append(
                        make(
                            "PC115",
                            f"argument `{argument.name}` is given twice",
                            primary=argument.span,
                            label="given again here",
                            secondary=[(first.span, "first given here")],
                            data={"step": integer_literal(index_token), "key": argument.name},
                        )
                    )
                    continue
                args.append(argument)
            elif child.data == "outputs":
                outputs = tuple(
                    _unquote(t) if t.type == "STRING" else str(t) for t in child.children
                )
                outputs_span = self.span(child)
        spans = {"agent": self.span(tool_token), "step": self.span(index_token)}
        if outputs_span is not None:
            spans["outputs"] = outputs_span
        return Step(
            position=position,
            index=integer_literal(index_token),
            tool=tool,
            args=tuple(args),
            outputs=outputs,
            span=self.span(node),
            stored_spans=spans,
        )

    def argument(self, node: Any) -> Argument:
        name_token, value_node = node.children
        name = _unquote(name_token) if name_token.type == "STRING" else str(name_token)
        span = self.span(node)
        value: Literal | Reference
        if getattr(value_node, "data", None) == "reference":
            value = self.reference(value_node.children[0])
        else:
            value = Literal(self.json_value(value_node), self.span(value_node))
        return Argument(name, value, span, name_span_=self.span(name_token))

    def reference(self, token: Any) -> Reference:
        text = str(token)
        head, _, tail = text.partition(".") if token.type == "REF" else text.partition("[")
        step = integer_literal(token, head[len("step"):])
        key = tail if token.type == "REF" else _unquote(tail.rstrip()[:-1].strip())
        return Reference(step, key, self.span(token), raw=text)

    def json_value(self, root: Any) -> JSONValue:
        """The value of a literal, built without recursion (it may nest deeply)."""
        built: list[JSONValue] = []
        pending: list[tuple[Any, int, bool]] = [(root, 1, False)]
        while pending:
            node, depth, children_built = pending.pop()
            kind = node.data
            if kind not in ("array", "object"):
                built.append(_scalar(node))
                continue
            if not children_built:
                if depth > MAX_VALUE_DEPTH:
                    raise _TooDeep(self.span(node))
                pending.append((node, depth, True))
                members = node.children if kind == "array" else [
                    pair.children[1] for pair in node.children]
                pending.extend((member, depth + 1, False) for member in reversed(members))
                continue
            start = len(built) - len(node.children)
            values = built[start:]
            del built[start:]
            if kind == "array":
                built.append(values)
            else:
                built.append({_unquote(pair.children[0]): value
                              for pair, value in zip(node.children, values, strict=True)})
        return built[0]


def _scalar(node: Any) -> JSONValue:
    kind = node.data
    if kind == "string":
        return _unquote(node.children[0])
    if kind == "number":
        text = str(node.children[0])
        return float(text) if any(c in text for c in ".eE") else integer_literal(
            node.children[0])
    if kind == "true":
        return True
    if kind == "false":
        return False
    return None
