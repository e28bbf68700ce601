"""Source spans: where in the user's file a value came from.

The bottom of the package: diagnostics, positions and the plan IR all carry spans, so this
module imports nothing from plancheck.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple


class Span(NamedTuple):
    """A region of a source file.

    Lines and columns are 1-based; ``end_col`` is exclusive. For JSON sources ``pointer`` is the
    RFC 6901 JSON pointer of the value the span covers. A span may be *unresolved* (line 0) when
    the fast path parsed the file without positions; the driver resolves the pointer lazily,
    only for spans that end up in a diagnostic. (A named tuple: plans create many spans, and
    tuples are the cheapest immutable records Python has.)
    """

    file: str
    start_line: int = 0
    start_col: int = 0
    end_line: int = 0
    end_col: int = 0
    pointer: str | None = None
    start_offset: int = -1
    end_offset: int = -1
    on_key: bool = False  # the span covers an object member's key rather than its value

    @property
    def resolved(self) -> bool:
        return self.start_line > 0

    def child(self, token: str | int) -> Span:
        """The unresolved span of a value below this one (by JSON pointer)."""
        if isinstance(token, int) or ("~" not in token and "/" not in token):
            return Span(self.file, 0, 0, 0, 0, f"{self.pointer or ''}/{token}")
        return Span(self.file, 0, 0, 0, 0, f"{self.pointer or ''}/{escape_pointer(token)}")

    def key(self) -> Span:
        """The unresolved span of the key of the member this span's pointer names."""
        return Span(self.file, 0, 0, 0, 0, self.pointer, -1, -1, True)


def escape_pointer(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer_tokens(pointer: str) -> list[str]:
    """The keys a JSON pointer names, unescaped (``/a~1b/0`` -> ``["a/b", "0"]``)."""
    return [unescape_token(token) for token in pointer.split("/")[1:]]


def unescape_token(token: str) -> str:
    """One token of a JSON pointer as the key it names (``a~1b`` -> ``a/b``)."""
    return token.replace("~1", "/").replace("~0", "~")


def value_at(value: Any, pointer: str) -> Any:
    """The member of ``value`` at a JSON pointer; None when there is none."""
    for token in pointer_tokens(pointer):
        if isinstance(value, Mapping):
            value = value.get(token)
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return None
    return value


NO_SPAN = Span("<unknown>")
