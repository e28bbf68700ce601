"""A long message is forwarded in pieces (its long strings encoded as they are written, so the
server reads the first while the rest are encoded): the pieces make one line of the same JSON
value, ASCII, and the same bytes as the message encoded whole."""

from __future__ import annotations

import copy
import json
import os
import threading
from collections.abc import Iterable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from plancheck.integrations.mcp.wire import (
    LineReader,
    encode,
    encode_read,
    encoded_pieces,
    parse,
    write_pieces,
)

# Text with what JSON escapes, non-ASCII (BMP and beyond), and a lone surrogate.
_TEXT = st.text(alphabet=st.sampled_from(list('ab "\\\n\r\t\x00\x1f\x7fé\u2028💧\ud800')),
                max_size=40)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | _TEXT,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_TEXT, inner, max_size=5),
    max_leaves=25)


def _joined(pieces: Iterable[Any]) -> bytes:
    return b"".join(part if isinstance(part, bytes | bytearray) else b"".join(part)
                    for part in pieces)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.integers(1, 9), st.integers(1, 12))
def test_pieces_make_the_message_encoded_whole(value: Any, piece: int, long: int) -> None:
    before = copy.deepcopy(value)
    joined = _joined(encoded_pieces(value, 0, piecewise=0, piece=piece, long=long))
    assert joined.isascii() and b"\n" not in joined and b"\r" not in joined
    assert json.loads(joined) == before
    assert value == before  # (the message itself is left as it was read)
    whole = encode(value)
    if b"\x7f" not in whole and b"\\u007f" not in whole:
        # (msgspec writes DEL as it is and json.dumps escapes it: where one part of a message
        # needs json.dumps, for text beyond ASCII, the two encodings differ there alone)
        assert joined == whole


def test_a_short_message_is_one_piece_and_a_long_one_is_written_as_one_line() -> None:
    small = {"jsonrpc": "2.0", "id": 1, "params": {"arguments": {"text": "x" * 100}}}
    assert encoded_pieces(small, 200) == [encode_read(small, 200)]
    text = ('a"b\\c\n' + "é💧") * 400_000  # (5.6 million characters: pieces of a million)
    value = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "write_file", "arguments": {"path": "/tmp/x", "content": text,
                                                           "more": ["y" * 70_000, 3]}}}
    line = json.dumps(value).encode() + b"\n"
    pieces = encoded_pieces(parse(line), len(line))
    assert len(pieces) == 5  # (the text around two long strings, and each of them)
    read_fd, write_fd = os.pipe()

    def write() -> None:
        write_pieces(write_fd, pieces)
        os.close(write_fd)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        reader = LineReader(read_fd, 64 << 20)
        got = reader.read_line()
        assert got is not None
        assert parse(got) == value
        assert bytes(got[:-1]) == encode(value)
        assert reader.read_line() == b""  # (one line, then the end)
    finally:
        writer.join(timeout=30)
        os.close(read_fd)
