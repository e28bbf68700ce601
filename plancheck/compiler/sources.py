"""One input (a file, or ``-`` for standard input) read into plan units: within its size limit
whole, by :func:`~plancheck.compiler.frontends.parse_source`; a JSONL batch or an input over
the limit by :mod:`plancheck.compiler.streaming`."""

from __future__ import annotations

from plancheck.compiler.frontends import parse_source, read_text
from plancheck.compiler.streaming import open_limited
from plancheck.compiler.units import SourceFile
from plancheck.formats.sniff import file_kind

__all__ = ["load_source"]


def load_source(path: str, *, strict: bool = False, kind: str | None = None,
                max_size: int | None = None, stdin_name: str | None = None) -> SourceFile:
    """Read one file (``-`` for standard input) into plan units.

    With ``max_size`` (bytes), a JSONL batch is read a record at a time (its units come
    lazily, in ``SourceFile.stream``, and no record larger than ``max_size`` is read), and any
    other input larger than ``max_size`` is refused with a ``PC006`` instead of being read.

    ``stdin_name`` (``--stdin-filename``) is the name standard input is read as: its suffix
    picks the rules a file of that name is read by, and diagnostics name it."""
    name = stdin_name if path == "-" and stdin_name else path
    display = "<stdin>" if name == "-" else name
    if max_size is not None and kind is None:
        opened = open_limited(path, display, strict=strict, max_size=max_size, name=name)
        if opened is not None:
            return opened
    text, error = read_text(path)
    if text is None:
        assert error is not None
        return SourceFile(display, diagnostics=[error.with_context(file=display, record=None)])
    return parse_source(text, display, strict=strict, kind=kind or file_kind(name, text))
