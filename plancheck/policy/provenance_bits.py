"""Which recorded results may hold a mark: one bit per result in each row of a table, a row for
each hash of a mark, so a lookup reads the few rows of its marks however many results came
before (a row is a word per 64 results: the rows of a mark every result holds cost what those
of a rare one do). A result's marks go in with one numpy operation, in C: no Python step per
mark. Two marks meeting in a row only add a candidate, which the lookup's search rules out.

The marks (:mod:`.provenance_read`): the 4-byte grams at every fourth byte of a result's JSON
texts (a copy of 8 bytes or more at any offset covers one of them, so the grams of the copy at
its four offsets, each offset's in their rows, name every result that may hold it); the JSON
text of each string; each number; the first 8 bytes of each string.
"""

from __future__ import annotations

from typing import Any

import numpy as np

STEP = 4  # grams of 4 bytes at every 4th byte: any copy of 8 bytes covers one
_GRAMS = 1 << 16
_OTHERS = 1 << 14
STRINGS, NUMBERS, STARTS = _GRAMS, _GRAMS + _OTHERS, _GRAMS + 2 * _OTHERS  # first rows
ROWS = _GRAMS + 3 * _OTHERS
_MULTIPLIER = np.uint32(2654435761)  # Knuth's multiplicative hash: the top bits are the row
_WIDE_MULTIPLIER = np.uint64(11400714819323198485)
_HEAD = 5 * STEP  # a lookup reads the grams of a copy's first 20 bytes (three at each offset)


def gram_rows(text: bytes, offset: int = 0) -> Any:
    """The rows of the grams of ``text`` at ``offset``, ``offset`` + 4, ..."""
    grams = np.frombuffer(text, dtype=np.uint32, count=(len(text) - offset) // STEP,
                          offset=offset)
    return (grams * _MULTIPLIER) >> np.uint32(16)


def hash_rows(hashes: Any, first: int) -> Any:
    """The rows of marks by their Python hashes, in the section from row ``first``."""
    return (hashes & (_OTHERS - 1)) + first


def start_rows(starts: bytes) -> Any:
    """The rows of the first 8 bytes of strings (8 bytes each)."""
    return ((np.frombuffer(starts, dtype=np.uint64) * _WIDE_MULTIPLIER) >> np.uint64(50)
            ).astype(np.int64) + STARTS


class Bits:
    """The table: ``ROWS`` rows of one bit per result, a word per 64 results."""

    def __init__(self) -> None:
        self._bits = np.zeros((ROWS, 1), dtype=np.uint64)
        self.count = 0  # results added

    def add(self, rows: Any) -> int:
        """Add a result holding the marks of ``rows``; its number, from 0."""
        number = self.count
        self.count += 1
        word = number >> 6
        if word >= self._bits.shape[1]:
            wider = np.zeros((ROWS, 2 * self._bits.shape[1]), dtype=np.uint64)
            wider[:, :self._bits.shape[1]] = self._bits
            self._bits = wider
        column = self._bits[:, word]
        column[rows] |= np.uint64(1 << (number & 63))
        return number

    def holding(self, rows: Any) -> int:
        """The results whose bit is set in every row of ``rows``, as an int of their bits."""
        return _as_int(np.bitwise_and.reduce(self._bits[rows], axis=0))

    def held_any(self, rows: Any) -> int:
        """The results whose bit is set in some row of ``rows``, as an int of their bits."""
        return _as_int(np.bitwise_or.reduce(self._bits[rows], axis=0))

    def holding_copy(self, needle: bytes) -> int:
        """The results that may hold ``needle`` (8 bytes or more) in one of their texts."""
        head = needle[:_HEAD]
        found: Any = None
        for offset in range(STEP):
            held = np.bitwise_and.reduce(self._bits[gram_rows(head, offset)], axis=0)
            found = held if found is None else found | held
        return _as_int(found)


def _as_int(words: Any) -> int:
    return int.from_bytes(words.astype("<u8").tobytes(), "little")


def numbers_in(bits: int) -> list[int]:
    """The numbers whose bit is set in ``bits``, in order."""
    found = []
    while bits:
        low = bits & -bits
        found.append(low.bit_length() - 1)
        bits ^= low
    return found
