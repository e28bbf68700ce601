"""Stage 2 (quirks 6-7): parsing a candidate text, ``json.loads`` first and
``json.loads(repair_json(...))`` after, as the reference does, and unwrapping a wrapper
object. The common kinds of damage are read by emulations of json-repair 0.64.6 (the modules
beside this one) rather than by calling it; any other json-repair version is simply called.
The linter's reading (:mod:`plancheck.compiler.extraction.linter`) mends with the same
function."""

from __future__ import annotations

import importlib.metadata
import json
from typing import Any, Final

from json_repair import repair_json

from plancheck.compiler.extraction.brackets import collapse_doubled_braces
from plancheck.compiler.extraction.doubled_braces import mend_doubled_braces
from plancheck.compiler.extraction.escaped_newlines import mend_escaped_newlines
from plancheck.compiler.extraction.lenient_json import mend_lenient_json
from plancheck.compiler.extraction.prefixed_plan import PREFIX_TOKEN_AND_PROSE, mend_prefixed_plan
from plancheck.compiler.extraction.sentinels import NO_ANSWER
from plancheck.fast_json import INVALID, loads_or_invalid
from plancheck.formats.records import PLAN_WRAPPER_KEYS as WRAPPER_KEYS


def parse_candidates(text: str, notes: list[str]) -> Any:
    """Quirk 6. Returns the unwrapped value, or ``NO_ANSWER``."""
    value = load_or_mend(text, notes)
    if value is NO_ANSWER:
        # The doubled-brace candidate is only built when the first one failed outright.
        collapsed = collapse_doubled_braces(text)
        if collapsed == text:
            return NO_ANSWER
        value = load_or_mend(collapsed, notes)
        if value is NO_ANSWER:
            return NO_ANSWER
        notes.append("doubled braces collapsed")
    return unwrap(value, notes)


def load_or_mend(candidate: str, notes: list[str]) -> Any:
    """``json.loads``, else ``json.loads(repair_json(...))`` as the reference calls it."""
    value = loads_or_invalid(candidate)
    if value is not INVALID:
        return value
    value = NO_ANSWER
    if EMULATE_JSON_REPAIR:
        if PREFIX_TOKEN_AND_PROSE.match(candidate) is not None:
            # No other emulation reads such a text: the doubled-brace and escaped-newline
            # shapes start "[{", and in the lenient class the first array would end at the
            # token's "]", before the plan's "[" (extra data, with closers added or not).
            value = mend_prefixed_plan(candidate)
        else:
            value = mend_doubled_braces(candidate)
            if value is NO_ANSWER:
                value = mend_escaped_newlines(candidate)
            if value is NO_ANSWER:
                value = mend_lenient_json(candidate, not_json=True)
    if value is NO_ANSWER:
        try:
            value = json.loads(repair_json(candidate))
        except Exception:
            return NO_ANSWER
    notes.append("json-repair mended the JSON")
    return value


def unwrap(value: Any, notes: list[str]) -> Any:
    """Quirk 7."""
    if isinstance(value, dict):
        for key in WRAPPER_KEYS:
            inner = value.get(key)
            if isinstance(inner, list):
                notes.append(f"unwrapped `{key}` wrapper")
                return inner
    return value


def _json_repair_version() -> str | None:
    try:
        return importlib.metadata.version("json-repair")
    except importlib.metadata.PackageNotFoundError:
        return None


# The emulations below follow json-repair 0.64.6's code; any other version is simply called.
EMULATE_JSON_REPAIR: Final = _json_repair_version() == "0.64.6"
