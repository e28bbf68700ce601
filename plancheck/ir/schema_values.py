"""Whether a Python value is JSON data a schema validator can decide.

A guard hands a call's arguments to the validator as Python values. What JSON cannot hold
(``bytes``, a ``set``, a string with a lone surrogate, NaN or an infinity, a value that
contains itself, an integer longer than the validator reads) makes ``jsonschema-rs`` raise,
or read the value as ``null``, or stop looking: each would decide the call on something else
than its arguments. :func:`json_problem` says what is wrong, and where, before the validator
runs, so the guard refuses such a call with that reason (it fails closed).
"""

from __future__ import annotations

import math
from typing import Any

from plancheck.diagnostics.span import escape_pointer

__all__ = ["MAX_INT_BITS", "json_problem"]

# jsonschema-rs reads an integer through its decimal text, which Python refuses past 4,300
# digits (``sys.get_int_max_str_digits``): a longer one reaches the schema as ``null``.
MAX_INT_BITS = 14_000  # about 4,214 decimal digits


def json_problem(value: Any, max_depth: int = 64) -> tuple[str, str] | None:
    """``(pointer, why)`` for the first member of ``value`` that is not JSON data (or nested
    deeper than ``max_depth``), ``None`` when all of it is."""
    if type(value) is dict and all(type(k) is str and _plain(v) for k, v in value.items()):
        return None  # the common case: an object of plain values, settled in one pass
    return _problem(value, "", 0, max_depth, set())


def _plain(value: Any) -> bool:
    """Whether ``value`` is certainly JSON with nothing inside to look at."""
    kind = type(value)
    if kind is str:
        return bool(value.isascii())
    if kind is int:
        return bool(-_SMALL < value < _SMALL)
    if kind is float:
        return math.isfinite(value)
    return kind is bool or value is None


_SMALL = 1 << 64


def _problem(value: Any, pointer: str, depth: int, max_depth: int,
             inside: set[int]) -> tuple[str, str] | None:
    kind = type(value)
    if kind is str or isinstance(value, str):
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as error:
                code = ord(value[error.start])
                return pointer, (f"the string holds a lone surrogate (U+{code:04X} at character "
                                 f"{error.start}), which JSON text cannot carry")
        return None
    if kind is bool or value is None:
        return None
    if kind is int or isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            return pointer, (f"the integer has about {int(value.bit_length() * 0.30103):,} "
                             "digits, more than the validator reads")
        return None
    if kind is float or isinstance(value, float):
        if not math.isfinite(value):
            return pointer, f"{value!r} is not a JSON number (JSON has no NaN or Infinity)"
        return None
    if isinstance(value, dict | list | tuple):
        if depth >= max_depth:
            return pointer, f"the value is nested more than {max_depth} levels deep"
        if id(value) in inside:
            return pointer, "the value contains itself (a cycle), which JSON cannot hold"
        inside.add(id(value))
        try:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if not isinstance(key, str | int):
                    return pointer, (f"the key {key!r} is a {type(key).__name__}; JSON "
                                     "object keys are strings")
                if isinstance(value, dict) and not isinstance(key, str):
                    return pointer, f"the key {key!r} is a number; JSON object keys are strings"
                if type(item) is str and item.isascii():
                    continue  # the common case, without a pointer built for it
                found = _problem(item, f"{pointer}/{escape_pointer(str(key))}", depth + 1,
                                 max_depth, inside)
                if found is not None:
                    return found
        finally:
            inside.discard(id(value))
        return None
    return pointer, f"a Python {type(value).__name__} is not a JSON value"
