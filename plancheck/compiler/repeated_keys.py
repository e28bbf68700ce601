"""JSON objects that hold one key twice: ``{"agent": "Nope", "agent": "GeoChat"}`` reads as
GeoChat (the last value wins, in every JSON reader plancheck agrees with), so a plan that looks
wrong can pass; each such key is a ``PC118`` warning, with or without ``--strict-json``.

The keys are noted while the text is read (a hook on every object, which costs less than a
second reading would), wherever a JSON document or a JSONL record is read whole.
"""

from __future__ import annotations

import json
import re
from typing import Any

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.positions import LineIndex
from plancheck.diagnostics.span import Span


def loads_noting_repeats(text: str | bytes) -> tuple[Any, list[str]]:
    """``json.loads(text)`` (the same value, or the same exception), and the keys that some
    object of it holds more than once, in the order met."""
    found: list[str] = []

    def object_of(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        value = dict(pairs)
        if len(value) < len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen and key not in found:
                    found.append(key)
                seen.add(key)
        return value

    return json.loads(text, object_pairs_hook=object_of), found


# What a PC118 on arguments written as JSON text says (the guard's and check's alike).
ARGUMENTS_HELP = ("JSON readers keep the last value of a repeated key, some the first: write "
                  "each key once")


def twice_in_arguments(key: str) -> str:
    """The message of a PC118 on a key an object of a call's arguments text repeats."""
    return f"the key `{key}` appears twice in one object of the arguments; only its last " \
        "value is read"


_FEW_KEYS = 32  # keys of a call's arguments looked for in its text one by one


def arguments_noting_repeats(text: str | bytes) -> tuple[Any, list[str]]:
    """:func:`loads_noting_repeats` of a call's arguments written as JSON text, read by the
    C reader alone in the common case where no key can be repeated: one object of a few keys
    and no object inside, in a text without a backslash (a key may be spelled with escapes),
    whose keys each occur once in it, quoted (a key the object repeats occurs twice). A guard
    reads every call's arguments: the hook on every object made reading them 2.5 times as
    long."""
    if isinstance(text, bytes) or "\\" in text:
        return loads_noting_repeats(text)
    value = json.loads(text)
    if type(value) is dict:
        if len(value) > _FEW_KEYS or any(type(member) is dict or type(member) is list
                                         for member in value.values()):
            return loads_noting_repeats(text)
        for key in value:
            if text.count('"' + key + '"') > 1:
                return loads_noting_repeats(text)
    elif type(value) is list:
        return loads_noting_repeats(text)
    return value, []


def repeated_keys(text: str) -> list[str]:
    """The keys that some object of the JSON ``text`` repeats (none when it is not JSON)."""
    try:
        return loads_noting_repeats(text)[1]
    except (ValueError, RecursionError):
        return []


def repeated_key_diagnostics(keys: list[str], text: str, file: str, lines: LineIndex,
                             start: int = 0) -> list[Diagnostic]:
    """A ``PC118`` for each of the repeated ``keys`` of the JSON ``text``, which starts at
    offset ``start`` of ``lines``; each points at the key's second occurrence in the text."""
    diagnostics = []
    for key in keys:
        spelled = json.dumps(key)
        matches = list(re.finditer(re.escape(spelled) + r"\s*:", text))
        where = matches[1].start() if len(matches) > 1 else 0
        line, col = lines.position(start + where)
        diagnostics.append(make(
            "PC118", f"the key `{key}` appears twice in one object; only its last value is read",
            primary=Span(file, line, col, line, col + len(spelled), start_offset=start + where,
                         end_offset=start + where + len(spelled)),
            label="again" if len(matches) == 2 else "repeated (here, or later in the text)",
            help=["JSON readers keep the last value of a repeated key: write each key once"],
            data={"key": key}))
    return diagnostics
