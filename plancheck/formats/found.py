"""A call as found in a document (what every call shape's reader returns), and what readers of
calls share: the output keys of "the whole output" and of the i-th output, and the one test of
a tool definition."""

from __future__ import annotations

from typing import Any, Final

from plancheck.diagnostics.span import escape_pointer
from plancheck.records import FrozenRecord

__all__ = ["WHOLE_OUTPUT", "FoundCall", "child", "is_definition", "plain_id", "positional_key"]

# The output key of "the whole output" of a call, and of its i-th positional output.
WHOLE_OUTPUT: Final = ""


def positional_key(index: int) -> str:
    return f"#{index}"


class FoundCall(FrozenRecord):
    """One call as written: where it is, its shape, its name and arguments (with pointers),
    the (label, output key) pairs it declares, the id its shape reads (``None``: none), and
    ``conflict``: another tool or other arguments the same object gives under a key some
    reader takes them from, as (that key's JSON pointer, a sentence saying so); ``None``: none."""

    __slots__ = ("arguments", "arguments_pointer", "call_id", "conflict", "labels", "name",
                 "name_pointer", "pointer", "shape")
    _fields = ("pointer", "shape", "name", "name_pointer", "arguments", "arguments_pointer",
               "labels", "call_id", "conflict")

    def __init__(self, pointer: str, shape: str, name: Any, name_pointer: str | None,
                 arguments: Any, arguments_pointer: str | None,
                 labels: tuple[tuple[str, str], ...] = (), call_id: str | None = None,
                 conflict: tuple[str, str] | None = None) -> None:
        self.pointer = pointer
        self.shape = shape
        self.name = name
        self.name_pointer = name_pointer
        self.arguments = arguments
        self.arguments_pointer = arguments_pointer
        self.labels = labels
        self.call_id = call_id
        self.conflict = conflict


def child(pointer: str, token: str | int) -> str:
    if type(token) is str and "~" not in token and "/" not in token:
        return f"{pointer}/{token}"  # (a shape's own keys: nothing to escape)
    return f"{pointer}/{escape_pointer(token)}"


def plain_id(found: Any) -> str | None:
    """An id as a call writes it (a non-empty string or an integer), as text; else None."""
    if type(found) is str:  # (the common case: no copy, no conversion)
        return found or None
    if isinstance(found, (str, int)) and not isinstance(found, bool) and str(found):
        return str(found)
    return None


def is_definition(item: dict[str, Any]) -> bool:
    """A tool definition (its parameters are a schema), not a call: the one test of it."""
    for key in ("parameters", "inputSchema", "input_schema"):
        schema = item.get(key)
        if isinstance(schema, dict) and (schema.get("type") in ("object", "dict")
                                         or isinstance(schema.get("properties"), dict)):
            return True
    return False
