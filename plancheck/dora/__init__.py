"""DORA (disaster-response agent benchmark): its trajectories, references and DORA's scorer.

* Trajectories of tool calls are read by :mod:`plancheck.dora.trajectory` and linted as plans
  by the compiler's DORA frontend (``plancheck check traj.json --tools pool.json``).
* DORA's released evaluator, exactly: :func:`trajectory_metrics` (:mod:`.metrics`),
  :func:`score_answer` (:mod:`.answers`, polygons in :mod:`.polygons`),
  :func:`parse_prediction` and :func:`merge_predictions` (:mod:`.predictions`), and
  :func:`aggregate` / :func:`score_samples` (:mod:`.aggregation`), and a whole run read as DORA
  reads it (:mod:`.run_reader`) and scored (:func:`evaluate_run`, :mod:`.runs`).
  ``tests/dora/test_dora_parity.py`` holds them to DORA's own verdicts.
* The paper's wording of the trajectory metrics and answer operators, kept for comparison:
  :mod:`plancheck.dora.paper_metrics`, :mod:`plancheck.dora.paper_answers`.

The names are exported lazily, so that reading a trajectory does not import the scorer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "DIMENSIONS": "dimensions",
    "aggregate": "aggregation",
    "aggregate_tasks": "aggregation",
    "evaluate_run": "runs",
    "sample_gsd": "aggregation",
    "score_samples": "aggregation",
    "task_row": "aggregation",
    "score_answer": "answers",
    "DoraInputError": "errors",
    "DoraRunError": "errors",
    "MissingExtraError": "errors",
    "METRICS": "metrics",
    "trajectory_metrics": "metrics",
    "PolygonWarning": "polygons",
    "merge_predictions": "predictions",
    "parse_prediction": "predictions",
}

__all__ = [
    "DIMENSIONS",
    "METRICS",
    "DoraInputError",
    "DoraRunError",
    "MissingExtraError",
    "PolygonWarning",
    "aggregate",
    "aggregate_tasks",
    "evaluate_run",
    "merge_predictions",
    "parse_prediction",
    "sample_gsd",
    "score_answer",
    "score_samples",
    "task_row",
    "trajectory_metrics",
]

if TYPE_CHECKING:
    from plancheck.dora.aggregation import (
        aggregate,
        aggregate_tasks,
        sample_gsd,
        score_samples,
        task_row,
    )
    from plancheck.dora.answers import score_answer
    from plancheck.dora.dimensions import DIMENSIONS
    from plancheck.dora.errors import DoraInputError, DoraRunError, MissingExtraError
    from plancheck.dora.metrics import METRICS, trajectory_metrics
    from plancheck.dora.polygons import PolygonWarning
    from plancheck.dora.predictions import merge_predictions, parse_prediction
    from plancheck.dora.runs import evaluate_run


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'plancheck.dora' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"plancheck.dora.{module}"), name)
