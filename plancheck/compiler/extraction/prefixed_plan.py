"""json-repair 0.64.6 on a short bracketed token, some prose, then the plan (the
bracket-slice fallback's candidate when prose does not balance its brackets)."""

from __future__ import annotations

import json
import re
from typing import Any, Final

from plancheck.compiler.extraction.lenient_json import (
    NUMBER_GLUED_TO_COMMA,
    Unsupported,
    mend_lenient_json,
    object_without_repeats,
    reject_constant,
)
from plancheck.compiler.extraction.sentinels import NO_ANSWER

# A short bracketed token, some prose, then the plan - as in "[1] see the tool
# list.\n[{...}, ...]", the bracket-slice fallback's candidate when prose around a plan does
# not balance its brackets. json-repair 0.64.6 reads the first array (a number or a word:
# json.loads-able, or an unquoted string), skips the prose at the top level (letters, digits,
# whitespace and these punctuation marks start no value there), then reads the plan as a
# second top-level value with its array parser - the same reading as the plan text alone, in
# the "lenient JSON" class above. The result is ``[first, plan]``, or just ``plan`` when the
# first array is empty (a falsy value is dropped); the two never merge, as the first holds no
# object. When every step of the plan has ``agent`` and ``step`` keys, the reference's
# shaping takes the plan from either form (quirk 8a or 8b): ``[plan]`` stands for the first.
PREFIX_TOKEN_AND_PROSE: Final = re.compile(
    r"\[(?P<token>[A-Za-z0-9 ]*)\][A-Za-z0-9 \t\n\r.,:;!?-]*(?=\[)"
)


def mend_prefixed_plan(candidate: str) -> Any:
    """json-repair's reading of ``[token] prose [plan]`` as far as the reference's shaping
    can tell (see above): ``plan`` for an empty token, else ``[plan]``; ``NO_ANSWER``
    outside that class."""
    prefix = PREFIX_TOKEN_AND_PROSE.match(candidate)
    if prefix is None:
        return NO_ANSWER
    text = candidate[prefix.end() :]
    plan = _loads_valid_plan(text)
    if plan is NO_ANSWER:
        plan = mend_lenient_json(text)
    if type(plan) is not list or not plan:
        return NO_ANSWER
    for step in plan:
        if type(step) is not dict or "agent" not in step or "step" not in step:
            return NO_ANSWER
    return [plan] if prefix.group("token").strip() else plan


def _loads_valid_plan(text: str) -> Any:
    """``json.loads`` of a plan text inside the "lenient JSON" class that needs no rewriting,
    else ``NO_ANSWER``. Valid JSON (without NaN or Infinity, repeated keys, backslashes,
    backticks or a number glued to ",x") json-repair's parser reads as json.loads does, empty
    containers included (the empty items it drops are a cut-off text's): strictify would
    hand it back unchanged - its strings and numbers are plain tokens, its only bare words
    the constants true/false/null, and no comma precedes a closer."""
    if "\\" in text or "`" in text or NUMBER_GLUED_TO_COMMA.search(text):
        return NO_ANSWER
    try:
        return json.loads(
            text, object_pairs_hook=object_without_repeats, parse_constant=reject_constant
        )
    except (ValueError, Unsupported, RecursionError):
        return NO_ANSWER
