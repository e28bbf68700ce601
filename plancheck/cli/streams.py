"""The standard streams, made safe to use whatever the process was started with.

A stream the shell closed (``plancheck - <&-``, ``>&-``) is ``None`` in Python; it is replaced
by a stand-in whose every read or write raises ``OSError`` (EBADF), which the commands already
report as ``PC001`` (exit 2). Text a stream's encoding cannot hold (an ASCII locale, a lone
surrogate) is written as a JSON-style ``\\uXXXX`` escape, which keeps JSON output valid and
reads the same in text.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import sys
from typing import Any, NoReturn

ESCAPE_ERRORS = "plancheck.json-escape"


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    escaped = []
    for char in error.object[error.start:error.end]:
        code = ord(char)
        if code > 0xFFFF:  # outside the BMP: a surrogate pair, as JSON spells it
            code -= 0x10000
            escaped.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            escaped.append(f"\\u{code:04x}")
    return "".join(escaped), error.end


class ClosedStream:
    """Stands in for a standard stream the process was started without."""

    encoding = "utf-8"
    errors = "strict"
    closed = False

    def __init__(self, name: str) -> None:
        self.name = f"<{name}>"
        self._what = name
        self.buffer = self

    def _refuse(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise OSError(errno.EBADF, f"standard {self._what} is closed")

    read = readline = readlines = read1 = readinto = write = writelines = fileno = _refuse

    def __iter__(self) -> NoReturn:
        self._refuse()

    def flush(self) -> None:
        """Nothing was written, so nothing is lost."""

    def isatty(self) -> bool:
        return False

    def readable(self) -> bool:
        return False

    def writable(self) -> bool:
        return False


def prepare_standard_streams() -> None:
    """Stand-ins for closed streams; escapes instead of encoding errors on output."""
    codecs.register_error(ESCAPE_ERRORS, _json_escape)
    if sys.stdin is None:
        sys.stdin = ClosedStream("input")
    if sys.stdout is None:
        sys.stdout = ClosedStream("output")
    if sys.stderr is None:
        sys.stderr = ClosedStream("error")
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors=ESCAPE_ERRORS)
