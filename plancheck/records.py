"""Record classes: equality, ``repr``, hashing and :func:`replace` derived from a field list.

The classes every command loads at start-up (the IR, diagnostics, the checker's tables) are
plain slotted classes with a hand-written ``__init__`` over this base, not dataclasses. A
dataclass is built at import time by compiling its generated methods (about 0.4 ms a class)
and ``dataclasses`` imports ``inspect``: for the 32 classes on the path of ``plancheck
FILE`` that was about 27 ms of a command that should take under 80 ms (measured in
issue 15). The base adds nothing per instance and no generated code; ``__init__`` stays a
plain Python function, as fast as a dataclass's.

A subclass names its fields in ``_fields`` (the ``__init__`` parameters, in order: what
``repr`` shows and :func:`replace` carries over) and, when some are not part of its value,
the compared ones in ``_compared``. :class:`FrozenRecord` is hashable; its instances are
treated as immutable: nothing assigns to them after ``__init__`` (unlike a frozen dataclass,
nothing stops it at run time either; the hot paths construct too many to pay for the check).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, ClassVar, TypeVar

__all__ = ["FrozenRecord", "Record", "replace"]

R = TypeVar("R", bound="Record")


def _no_fields(_: object) -> tuple[()]:
    return ()


class Record:
    """A mutable record: equal to another of the very same class with equal compared fields;
    unhashable, as a dataclass with ``eq=True`` is."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _compared: ClassVar[tuple[str, ...] | None] = None  # None: every field
    _key: ClassVar[Callable[[Any], Any]] = _no_fields

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        compared = cls._fields if cls._compared is None else cls._compared
        # attrgetter reads all compared fields in one C call: equality and hashing stay cheap.
        cls._key = attrgetter(*compared) if compared else _no_fields

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        key = type(self)._key
        return bool(key(self) == key(other))

    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"


class FrozenRecord(Record):
    """An immutable record: also hashable, by its compared fields."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]  # (Record says unhashable)
        return hash(type(self)._key(self))


def replace(record: R, /, **changes: Any) -> R:
    """A copy of ``record`` with some fields changed (what ``dataclasses.replace`` does: the
    copy is built by ``__init__``, so whatever it derives is derived afresh)."""
    fields = record._fields
    unknown = changes.keys() - set(fields)
    if unknown:
        raise TypeError(f"{type(record).__qualname__} has no field {sorted(unknown)[0]!r}")
    return type(record)(**{name: changes[name] if name in changes else getattr(record, name)
                           for name in fields})
