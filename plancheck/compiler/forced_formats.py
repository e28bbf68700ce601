"""Which tool-call shape and reference syntax the frontends read: detected (``None``, the
default) or forced by ``--call-format`` / ``--reference-syntax``.

Its own module, importing nothing of plancheck's: a frontend asks it on every input, and a
plain plan must not load the call-shape readers and reference syntaxes to do so
(``tests/cli/test_startup.py``); :mod:`plancheck.compiler.call_formats` names the choices.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_FORCED: ContextVar[tuple[str | None, str | None]] = ContextVar("plancheck_call_formats",
                                                                default=(None, None))


def forced_formats() -> tuple[str | None, str | None]:
    """The forced call format and reference syntax (``None``: detect)."""
    return _FORCED.get()


def force_formats(call_format: str | None, reference_syntax: str | None) -> None:
    """Read inputs so for the rest of this context (a worker process's, set once)."""
    _FORCED.set((call_format, reference_syntax))


@contextmanager
def forced(call_format: str | None, reference_syntax: str | None) -> Iterator[None]:
    """Read inputs with one call shape and/or one reference syntax (``None``: detect)."""
    token = _FORCED.set((call_format, reference_syntax))
    try:
        yield
    finally:
        _FORCED.reset(token)
