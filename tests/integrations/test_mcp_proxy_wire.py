"""The proxy's stdio framing (:mod:`plancheck.integrations.mcp.wire`) on a real pipe: lines
come out as they went in, however the writer splits them, and a line over the limit is
skipped whole."""

from __future__ import annotations

import json
import os
import threading
import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from plancheck.integrations.mcp.messages import id_key
from plancheck.integrations.mcp.wire import LineReader, encode, encode_read, parse

_LINE = st.binary(max_size=300).map(lambda b: b.replace(b"\n", b" ") + b"\n")


def _lines_read(data: bytes, cuts: list[int], limit: int) -> list[bytes | None]:
    """What a reader with ``limit`` returns for ``data`` written in pieces cut at ``cuts``."""
    read_fd, write_fd = os.pipe()

    def write() -> None:
        with os.fdopen(write_fd, "wb", buffering=0) as out:
            start = 0
            for cut in [*sorted(cuts), len(data)]:
                out.write(data[start:cut])
                start = max(start, cut)

    writer = threading.Thread(target=write)
    writer.start()
    found: list[bytes | None] = []
    try:
        reader = LineReader(read_fd, limit)
        for _ in range(data.count(b"\n") + 2):
            line = reader.read_line()
            if line is None:
                found.append(None)
                reader.skip_line()
                continue
            if not line:
                break
            found.append(bytes(line))
    finally:
        writer.join(timeout=30)
        os.close(read_fd)
    return found


@settings(max_examples=60, deadline=None)
@given(st.lists(_LINE, max_size=8), st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
       st.lists(st.integers(0, 3000), max_size=6), st.sampled_from([0, 5, 150, 1 << 20]))
def test_lines_come_out_whole_however_they_are_split(lines: list[bytes], tail: bytes,
                                                     cuts: list[int], limit: int) -> None:
    data = b"".join(lines) + tail
    expected: list[bytes | None] = [line if len(line) - 1 <= limit else None for line in lines]
    if tail:
        expected.append(tail if len(tail) <= limit else None)
    assert _lines_read(data, cuts, limit) == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 40_000), min_size=1, max_size=12),
       st.lists(st.integers(0, 400_000), max_size=8))
def test_lines_that_cross_the_buffer_end_come_out_whole(sizes: list[int],
                                                        cuts: list[int]) -> None:
    lines = [b"%d:" % index + b"x" * size + b"\n" for index, size in enumerate(sizes)]
    assert _lines_read(b"".join(lines), cuts, 64 << 20) == lines


def test_many_small_lines_read_ahead_come_out_one_by_one() -> None:
    """Lines that pile up faster than they are read: the buffer fills, its unread part moves
    to the front, and the search for the next newline goes on where it was."""
    lines = [b'{"jsonrpc":"2.0","id":%d,"result":{}}\n' % index for index in range(20_000)]
    assert _lines_read(b"".join(lines), [], 64 << 20) == lines


def test_a_line_larger_than_the_buffer_grows_it_and_the_next_line_follows() -> None:
    big = b'{"text":"' + b"x" * (3 << 20) + b'"}\n'
    larger = b"[" + b"1," * (9 << 20) + b"1]\n"  # (past the buffer that is kept)
    data = big + b"{}\n" + big + larger + b"{}"
    assert _lines_read(data, [5, 70000, len(big) + 1, len(data) - 5], 64 << 20) == \
        [big, b"{}\n", big, larger, b"{}"]


@settings(max_examples=300, deadline=None)
@given(st.integers() | st.text() | st.booleans() | st.none() | st.floats(allow_nan=False)
       | st.lists(st.integers(), max_size=2))
def test_an_id_key_is_the_ids_json(request_id: object) -> None:
    """Pending requests are keyed by their id's JSON (1 and "1" differ); the key is spelled
    without json.dumps for plain ids, and is the same."""
    assert id_key(request_id) == json.dumps(request_id)


def test_a_large_message_is_encoded_as_a_small_one_is() -> None:
    """``encode_read`` (a value read from a long line, written into a buffer of the line's
    size) gives the bytes ``encode`` gives: ASCII, escapes, non-ASCII text (escaped by
    json.dumps) and a lone surrogate."""
    for text in ("x" * (2 << 20), 'a"b\\c\n' * (400_000), "é💧" * (600_000),
                 "\ud800" + "x" * (2 << 20), "short"):
        value = {"jsonrpc": "2.0", "id": 7, "params": {"arguments": {"text": text}}}
        line = json.dumps(value).encode() + b"\n"
        assert bytes(encode_read(parse(line), len(line))) == encode(value)


def test_a_large_message_is_read_and_encoded_near_its_own_size() -> None:
    """An 8 MB line is read into a buffer that grows by half past 1 MiB (doubling held 16 MB,
    each byte written, with an 8 MB block beside it while it grew), and its value is written
    into a buffer of the line's size (msgspec grew its own to 12 MB)."""
    line = b'{"jsonrpc":"2.0","id":1,"params":{"text":"' + b"x" * (8 << 20) + b'"}}\n'
    read_fd, write_fd = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_fd, line) and None,
                                              os.close(write_fd)))
    tracemalloc.start()
    try:
        writer.start()
        got = LineReader(read_fd, 64 << 20).read_line()
        reading = tracemalloc.get_traced_memory()[1]
        assert got is not None and len(got) == len(line)
        value = parse(got)
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        encode_read(value, len(line))
        encoding = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
        writer.join(timeout=30)
        os.close(read_fd)
    assert reading < 2.0 * len(line), reading / len(line)
    assert encoding < 1.15 * len(line), encoding / len(line)


def test_large_messages_one_after_another_are_each_encoded_whole() -> None:
    """The buffer a thread keeps for large messages, used again: a shorter message after a
    longer one, a longer after a shorter, and one with non-ASCII text, each written as
    :func:`encode` writes it (nothing of the one before left in it)."""
    sizes_and_text = [(1_500_000, "a"), (1_100_000, "b"), (1_900_000, "c"), (1_200_000, "é")]
    for size, letter in sizes_and_text:
        value = {"jsonrpc": "2.0", "id": size, "params": {"text": letter * size}}
        line = json.dumps(value).encode() + b"\n"
        assert bytes(encode_read(parse(line), len(line))) == encode(value)
