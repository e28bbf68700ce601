"""Reading a DORA run: the answer object in model text, and run records matched to gold tasks.

A run record (one line of ``<run>/<task>/benchmark.jsonl``) names its task by
``question_id`` (``<sample_id>_task<i>``) and carries ``predicted_answer`` (an object, or the
model's text) and ``trajectory``. DORA scores the answer object it can read from the text: the
inside of ``<Answer>...</Answer>``, then of a Markdown fence, as JSON, else the first
balanced ``{...}`` that parses as an object.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

_ANSWER_TAG = re.compile(r"<Answer>\s*(.+?)\s*</Answer>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)\n?\s*```", re.DOTALL)


def _object(text: str) -> dict[str, Any] | None:
    try:
        parsed = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        # (RecursionError: nested too deeply to read, which makes DORA's own reader fail on
        # the whole run; here the record is one whose answer cannot be read.)
        return None
    return parsed if isinstance(parsed, dict) else None


def parse_prediction(text: Any) -> Any:
    """The answer object in ``text``, or (when there is none) the text that was searched:
    ``text`` itself when it is not a string or blank, else what remains after the answer tag
    and a code fence were unwrapped, stripped."""
    if not isinstance(text, str) or not text.strip():
        return text
    tagged = _ANSWER_TAG.search(text)
    if tagged:
        text = tagged.group(1)
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    text = text.strip()
    whole = _object(text)
    if whole is not None:
        return whole
    # Braces are counted without regard to JSON strings, and a block that does not parse is
    # abandoned (the scan goes on from its end), as DORA's reader does.
    depth, start = 0, None
    for i, char in enumerate(text):
        if char == "{":
            if depth == 0:
                start = i
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0 and start is not None:
                block = _object(text[start : i + 1])
                if block is not None:
                    return block
                start = None
    return text


def record_task(record: Mapping[str, Any]) -> tuple[Any, int]:
    """(sample id, task index) a record answers: from ``question_id`` ``<sample>_task<i>``,
    the record's ``sample_id`` taking precedence when given; index 0 when unreadable."""
    question, sample = record.get("question_id", ""), record.get("sample_id", "")
    question = question if isinstance(question, str) else str(question)
    head, marker, tail = question.rpartition("_task")
    if not marker:
        return sample or question, 0
    try:
        index = int(tail)
    except ValueError:
        index = 0
    return sample or head, index


class MergedDimension(NamedTuple):
    """One dimension's records merged into a copy of its gold samples, as DORA merges them,
    with where each record went (plancheck's labels are read from it, never DORA's numbers)."""

    samples: list[Any]
    landed: dict[tuple[int, int], list[Any]]  # (sample position, task index) -> its records
    unmatched: list[Any]  # records that name no gold task


def merge_dimension(samples: Sequence[Any], records: Iterable[Any]) -> MergedDimension:
    """A copy of ``samples`` whose tasks hold ``records``' answers and trajectories, in order.

    An object answer is used as is; any other non-null answer is parsed
    (:func:`parse_prediction`) and kept as ``{"_raw": text}`` when no object is found; a null
    answer leaves the task's as it was, and an empty trajectory its trajectory. A record
    without ``predicted_answer`` falls back to its ``final_answer``; one that names no gold
    task is ignored. Tasks are found by ``(sample_id, task index)``: of two samples with one
    id, the later one takes the records."""
    copies = list(copy.deepcopy(samples))
    tasks: dict[tuple[Any, int], tuple[tuple[int, int], dict[str, Any]]] = {}
    for position, sample in enumerate(copies):
        for index, task in enumerate(sample.get("tasks", [])):
            task["final_answer"], task["trajectory"] = {}, []
            tasks[(sample.get("sample_id", ""), index)] = ((position, index), task)
    landed: dict[tuple[int, int], list[Any]] = {}
    unmatched: list[Any] = []
    for record in records:
        found = tasks.get(record_task(record))
        if found is None:
            unmatched.append(record)
            continue
        where, target = found
        landed.setdefault(where, []).append(record)
        answer = record.get("predicted_answer", record.get("final_answer"))
        if isinstance(answer, dict):
            target["final_answer"] = answer
        elif answer is not None:
            parsed = parse_prediction(str(answer))
            target["final_answer"] = parsed if isinstance(parsed, dict) else {"_raw": str(answer)}
        if record.get("trajectory"):
            target["trajectory"] = record["trajectory"]
    return MergedDimension(copies, landed, unmatched)


def merge_predictions(
    gold: Mapping[str, Sequence[Any]], records: Mapping[str, Iterable[Any]]
) -> dict[str, list[Any]]:
    """Per dimension with records (even none): a copy of the gold samples whose tasks hold the
    records' answers (``final_answer``) and trajectories, ``{}`` / ``[]`` for unanswered tasks
    (:func:`merge_dimension`)."""
    return {dimension: merge_dimension(samples, records[dimension]).samples
            for dimension, samples in gold.items() if dimension in records}
