"""Find a plan inside a raw model completion.

Real model output wraps the plan in prose, a marker sentence ("The structured task plan is:"),
markdown code fences or a wrapper object, and damages it: doubled braces from prompt
templates, trailing commas, single quotes, a missing bracket. This module finds the JSON and
reports, as info diagnostics, every assumption it made; with ``strict`` it repairs nothing.

The positions of the JSON that was parsed verbatim are kept so that later diagnostics point
into the original text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from plancheck.compiler.extraction.brackets import collapse_doubled_braces
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span
from plancheck.fast_json import INVALID, loads_or_invalid
from plancheck.formats.records import PLAN_WRAPPER_KEYS as WRAPPER_KEYS
from plancheck.records import Record

MARKER_RE = re.compile(r"the\s+structured\s+task\s+plan\s+is\s*:", re.IGNORECASE)
FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
_MAX_CANDIDATES = 400
_FULL_PLAN = 4  # the score of an array whose every element is a step object


class Extraction(Record):
    """What was found: a JSON value, the region of the text it was read from, and whether
    that region is exactly the JSON text that was parsed (``verbatim``)."""

    __slots__ = _fields = ("value", "found", "start", "end", "verbatim", "diagnostics")

    def __init__(self, value: Any = None, found: bool = False, start: int = 0, end: int = 0,
                 verbatim: bool = True, diagnostics: list[Diagnostic] | None = None) -> None:
        self.value = value
        self.found = found
        self.start = start
        self.end = end
        self.verbatim = verbatim
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics


def _region_span(file: str, start: int, end: int) -> Span:
    return Span(file, pointer=None, start_offset=start, end_offset=end)


def _score(value: Any) -> int:
    """How much a JSON value looks like a plan (higher is better, 0 is not at all)."""
    if isinstance(value, dict):
        if any(isinstance(value.get(k), list) for k in WRAPPER_KEYS):
            return 3
        if "agent" in value or "agent_name" in value:
            return 1
        return 0
    if isinstance(value, list) and value:
        steps = [x for x in value if isinstance(x, dict)]
        if steps and any(("agent" in s or "agent_name" in s) for s in steps):
            return _FULL_PLAN if len(steps) == len(value) else 2
    return 0


def _extracted(value: Any, file: str, start: int, end: int, where: str, how: str,
               marker: tuple[int, int] | None = None) -> Extraction:
    """A plan found verbatim in the text, with the info note that says where."""
    note = make(
        "PC103",
        f"the plan was taken from {where}",
        primary=_region_span(file, start, end),
        label="plan read from here",
        secondary=[(_region_span(file, *marker), "marker")] if marker else [],
        data={"how": how},
    )
    return Extraction(value, True, start, end, diagnostics=[note])


def _decode_at(text: str, index: int) -> tuple[Any, int] | None:
    try:
        return _DECODER.raw_decode(text, index)
    except (ValueError, RecursionError):  # ValueError: also an integer of 4,301+ digits
        return None


def _best_json_in(text: str, begin: int, end: int) -> tuple[Any, int, int] | None:
    """The most plan-like JSON value that starts at a bracket in ``text[begin:end]``."""
    best: tuple[int, int, Any, int, int] | None = None
    tried = 0
    index = begin
    while tried < _MAX_CANDIDATES:
        brackets = [i for i in (text.find("[", index, end), text.find("{", index, end)) if i != -1]
        if not brackets:
            break
        position = min(brackets)
        tried += 1
        decoded = _decode_at(text, position)
        if decoded is not None:
            value, stop = decoded
            score = _score(value)
            if score and (best is None or (score, stop - position) > (best[0], best[1])):
                best = (score, stop - position, value, position, stop)
            if score >= 3:
                index = stop  # skip what this value covers
                continue
        index = position + 1
    if best is None:
        return None
    return best[2], best[3], best[4]


def extract_plan(text: str, file: str, *, strict: bool = False) -> Extraction:
    """Locate the plan JSON in ``text``. Never raises."""
    stripped_start = len(text) - len(text.lstrip())
    stripped_end = len(text.rstrip())
    whole = _decode_at(text, stripped_start) if stripped_start < stripped_end else None
    if whole is not None and whole[1] == stripped_end:
        return Extraction(whole[0], True, stripped_start, stripped_end)

    found = _from_fences(text, file) or _after_marker(text, file)
    if found is not None:
        return found
    scanned = _best_json_in(text, 0, len(text))
    if scanned is not None and _score(scanned[0]) < _FULL_PLAN and not strict:
        # Only a fragment parses (say one step of an array spoiled by a trailing comma): a
        # repaired whole plan, if there is one, is what the model meant.
        repaired = _repair(text, file)
        if repaired.found and _score(repaired.value) > _score(scanned[0]):
            return repaired
    if scanned is not None:
        value, start, end = scanned
        return _extracted(value, file, start, end, "surrounding text", "embedded")
    if strict:
        return _strict_failure(text, file)
    return _repair(text, file)


def _from_fences(text: str, file: str) -> Extraction | None:
    for match in FENCE_RE.finditer(text):
        body_start, body_end = match.start(2), match.end(2)
        inner = text[body_start:body_end]
        lead = len(inner) - len(inner.lstrip())
        decoded = _decode_at(text, body_start + lead) if inner.strip() else None
        if decoded is None:
            continue
        value, stop = decoded
        if _score(value) == 0 or text[stop:body_end].strip():
            continue
        return _extracted(value, file, body_start + lead, stop, "a markdown code fence",
                          "fence")
    return None


def _last_marker(text: str) -> re.Match[str] | None:
    # The last marker wins: reasoning may quote the marker before the real plan.
    found = None
    for found in MARKER_RE.finditer(text):  # noqa: B007 - we want the last match
        continue
    return found


def _after_marker(text: str, file: str) -> Extraction | None:
    marker = _last_marker(text)
    if marker is None:
        return None
    found = _best_json_in(text, marker.end(), len(text))
    if found is None:
        return None
    value, start, end = found
    return _extracted(value, file, start, end, "after the marker sentence", "marker",
                      marker=(marker.start(), marker.end()))


def _candidate_region(text: str) -> tuple[int, int] | None:
    marker = _last_marker(text)
    begin = marker.end() if marker else 0
    opens = [i for i in (text.find("[", begin), text.find("{", begin)) if i != -1]
    if not opens:
        return None
    start = min(opens)
    closer = "]" if text[start] == "[" else "}"
    end = text.rfind(closer)
    end = end + 1 if end > start else len(text)
    return start, end


def _repair(text: str, file: str) -> Extraction:
    region = _candidate_region(text)
    if region is None:
        return _nothing_found(text, file)
    start, end = region
    candidate = text[start:end]
    # (code, what was done): collapsed doubled braces are not what the reference reads
    # (json-repair splits such steps), so they have a code of their own that can block.
    attempts: list[tuple[str, str, str]] = []
    if "{{" in candidate or "}}" in candidate:
        attempts.append(("PC121", "doubled braces `{{ }}` were collapsed",
                         collapse_doubled_braces(candidate)))
    attempts.append(("PC102", "damaged JSON was repaired with json-repair", candidate))
    for code, what, attempt in attempts:
        value = _loads_or_repair(attempt, allow_repair=code == "PC102")
        if value is not None and _score(value):
            notes = ["positions inside the repaired region are approximate"]
            if code == "PC121":
                notes.insert(0, "the reference evaluator mends this text with json-repair, "
                                "which reads other steps than these")
            note = make(
                code,
                f"the plan is not valid JSON; {what}",
                primary=_region_span(file, start, end),
                label="repaired",
                notes=notes,
                help=["write each brace once"] if code == "PC121" else [],
                data={"repair": what},
            )
            return Extraction(value, True, start, end, verbatim=False, diagnostics=[note])
    return _nothing_found(text, file)


def _loads_or_repair(text: str, *, allow_repair: bool) -> Any:
    """``json.loads``, else (when ``allow_repair``) what json-repair reads: the reference's own
    mending, so that both readings see the same JSON in a damaged text."""
    value = loads_or_invalid(text)
    if value is not INVALID:
        return value
    if not allow_repair:
        return None
    # (Imported here: json-repair and its version check cost a clean lint's start-up time.)
    from plancheck.compiler.extraction.mend import load_or_mend
    from plancheck.compiler.extraction.sentinels import NO_ANSWER

    value = load_or_mend(text, [])
    return None if value is NO_ANSWER else value


def _strict_failure(text: str, file: str) -> Extraction:
    region = _candidate_region(text)
    if region is None:
        return _nothing_found(text, file)
    start, end = region
    try:
        json.loads(text[start:end])
    except json.JSONDecodeError as error:
        at = start + error.pos
        return Extraction(
            diagnostics=[
                make(
                    "PC100",
                    f"invalid JSON: {error.msg}",
                    primary=_region_span(file, at, at + 1),
                    label=error.msg.lower(),
                    help=["without --strict-json, plancheck would try to repair it"],
                    data={"error": error.msg},
                )
            ]
        )
    except (ValueError, RecursionError):  # too deep, or an integer of 4,301+ digits
        pass
    return _nothing_found(text, file)


def _nothing_found(text: str, file: str) -> Extraction:
    end = len(text.rstrip())
    message = "the completion is empty" if not end else "no JSON plan was found in the text"
    return Extraction(
        diagnostics=[
            make(
                "PC101",
                message,
                primary=_region_span(file, 0, max(end, 0)),
                label="searched here",
                help=["a plan is a JSON array of step objects, optionally after "
                      "\"The structured task plan is:\" or inside a ```json code fence"],
            )
        ]
    )
