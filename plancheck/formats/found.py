"""A call as found in a document: what every call shape's reader returns."""

from __future__ import annotations

from typing import Any

from plancheck.diagnostics.span import escape_pointer
from plancheck.records import FrozenRecord

__all__ = ["FoundCall", "child"]


class FoundCall(FrozenRecord):
    """One call as written: where it is, its shape, its name and arguments (with pointers),
    and the (label, output key) pairs it declares."""

    __slots__ = ("arguments", "arguments_pointer", "labels", "name", "name_pointer",
                 "pointer", "shape")
    _fields = ("pointer", "shape", "name", "name_pointer", "arguments", "arguments_pointer",
               "labels")

    def __init__(self, pointer: str, shape: str, name: Any, name_pointer: str | None,
                 arguments: Any, arguments_pointer: str | None,
                 labels: tuple[tuple[str, str], ...] = ()) -> None:
        self.pointer = pointer
        self.shape = shape
        self.name = name
        self.name_pointer = name_pointer
        self.arguments = arguments
        self.arguments_pointer = arguments_pointer
        self.labels = labels


def child(pointer: str, token: str | int) -> str:
    return f"{pointer}/{escape_pointer(token)}"
