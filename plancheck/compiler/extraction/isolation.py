"""Stage 1 of the reference evaluator's reading (quirks 2-5): isolating the answer's JSON in
free text, by its regular expressions and its bracket-slice fallback."""

from __future__ import annotations

import re
from typing import Any, Final

from plancheck.compiler.extraction.brackets import brackets_balanced, flatten_text, join_lines
from plancheck.compiler.extraction.doubled_braces import extract_doubled
from plancheck.compiler.extraction.mend import EMULATE_JSON_REPAIR, parse_candidates
from plancheck.compiler.extraction.sentinels import NO_ANSWER, UNKNOWN, Unknown
from plancheck.fast_json import INVALID, loads_or_invalid


def extract(
    completion: str,
    notes: list[str],
    searched: re.Match[str] | Unknown | None = UNKNOWN,
) -> Any:
    """The reference's answer extraction: isolate, slice, parse (quirks 2-7). ``searched`` is
    the result of ``_ARRAY_OF_OBJECTS.search(completion)`` when the caller already has it."""
    array: str | Unknown | None = UNKNOWN
    if EMULATE_JSON_REPAIR and completion.startswith("[{{"):
        value = extract_doubled(completion, notes)
        if value is not NO_ANSWER:
            return value
    if "\\" not in completion:
        # Without backslashes, flattening only turns newline runs into spaces, and the
        # isolation regex treats a newline exactly like a space (both are whitespace and
        # non-braces). So stage (a) can run on the raw text: its match there is, with newline
        # runs joined, the match the reference finds in the flattened text.
        found = _ARRAY_OF_OBJECTS.search(completion) if isinstance(searched, Unknown) else searched
        if found is None:
            array = None
        else:
            value = _parse_whole_span(completion, found, notes)
            if value is not NO_ANSWER:
                return value
            array = join_lines(found.group())
    flat = flatten_text(completion)
    isolated = _isolate(flat, notes, array) if brackets_balanced(flat) else None
    if isolated is None:
        isolated = _first_to_last_bracket(completion)
        if isolated is None:
            return NO_ANSWER
        notes.append("read the raw text between the first `[` and the last `]`")
    elif "\\" in completion:
        notes.append("backslashes deleted before parsing")
    return parse_candidates(isolated, notes)


def _parse_whole_span(completion: str, found: re.Match[str], notes: list[str]) -> Any:
    """Fast path for a backslash-free completion whose array-of-objects match runs from the
    first `[` to the last `]` and parses as it stands; ``NO_ANSWER`` when it does not apply.

    Then the reference's candidate is that span whether or not the brackets balance:
    balanced, isolation returns the (flattened) match; unbalanced, the bracket-slice fallback
    returns the raw span. If the raw span parses, it holds no raw newline inside a string, so
    both spellings parse to the same value - and the balance check can be skipped.
    """
    start, end = found.span()
    if start != completion.find("[") or end != completion.rfind("]") + 1:
        return NO_ANSWER
    value = _loads_bracketed(found.group())
    if value is not NO_ANSWER and (completion[:start].strip() or completion[end:].strip()):
        notes.append("plan array cut out of the surrounding text")
    return value


def _loads_bracketed(text: str) -> Any:
    """``json.loads(text)``, or ``NO_ANSWER`` on failure."""
    value = loads_or_invalid(text)
    return NO_ANSWER if value is INVALID else value


# An "object" for isolation purposes: braces around non-brace text and brace pairs that hold
# no braces themselves. From a given "{" there is at most one way to match it (a "{" must
# open an inner pair, the first "}" at the outer level must close), so possessive
# quantifiers find exactly what the reference's backtracking pattern finds, without the
# backtracking.
_OBJ: Final = r"\{(?:[^{}]++|\{[^{}]*+\})*+\}"


_ARRAY_OF_OBJECTS: Final = re.compile(rf"\[\s*+{_OBJ}(?:\s*+,\s*+{_OBJ})*+\s*+\]")


_OBJECT_RUN: Final = re.compile(rf"{_OBJ}\s*+(?:,\s*+{_OBJ}\s*+)++")


_ONE_OBJECT: Final = re.compile(_OBJ)


def _isolate(flat: str, notes: list[str], array: str | Unknown | None) -> str | None:
    """The three regex stages of quirk 4, on already-flattened, balanced text. ``array`` is
    stage (a)'s result when the caller already knows it (see :func:`extract`)."""
    if isinstance(array, Unknown):
        found = _ARRAY_OF_OBJECTS.search(flat)
        array = None if found is None else found.group()
    if array is not None:
        if len(array) != len(flat):
            notes.append("plan array cut out of the surrounding text")
        return array
    run = _OBJECT_RUN.search(flat)
    if run is not None:
        notes.append("comma-separated step objects wrapped into an array")
        return "[" + run.group().strip() + "]"
    single = _ONE_OBJECT.search(flat)
    if single is not None:
        body = single.group()
        if '"agent"' in body and '"step"' in body:
            notes.append("single step object wrapped into an array")
            return "[" + body + "]"
    return None


def _first_to_last_bracket(completion: str) -> str | None:
    """Quirk 5: the raw slice from the first '[' to the last ']'."""
    start = completion.find("[")
    if start < 0:
        return None
    end = completion.rfind("]")
    return completion[start : end + 1] if end > start else None
