"""Reading a model's answer the way the DisasterBench evaluator reads it.

The planners need the answer inside a completion (to vote over samples, to find the first usable
candidate, to post-process) exactly as the score will later see it, so they use the scorer's own
extraction and normalisation (:func:`plancheck.scoring.reference.score_completion`).
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plancheck.scoring.reference import GoldPlan


@cache
def _no_gold() -> GoldPlan:
    from plancheck.scoring.reference import prepare_gold

    return prepare_gold([])


def reference_answer(completion: str | None) -> list[dict[str, Any]] | None:
    """The plan the evaluator reads from ``completion`` (canonical steps), or ``None``."""
    if not completion:
        return None
    from plancheck.scoring.reference import score_completion

    prediction = score_completion(completion, _no_gold()).prediction
    if prediction is None:
        return None
    return [step for step in prediction if isinstance(step, dict)]


def has_answer(completion: str | None) -> bool:
    """True when the evaluator finds a non-empty plan in ``completion``."""
    return bool(reference_answer(completion))


def _sorted_dependence(value: Any) -> Any:
    if isinstance(value, list):
        try:
            return sorted(value)
        except TypeError:
            return value
    return value


def answer_key(answer: list[dict[str, Any]]) -> str:
    """Equal keys exactly when the evaluator's equivalence holds: deep equality of the steps,
    with every ``dependence`` list compared as a sorted list."""
    canonical = [
        {k: (_sorted_dependence(v) if k == "dependence" else v) for k, v in step.items()}
        for step in answer
    ]
    return json.dumps(canonical, sort_keys=True, ensure_ascii=False)
