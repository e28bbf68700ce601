"""Text helpers of the reference's isolation stage: joining lines as it does, and whether a
text's brackets balance (what its bracket-slice fallback checks)."""

from __future__ import annotations

import re
from typing import Final

_NEWLINE_RUN: Final = re.compile(r"\n+")


def join_lines(text: str) -> str:
    """Each run of newlines becomes a single space."""
    if "\n\n" in text:
        return _NEWLINE_RUN.sub(" ", text)
    # Without two newlines in a row every run is a single character: a plain replace is
    # the same thing, several times faster.
    return text.replace("\n", " ")


def flatten_text(text: str) -> str:
    """The reference's pre-isolation normalisation (quirk 2)."""
    if "\n" in text:
        text = join_lines(text)
    if "\\" in text:
        text = text.replace("\\", "")
    return text.strip()


# Every byte except the six bracket characters. UTF-8 never uses ASCII bytes inside
# multi-byte sequences, so filtering the encoded text keeps exactly the bracket characters.
_NOT_A_BRACKET: Final = bytes(b for b in range(256) if b not in b"()[]{}")


_MATCHED_PAIRS: Final = (b"()", b"[]", b"{}")


_CLOSER_OF: Final = {ord("("): ord(")"), ord("["): ord("]"), ord("{"): ord("}")}


def brackets_balanced(text: str) -> bool:
    """Whether (), [] and {} are balanced and properly nested over the whole text (quirk 3).

    Equivalent to the reference's stack walk: a bracket word is well nested exactly when
    repeatedly deleting adjacent matched pairs empties it (every non-empty well-nested word
    has an innermost adjacent pair, and deleting one never changes the verdict). Each pass
    removes a whole nesting level at C speed; pathological depth falls back to a stack.
    """
    word = text.encode("utf-8", "surrogatepass").translate(None, _NOT_A_BRACKET)
    for _ in range(48):
        if not word:
            return True
        shorter = word
        for pair in _MATCHED_PAIRS:
            shorter = shorter.replace(pair, b"")
        if len(shorter) == len(word):
            return False
        word = shorter
    return _balanced_by_stack(word)


def _balanced_by_stack(word: bytes) -> bool:
    expected: list[int] = []
    for byte in word:
        closer = _CLOSER_OF.get(byte)
        if closer is not None:
            expected.append(closer)
        elif not expected or expected.pop() != byte:
            return False
    return not expected


def collapse_doubled_braces(text: str) -> str:
    """``{{``/``}}`` read as ``{``/``}``: a prompt template's escaped braces, copied."""
    return text.replace("{{", "{").replace("}}", "}")
