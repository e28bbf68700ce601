"""The strict reading (``--scoring strict``): only a plan that is valid JSON, in the whole
answer or one fenced block, with exactly the schema's keys is read; the comparisons are the
reference's."""

from __future__ import annotations

import json
import re
from typing import Any, Final

from plancheck.compiler.extraction.lenient_json import reject_constant
from plancheck.compiler.extraction.sentinels import NO_ANSWER
from plancheck.scoring.reference.compare import failed_verdict, judge
from plancheck.scoring.reference.prepared import GoldPlan
from plancheck.scoring.reference.verdict import (
    CANONICAL_KEYS,
    CANONICAL_ORDER,
    NOT_A_LIST,
    ReferenceVerdict,
)

_FENCE: Final = re.compile(r"```(?:json|JSON)?[ \t]*\r?\n(?P<body>.*)```", re.DOTALL)


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("duplicate key in object")
    return result


def _strict_step_problem(item: Any) -> str | None:
    if not isinstance(item, dict):
        return "is not an object"
    if item.keys() != CANONICAL_KEYS:
        # (Comprehensions: ``frozenset - dict_keys`` is a set at run time, not the frozenset
        # typeshed declares, which compiled code would reject.)
        missing = sorted(key for key in CANONICAL_KEYS if key not in item)
        extra = sorted(key for key in item if key not in CANONICAL_KEYS)
        return f"keys differ from the schema (missing {missing}, extra {extra})"
    if type(item["step"]) is not int:
        return "`step` is not an integer"
    if not isinstance(item["agent"], str):
        return "`agent` is not a string"
    if not isinstance(item["inputs"], dict):
        return "`inputs` is not an object"
    if not isinstance(item["outputs"], list):
        return "`outputs` is not an array"
    dependence = item["dependence"]
    if not isinstance(dependence, list) or any(type(x) is not int for x in dependence):
        return "`dependence` is not an array of integers"
    content = item["dependence_content"]
    if content is not None and not isinstance(content, dict):
        return "`dependence_content` is neither null nor an object"
    return None


def strict_read(completion: str | None, problems: list[str]) -> Any:
    """Strict mode: one JSON document (optionally as the only thing in one markdown fence),
    an array of schema-exact step objects, nothing mended, nothing guessed."""
    if not isinstance(completion, str) or not completion.strip():
        return NO_ANSWER
    body = completion.strip()
    fenced = _FENCE.fullmatch(body)
    if fenced is not None:
        body = fenced.group("body")
        if "```" in body:
            problems.append("more than one markdown code fence")
            return NOT_A_LIST
    try:
        value = json.loads(
            body, parse_constant=reject_constant, object_pairs_hook=_reject_duplicate_keys
        )
    except (ValueError, RecursionError) as error:
        problems.append(f"not a single JSON document: {error}")
        return NOT_A_LIST
    if not isinstance(value, list):
        problems.append("the JSON document is not an array")
        return NOT_A_LIST
    for index, item in enumerate(value):
        problem = _strict_step_problem(item)
        if problem is not None:
            problems.append(f"step object #{index} {problem}")
            return NOT_A_LIST
    return [{key: item[key] for key in CANONICAL_ORDER} for item in value]


def judge_strict(answer: Any, gold: GoldPlan, problems: list[str]) -> ReferenceVerdict:
    if answer is NOT_A_LIST:
        return failed_verdict("format_error", None, [], problems[0])
    if answer is NO_ANSWER:
        return failed_verdict("empty_output", None, [], "the completion is empty")
    return judge(answer, gold, [])
