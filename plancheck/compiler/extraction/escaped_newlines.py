"""json-repair 0.64.6 on a pretty-printed plan whose newlines were written as the two
characters ``\\n`` (which the reference's flattening turns into stray ``n`` characters)."""

from __future__ import annotations

import json
import re
from typing import Any, Final

from plancheck.compiler.extraction.lenient_json import Unsupported, reject_constant
from plancheck.compiler.extraction.sentinels import NO_ANSWER

# Completions written as ``json.dumps(plan, indent=2).replace("\n", "\\n")`` - a pretty-printed
# plan whose newlines are the two characters ``\`` ``n`` - lose their backslashes in the
# reference's flattening, leaving ``[n  {n    "agent": "X",n    "step": 0,n ...}n]``. The
# ``n`` after ``[`` defeats the array and run-of-objects regexes, so the single-object regex
# isolates the first step, and json-repair (~0.5 ms) reads ``"[" + step + "]"``. Call the
# step's layout ``NL(d)`` = ``n`` + the base indentation (that of the step's closing brace,
# non-empty) + ``d`` indentation units (non-empty whitespace): the text is ``{`` NL(1) member
# ``,`` NL(1) member ... NL(0) ``}``, an object member's object ``{`` NL(2) ... NL(1) ``}``, an
# array ``[`` NL(d+1) item ``,`` ... NL(d) ``]``, and ``[]``/``{}`` when empty. Reading
# json-repair 0.64.6's parser (parse_object, _parse_object_key, parse_string and its helpers
# classify_object_value_comma and _handle_right_delimiter_candidate, parse_number,
# parse_boolean_or_null, parse_array) on exactly this text gives:
#
# * *Keys.* Before each key the junk ``n`` + indentation is read as an unquoted key, which
#   ends at the whitespace and is dropped as "a comment instead of a key" (a quote follows,
#   not ``:``); the quoted key then takes the "simple quoted string" fast path, as it is
#   followed by ``:``. Before a closing brace the junk reads as an empty key and the brace
#   closes the object.
# * *A member that is not its object's last* is followed by ``,`` NL and the next key, so a
#   string takes the fast path (its content as is); ``true``/``false``/``null`` are read as
#   such (a comma delimits them); a number is read up to ``,``, but the letter ``n`` after
#   it makes parse_number hand over to parse_string, which skips a leading ``-`` and reads
#   the number's text as an unquoted string up to the comma (the comma is classified as
#   starting the next member: the next quoted text is a key followed by ``:``). So ``-1``
#   becomes ``"1"`` and ``2.5`` becomes ``"2.5"``.
# * *An object's last member*, followed by NL and ``}``. A non-empty string without
#   ``{}[]``` ``, and without ``:`` or ``'`` if it holds a comma, takes the slow string scanner
#   (the fast path wants ``,`` or ``}`` next, not ``n``) and comes out as is: each comma is
#   classified as part of the string, and the closing quote is accepted because after it
#   comes ``n``, whitespace and ``}``. A number or constant is read as an unquoted string
#   (``true`` followed by ``n`` is no constant) that runs over the junk ``n`` and the
#   indentation to the ``}``, where json-repair looks ahead: when the step follows (the
#   ``}`` closes an object member of the step and more members follow) or nothing follows
#   (the ``}`` closes the step), the string stops there and is right-stripped: ``"1n"``. When
#   the ``}`` closes the step's last member, an object, the look-ahead finds the step's own
#   ``}`` further on and keeps going, so the string takes in ``}`` and the next junk up to
#   the step's ``}``: ``"1n" + NL(1) indentation + "}n"``; that object then ends at the
#   step's brace, and the step ends at the ``]`` (no member is lost).
# * *Array items* are read as unquoted strings starting at the junk ``n``: a number or
#   constant item gives ``"n" + indentation + its text`` up to the comma (plus ``"n"`` for
#   the last item, which runs to the ``]``). Before a string item the unquoted ``n`` +
#   indentation stops at the opening quote (the quotes that follow pair up before the next
#   ``]``), which is then skipped, and gives ``"n"``; the string's content, which must start
#   with a letter (else parse_json dispatches on it) and hold no ``,]}`` (which would end or
#   upset the look-aheads) nor start with a word json-repair reads as a constant, is then
#   read as an unquoted string up to its closing quote and right-stripped; after the last
#   string item the junk before ``]`` gives one more ``"n"``. So ``[-1]`` becomes
#   ``["n      -1n"]`` and ``["a", "b"]`` becomes ``["n", "a", "n", "b", "n"]``.
# * Empty arrays and objects are read as such.
#
# The class emulated: the candidate, without backslashes and ASCII, is ``[`` + a non-empty
# step object + ``]`` where the step, as laid out above, is exactly what ``json.dumps`` with
# some indentation unit of spaces and tabs produces, newlines replaced by ``n`` and every
# line shifted by a non-empty base indentation - checked by parsing the text with the junk
# turned back into newlines, re-rendering it and comparing byte for byte - whose members are
# scalars, arrays of scalars, or objects of such (no deeper nesting), whose keys start with a
# letter, digit or underscore (the look-aheads read the next key's first character), and
# whose strings obey the rules above where they apply. Everything else - such as a numeric
# string inside an array, which sends json-repair's array reading astray - goes to json-repair.
# tests/scoring/test_parity.py checks this emulation against json-repair on many random steps.

# Array string items json-repair reads back (see above): a letter first, no , ] or }.
_JUNK_ARRAY_STRING: Final = re.compile(r"[A-Za-z][^,\]}]*+")


# A string json-repair's parse_boolean_or_null would read as a constant instead.
_CONSTANT_PREFIX: Final = re.compile(r"(?i:true|false|null|none)[ )]")


# A key whose first character the look-aheads cannot mistake for a delimiter.
_PLAIN_KEY_START: Final = re.compile(r"[A-Za-z0-9_]")


def mend_escaped_newlines(candidate: str) -> Any:
    """``json.loads(repair_json(candidate))`` for a pretty-printed step whose newlines became
    ``n`` (the class described above), or ``NO_ANSWER`` outside it."""
    layout = _escaped_newline_layout(candidate)
    if layout is None:
        return NO_ANSWER
    step, base, unit = layout
    try:
        return [_read_junk_object(step, base, unit, 0, False)]
    except Unsupported:
        return NO_ANSWER


def _escaped_newline_layout(candidate: str) -> tuple[dict[str, Any], str, str] | None:
    """The step, base indentation and indentation unit of a candidate laid out exactly as
    described above, or None."""
    if (
        not candidate.startswith("[{n")
        or not candidate.endswith("}]")
        or "\\" in candidate
        or not candidate.isascii()
    ):
        return None
    text = candidate[1:-1]
    # Without backslashes every quote delimits a string: outside them (the even pieces) the
    # letter n is junk except in null. Any other reading fails the re-rendering below.
    pieces = text.split('"')
    if not len(pieces) % 2:
        return None
    pieces[::2] = [piece.replace("n", "\n").replace("\null", "null") for piece in pieces[::2]]
    try:
        step = json.loads('"'.join(pieces), parse_constant=reject_constant)
    except (ValueError, RecursionError):
        return None
    if type(step) is not dict or not step:
        return None
    body = text[2:]
    first = body[: len(body) - len(body.lstrip(" \t"))]  # NL(1)'s indentation
    base = text[text.rfind("n") + 1 : -1]  # NL(0)'s
    if not base or base.strip(" \t") or len(first) <= len(base) or not first.startswith(base):
        return None
    unit = first[len(base) :]
    if json.dumps(step, indent=unit).replace("\n", "n" + base) != text:
        return None
    return step, base, unit


def _read_junk_object(
    members: dict[str, Any], base: str, unit: str, depth: int, last_in_step: bool
) -> dict[str, Any]:
    """json-repair's reading of an object laid out as above: the step (``depth`` 0) or one
    of its members (``depth`` 1; ``last_in_step`` when it is the step's last member).
    Raises ``Unsupported`` outside the emulated class."""
    read: dict[str, Any] = {}
    last_key = next(reversed(members))
    for key, value in members.items():
        if _PLAIN_KEY_START.match(key) is None:
            raise Unsupported
        kind = type(value)
        if kind is str:
            if key == last_key and not _slow_string_reads_back(value):
                raise Unsupported
            read[key] = value
        elif kind is list:
            read[key] = _read_junk_array(value, base + unit * (depth + 2)) if value else []
        elif kind is dict:
            if depth:
                raise Unsupported  # an object two levels down
            read[key] = _read_junk_object(value, base, unit, 1, key == last_key) if value else {}
        elif key != last_key:
            read[key] = value if value is None or kind is bool else json.dumps(value).lstrip("-")
        elif depth and last_in_step:
            read[key] = json.dumps(value).lstrip("-") + "n" + base + unit + "}n"
        else:
            read[key] = json.dumps(value).lstrip("-") + "n"
    return read


def _slow_string_reads_back(value: str) -> bool:
    """Whether json-repair's slow string scanner reads a last member's string as it is."""
    if not value or "{" in value or "}" in value or "[" in value or "]" in value or "`" in value:
        return False
    return "," not in value or (":" not in value and "'" not in value)


def _read_junk_array(values: list[Any], indent: str) -> list[Any]:
    """json-repair's reading of a non-empty array laid out as above, its items indented by
    ``indent``. Raises ``Unsupported`` outside the emulated class."""
    read: list[Any] = []
    last = len(values) - 1
    for position, value in enumerate(values):
        kind = type(value)
        if kind is str:
            if _JUNK_ARRAY_STRING.fullmatch(value) is None or _CONSTANT_PREFIX.match(value):
                raise Unsupported
            read.append("n")
            read.append(value.rstrip())
            if position == last:
                read.append("n")
        elif kind is list or kind is dict:
            raise Unsupported
        else:
            read.append("n" + indent + json.dumps(value) + ("n" if position == last else ""))
    return read
