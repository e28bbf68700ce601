"""json-repair 0.64.6 on "lenient JSON" (Python literals, bare keys, ``True``/``None``,
trailing commas, a plan cut off after a ``]``), computed by rewriting the text into JSON."""

from __future__ import annotations

import json
import re
from typing import Any, Final

from plancheck.compiler.extraction.sentinels import NO_ANSWER
from plancheck.fast_json import INVALID, loads_or_invalid

# The other common kinds of damage - Python literals (``{'agent': 'X', 'x': None}``), bare
# keys (``{agent: "X"}``), ``True``/``None`` constants, trailing commas, and a plan cut off
# after some ``]`` (the reference's bracket-slice fallback on a truncated answer) - are also
# read by json-repair 0.64.6 in the obvious way, provided nothing triggers its heuristics:
#
# * a double-quoted string without backslashes or control characters always takes the
#   "simple quoted string" fast path (it is followed by ``:``, ``,``, ``}`` or ``]``), so its
#   content is opaque;
# * a single-quoted string goes through the slow string scanner, which only reacts to quotes,
#   backslashes, ``, : { } [ ] ( )``, backticks and typographic quotes - so its content must
#   avoid those (and must not be empty, which has special handling); a single-quoted string
#   may not contain a double quote, and the closing quote's look-ahead can be fooled by an
#   apostrophe inside a double-quoted string (see _FOOLING_APOSTROPHE below), so such an
#   apostrophe must not be followed by ``,`` or ``}`` after non-alphanumerics;
# * a bare key is read up to the ``:`` (it must start with a letter, since leading ``_`` or
#   digits are skipped as junk, and be followed by the ``:`` directly); any other bare word
#   outside strings must be a constant;
# * ``true``/``false``/``null``/``none`` in any letter case are constants when followed by a
#   delimiter; any other bare word would become a string, which we do not emulate;
# * a comma before a closer is skipped; a number directly followed by ``,x`` is not emulated
#   (in an object json-repair reads ``1,x`` as one token);
# * at the end of the text every open container is closed, but an empty array item (``[]``,
#   ``{}``, ``""``) that is not directly followed by ``,`` or ``]`` is dropped - not emulated;
#   an empty *object value* (after ``:``) is kept wherever it stands, as parse_object has no
#   such rule (``"outputs": []}`` reads as it should, also cut off after the ``]``);
# * a repeated key inside an array splits the object - not emulated.
#
# So for texts in that class ``json.loads(repair_json(text))`` is ``json.loads`` of the text
# with single quotes turned double, bare keys quoted, constants spelled the JSON way, trailing
# commas dropped and missing closers appended. tests/scoring/test_parity.py checks it against
# json-repair on random damaged plans.

# (The quantifiers are possessive where giving characters back could never help a match, as
# nothing follows them that could fail: the tokens found are those of the plain quantifiers,
# found with less bookkeeping.)
_LENIENT_PIECE: Final = re.compile(
    r"""
      (?P<plain>(?:                      # a run of tokens that stay as they are:
          "[^"\\\x00-\x1f]*+"           #   double-quoted strings without escapes
        | [ \t\n\r\[\]{}:]++              #   whitespace, brackets, colons
        | ,(?![ \t\n\r]*+[\]}])           #   commas not before a closer
        | -?+(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?+(?:[eE][+-]?+[0-9]++)?+   # numbers
      )++)
    | (?P<single>'[^'"\\\x00-\x1f,:{}\[\]()`\#\u201c\u201d\u201e\u2018\u2019]++')
    | (?P<key>[A-Za-z][A-Za-z0-9_]*+)(?=:)                        # a bare key
    | (?P<constant>(?i:true|false|null|none))(?=[ \t\n\r,\]}]|\Z)  # a constant, delimited
    | (?P<trailing>,)
    | (?P<other>[A-Za-z0-9_]++|.)      # anything else, including any other bare word
    """,
    re.VERBOSE | re.DOTALL,
)


# Texts whose quotes all delimit strings of the class, the double-quoted ones holding no
# apostrophe: scanned left to right, every quote opens a string that ends at the next quote of
# its kind, a double-quoted string holds no ``'``, backslash or control character, and a
# single-quoted one is a ``single`` token of _LENIENT_PIECE. (See strictify.)
_QUOTES_OF_THE_CLASS: Final = re.compile(
    r"""
    (?:
        [^"']++
      | "[^"'\\\x00-\x1f]*+"
      | '[^'"\\\x00-\x1f,:{}\[\]()`\#\u201c\u201d\u201e\u2018\u2019]++'
    )*+
    """,
    re.VERBOSE,
)


_CONSTANTS: Final = {"true": "true", "false": "false", "null": "null", "none": "null"}


# Things the class excludes, found on the whole text (a hit inside a string only costs a call
# to json-repair): a number glued to ",x"; an empty container or "" not followed by , or ].
# (Each pattern starts with a literal character, which the regex engine finds at C speed.)
NUMBER_GLUED_TO_COMMA: Final = re.compile(r",(?<=[0-9],)[^ \t\n\r]")


EMPTY_ITEMS_NOT_CLOSED: Final = (
    re.compile(r"\[[ \t\n\r]*\](?![,\]])"),
    re.compile(r"\{[ \t\n\r]*\}(?![,\]])"),
    re.compile(r'""(?![,\]])'),
)


def _has_empty_item_not_closed(text: str) -> bool:
    """Whether an empty array item that json-repair would drop may occur in ``text``.

    A hit right after a colon (and whitespace) is an object value, not an array item: in
    text that parses, a colon outside strings separates a key from its value, and after a
    colon inside a string such a thing can only lie in that same string (a ``""`` there would
    be two strings in a row), where it is opaque. (Hits are rare, so looking back is cheap.)
    """
    for pattern in EMPTY_ITEMS_NOT_CLOSED:  # (no two kinds of hit can overlap)
        for hit in pattern.finditer(text):
            before = hit.start() - 1
            while before >= 0 and text[before] in " \t\n\r":
                before -= 1
            if before < 0 or text[before] != ":":
                return True
    return False


_APOSTROPHE_IN_DOUBLE_QUOTES: Final = re.compile(r'"[^"]*\'[^"]*"')


# An apostrophe that may fool json-repair's look-ahead, searched for inside a double-quoted
# string: one followed, after nothing but non-alphanumerics (whitespace among them), by a
# comma or a closing brace. Why nothing else can: json-repair reads a single-quoted string
# of the class with its slow scanner, which checks each ``'`` it meets for being the closing
# one (_handle_right_delimiter_candidate). Its content holds none of the characters the
# scanner reacts to, so the first ``'`` met is the closing quote, and after it comes (after
# whitespace) ``:`` (a key), ``,``, ``}``, ``]`` or the end of the text. The check scans on
# from the quote up to the next ``'`` but stops at ``,`` and ``]`` (the plan's array is
# always in the context stack), at ``:`` after a key (the object-key context is current)
# and at ``}`` after an object value; the closing quote is then accepted, except in one
# case: after an object value followed by ``,`` it looks for the *first* ``'`` anywhere
# after that comma and, if that quote is followed (after whitespace) by ``,`` or ``}``,
# takes the closing quote for a stray one and reads on. The first ``'`` after the comma is
# either the opening quote of a single-quoted string - whose non-empty content holds no
# ``,`` or ``}`` (whitespace content leads to its closing quote), so the look-ahead is not
# fooled - or an apostrophe inside a double-quoted string (double-quoted strings take the
# "simple quoted string" fast path and are otherwise opaque; no backslashes escape
# anything). Whitespace ends within the string (its closing ``"`` is no whitespace), so a
# fooling apostrophe has the ``,`` or ``}`` in its own string, which this pattern finds.
_FOOLING_APOSTROPHE: Final = re.compile(r"'[^A-Za-z0-9\"]*[,}]")


def _has_fooling_apostrophe(candidate: str) -> bool:
    """Whether a double-quoted string of ``candidate`` (which has no backslashes) holds an
    apostrophe that could fool json-repair's closing-quote look-ahead (see above)."""
    if _APOSTROPHE_IN_DOUBLE_QUOTES.search(candidate) is None:
        return False  # (a cheap first look: no double-quoted string holds an apostrophe)
    return any(
        _FOOLING_APOSTROPHE.search(string.group()) is not None
        for string in _DOUBLE_QUOTED.finditer(candidate)
        if "'" in string.group()
    )


class Unsupported(Exception):
    """The text is outside the emulated class; ask json-repair itself."""


def mend_lenient_json(candidate: str, not_json: bool = False) -> Any:
    """``json.loads(repair_json(candidate))`` for the "lenient JSON" class described above, or
    ``NO_ANSWER`` when ``candidate`` is outside it. ``not_json``: the caller knows that
    ``json.loads(candidate)`` fails (which spares parsing it again)."""
    if (
        not candidate.startswith("[")
        or "\\" in candidate
        or "`" in candidate
        or NUMBER_GLUED_TO_COMMA.search(candidate)
    ):
        return NO_ANSWER
    try:
        shortcut = _read_json_but_commas_before_closers(candidate, not_json)
        if shortcut is not None:
            text, value = shortcut
            return NO_ANSWER if _has_empty_item_not_closed(text) else value
        text, had_single_quotes = strictify(candidate)
        if had_single_quotes and _has_fooling_apostrophe(candidate):
            return NO_ANSWER  # the closing-quote look-ahead could stop inside that string
        if _has_empty_item_not_closed(text):
            return NO_ANSWER
        try:
            return _loads_without_repeats(text)
        except ValueError:
            closed = _close_cut_off_text(text)
            if closed is None:
                return NO_ANSWER
            return _loads_without_repeats(closed)
    except (Unsupported, ValueError, RecursionError):
        return NO_ANSWER


_COMMA_BEFORE_CLOSER: Final = re.compile(r",(?=[ \t\n\r]*[\]}])")


def json_but_commas_before_closers(candidate: str) -> tuple[str, str | None] | None:
    """``strictify(candidate)[0]``, found cheaply, for a backslash-free candidate that is
    JSON but for commas before closers and perhaps a cut-off end, and with it the text closed
    by :func:`_close_cut_off_text` when it needs closing (else None); None when the candidate
    is not such a text (or might not be), for :func:`strictify` to decide.

    Why it is the same text: once those commas are gone the text (closed, if cut off after a
    ``]``) is JSON, so its tokens are JSON tokens - double-quoted strings without escapes or
    control characters, numbers, punctuation and whitespace, all of them plain tokens to
    strictify, and true/false/null, constants it spells the same - and each comma removed
    was outside the strings (an even number of quotes before it: without backslashes quotes
    only delimit strings), where strictify drops exactly the commas before a closer.
    NaN and Infinity, which json.loads reads, are bare words to strictify: such texts are
    left to it."""
    text = _without_commas_before_closers(candidate)
    if text is None:
        return None
    if loads_or_invalid(text) is not INVALID:
        return text, None
    if _BARE_WORD.search(text):
        # Not JSON cut off after a ``]`` (or a word inside a string looks like one): closing
        # it cannot help, and strictify reads it all the same, only more slowly.
        return None
    closed = _close_cut_off_text(text)
    if closed is None or loads_or_invalid(closed) is INVALID:
        return None
    return text, closed


def _without_commas_before_closers(candidate: str) -> str | None:
    """The candidate without its commas before closers, for json_but_commas_before_closers
    to try; None when it is no such text (single quotes, NaN, a comma inside a string)."""
    if "'" in candidate or "NaN" in candidate or "Infinity" in candidate:
        return None
    pieces = []
    start = 0
    for comma in _COMMA_BEFORE_CLOSER.finditer(candidate):
        position = comma.start()
        if candidate.count('"', 0, position) % 2:
            return None  # inside a string, if the text is JSON at all
        pieces.append(candidate[start:position])
        start = position + 1
    return "".join(pieces) + candidate[start:] if pieces else candidate


def _read_json_but_commas_before_closers(
    candidate: str, not_json: bool = False
) -> tuple[str, Any] | None:
    """What :func:`mend_lenient_json` reads through :func:`json_but_commas_before_closers`:
    its text and the value ``_loads_without_repeats`` reads from that text or, if it needs
    closing, from the closed text (raising ``Unsupported`` on a repeated key, as it would
    there); None where that function gives None. A closed text is parsed once, by the parse
    that gives the value (``json.loads`` fails where ``loads_or_invalid`` gives INVALID),
    rather than once to see whether it parses and again for the value. (``Unsupported``,
    which is no ValueError, goes up to the caller, as does a RecursionError of json.loads on
    a text msgspec reads, which the caller also takes for "outside the class", as it did when
    json_but_commas_before_closers handed it that text.) ``not_json``: ``candidate`` is
    known not to parse, so neither does the text when it is the candidate itself."""
    text = _without_commas_before_closers(candidate)
    if text is None:
        return None
    # (json.loads is slow to fail - its error computes a line and column in Python - so the
    # text is first tried by msgspec; a closed text is mostly JSON, and parsed at once.)
    if not (not_json and text is candidate) and loads_or_invalid(text) is not INVALID:
        return text, _loads_without_repeats(text)
    if _BARE_WORD.search(text):
        return None
    closed = _close_cut_off_text(text)
    if closed is None:
        return None
    try:
        return text, _loads_without_repeats(closed)
    except (ValueError, RecursionError):  # (where loads_or_invalid gives INVALID)
        pass
    return None


# A word where JSON outside strings has a value or a key, other than true, false or null:
# a bare key or a Python constant (None, True, False), which no cut-off JSON holds.
_BARE_WORD: Final = re.compile(r"[{\[,:][ \t\n\r]*+[A-Za-eg-mo-su-z_]")


def object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise Unsupported  # json-repair would split the object at the repeated key
    return obj


# ``json.loads(text, object_pairs_hook=...)`` makes a decoder per call; one does for all.
_DECODER_WITHOUT_REPEATS: Final = json.JSONDecoder(object_pairs_hook=object_without_repeats)


def _loads_without_repeats(text: str) -> Any:
    """``json.loads(text, object_pairs_hook=object_without_repeats)``."""
    if text.startswith("\ufeff"):  # what json.loads refuses before decoding
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER_WITHOUT_REPEATS.decode(text)


def strictify(text: str) -> tuple[str, bool]:
    """Rewrite lenient JSON as strict JSON (single quotes, bare keys, constants, trailing
    commas); raises ``Unsupported`` outside the class."""
    single_quotes = False
    if "'" in text and _QUOTES_OF_THE_CLASS.fullmatch(text) is not None:
        # Every quote of the text delimits a string of the class and no double-quoted string
        # holds an apostrophe, so the single quotes are exactly the delimiters of the
        # ``single`` tokens: turned double, each such token becomes a plain double-quoted
        # string (its content has no ``"``, backslash or control character), which is what
        # the rewrite makes of it, and no other token changes - a token next to a quote only
        # looks ahead for whitespace, ``,``, ``:`` or closers, never for a quote. So the
        # rewrite of the text with its single quotes turned double is the rewrite of the
        # text, found with a token for a whole run of strings and punctuation rather than
        # four per object member.
        text = text.replace("'", '"')
        single_quotes = True
    pieces = []
    # findall hands back every token's groups at C speed; only the few kinds of token that
    # change need Python.
    for plain, single, key, constant, trailing, _ in _LENIENT_PIECE.findall(text):
        if plain:
            pieces.append(plain)
        elif single:
            single_quotes = True
            pieces.append('"' + single[1:-1] + '"')
        elif key:
            pieces.append('"' + key + '"')
        elif constant:
            pieces.append(_CONSTANTS[constant.lower()])
        elif not trailing:  # json-repair skips a comma right before a closer
            raise Unsupported
    return "".join(pieces), single_quotes


_DOUBLE_QUOTED: Final = re.compile(r'"[^"]*"')


_NOT_A_SQUARE_OR_CURLY: Final = bytes(b for b in range(256) if b not in b"[]{}")


_SQUARE_OR_CURLY_CLOSER: Final = {ord("["): ord("]"), ord("{"): ord("}")}


def _close_cut_off_text(text: str) -> str | None:
    """Append the closers json-repair supplies at the end of a text cut off after a ``]``."""
    if not text.rstrip().endswith("]"):
        return None
    # The brackets outside double-quoted strings, in order (non-ASCII characters encode to
    # bytes >= 0x80, which the filter drops with everything else). The text has no
    # backslashes, so its quotes delimit its strings: the pieces between them alternate
    # outside and inside. With an odd number of quotes no closing can make it JSON.
    pieces = text.split('"')
    if not len(pieces) % 2:
        return None
    structure = (
        "".join(pieces[::2])
        .encode("utf-8", "surrogatepass")
        .translate(None, _NOT_A_SQUARE_OR_CURLY)
    )
    expected: list[int] = []
    for char in structure:
        closer = _SQUARE_OR_CURLY_CLOSER.get(char)
        if closer is not None:
            expected.append(closer)
        elif not expected or expected.pop() != char:
            return None
    if not expected:
        return None
    return text + bytes(reversed(expected)).decode("ascii")


def reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
