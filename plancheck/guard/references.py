"""References between calls in a guarded loop, in every syntax plancheck reads.

``{{steps.1.output.text}}``, ``<GENERATED>-1-<text>``, ``<text> from trajectory[1].obs``,
``<node-1>.text``: call 1 is the second call *accepted* so far (a refused call never joins
the trajectory, so it never shifts the numbering); ``$call_7.text$`` names a call by its id.
A reference resolves against the recorded result of that call: the key must be there (or,
before a result is recorded, among the outputs the tool declares).
"""

from __future__ import annotations

import re
from typing import Any

from plancheck.compiler.call_formats import SYNTAXES
from plancheck.compiler.refsyntax import Placeholder, RefMatch, parse
from plancheck.diagnostics.span import escape_pointer, unescape_token
from plancheck.ir.nodes import Toolset
from plancheck.records import FrozenRecord

MAX_DEPTH = 64  # arguments nested deeper are refused, not walked
# A string that cannot be a reference in any syntax skips the parsers.
_MAYBE = re.compile(r"[<{$]|API_call_|trajectory", re.IGNORECASE)
_PATH_TOKEN = re.compile(r"[^.\[\]]+|\[(\d+)\]")
MISSING = object()


class Found(FrozenRecord):
    """A reference or placeholder written somewhere inside a call's arguments."""

    _fields = ("pointer", "text", "match")
    __slots__ = _fields

    def __init__(self, pointer: str, text: str, match: RefMatch | Placeholder) -> None:
        self.pointer = pointer  # below the arguments object
        self.text = text
        self.match = match


# The syntaxes a pool keeps when the guard is not told otherwise: the built-in DisasterBench
# pool's ``<GENERATED>-k-<key>`` and DORA's ``<key> from trajectory[k].obs``. Any other pool
# (MCP, OpenAI, Anthropic, BFCL, ...) declares none: its strings are text.
_POOL_SYNTAXES = {"disasterbench": ("generated",), "dora": ("dora",)}


def declared_syntaxes(toolset: Toolset, references: Any) -> tuple[str, ...]:
    """The reference syntaxes a guard reads: ``references`` (a syntax name of
    :data:`~plancheck.compiler.call_formats.SYNTAXES`, a list of them, ``"all"`` or
    ``"none"``), or when it is ``None`` the ones the pool declares. Raises ``ValueError`` for
    an unknown name."""
    if references is None:
        return _POOL_SYNTAXES.get(toolset.name, ())
    names = [references] if isinstance(references, str) else list(references)
    if names == ["all"]:
        return SYNTAXES
    if names == ["none"]:
        return ()
    unknown = [n for n in names if n not in SYNTAXES]
    if unknown:
        raise ValueError(f"unknown reference syntax {unknown[0]!r}: expected one of "
                         f"{', '.join(SYNTAXES)}, 'all' or 'none'")
    return tuple(n for n in SYNTAXES if n in names)


def references_in(arguments: Any, syntaxes: tuple[str, ...] = SYNTAXES) -> list[Found]:
    """Every reference in one of ``syntaxes`` (and, when there is one, every placeholder)
    inside ``arguments`` (JSON data, nested at most :data:`MAX_DEPTH` deep), in document
    order. With no syntax, no string is a reference."""
    found: list[Found] = []
    if not syntaxes:
        return found
    if isinstance(arguments, str):
        _look_at(arguments, "", found, syntaxes)
    elif isinstance(arguments, dict | list):
        _walk(arguments, "", found, syntaxes)
    return found


def _walk(value: dict[str, Any] | list[Any], pointer: str, found: list[Found],
          syntaxes: tuple[str, ...]) -> None:
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(item, str):
            if _MAYBE.search(item):  # a pointer is built only for a value that needs one
                _look_at(item, f"{pointer}/{escape_pointer(str(key))}", found, syntaxes)
        elif isinstance(item, dict | list):
            _walk(item, f"{pointer}/{escape_pointer(str(key))}", found, syntaxes)


def _look_at(text: str, pointer: str, found: list[Found], syntaxes: tuple[str, ...]) -> None:
    if _MAYBE.search(text):
        match = parse(text, syntaxes)
        if match is not None:
            found.append(Found(pointer, text, match))


def path_tokens(key: str) -> tuple[str | int, ...]:
    """``("entities", 0, "name")`` for ``entities[0].name``."""
    tokens: list[str | int] = []
    for match in _PATH_TOKEN.finditer(key):
        tokens.append(int(match.group(1)) if match.group(1) is not None else match.group(0))
    return tuple(tokens)


def value_in(result: Any, tokens: tuple[str | int, ...]) -> Any:
    """The value at ``tokens`` inside a recorded result (:data:`MISSING` when absent)."""
    for token in tokens:
        if isinstance(result, dict) and isinstance(token, str):
            if token not in result:
                return MISSING
            result = result[token]
        elif isinstance(result, list) and isinstance(token, int) and token < len(result):
            result = result[token]
        else:
            return MISSING
    return result


def replaced(arguments: Any, pointer: str, value: Any) -> Any:
    """A copy of ``arguments`` with the member at ``pointer`` replaced (copies on the way)."""
    if not pointer:
        return value
    head, _, rest = pointer[1:].partition("/")
    token = unescape_token(head)
    if isinstance(arguments, dict):
        copy = dict(arguments)
        copy[token] = replaced(arguments.get(token), "/" + rest if rest else "", value)
        return copy
    if isinstance(arguments, list) and token.isdigit() and int(token) < len(arguments):
        items = list(arguments)
        items[int(token)] = replaced(items[int(token)], "/" + rest if rest else "", value)
        return items
    return arguments
