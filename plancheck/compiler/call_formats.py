"""Which tool-call shape and reference syntax the frontends read: detected (the default), or
forced by ``--call-format`` / ``--reference-syntax``.

Kept apart from :mod:`plancheck.compiler.callshapes` so that a command can set it, and a
frontend ask it, without importing the call-shape readers (a plain plan never needs them).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from plancheck.compiler.refsyntax import SYNTAXES
from plancheck.formats.plugins import Choices
from plancheck.formats.shapes import CALL_SHAPES, call_shapes

# The tool-call shapes (plancheck.compiler.callshapes reads each) and the reference syntaxes
# (plancheck.compiler.refsyntax, SYNTAXES: its registry's names) that can be forced.
CALL_FORMATS = tuple(CALL_SHAPES)
__all__ = ["CALL_FORMATS", "SYNTAXES", "call_format_choices", "forced", "forced_formats"]


def call_format_choices() -> Choices:
    """What ``--call-format`` takes: ``auto``, the built-in shapes, then the plugins' (looked
    up only when a name is not built in)."""
    return Choices(("auto", *CALL_FORMATS), call_shapes)


_FORCED: ContextVar[tuple[str | None, str | None]] = ContextVar("plancheck_call_formats",
                                                                default=(None, None))


def forced_formats() -> tuple[str | None, str | None]:
    """The forced call format and reference syntax (``None``: detect)."""
    return _FORCED.get()


@contextmanager
def forced(call_format: str | None, reference_syntax: str | None) -> Iterator[None]:
    """Read inputs with one call shape and/or one reference syntax (``None``: detect)."""
    token = _FORCED.set((call_format, reference_syntax))
    try:
        yield
    finally:
        _FORCED.reset(token)
