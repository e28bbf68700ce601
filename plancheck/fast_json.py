"""``json.loads``, about twice as fast on the texts plancheck reads most.

Parsing is the largest single cost of scoring a completion, and the standard library's decoder
runs at a fixed speed. msgspec's decoder reads the same JSON into the same Python values, about
2.5 times faster, but it refuses a few things ``json.loads`` accepts: the constants ``NaN``,
``Infinity`` and ``-Infinity``, numbers too large for a float (``1e400``, which ``json.loads``
reads as infinity), escaped lone surrogates (``"\\ud800"``) and raw ones in the text. On
everything it accepts it agrees with ``json.loads`` value for value: the same types (an int
stays an int however long, ``1.0`` and ``1e5`` are floats), the same correctly rounded floats,
the same key order, and the last value of a repeated key in the first key's place. So
:func:`loads` asks msgspec first and hands every text it refuses to ``json.loads``, whose answer,
or error, then stands. ``tests/test_fast_json.py`` checks the agreement on generated values,
texts and damaged texts.

Readers that only need to know whether a text parses use :func:`loads_or_invalid`: a text
msgspec finds malformed is only handed on when it holds what json.loads reads and msgspec does
not (a ``NaN`` or ``Infinity`` constant, a ``\\u`` escape that may be a lone surrogate); else
json.loads would fail too, and building its error message costs as much as parsing.

msgspec is imported on the first call (it costs ~9 ms, which a one-file lint does not need).

The other way, :func:`dumps_plain` writes what ``json.dumps`` writes for the plain values plans
are made of (strings, integers, null, booleans, arrays and string-keyed objects), without the
encoder's per-value dispatch (its indented output comes from a pure-Python encoder, several
times slower): scoring writes tens of thousands of such values.
"""


from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

__all__ = ["INVALID", "dumps_plain", "loads", "loads_or_invalid"]

_STANDARD: Final = json.loads


class _Invalid:
    """What :func:`loads_or_invalid` returns for a text json.loads cannot read."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "INVALID"


INVALID: Final = _Invalid()


def _first_decode(text: str) -> Any:
    global _DECODE, _MALFORMED  # noqa: PLW0603 - replaced on first use
    try:
        import msgspec
    except ImportError:  # (a declared dependency; without it, json.loads does all the work)
        _DECODE = _STANDARD
        return _DECODE(text)

    _DECODE = msgspec.json.Decoder().decode
    # Malformed JSON, exactly (its subclass ValidationError is a number out of range).
    _MALFORMED = msgspec.DecodeError
    return _DECODE(text)


class _NotYet(Exception):
    """Stands for msgspec's DecodeError until msgspec is imported."""


_DECODE: Callable[[str], Any] = _first_decode
_MALFORMED: type[Exception] = _NotYet


def loads(text: str) -> Any:
    """Exactly ``json.loads(text)``: the same value, or the same exception."""
    try:
        return _DECODE(text)
    except Exception:  # refused: the standard decoder decides (and raises its own error)
        return _STANDARD(text)


def loads_or_invalid(text: str) -> Any:
    """``json.loads(text)``, or :data:`INVALID` where json.loads raises (ValueError or
    RecursionError)."""
    try:
        return _DECODE(text)
    except _MALFORMED as error:
        if type(error) is _MALFORMED and not (
            "NaN" in text or "Infinity" in text or "\\u" in text
        ):
            return INVALID  # malformed for json.loads too
    except Exception:  # refused for another reason: json.loads decides
        pass
    try:
        return _STANDARD(text)
    except (ValueError, RecursionError):
        return INVALID


def dumps_plain(value: Any, *, indent: int | None = None, ensure_ascii: bool = True,
                max_depth: int = 64) -> str | None:
    """``json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)`` for a plain value
    (strings, integers, null, booleans, arrays and string-keyed objects, nested at most
    ``max_depth`` containers deep); None for anything else, which is then left to
    ``json.dumps``. ``tests/test_fast_json.py`` checks it against json.dumps."""
    string = json.encoder.encode_basestring_ascii if ensure_ascii else \
        json.encoder.encode_basestring
    if indent is None:
        return _plain(value, string, None, "", max_depth)
    return _plain(value, string, " " * indent, "\n", max_depth)


def _plain(value: Any, string: Callable[[str], str], indent: str | None, newline: str,
           depth: int) -> str | None:
    # (newline: a newline and the indentation of value's own level, when indented.)
    kind = type(value)
    if kind is str:
        return string(value)
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if depth <= 0 or (kind is not list and kind is not dict):
        return None
    inner = newline + indent if indent is not None else ""
    parts: list[str] = []
    if kind is list:
        for item in value:
            text = _plain(item, string, indent, inner, depth - 1)
            if text is None:
                return None
            parts.append(text)
        opening, closing = "[", "]"
    else:
        for key, item in value.items():
            text = _plain(item, string, indent, inner, depth - 1)
            if text is None or type(key) is not str:
                return None
            parts.append(string(key) + ": " + text)
        opening, closing = "{", "}"
    if indent is None:
        return opening + ", ".join(parts) + closing
    if not parts:
        return opening + closing
    return opening + inner + ("," + inner).join(parts) + newline + closing
