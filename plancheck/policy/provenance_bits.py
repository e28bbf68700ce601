"""Which recorded results may hold a piece of text (numpy is imported only here, and this
module only once a table is needed): one bit per result in each row of a table,
a row for each hash of a mark, so a lookup reads the few rows of its marks however many results
came before (a row is a word per 64 results: the rows of a mark every result holds cost what
those of a rare one do). A result's marks go in with one numpy operation, in C: no Python step
per mark. Two marks meeting in a row only add a candidate, which the lookup's search of the
result's text rules out.

The marks of a result, from its JSON texts: the 4-byte grams at every fourth byte (a copy of 8
bytes or more at any offset covers one of them, so the grams of the copy at its four offsets,
each offset's in their rows, name every result that may hold it); the first 8 bytes of each
string (a string of 8 bytes or more inside an argument starts at one of the argument's 8-byte
windows); and each string (its JSON text) and number, for a value equal to one.
"""

from __future__ import annotations

import sys
from itertools import chain
from typing import Any

import numpy as np

STEP = 4  # grams of 4 bytes at every 4th byte: any copy of 8 bytes covers one
START = 8  # the bytes of a string's start
_GRAMS = 1 << 16
_OTHERS = 1 << 14
_TOKENS = _GRAMS + _OTHERS
ROWS = _TOKENS + _OTHERS  # the rows of the grams, then those of the starts, of the scalars
_MULTIPLIER = np.uint32(2654435761)  # Knuth's multiplicative hash: the top bits are the row
_WIDE = 11400714819323198485
_WIDE_MULTIPLIER = np.uint64(_WIDE)
_MASK_64 = (1 << 64) - 1
_CHUNK = 1 << 20  # bytes of text whose grams are read at a time
_HEAD = 5 * STEP  # a lookup reads the grams of a copy's first 20 bytes (three at each offset)


def gram_rows(text: bytes | bytearray, offset: int = 0) -> Any:
    """The rows of the grams of ``text`` at ``offset``, ``offset`` + 4, ..."""
    grams = np.frombuffer(text, dtype=np.uint32, count=(len(text) - offset) // STEP,
                          offset=offset)
    return (grams * _MULTIPLIER) >> np.uint32(16)


def scalar_rows(hashes: Any) -> Any:
    """The rows of strings (their JSON texts) and numbers, by their Python hashes."""
    return (np.asarray(hashes, dtype=np.int64) & (_OTHERS - 1)) + _TOKENS


def start_rows(starts: Any) -> Any:
    """The rows of starts (8 bytes each, as uint64)."""
    return ((starts * _WIDE_MULTIPLIER) >> np.uint64(50)).astype(np.int64) + _GRAMS


class Bits:
    """The table: ``ROWS`` rows of one bit per result, a word per 64 results."""

    def __init__(self) -> None:
        self._bits = np.zeros((ROWS, 1), dtype=np.uint64)
        self.count = 0  # results added
        self._rows: dict[int, int] = {}

    def add(self, texts: list[list[bytes]], scalars: list[tuple[set[bytes], set[float]]],
            starts: list[list[int]]) -> None:
        """Add results (the next numbers): each one's JSON texts, the hashes of its strings
        and numbers and the starts of its strings, in a few numpy operations for them all. The
        texts are laid end to end, at most 1 MB at a time (the arrays of a long result's grams
        stay small), each padded with NULs to a multiple of 4 bytes and 8 more, so each keeps
        its grid and no gram spans two (a gram holding a NUL meets no argument's: JSON text
        has none)."""
        first = self.count
        self.count += len(texts)
        self._rows.clear()
        while (self.count - 1) >> 6 >= self._bits.shape[1]:
            wider = np.zeros((ROWS, 2 * self._bits.shape[1]), dtype=np.uint64)
            wider[:, :self._bits.shape[1]] = self._bits
            self._bits = wider
        numbers = list(range(first, self.count))
        hashes = [np.fromiter(map(hash, [*strings, *values]), dtype=np.int64,
                              count=len(strings) + len(values)) for strings, values in scalars]
        self._set(numbers, scalar_rows(np.concatenate(hashes)), [len(own) for own in hashes])
        self._set(numbers, start_rows(np.fromiter(chain.from_iterable(starts),
                                                  dtype=np.uint64)), [len(own) for own in starts])
        pieces: list[bytes] = []
        owners: list[int] = []
        grams: list[int] = []
        size = 0
        for number, own in zip(numbers, texts, strict=True):
            for text in own:
                for at in range(0, len(text), _CHUNK):
                    piece = text[at:at + _CHUNK] if len(text) > _CHUNK else text
                    pieces += (piece, bytes(-len(piece) % STEP + 2 * STEP))
                    if owners and owners[-1] == number:
                        grams[-1] += -(-len(piece) // STEP) + 2
                    else:
                        owners.append(number)
                        grams.append(-(-len(piece) // STEP) + 2)
                    size += len(piece)
                    if size >= _CHUNK:
                        self._set(owners, gram_rows(b"".join(pieces)), grams)
                        pieces, owners, grams, size = [], [], [], 0
        if pieces:
            self._set(owners, gram_rows(b"".join(pieces)), grams)

    def _set(self, numbers: list[int], rows: Any, counts: list[int]) -> None:
        """Set the bit of each result of ``numbers`` in its rows (``counts`` of ``rows`` each,
        in order): a result at a time, each row once (ufunc.at, which would take them all at
        once, costs 20 times as much)."""
        at = 0
        for number, count in zip(numbers, counts, strict=True):
            if count:
                column = self._bits[:, number >> 6]
                column[rows[at:at + count]] |= np.uint64(1 << (number & 63))
                at += count

    def holding_scalar(self, mark: int) -> list[int]:
        """The results that may hold a string or a number (``mark``: its hash)."""
        return numbers_in(self._row((mark & (_OTHERS - 1)) + _TOKENS))

    def holding_start(self, starts: list[int]) -> list[int]:
        """The results that may hold a string starting with one of ``starts``."""
        found = 0
        for start in starts:  # (a row or two: as Python ints, no numpy call per row)
            found |= self._row(((start * _WIDE) & _MASK_64) >> 50 | _GRAMS)
        return numbers_in(found)

    def _row(self, row: int) -> int:
        """A row as an int, kept until the table changes (the same values come back)."""
        found = self._rows.get(row)
        if found is None:
            found = self._rows[row] = _as_int(self._bits[row])
        return found

    def holding_copy(self, needle: bytes | bytearray) -> list[int]:
        """The results that may hold ``needle`` (8 bytes or more) in one of their texts."""
        return numbers_in(self._holding_copy(needle))

    def _holding_copy(self, needle: bytes | bytearray) -> int:
        head = needle[:_HEAD]
        found: Any = None
        for offset in range(STEP):
            held = np.bitwise_and.reduce(self._bits[gram_rows(head, offset)], axis=0)
            found = held if found is None else found | held
        return _as_int(found)


def _as_int(words: Any) -> int:
    if _LITTLE:
        return int.from_bytes(words.tobytes(), "little")
    return int.from_bytes(words.astype("<u8").tobytes(), "little")


_LITTLE = sys.byteorder == "little"


def numbers_in(bits: int) -> list[int]:
    """The numbers whose bit is set in ``bits``, in order."""
    found = []
    while bits:
        low = bits & -bits
        found.append(low.bit_length() - 1)
        bits ^= low
    return found
