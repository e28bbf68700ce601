"""MCP's stdio framing, read strictly: one JSON-RPC message a ``\\n``-terminated line.

What the proxy forwards to a server has to be what its guard read, byte for byte in meaning,
whatever parser the server uses. So a line is read once, strictly (valid UTF-8, one JSON value
with only JSON's own whitespace around it, no ``NaN``/``Infinity``, no number too large for a
float, nested no deeper than Python's parser goes), and what is forwarded is that value
encoded again: compact, ASCII only (every non-ASCII character, ``\\r`` and U+2028 escaped, so
no reader splits it differently), each repeated key once (the last value, as it was read).
A line that is not read this way is refused, never forwarded. (msgspec reads and writes
first, 2-4 times faster than the standard library; what it refuses, json.loads decides: the
two read every JSON text they both accept into the same values, see
:mod:`plancheck.fast_json`.)

Lines are bounded: :class:`LineReader` returns at most ``limit`` bytes, and a longer line is
skipped without being held.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from typing import Any, Final

import msgspec

__all__ = ["EOF", "LineReader", "ParseFailure", "encode", "encode_read", "parse", "widen_pipe",
           "write_all"]

EOF: Final = b""


_NEWLINE: Final = ord("\n")
_CHUNK = 1 << 16
_PIPE_SIZE = 1 << 20
_DOUBLED: Final = 1 << 20  # a read buffer grows to twice its size below this, less above
_KEPT: Final = 16 << 20  # a read buffer larger than this is not kept between lines
_fast_decode: Final = msgspec.json.Decoder().decode
_encoder: Final = msgspec.json.Encoder()
_fast_encode: Final = _encoder.encode
_PRESIZED: Final = 1 << 20  # a line this long has its value written into a buffer of its size
_buffers = threading.local()  # each thread's buffer for large messages (encode_read)
_KEPT_ENCODED: Final = 2 << 20  # the largest such buffer kept


class ParseFailure(ValueError):
    """A line that is not one JSON value (the reason, for a JSON-RPC parse error)."""


class LineReader:
    """The lines of a file descriptor, read with ``os.readv`` into one buffer that is kept
    (no buffered file object: a thread blocked in one would hold its lock when the interpreter
    exits, which aborts it). A line is handed out as a view of that buffer, valid until the
    next call, so a large line is neither read into pieces nor copied out of them. A buffer
    grown past :data:`_KEPT` for a larger line is let go of once that line is read, so what
    stays held is bounded."""

    def __init__(self, fd: int, limit: int) -> None:
        self.fd = fd
        self.limit = limit
        self._buffer = bytearray(_CHUNK)
        self._start = self._end = 0  # the bytes read and not handed out yet
        self._line: memoryview | None = None
        widen_pipe(fd)

    def _let_go(self) -> None:
        """Ends the view handed out last (the buffer cannot move while one is out)."""
        if self._line is not None:
            self._line.release()
            self._line = None
        if self._start == self._end:
            self._start = self._end = 0
            if len(self._buffer) > _KEPT:
                self._buffer = bytearray(_CHUNK)

    def _fill(self) -> bool:
        """Reads what is there into the buffer after what it holds (moving that to the
        front, or growing it, when it is full); False at the end of the input."""
        self._let_go()
        buffer = self._buffer
        if self._end == len(buffer):
            if self._start > 0:
                held = self._end - self._start
                buffer[:held] = buffer[self._start:self._end]
                self._start, self._end = 0, held
            else:  # twice the size up to 1 MiB, by half up to _KEPT, then by a quarter:
                # what is held stays near the line's size (an 8 MB line held 16 MB, each
                # byte of it written, when the buffer doubled)
                buffer += bytes(len(buffer) if len(buffer) < _DOUBLED else
                                len(buffer) // 2 if len(buffer) < _KEPT else len(buffer) // 4)
        with memoryview(buffer) as view:
            count = os.readv(self.fd, [view[self._end:]])
        self._end += count
        return count > 0

    def read_line(self) -> memoryview | None:
        """The next line (with its ``\\n``), a last line without one, an empty view at the
        end, or None as soon as the line holds more than ``limit`` bytes (the rest of it
        unread: :meth:`skip_line` skips it). The view is valid until the next call."""
        self._let_go()
        scanned = 0  # bytes after _start that hold no newline (_fill may move them)
        while True:
            end = self._buffer.find(b"\n", self._start + scanned, self._end)
            if (end if end >= 0 else self._end) - self._start > self.limit:
                return None
            if end >= 0:
                return self._hand_out(end + 1)
            scanned = self._end - self._start
            if not self._fill():
                return self._hand_out(self._end)

    def _hand_out(self, end: int) -> memoryview:
        self._line = memoryview(self._buffer)[self._start:end]
        self._start = end
        return self._line

    def skip_line(self) -> None:
        """Reads to the end of the current line, holding none of it."""
        while True:
            end = self._buffer.find(b"\n", self._start, self._end)
            if end >= 0:
                self._start = end + 1
                return
            self._start = self._end
            if not self._fill():
                return


def widen_pipe(fd: int) -> None:
    """A pipe of 1 MiB rather than 64 KiB where Linux allows it: a large message then crosses
    in 16 times fewer wake-ups of the reader (a proxy reads a message whole before it sends it
    on, so these add up)."""
    with contextlib.suppress(OSError, AttributeError, ValueError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """All of ``data`` to ``fd``, as a line (its ``\\n`` added when missing); OSError when
    ``fd`` is closed."""
    with memoryview(data) as whole:
        view = whole
        while view:
            view = view[os.write(fd, view):]
        if not whole or whole[-1] != _NEWLINE:
            os.write(fd, b"\n")


def _no_constant(name: str) -> Any:
    raise ParseFailure(f"`{name}` is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ParseFailure(f"the number {text[:40]} is too large")
    return value


def parse(line: bytes | memoryview) -> Any:
    """The JSON value of one line (its ``\\n`` and JSON whitespace around it allowed);
    raises :class:`ParseFailure` saying why it is not one."""
    if not line or line[-1] != _NEWLINE:
        raise ParseFailure("the message does not end with a newline")
    try:
        return _fast_decode(line)
    except (ValueError, RecursionError):  # refused: json.loads gives the answer, or the reason
        pass
    try:
        text = str(line, "utf-8")
    except UnicodeDecodeError as error:
        raise ParseFailure(f"the message is not valid UTF-8 (byte {error.start})") from None
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise ParseFailure("the message is nested too deeply to be read") from None
    except ParseFailure:
        raise
    except ValueError as error:
        raise ParseFailure(f"the message is not JSON ({error})") from None


def encode_read(value: Any, size: int) -> bytes | bytearray:
    """:func:`encode` of a value read from a line of ``size`` bytes: a large one is written
    into a buffer of about that length, where msgspec would grow its own by half at a time
    (12 MB for an 8 MB message; 8.5 MB so). That buffer is the calling thread's, kept for its
    next large message (up to :data:`_KEPT_ENCODED`): a new one is filled with zeros and each
    of its pages faulted in: a fifth of the proxy's CPU time on a 1 MB call (no gain was
    measured at 2-8 MB, where a kept buffer would count against the proxy's memory bound).
    What is returned is valid until the thread's next call."""
    if size < _PRESIZED:
        return encode(value)
    wanted = size + size // 16 + 256
    buffer: bytearray | None = getattr(_buffers, "buffer", None)
    if buffer is None or wanted > _KEPT_ENCODED:
        buffer = bytearray(wanted)
        if wanted <= _KEPT_ENCODED:
            _buffers.buffer = buffer
    elif len(buffer) < wanted:  # (grown to it: msgspec would grow it by half)
        buffer += bytes(wanted - len(buffer))
    try:
        _encoder.encode_into(value, buffer)
    except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
        return _escaped(value)  # (a lone surrogate, which json.dumps escapes)
    return buffer if buffer.isascii() else _escaped(value)


def encode(value: Any) -> bytes:
    """``value`` as one line of MCP's stdio transport (ASCII, compact), without its ``\\n``
    (the writer adds it: joining it here would copy a large message once more)."""
    try:
        fast = _fast_encode(value)
    except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
        fast = None  # (a lone surrogate, which json.dumps escapes)
    if fast is not None and fast.isascii():
        return fast
    return _escaped(value)


def _escaped(value: Any) -> bytes:
    """``value`` as compact JSON with every non-ASCII character escaped."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode(
        "ascii")
