"""The records of a prediction file, one at a time: JSONL files of ``{id?, task_id, completion |
plan}`` records (what ``plancheck plan`` writes to ``results/<model>/<method>/predictions.jsonl``),
or the official harness's ``*_detailed_predictions.json`` (a JSON array, read element by
element). A record is handed on unparsed (a JSONL line) or parsed (an array element); what is
in it is the scorer's business (:mod:`plancheck.scoring.item_scorer`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any, Final

from plancheck.fileio import format_size, read_limit

__all__ = ["InputError", "RawRecord", "read_records"]


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One prediction as read: a JSONL line still to parse, or an already parsed value."""

    source: str
    number: int  # line number (JSONL) or element index (JSON array)
    text: str | None = None
    value: Any = None
    problem: str | None = None  # the input around it could not be read

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as a plain call: several times cheaper than a slotted dataclass's default
        # (records cross a pipe to the worker processes of ``--jobs``).
        return RawRecord, (self.source, self.number, self.text, self.value, self.problem)


class InputError(Exception):
    """A prediction file cannot be read at all."""


def read_records(path: str) -> Iterator[RawRecord]:
    """Stream the records of one prediction file (``-`` is standard input, JSONL).

    JSONL is read as bytes and decoded a line at a time, so that a line that is not UTF-8 is
    one format error (with its line number) and the other lines are still scored, from a file
    and from standard input alike."""
    import io
    import sys

    if path == "-":
        yield from _jsonl_records(sys.stdin.buffer, "<stdin>")
        return
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed in finally below
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        first = _peek(handle)
        if path.lower().endswith(".json") or (
            first == b"[" and not path.lower().endswith((".jsonl", ".ndjson"))
        ):
            yield from _json_records(io.TextIOWrapper(handle, encoding="utf-8-sig"), path)
        else:
            yield from _jsonl_records(handle, path)
    except UnicodeDecodeError as error:
        raise InputError(f"cannot read {path}: not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    finally:
        handle.close()


_BOM: Final = b"\xef\xbb\xbf"


def _peek(handle: IO[bytes]) -> bytes:
    position = handle.tell()
    head = handle.read(4096)
    handle.seek(position)
    if head.startswith(_BOM):
        head = head[len(_BOM):]
    return head.lstrip()[:1]


def _lines(handle: IO[bytes], source: str) -> Iterator[bytes]:
    """The lines of ``handle``, each at most the read limit (``--max-size``): a longer one is
    given cut short, marked by its missing line break, and the rest of it is skipped; a file
    that goes on without a line break for many times the limit stops with an error."""
    limit = read_limit()
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        yield line[: limit + 1]
        for _ in range(_SKIPPED_LIMITS):
            rest = handle.readline(limit)
            if not rest or rest.endswith(b"\n"):
                break
        else:
            raise InputError(f"cannot read {source}: no line break in {_SKIPPED_LIMITS} times "
                             f"the {format_size(limit)} limit (--max-size)")


_SKIPPED_LIMITS: Final = 64


def _jsonl_records(handle: IO[bytes], source: str) -> Iterator[RawRecord]:
    limit = read_limit()
    for number, data in enumerate(_lines(handle, source), start=1):
        if len(data) > limit:
            yield RawRecord(source, number, text="", problem=(
                f"the record is larger than the {format_size(limit)} limit; raise it with "
                "--max-size"))
            continue
        if number == 1 and data.startswith(_BOM):
            data = data[len(_BOM):]
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError as error:
            yield RawRecord(source, number, text=data.decode("utf-8", "replace"), problem=(
                f"the line is not UTF-8 text (byte 0x{data[error.start]:02x} at column "
                f"{error.start + 1})"))
            continue
        if line and not line.isspace():  # (what line.strip() tells, without a copy)
            yield RawRecord(source, number, text=line)


def _json_records(handle: IO[str], source: str) -> Iterator[RawRecord]:
    """The elements of a top-level JSON array, one at a time (or the one top-level value)."""
    decoder = json.JSONDecoder()
    buffer = handle.read(1 << 16)
    position = _skip(buffer, 0)
    if position >= len(buffer) or buffer[position] != "[":
        more = handle.read(read_limit() + 1)
        if len(buffer) + len(more) > read_limit():
            yield RawRecord(source, 0, problem=f"the file is larger than the "
                            f"{format_size(read_limit())} limit; raise it with --max-size")
            return
        rest = buffer + more
        try:
            value = json.loads(rest)
        except (ValueError, RecursionError) as error:
            yield RawRecord(source, 0, problem=f"the file is not JSON: {error}")
            return
        yield RawRecord(source, 0, value=value)
        return
    position += 1
    index = 0
    chunk = 1 << 16
    eof = False
    while True:
        position = _skip(buffer, position, commas=index > 0)
        if position >= len(buffer):
            if eof:
                yield RawRecord(source, index, problem="the JSON array is not closed")
                return
            more = handle.read(chunk)
            eof = not more
            buffer, position = buffer[position:] + more, 0
            continue
        if buffer[position] == "]":
            return
        try:
            value, end = decoder.raw_decode(buffer, position)
            complete = end < len(buffer) or eof
        except (ValueError, RecursionError) as error:
            if eof:
                yield RawRecord(source, index, problem=f"element {index} is not JSON: {error}")
                return
            complete = False
        if not complete:
            more = handle.read(chunk)
            eof = not more
            chunk = min(chunk * 2, 1 << 24)
            buffer, position = buffer[position:] + more, 0
            continue
        yield RawRecord(source, index, value=value)
        index += 1
        position = end
        if position > (1 << 20):
            buffer, position = buffer[position:], 0


def _skip(text: str, position: int, *, commas: bool = False) -> int:
    while position < len(text) and (text[position].isspace() or (commas and text[position] == ",")):
        position += 1
    return position
