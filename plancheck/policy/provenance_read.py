"""Reading recorded results for provenance: a result's compact JSON text (msgspec, in C),
which lookups search before they walk the result, and the paths of the leaves (the scalars a
flow can come from) a lookup matched, by a walk that skips every part whose JSON text cannot
hold them.

A string is found by its JSON text (its escapes, no quotes, UTF-8): a leaf equal to a value
has the value's text, a leaf holding a value holds its text (escaping is per character). A
result that is no tree of JSON values (a part held twice, a tuple or an object that holds
containers) is walked instead, and its strings written as one JSON text.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Callable, Mapping
from itertools import compress, repeat
from operator import itemgetter, not_
from typing import Any

from plancheck.dsl.policy_ast import PathKey

MAX_DEPTH = 64  # containers nested deeper are not read (a walk of them would never end)
START = 8  # the bytes of a string's start
KEPT_TEXT = 1 << 20  # the JSON texts of a result longer than this are not kept once in the table

Path = tuple[PathKey, ...]
# msgspec's encoder, made when a first result is read: importing msgspec takes 30-45 ms,
# which a guard that has read nothing (its first verdict, a short session) need not pay.
_encoders: list[Any] = []  # (msgspec.json.Encoder, and its encode: the hot call, bound once)

Text = bytes | bytearray  # the JSON text of an argument's string (a long one: a bytearray)
LONG = 64 * 1024  # characters of an argument's string whose text is written in place


def _encoder() -> Any:
    if not _encoders:
        import msgspec

        encoder = msgspec.json.Encoder()
        _encoders.extend((encoder, encoder.encode))
    return _encoders[0]


def _encode(value: Any) -> bytes:
    if not _encoders:
        _encoder()
    encoded: bytes = _encoders[1](value)
    return encoded


# msgspec's decoder and the error it raises, made when a first JSON text is read.
_decoders: list[tuple[Callable[[str], Any], type[Exception]]] = []


def _decode(text: str) -> Any:
    """``json.loads(text)``, by msgspec's decoder (two to three times as fast) where it reads
    the text; what it refuses (NaN, 1e400, a lone surrogate's escape) ``json.loads`` reads as
    :func:`leaves` does, or raises as it does."""
    if not _decoders:
        import msgspec

        _decoders.append((msgspec.json.Decoder().decode, msgspec.DecodeError))
    decode, refused = _decoders[0]
    try:
        return decode(text)
    except refused:  # (its ValidationError too: out of range)
        return json.loads(text)

# Outside its strings, compact JSON holds punctuation, true, false, null and numbers: with the
# literals removed, every byte that is in no number made a space, what is left are numbers.
_NOT_NUMBER = bytes(c if chr(c) in "0123456789.eE+-" else 32 for c in range(256))
_JSON_TEXT = (b'"{', b'"[')  # a string that may hold JSON: leaves reads into it
_CONTAINERS = frozenset({dict, list})
_FIRST = itemgetter(slice(0, START))


def leaves(value: Any, path: Path = (), depth: int = 0) -> list[tuple[Path, Any]]:
    """Every scalar inside a JSON value with its path. A string that holds JSON (the text of an
    MCP result is often a JSON document) is read into as well. A container a Python value
    holds in several places is read at the first only: ``x = [x, x]`` forty times over is a
    value of 2**40 paths, which a walk of every path would never finish."""
    found: list[tuple[Path, Any]] = []
    _collect(value, path, depth, found, set(), None, None)
    return found


# How a walk skips parts: the needle their JSON text must hold, and whether a string in the
# value may hold JSON (whose leaves may be written with other escapes: a part holding such a
# string is read too).
Pruning = tuple[Text, bool]


def matching(value: Any, match: Callable[[Any], bool], needle: Text | None
             ) -> list[tuple[Path, Any]]:
    """The leaves of ``value`` (as :func:`leaves` lists them, in its order) that ``match``
    accepts. ``needle``: bytes the JSON text of any container holding such a leaf holds, so
    a container whose text lacks them (and holds no string that may be JSON) is skipped;
    ``value`` must then be a plain JSON tree (a part held many times over would be written
    as many times)."""
    found: list[tuple[Path, Any]] = []
    if needle is None:
        _collect(value, (), 0, found, set(), match, None)
        return found
    try:
        text = _encode(value)
    except (TypeError, ValueError, OverflowError, RecursionError):
        _collect(value, (), 0, found, set(), match, None)
        return found
    if _JSON_TEXT[0] in text or _JSON_TEXT[1] in text:
        _collect(value, (), 0, found, set(), match, (needle, True))
    elif needle in text:
        _collect(value, (), 0, found, set(), match, (needle, False))
    return found


def _collect(value: Any, path: Path, depth: int, found: list[tuple[Path, Any]],
             seen: set[int], match: Callable[[Any], bool] | None,
             pruning: Pruning | None) -> None:
    # Into a list, not a chain of generators: a call's arguments are read on every verdict.
    if depth > MAX_DEPTH:
        return
    if isinstance(value, Mapping | list):
        if id(value) in seen:
            return
        seen.add(id(value))
    if isinstance(value, Mapping):
        skip = _skipped(value.values(), pruning) if pruning is not None else _NONE
        for key, item in value.items():
            if depth < MAX_DEPTH and _plain_scalar(item):  # most members: no call for them
                if match is None or match(item):
                    found.append(((*path, str(key)), item))
            elif id(item) not in skip:
                _collect(item, (*path, str(key)), depth + 1, found, seen, match, pruning)
    elif isinstance(value, list):
        if pruning is not None and not pruning[1] and depth < MAX_DEPTH and value and \
                set(map(type, value)) <= _CONTAINERS:
            # (a list of objects, as records come: only the members whose text holds the
            # needle are visited, found in C)
            needle = pruning[0]
            for position in compress(range(len(value)), map(
                    bytes.__contains__, map(_encode, value), repeat(needle))):
                _collect(value[position], (*path, position), depth + 1, found, seen, match,
                         pruning)
            return
        skip = _skipped(value, pruning) if pruning is not None else _NONE
        for position, item in enumerate(value):
            if depth < MAX_DEPTH and _plain_scalar(item):
                if match is None or match(item):
                    found.append(((*path, position), item))
            elif id(item) not in skip:
                _collect(item, (*path, position), depth + 1, found, seen, match, pruning)
    else:
        if match is None or match(value):
            found.append((path, value))
        if isinstance(value, str) and value[:1] in ("{", "[") and len(value) > 1:
            try:
                inner = json.loads(value)
            except (ValueError, RecursionError):
                return
            if pruning is None or not _skipped([inner], pruning):
                _collect(inner, path, depth + 1, found, seen, match, pruning)


def _skipped(members: Any, pruning: Pruning) -> set[int] | frozenset[int]:
    needle, marks = pruning
    return _lacking(members, needle) if marks else _without(members, needle)


_NONE: frozenset[int] = frozenset()


def _without(members: Any, needle: Text) -> set[int] | frozenset[int]:
    """The ids of the containers among ``members`` whose JSON text lacks ``needle``, in a
    value none of whose strings holds JSON: each written once and searched, all in C."""
    inside = [member for member in members if type(member) is dict or type(member) is list]
    if not inside:
        return _NONE
    texts = list(map(_encode, inside))
    return set(map(id, compress(inside, map(not_, map(bytes.__contains__, texts,
                                                       repeat(needle))))))


def _lacking(members: Any, needle: Text) -> set[int] | frozenset[int]:
    """The ids of the containers among ``members`` whose JSON text cannot hold a leaf that
    ``needle`` is the mark of (nor a string that may hold JSON, whose leaves may be written
    with other escapes): each written once, in C, not walked."""
    inside = [member for member in members if type(member) is dict or type(member) is list]
    if not inside:
        return _NONE
    texts: list[Text]
    try:
        texts = list(map(_encode, inside))
    except (TypeError, ValueError, OverflowError, RecursionError):
        texts = [_encoded_or_needle(member, needle) for member in inside]
    return {id(member) for member, text in zip(inside, texts, strict=True)
            if needle not in text and _JSON_TEXT[0] not in text and _JSON_TEXT[1] not in text}


def _encoded_or_needle(value: Any, needle: Text) -> Text:
    try:
        return _encode(value)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return needle  # (no JSON text to rule it out by: a lone surrogate)


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
        return _encode(text)[1:-1]
    except ValueError:  # (UnicodeEncodeError)
        return None


def argument_text(text: str) -> Text | None:
    """:func:`encoded` of an argument's string, for its lookups. A long one is written into a
    buffer of its own length, whose quotes are dropped in place: one copy of the text, where
    slicing the quotes off a written ``bytes`` makes two (the lookups of an 8 MB argument
    took 19 MB beside it, which the MCP proxy's memory bound did not leave)."""
    if len(text) < LONG:
        return encoded(text)
    # (room for its quotes and some escapes: msgspec grows a buffer by half when it must)
    buffer = bytearray(len(text) + len(text) // 8 + 2)
    try:
        _encoder().encode_into(text, buffer)
    except ValueError:  # (UnicodeEncodeError: a lone surrogate)
        return None
    del buffer[-1]
    del buffer[0]  # (a bytearray drops its first bytes without moving the rest)
    return buffer


def number_key(value: int | float) -> float | None:
    """How numbers meet: 1 == 1.0 (as floats, so a very large int meets nothing)."""
    try:
        return float(value)
    except OverflowError:
        return None


class Reading:
    """What lookups search in one recorded result before they walk it: its JSON texts (its
    own, and those of the JSON documents its strings hold), and its strings and numbers once a
    lookup or the table of bits needs them."""

    __slots__ = ("_scalars", "dropped", "plain", "texts", "value", "whole")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.texts: list[bytes] = []
        self.plain = True  # a tree of JSON values: its parts may be written as JSON text
        self.whole = True  # its texts hold every string it holds (none is a lone surrogate)
        self.dropped = False  # its texts were let go (long, and in the table): not searched
        self._scalars: tuple[set[bytes], set[float]] | None = None

    def scalars(self) -> tuple[set[bytes], set[float]]:
        """The strings (their JSON texts) and numbers (as :func:`number_key` has them) of the
        result, keys and others that are not leaves among them at times (a lookup walks the
        result before it says a leaf is there)."""
        if self._scalars is None:
            self._scalars = _scalars_in(self)
        return self._scalars

    def listed(self) -> None:
        """The result is in the table of bits: what only the table needed is let go, and the
        texts of a long result (a lookup then walks it, reading its strings as they are, rather
        than keep a copy of megabytes as JSON)."""
        self._scalars = None
        if sum(map(len, self.texts)) > KEPT_TEXT:
            self.texts = []
            self.dropped = True


def read(value: Any) -> Reading:
    """The :class:`Reading` of a recorded result."""
    found = Reading(value)
    if type(value) is str:
        text = encoded(value)
        if text is not None:
            found.texts.append(b'"' + text + b'"')
            if value[:1] in ("{", "[") and len(value) > 1:
                _read_json_string(found, value)
            return found
    elif _plain_tree(value):
        try:
            text = _encode(value)
        except (TypeError, ValueError, OverflowError, RecursionError):
            pass
        else:
            found.texts.append(text)
            if _JSON_TEXT[0] in text or _JSON_TEXT[1] in text:
                for string in _json_strings(value, 0):
                    _read_json_string(found, string)
            return found
    found.plain = False
    strings = []
    for _, leaf in leaves(value):
        if isinstance(leaf, str) and leaf:
            if encoded(leaf) is None:
                found.whole = False
            else:
                strings.append(leaf)
    found.texts.append(_encode(strings))
    return found


def _json_strings(value: Any, depth: int) -> list[str]:
    """The strings of a plain JSON tree that may hold JSON (they start with a brace or a
    bracket), in the order :func:`leaves` reads them, not read into (:func:`read` reads each):
    a part whose JSON text holds no such string is skipped, its text written in C."""
    found: list[str] = []
    members = value.values() if type(value) is dict else value
    for member in members:
        kind = type(member)
        if kind is str:
            if _may_be_json(member) and depth < MAX_DEPTH:
                found.append(member)
        elif (kind is dict or kind is list) and depth < MAX_DEPTH:
            text = _encode(member)
            if _JSON_TEXT[0] in text or _JSON_TEXT[1] in text:
                found.extend(_json_strings(member, depth + 1))
    return found


def _may_be_json(leaf: Any) -> bool:
    return isinstance(leaf, str) and leaf[:1] in ("{", "[") and len(leaf) > 1


def _read_json_string(found: Reading, string: str) -> None:
    """A string that holds JSON: :func:`leaves` reads its values too, so lookups search the
    JSON text of its value as well (its strings may be written with other escapes)."""
    try:
        inner = _decode(string)
    except (ValueError, RecursionError):
        return
    reading = read(inner)
    found.texts.extend(reading.texts)
    found.whole = found.whole and reading.whole


def _plain_tree(value: Any) -> bool:
    """Whether ``value``'s JSON text can be written in time linear in its size: a tree of
    dicts and lists (no container held twice, which the text would repeat, 2**40 times for
    ``x = [x, x]`` forty times over), no deeper than :data:`MAX_DEPTH`. Read a level at a
    time: ``gc.get_referents`` gives the members of every container of a level in one call,
    and only the members the collector tracks (containers, not strings or numbers) are kept,
    in C. A tuple or an object holding containers makes it no tree (it is walked)."""
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
            return False
        level = list(filter(gc.is_tracked, gc.get_referents(*level)))
        if not set(map(type, level)) <= _CONTAINERS:
            return False
    return True


def _scalars_in(reading: Reading) -> tuple[set[bytes], set[float]]:
    """The strings (as JSON text) and numbers of a result. Compact JSON text has a quote only
    where a string starts or ends once its escaped quotes are masked (:func:`_masked`): split
    at its quotes, it gives its strings (the odd pieces; a key, followed by a colon, marked by
    a NUL before its closing quote, which no string's text holds: \\u0000) and, between them,
    its numbers (with the literals removed and every byte that is in no number made a space,
    what is left). A result's texts are its own and those of the JSON documents its strings
    hold, whose strings and numbers :func:`leaves` reads too."""
    if not reading.plain:
        strings: set[bytes] = set()
        numbers: set[float] = set()
        for _, leaf in leaves(reading.value):
            if isinstance(leaf, str):
                if leaf and (text := encoded(leaf)) is not None:
                    strings.add(text)
            elif isinstance(leaf, int | float) and not isinstance(leaf, bool) and \
                    (key := number_key(leaf)) is not None:
                numbers.add(key)
        return strings, numbers
    strings = set()
    numbers = set()
    for text in reading.texts:
        masked = _masked(text)
        pieces = masked.replace(b'":', b'\x00":').split(b'"')
        inside = pieces[1::2]
        strings.update(inside if masked is text else
                       [piece.translate(_UNMASK) for piece in inside])
        outside = b" ".join(pieces[0::2])
        outside = outside.replace(b"true", b"").replace(b"false", b"").replace(b"null", b"")
        numbers.update(map(float, outside.translate(_NOT_NUMBER).split()))
    return strings, numbers


# Inside a JSON string an escaped backslash and an escaped quote, each masked by two bytes of
# its own (compact JSON text holds no raw control byte): the text keeps its length, and a quote
# is left only where a string starts or ends. Unmasked byte for byte (a start cut at 8 bytes
# may keep half a pair).
_UNMASK = bytes({1: ord("\\"), 2: ord("\\"), 3: ord('"')}.get(c, c) for c in range(256))


def _masked(text: bytes) -> bytes:
    if b"\\" not in text:
        return text
    return text.replace(b"\\\\", b"\x01\x01").replace(b'\\"', b"\x02\x03")


def string_starts(reading: Reading) -> list[int]:
    """The first 8 bytes of each string of a result (as an int; a shorter one padded with
    NULs, which no JSON text of an argument holds), keys among them: cut at the quotes of its
    texts once their escaped quotes are masked (:func:`_masked`), in C."""
    starts = b"".join(b"".join(map(bytes.ljust, map(_FIRST, _masked(text).split(b'"')[1::2]),
                                   repeat(START), repeat(b"\x00")))
                      for text in reading.texts).translate(_UNMASK)
    return [int.from_bytes(starts[at:at + START], sys.byteorder)
            for at in range(0, len(starts), START)] if len(starts) < 64 else \
        memoryview(starts).cast("Q").tolist()
