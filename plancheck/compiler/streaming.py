"""Inputs under a size limit, and JSONL batches read a record at a time.

``plancheck check`` reads a JSONL batch one line at a time, so that checking a batch of any
size takes the memory of one record, and refuses (``PC006``) any single input - a plan file, a
completion, one record of a batch - larger than its size limit rather than reading it: the
repairs of damaged JSON are not all linear, and a damaged completion of tens of megabytes
could take minutes. Everything within the limit is read as before, by
:func:`~plancheck.compiler.sources.load_source`.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
import sys
from collections.abc import Iterator
from typing import IO

from plancheck.compiler.frontends import (
    empty_batch,
    jsonl_unit,
    not_plans,
    parse_source,
)
from plancheck.compiler.units import PlanUnit, SourceFile
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.positions import LineIndex, Positions
from plancheck.fileio import format_size, not_utf8
from plancheck.formats.records import JSONL_SUFFIXES
from plancheck.formats.sniff import file_kind, is_jsonl_batch

_BOM = codecs.BOM_UTF8
_CHUNK = 1 << 20


def too_large(display: str, size: int | None, limit: int, *,
              record: str | None = None) -> Diagnostic:
    """The ``PC006`` of an input (or one record of a batch) over the limit; ``size`` is None
    when it is not known (standard input is not read to its end)."""
    what = "the record" if record is not None else display
    amount = f" is {size:,} bytes," if size is not None else " is"
    return make(
        "PC006",
        f"{what}{amount} over the size limit of {format_size(limit)}; nothing in it was checked",
        help=[f"raise the limit with --max-size (e.g. --max-size {_raised(size, limit)})"],
        data={"path": display, "size": size, "limit": limit},
    ).with_context(file=display, record=record)


def _raised(size: int | None, limit: int) -> str:
    wanted = max(size or 0, limit * 4)
    megabyte = 1 << 20
    return format_size(-(-wanted // megabyte) * megabyte)


def open_limited(path: str, display: str, *, strict: bool, max_size: int,
                 name: str | None = None) -> SourceFile | None:
    """The input as a source whose JSONL records are read one at a time, or a source holding
    only a ``PC006`` when it is over ``max_size``; None when the input is to be read whole,
    as before (it is within the limit, cannot be opened - the whole read reports why - or
    is a JSONL file that is not all UTF-8, which the whole read reports the same way).
    ``name``: the name standard input is read as (its suffix picks the rules)."""
    if path == "-":
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:
            return None
        try:
            return _from_stream(buffer, name or path, display, strict=strict,
                                max_size=max_size, size=None)[0]
        except OSError:
            return None  # (closed: `- <&-`) the whole read reports why
    try:
        status = os.stat(path)
    except OSError:
        return None
    regular = stat.S_ISREG(status.st_mode)
    jsonl = path.lower().endswith(JSONL_SUFFIXES)
    if regular and not jsonl and status.st_size <= max_size:
        return None
    if regular and jsonl and not _all_utf8(path):
        return None
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed by the stream, or below
    except OSError:
        return None
    if regular and jsonl:
        return SourceFile(display, stream=_jsonl_stream(handle, b"", display, strict, max_size,
                                                        close=True))
    source, streaming = _from_stream(handle, path, display, strict=strict, max_size=max_size,
                                     size=status.st_size if regular else None, close=True)
    if not streaming:
        handle.close()
    return source


def _from_stream(handle: IO[bytes], path: str, display: str, *, strict: bool, max_size: int,
                 size: int | None, close: bool = False) -> tuple[SourceFile | None, bool]:
    """Standard input, a pipe, or a regular file known to be over the limit; and whether the
    source reads on from ``handle`` (a batch over the limit)."""
    # A file's size is known: read no more of it than tells a batch from a lone input.
    head = (_read_up_to(handle, max_size + 1) if size is None
            else _first_lines(handle, max_size + 1))
    if len(head) <= max_size and size is None:
        try:
            text = head.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            return SourceFile(display, diagnostics=[make(
                "PC001", f"cannot read {path}: {not_utf8(error)}; plans are read as UTF-8",
                data={"path": path, "error": not_utf8(error)},
            ).with_context(file=display, record=None)]), False
        return parse_source(text, display, strict=strict, kind=file_kind(path, text)), False
    # Over the limit: only a JSONL batch is read (a record at a time), anything else refused.
    if not path.lower().endswith((".json", ".wf")) and _starts_like_jsonl(head):
        return SourceFile(display, stream=_jsonl_stream(handle, head, display, strict, max_size,
                                                        close=close)), True
    return SourceFile(display, diagnostics=[too_large(display, size, max_size)]), False


def _read_up_to(handle: IO[bytes], count: int) -> bytearray:
    """Up to ``count`` bytes, gathered in one growing buffer (a list of pieces joined at the
    end would hold them twice; a buffer of ``count`` bytes made up front would take all of
    a raised limit even for a small input)."""
    buffer = bytearray()
    while len(buffer) < count:
        data = handle.read(min(count - len(buffer), _CHUNK))
        if not data:
            break
        buffer += data
    return buffer


def _first_lines(handle: IO[bytes], count: int) -> bytes:
    """The start of a stream: at least its first two non-blank lines, at most ``count``
    bytes."""
    head = b""
    chunk = 1 << 16
    while len(head) < count:
        data = handle.read(min(count - len(head), chunk))
        if not data:
            break
        head += data
        chunk *= 2  # (so that all the copying and splitting stays linear in the head's size)
        if sum(1 for line in head.split(b"\n")[:-1] if line.strip()) >= 2:
            break
    return head


def _starts_like_jsonl(head: bytes | bytearray) -> bool:
    """Whether the complete lines at the start of an input over the limit look like a batch:
    two or more, each one JSON object, the first a record (as
    :func:`~plancheck.formats.sniff.file_kind` decides for the whole text of an input within
    the limit)."""
    # The complete lines of the first megabyte (at least two, whatever their length): a batch
    # is told by its first records, as the rest may not even have been read.
    end = head.find(b"\n", head.find(b"\n") + 1)
    end = max(end, head.rfind(b"\n", 0, _CHUNK))
    complete = head[: end + 1]
    if complete.startswith(_BOM):
        complete = complete[len(_BOM):]
    try:
        return is_jsonl_batch(complete.decode("utf-8"))
    except UnicodeDecodeError:
        return False


def _all_utf8(path: str) -> bool:
    """Whether a file is UTF-8 throughout, read in chunks (its lines are decoded one at a time
    later; a file that is not UTF-8 is one PC001, as when it is read whole)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
    except (OSError, UnicodeDecodeError):
        return False
    return True


class _Prefixed(io.RawIOBase):
    """The bytes already read (``head``), then the rest of the stream."""

    def __init__(self, head: bytes | bytearray, rest: IO[bytes]) -> None:
        super().__init__()
        self._head = memoryview(head)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._head:
            count = min(len(buffer), len(self._head))
            buffer[:count] = self._head[:count]
            # An empty view of its own once served, so that the head's bytes can be freed.
            self._head = self._head[count:] if count < len(self._head) else memoryview(b"")
            return count
        read1 = getattr(self._rest, "read1", None)
        data = read1(len(buffer)) if read1 is not None else self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _jsonl_stream(handle: IO[bytes], head: bytes | bytearray, display: str, strict: bool,
                  max_size: int, *, close: bool = False) -> Iterator[PlanUnit]:
    """The units of a JSONL batch, a line at a time; a line longer than ``max_size`` is a
    ``PC006`` on its record and is skipped without being held."""
    reader = io.BufferedReader(_Prefixed(head, handle), _CHUNK)
    del head  # the reader holds it until it has served it
    try:
        number = 0
        records = 0
        while True:
            data = reader.readline(max_size + 1)
            if not data:
                if not records:
                    yield empty_batch(display)
                return
            number += 1
            if number == 1 and data.startswith(_BOM):
                data = data[len(_BOM):]
            if len(data) > max_size and not data.endswith(b"\n"):
                size = len(data)
                while not data.endswith(b"\n"):
                    data = reader.readline(_CHUNK)
                    if not data:
                        break
                    size += len(data)
                size -= data.endswith(b"\n")
                records += 1
                unit = PlanUnit(display, f"line {number}", Positions(display, LineIndex("")))
                unit.diagnostics.append(too_large(display, size, max_size,
                                                  record=f"line {number}"))
                yield unit
                continue
            try:
                line = data.decode("utf-8")
            except UnicodeDecodeError as error:  # only from a pipe: files are checked first
                records += 1
                unit = PlanUnit(display, f"line {number}", Positions(display, LineIndex("")))
                unit.diagnostics.append(make(
                    "PC001", f"cannot read {display}: line {number}: {not_utf8(error)}; "
                    "plans are read as UTF-8",
                    data={"path": display, "error": not_utf8(error)}))
                yield unit
                continue
            if line.endswith("\n"):
                line = line[:-1]
            if line.strip():
                records += 1
                instead = not_plans(line, display) if records == 1 else None
                if instead is not None:
                    yield instead
                    return
                yield jsonl_unit(line, number, 0, display, LineIndex(line, first_line=number),
                                 strict)
    finally:
        if close:
            handle.close()
