"""What the request rules read of a plan: the text literals of its calls (each with the
parameter it is passed to), and what a tool's schema allows a parameter without the user
saying it (``enum``, ``const``, ``default``, ``examples``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from plancheck.diagnostics.span import Span
from plancheck.ir.nodes import Literal, Param, Plan, Step, Toolset
from plancheck.records import FrozenRecord

__all__ = ["TextLiteral", "name_words", "schema_values", "text_literals"]

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


class TextLiteral(FrozenRecord):
    """A string written in a call's arguments: the step, the argument's name, the parameter
    the pool declares for it (None: an input the tool does not declare), the string, and its
    span (a JSON pointer below the argument when it sits in a list or object)."""

    __slots__ = _fields = ("step", "argument", "param", "value", "span")

    def __init__(self, step: Step, argument: str, param: Param | None, value: str,
                 span: Span) -> None:
        self.step = step
        self.argument = argument
        self.param = param
        self.value = value
        self.span = span


def text_literals(plan: Plan, toolset: Toolset) -> Iterator[TextLiteral]:
    """Every string literal of the plan's calls, in order (strings inside a list or object
    argument too, a reference excepted)."""
    for step in plan.steps:
        tool = toolset.tool(step.tool) if step.tool is not None else None
        for argument in step.args:
            if not isinstance(argument.value, Literal):
                continue
            param = tool.input(argument.name) if tool is not None else None
            for span, value in _strings(argument.value.value, argument.span, 0):
                yield TextLiteral(step, argument.name, param, value, span)


def _strings(value: Any, span: Span, depth: int) -> Iterator[tuple[Span, str]]:
    if isinstance(value, str):
        yield span, value
    elif depth < 8 and isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, span.child(index), depth + 1)
    elif depth < 8 and isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, span.child(str(key)), depth + 1)


def schema_values(param: Param | None) -> frozenset[str]:
    """The strings a parameter's JSON Schema names itself (``enum``, ``const``, ``default``,
    ``examples``, at any depth): values the user need not give."""
    if param is None or not param.schema_text:
        return frozenset()
    return _named_values(param.schema_text)


@lru_cache(maxsize=4096)
def _named_values(schema_text: str) -> frozenset[str]:
    try:
        schema = json.loads(schema_text)
    except ValueError:
        return frozenset()
    found: set[str] = set()
    pending: list[tuple[Any, int]] = [(schema, 0)]
    while pending:
        node, depth = pending.pop()
        if depth > 16:
            continue
        if isinstance(node, dict):
            for key, member in node.items():
                if key in ("enum", "examples") and isinstance(member, list):
                    found.update(str(v) for v in member if isinstance(v, (str, int, float)))
                elif key in ("const", "default") and isinstance(member, (str, int, float)):
                    found.add(str(member))
                else:
                    pending.append((member, depth + 1))
        elif isinstance(node, list):
            pending.extend((member, depth + 1) for member in node)
    return frozenset(found)


def name_words(name: str) -> set[str]:
    """The words of a parameter's name, in lower case (``imageURL``, ``image_url``: image,
    url)."""
    return {word.lower() for word in _WORD.findall(name)}
