"""Parse trees of ``policy NAME { ... }`` blocks to :mod:`plancheck.dsl.policy_ast` records."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from plancheck.diagnostics.span import Span
from plancheck.dsl.policy_ast import (
    ARGUMENT,
    AT_MOST,
    FLOW,
    FORBID_AFTER,
    REQUIRE_BEFORE,
    REQUIRE_CALL,
    ArgumentPath,
    PathKey,
    PolicyDecl,
    Predicate,
    Rule,
    ToolPattern,
)
from plancheck.ir.nodes import JSONValue

SpanOf = Callable[[Any], Span]
ValueOf = Callable[[Any], JSONValue]


def build_policy(node: Any, span_of: SpanOf, value_of: ValueOf) -> PolicyDecl:
    """The policy a ``policy`` parse tree declares (``value_of`` reads a JSON value node)."""
    name_token, *rest = node.children
    name = str(name_token)
    doc = ""
    rules: list[Rule] = []
    for child in rest:
        if child.data == "doc":
            doc = _string(child.children[0])
        elif child.data == "policy_rule":
            rules.append(_rule(child, name, span_of, value_of))
    return PolicyDecl(name, tuple(rules), span_of(node), doc)


def _rule(node: Any, policy: str, span_of: SpanOf, value_of: ValueOf) -> Rule:
    severity = "deny"
    body = node.children[-1]
    if len(node.children) > 1:
        severity = str(node.children[0].children[0])
    parts = body.children
    common: dict[str, Any] = {"severity": severity, "span": span_of(node), "policy": policy}
    kind = body.data
    if kind == "require_before":
        return Rule(REQUIRE_BEFORE, first=_pattern(parts[0], span_of),
                    second=_pattern(parts[1], span_of), **common)
    if kind == "forbid_after":
        return Rule(FORBID_AFTER, first=_pattern(parts[0], span_of),
                    second=_pattern(parts[1], span_of), **common)
    if kind == "require_call":
        return Rule(REQUIRE_CALL, first=_pattern(parts[0], span_of), **common)
    if kind == "at_most":
        from plancheck.dsl.literals import integer_literal

        window = integer_literal(parts[2].children[0]) if len(parts) > 2 else None
        return Rule(AT_MOST, count=integer_literal(parts[0]), first=_pattern(parts[1], span_of),
                    window=window, **common)
    if kind == "flow_rule":
        return Rule(FLOW, source=_path(parts[0], span_of), target=_path(parts[1], span_of),
                    **common)
    target = _path(parts[0], span_of)
    predicate = _predicate(parts[1], span_of, value_of)
    unless = _pattern(parts[2].children[0], span_of) if len(parts) > 2 else None
    return Rule(ARGUMENT, target=target, predicate=predicate, unless=unless,
                forbid=kind == "argument_forbid", **common)


def _string(token: Any) -> str:
    """A string literal. A backslash JSON gives no meaning to (``"data/.*\\.tif"``) stands for
    itself, as regular expressions need it to."""
    from plancheck.dsl.literals import string_literal

    def decode(text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError:
            return json.loads(_ESCAPE.sub(lambda m: m[0] if len(m[0]) > 2
                                          or m[0][1] in _JSON_ESCAPES else "\\" + m[0], text))

    return string_literal(token, decode)


_JSON_ESCAPES = '"\\/bfnrt'
_ESCAPE = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|.)")


def _pattern(node: Any, span_of: SpanOf) -> ToolPattern:
    token = node.children[0]
    text = str(token)
    if node.data == "tool_quoted":
        text = _string(token)
        kind = "glob" if any(c in text for c in "*?") else "name"
    else:
        kind = {"tool_name": "name", "tool_glob": "glob", "tool_family": "family"}[node.data]
    return ToolPattern(kind, text, span_of(node))


def _path(node: Any, span_of: SpanOf) -> ArgumentPath:
    pattern, *keys = node.children
    path: list[PathKey] = []
    for key in keys:
        if key.type == "STRING":
            path.append(_string(key))
        elif key.type == "INT":
            from plancheck.dsl.literals import integer_literal

            path.append(integer_literal(key))
        else:
            path.append(str(key))
    return ArgumentPath(_pattern(pattern, span_of), tuple(path), span_of(node))


def _predicate(node: Any, span_of: SpanOf, value_of: ValueOf) -> Predicate:
    if node.data == "compare":
        op_token, value = node.children
        return Predicate(str(op_token), value_of(value), span_of(node))
    if node.data == "matches":
        return Predicate("matches", _string(node.children[0]), span_of(node))
    op = "in" if node.data == "member" else "not in"
    return Predicate(op, value_of(node.children[0]), span_of(node))
