"""Reading recorded results for provenance: the marks of their leaves (the scalars a flow can
come from) that the indexes keep, pulled at C speed out of a result's compact JSON text
(msgspec) where it is a plain JSON tree and walked in Python where it is not; and the paths of
the leaves a lookup matched, by a walk that skips every part whose JSON text cannot hold them.

A string is marked by its JSON text (its escapes, no quotes, UTF-8): a leaf equal to a value
has the value's text, a leaf holding a value holds its text (escaping is per character).
Compact JSON text with no escaped quote has a quote only where a string starts or ends, so
split at its quotes it gives its strings (odd pieces) and, between them, its numbers.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Mapping
from itertools import compress, repeat
from operator import itemgetter
from typing import Any

import msgspec

from plancheck.dsl.policy_ast import PathKey

MAX_DEPTH = 64  # containers nested deeper are not read (a walk of them would never end)

Path = tuple[PathKey, ...]
_ENCODE = msgspec.json.Encoder().encode
# Outside its strings, compact JSON holds punctuation, true, false, null and numbers: with the
# literals removed, every byte that is in no number made a space, what is left are numbers.
_NOT_NUMBER = bytes(c if chr(c) in "0123456789.eE+-" else 32 for c in range(256))
_JSON_TEXT = (b'"{', b'"[')  # a string that may hold JSON: leaves reads into it
_CONTAINERS = frozenset({dict, list})
_FIRST = itemgetter(slice(0, 8))
_PLAIN = frozenset({dict, list, str, int, float, bool, type(None)})


def leaves(value: Any, path: Path = (), depth: int = 0) -> list[tuple[Path, Any]]:
    """Every scalar inside a JSON value with its path. A string that holds JSON (the text of an
    MCP result is often a JSON document) is read into as well. A container a Python value
    holds in several places is read at the first only: ``x = [x, x]`` forty times over is a
    value of 2**40 paths, which a walk of every path would never finish."""
    found: list[tuple[Path, Any]] = []
    _collect(value, path, depth, found, set(), None, None)
    return found


def matching(value: Any, match: Callable[[Any], bool], needle: bytes | None
             ) -> list[tuple[Path, Any]]:
    """The leaves of ``value`` (as :func:`leaves` lists them, in its order) that ``match``
    accepts. ``needle``: bytes the JSON text of any container holding such a leaf holds, so
    a container whose text lacks them (and holds no string that may be JSON) is skipped;
    ``value`` must then be a plain JSON tree (a part held many times over would be written
    as many times)."""
    found: list[tuple[Path, Any]] = []
    if needle is None or _may_hold([value], needle):
        _collect(value, (), 0, found, set(), match, needle)
    return found


def _collect(value: Any, path: Path, depth: int, found: list[tuple[Path, Any]],
             seen: set[int], match: Callable[[Any], bool] | None, needle: bytes | None) -> None:
    # Into a list, not a chain of generators: a call's arguments are read on every verdict.
    if depth > MAX_DEPTH:
        return
    if isinstance(value, Mapping | list):
        if id(value) in seen:
            return
        seen.add(id(value))
    if isinstance(value, Mapping):
        skip = _lacking(value.values(), needle) if needle is not None else _NONE
        for key, item in value.items():
            if depth < MAX_DEPTH and _plain_scalar(item):  # most members: no call for them
                if match is None or match(item):
                    found.append(((*path, str(key)), item))
            elif id(item) not in skip:
                _collect(item, (*path, str(key)), depth + 1, found, seen, match, needle)
    elif isinstance(value, list):
        skip = _lacking(value, needle) if needle is not None else _NONE
        for position, item in enumerate(value):
            if depth < MAX_DEPTH and _plain_scalar(item):
                if match is None or match(item):
                    found.append(((*path, position), item))
            elif id(item) not in skip:
                _collect(item, (*path, position), depth + 1, found, seen, match, needle)
    else:
        if match is None or match(value):
            found.append((path, value))
        if isinstance(value, str) and value[:1] in ("{", "[") and len(value) > 1:
            try:
                inner = json.loads(value)
            except (ValueError, RecursionError):
                return
            if needle is None or _may_hold([inner], needle):
                _collect(inner, path, depth + 1, found, seen, match, needle)


_NONE: frozenset[int] = frozenset()


def _lacking(members: Any, needle: bytes) -> set[int] | frozenset[int]:
    """The ids of the containers among ``members`` whose JSON text cannot hold a leaf that
    ``needle`` is the mark of: each written once, in C, not walked."""
    inside = [member for member in members if type(member) is dict or type(member) is list]
    if not inside:
        return _NONE
    try:
        texts = list(map(_ENCODE, inside))
    except (TypeError, ValueError, OverflowError, RecursionError):
        texts = [_encoded_or_needle(member, needle) for member in inside]
    return {id(member) for member, text in zip(inside, texts, strict=True)
            if needle not in text and _JSON_TEXT[0] not in text and _JSON_TEXT[1] not in text}


def _encoded_or_needle(value: Any, needle: bytes) -> bytes:
    try:
        return _ENCODE(value)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return needle  # (no JSON text to rule it out by: a lone surrogate)


def _may_hold(values: list[Any], needle: bytes) -> bool:
    return not _lacking(values, needle)


def _plain_scalar(value: Any) -> bool:
    """A scalar that is no JSON text to read into."""
    kind = type(value)
    if kind is str:
        return value[:1] not in ("{", "[") or len(value) < 2
    return kind is int or kind is float or kind is bool or value is None


def encoded(text: str) -> bytes | None:
    """``text`` as it is written inside a JSON string (its escapes; no quotes), in UTF-8;
    None for a lone surrogate, which has no JSON text."""
    try:
        return _ENCODE(text)[1:-1]
    except ValueError:  # (UnicodeEncodeError)
        return None


class Reading:
    """What the indexes keep of one recorded result: its JSON texts (the result's own and those
    of the JSON documents its strings hold; none when it has no JSON text), its strings (their
    JSON texts; each 8 or more bytes long also by its first 8 bytes, in ``starts``, 8 bytes a
    string, shorter ones padded with NUL, which no JSON text holds) and its numbers."""

    __slots__ = ("numbers", "plain", "starts", "strings", "texts", "whole")

    def __init__(self) -> None:
        self.texts: list[bytes] = []
        self.plain = True  # a tree of JSON values: its parts may be written as JSON text
        self.whole = True  # its texts hold every string it holds (none is a lone surrogate)
        self.strings: set[bytes] = set()
        self.numbers: set[float] = set()
        self.starts = b""


def read(value: Any) -> Reading:
    """The :class:`Reading` of a recorded result (what :func:`leaves` reads in it)."""
    found = Reading()
    if type(value) is str:
        text = encoded(value)
        if text is not None:
            found.texts.append(b'"' + text + b'"')
            found.strings.add(text)
            if value[:1] in ("{", "[") and len(value) > 1:
                _read_json_string(found, value)
            return _started(found)
    elif _plain_tree(value):
        try:
            text = _ENCODE(value)
        except (TypeError, ValueError, OverflowError, RecursionError):
            pass
        else:
            if _read_text(found, text):
                return _started(found)
    return _walked(value)


def _started(found: Reading) -> Reading:
    found.strings.discard(b"")
    found.strings.discard(b"\x00")  # (an empty key, marked)
    found.starts = b"".join(map(bytes.ljust, map(_FIRST, found.strings), repeat(8),
                                repeat(b"\x00")))
    return found


def _walked(value: Any) -> Reading:
    """The reading of a result that is no plain JSON tree, by walking it: its strings as JSON
    text, written together as its one text (none if one has no JSON text)."""
    found = Reading()
    found.plain = False
    strings = []
    textless = False
    for _, leaf in leaves(value):
        if isinstance(leaf, str):
            if leaf:
                text = encoded(leaf)
                if text is None:
                    textless = True
                else:
                    found.strings.add(text)
                    strings.append(leaf)
        elif isinstance(leaf, int | float) and not isinstance(leaf, bool):
            key = number_key(leaf)
            if key is not None:
                found.numbers.add(key)
    found.texts.append(_ENCODE(strings))
    found.whole = not textless
    return _started(found)


def number_key(value: int | float) -> float | None:
    """How numbers meet: 1 == 1.0 (as floats, so a very large int meets nothing)."""
    try:
        return float(value)
    except OverflowError:
        return None


def _plain_tree(value: Any) -> bool:
    """Whether ``value`` is a tree of dicts, lists and JSON scalars, no part held twice and
    no deeper than :data:`MAX_DEPTH`: its JSON text then holds exactly its leaves. Read a level
    at a time by ``gc.get_referents`` (the members of every container of a level in one call),
    no Python step per member."""
    if type(value) not in _CONTAINERS:
        return False
    level = [value]
    ids: set[int] = set()
    count = depth = 0
    while level:
        depth += 1
        count += len(level)
        ids.update(map(id, level))
        if len(ids) != count or depth > MAX_DEPTH:
            return False  # (a part held twice: its JSON text would repeat it)
        members = gc.get_referents(*level)
        kinds = set(map(type, members))
        if not kinds <= _PLAIN:
            return False
        level = list(compress(members, map(_CONTAINERS.__contains__, map(type, members))))
    return True


def _read_text(found: Reading, text: bytes) -> bool:
    """The strings and numbers of compact JSON ``text`` into ``found``; False when the text
    cannot be split at its quotes (an escaped quote)."""
    if b'\\"' in text:
        return False
    found.texts.append(text)
    # A key is followed by a colon: marked by a NUL before its closing quote, it is no string
    # an argument can have (a NUL in a string is written \u0000).
    pieces = text.replace(b'":', b'\x00":').split(b'"')
    strings = set(pieces[1::2])
    found.strings |= strings
    outside = b" ".join(pieces[0::2])
    if b"true" in outside or b"false" in outside or b"null" in outside:
        outside = outside.replace(b"true", b"").replace(b"false", b"").replace(b"null", b"")
    found.numbers.update(map(float, outside.translate(_NOT_NUMBER).split()))
    if _JSON_TEXT[0] in text or _JSON_TEXT[1] in text:
        for string in strings:
            if string[:1] in (b"{", b"[") and len(string) > 1 and not string.endswith(b"\x00"):
                _read_json_string(found, json.loads(b'"' + string + b'"'))
    return True


def _read_json_string(found: Reading, string: str) -> None:
    """A string that holds JSON: :func:`leaves` reads its values too."""
    try:
        inner = json.loads(string)
    except (ValueError, RecursionError):
        return
    if _plain_tree(inner):
        try:
            if _read_text(found, _ENCODE(inner)):
                return
        except (TypeError, ValueError, OverflowError, RecursionError):
            pass
    walked = _walked(inner)
    found.strings |= walked.strings
    found.numbers |= walked.numbers
    found.texts.extend(walked.texts)
    found.whole = found.whole and walked.whole
