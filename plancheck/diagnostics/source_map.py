"""Where each value of a JSON document lies in its text: a source map, fast.

The same map json-source-map computes (its keys: ``""`` for the root, then ``/``-joined raw
member names as written between the quotes, escapes kept, and array indices; of two equal keys
the later wins), as plain offsets ``(value_start, value_end, key_start, key_end)``, the ends
exclusive and the key offsets ``None`` for array elements and the root. One regular expression
finds the tokens and a stack tracks the pointers, so a large plan is mapped in a fraction of the
time json-source-map's character-by-character Python takes (which was most of the check of a
plan of thousands of steps). It is no validator: the text must be valid JSON (it is the text
that was parsed); a malformed one raises :class:`ValueError` or is mapped loosely. Imports
nothing from plancheck.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["Offsets", "lookup", "source_map"]

Offsets = tuple[int, int, int | None, int | None]  # value start/end, key start/end

_TOKEN: Final = re.compile(
    r'[ \t\n\r]*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([{}\[\],:])'
    r"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null|NaN|-?Infinity))",
    re.DOTALL,
)


class _Frame:
    """An open container."""

    __slots__ = ("index", "is_object", "key", "key_end", "key_start", "own_key", "pointer",
                 "start", "want_key")

    def __init__(self, pointer: str, start: int, is_object: bool,
                 own_key: tuple[int | None, int | None]) -> None:
        self.pointer = pointer
        self.start = start
        self.is_object = is_object
        self.own_key = own_key  # where the container's own member name is, if any
        self.index = 0  # the next array index
        self.key = ""  # the member whose value comes next
        self.key_start = 0
        self.key_end = 0
        self.want_key = is_object


def source_map(text: str) -> dict[str, Offsets]:
    """The source map of ``text`` (a valid JSON document)."""
    found: dict[str, Offsets] = {}
    match = _TOKEN.match
    stack: list[_Frame] = []
    position = 0
    while True:
        token = match(text, position)
        if token is None or token.lastindex is None:
            raise ValueError(f"not JSON at offset {position}")
        position = token.end()
        start = token.start(token.lastindex)
        string, punct = token.group(1), token.group(2)
        frame = stack[-1] if stack else None
        if punct in ("]", "}"):
            if frame is None:
                raise ValueError(f"unexpected {punct!r} at offset {start}")
            stack.pop()
            _put(found, frame.pointer, (frame.start, position, *frame.own_key))
            if not stack:
                break
            continue
        if punct == ",":
            if frame is None:
                raise ValueError(f"unexpected ',' at offset {start}")
            frame.want_key = frame.is_object
            continue
        if frame is not None and frame.want_key:
            if string is None:
                raise ValueError(f"expected a member name at offset {start}")
            frame.key, frame.key_start, frame.key_end = string[1:-1], start, position
            frame.want_key = False
            colon = match(text, position)
            if colon is None or colon.group(2) != ":":
                raise ValueError(f"expected ':' at offset {position}")
            position = colon.end()
            continue
        # A value, of the root, of an object member or of an array element.
        own_key: tuple[int | None, int | None] = (None, None)
        if frame is None:
            pointer = ""
        elif frame.is_object:
            pointer = f"{frame.pointer}/{frame.key}"
            own_key = (frame.key_start, frame.key_end)
        else:
            pointer = f"{frame.pointer}/{frame.index}"
            frame.index += 1
        if punct in ("[", "{"):
            stack.append(_Frame(pointer, start, punct == "{", own_key))
            continue
        if punct is not None:
            raise ValueError(f"unexpected {punct!r} at offset {start}")
        _put(found, pointer, (start, position, *own_key))
        if frame is None:
            break
    if text[position:].strip(" \t\n\r"):
        raise ValueError(f"extra data at offset {position}")
    return found


def _put(found: dict[str, Offsets], pointer: str, offsets: Offsets) -> None:
    found[pointer] = offsets  # a repeated member name: the later one wins


_SPACE: Final = re.compile(r"[ \t\n\r]*")
_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def lookup(text: str, pointer: str) -> Offsets | None:
    """The entry ``source_map(text)`` has for ``pointer`` (keyed as there), found without
    mapping the rest: members before and after it are skipped by counting brackets outside
    strings, which builds nothing. For one diagnostic on a large document (a plan refused at
    its root, a wrapper field) this takes a second where the whole map takes tens of seconds
    and gigabytes.
    None when the pointer is not in the text or the text is not JSON as the walk reads it."""
    try:
        return _lookup(text, pointer.split("/")[1:] if pointer else [])
    except (ValueError, IndexError, RecursionError):
        return None


def _lookup(text: str, tokens: list[str]) -> Offsets | None:
    start = _space(text, 0)
    own_key: tuple[int | None, int | None] = (None, None)
    for token in tokens:
        opener = text[start]
        if opener == "{":
            found = _member(text, start, token)
            if found is None:
                return None
            start, own_key = found
        elif opener == "[" and token.isdigit():
            element = _element(text, start, int(token))
            if element is None:
                return None
            start, own_key = element, (None, None)
        else:
            return None
    return (start, _end(text, start), *own_key)


def _member(text: str, start: int, key: str) -> tuple[int, tuple[int | None, int | None]] | None:
    """Where the value of member ``key`` of the object at ``start`` begins, and its key's
    offsets (the last of equal keys, as in the map)."""
    found: tuple[int, tuple[int | None, int | None]] | None = None
    position = _space(text, start + 1)
    if text[position] == "}":
        return None
    while True:
        name = _STRING.match(text, position)
        if name is None:
            raise ValueError(position)
        colon = _space(text, name.end())
        if text[colon] != ":":
            raise ValueError(colon)
        value = _space(text, colon + 1)
        if name.group()[1:-1] == key:
            found = (value, (name.start(), name.end()))
        position = _space(text, _end(text, value))
        if text[position] == "}":
            return found
        if text[position] != ",":
            raise ValueError(position)
        position = _space(text, position + 1)


def _element(text: str, start: int, index: int) -> int | None:
    """Where element ``index`` of the array at ``start`` begins."""
    position = _space(text, start + 1)
    if text[position] == "]":
        return None
    for _ in range(index):
        position = _space(text, _end(text, position))
        if text[position] != ",":
            return None
        position = _space(text, position + 1)
    return position


def _end(text: str, start: int) -> int:
    """Where the value at ``start`` ends: a container by counting brackets outside strings
    (nothing is built, however large it is), a scalar by its token."""
    if text[start] not in "[{":
        token = _TOKEN.match(text, start)
        if token is None or token.lastindex is None or token.group(2) is not None:
            raise ValueError(start)
        return token.end()
    depth = 0
    for found in _BRACKETS.finditer(text, start):
        bracket = found.group()
        if bracket in "[{":
            depth += 1
        elif bracket in "]}":
            depth -= 1
            if depth == 0:
                return found.end()
    raise ValueError(start)


def _space(text: str, position: int) -> int:
    """Past the JSON whitespace at ``position``."""
    found = _SPACE.match(text, position)
    assert found is not None  # the pattern matches the empty string
    return found.end()
