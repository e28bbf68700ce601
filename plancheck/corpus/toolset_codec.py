"""A toolset as plain JSON data and back, for the cache of the built-in pool.

Only data is written: numbers, strings, lists and tagged objects naming one of the IR classes
of :data:`CLASSES` with their constructor's arguments. Reading builds nothing else, so an
entry someone else wrote can at worst describe a wrong toolset (which the cache's key and
checksum reject), never run code, as a pickle could.
"""

from __future__ import annotations

from typing import Any

from plancheck.diagnostics.span import Span
from plancheck.ir.nodes import Family, Flow, Param, Toolset, ToolSignature, TypeDecl

__all__ = ["CLASSES", "CodecError", "decode", "encode"]

# The classes a toolset is made of (records: rebuilt from their ``_fields``, in order).
CLASSES: dict[str, Any] = {cls.__name__: cls for cls in (
    Toolset, ToolSignature, Param, TypeDecl, Family, Flow)}


class CodecError(ValueError):
    """The data is not a toolset this version wrote."""


def encode(value: Any) -> Any:
    """``value`` as JSON data (raises :class:`CodecError` on what it cannot write)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Span):
        return {"span": list(value)}
    if isinstance(value, tuple):
        return {"tuple": [encode(item) for item in value]}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return {"set": sorted((encode(item) for item in value), key=repr)}
    if isinstance(value, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    name = type(value).__name__
    if CLASSES.get(name) is type(value):
        return {"record": name, "fields": [encode(getattr(value, f)) for f in value._fields]}
    raise CodecError(f"cannot write a {name}")


def decode(data: Any) -> Any:
    """The value :func:`encode` wrote (raises :class:`CodecError` on anything else)."""
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise CodecError("not toolset data")
    if "span" in data:
        return Span(*_items(data["span"]))
    if "tuple" in data:
        return tuple(decode(item) for item in _items(data["tuple"]))
    if "set" in data:
        return {_hashable(decode(item)) for item in _items(data["set"])}
    if "dict" in data:
        pairs = _items(data["dict"])
        if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise CodecError("a malformed mapping")
        return {_hashable(decode(k)): decode(v) for k, v in pairs}
    cls = CLASSES.get(data.get("record"))  # type: ignore[arg-type]
    if cls is None:
        raise CodecError(f"not a toolset class: {data.get('record')!r}")
    fields = _items(data.get("fields"))
    if len(fields) != len(cls._fields):
        raise CodecError(f"{cls.__name__} has {len(cls._fields)} fields, not {len(fields)}")
    try:
        return cls(*(decode(item) for item in fields))
    except TypeError as error:
        raise CodecError(str(error)) from None


def _items(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise CodecError("a list was expected")
    return value


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise CodecError("an unhashable key") from None
    return value
