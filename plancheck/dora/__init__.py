"""DORA (disaster-response agent benchmark) support: trajectories as a plan frontend, and
DORA's scorer.

* :func:`plancheck.dora.frontend.check_trajectory` lints a trajectory of tool calls against a
  toolset (an MCP ``tools/list`` pool, say); ``plancheck check traj.json --tools pool.json``
  does the same from the command line.
* :func:`plancheck.dora.score.score_trajectory` scores a predicted trajectory against a gold one
  with the trajectory metrics as the DORA paper words them (:mod:`plancheck.scoring.trajectory`).
* DORA's released evaluator, exactly: :func:`trajectory_metrics` (:mod:`.metrics`),
  :func:`score_answer` (:mod:`.answers`, polygons in :mod:`.polygons`),
  :func:`parse_prediction` and :func:`merge_predictions` (:mod:`.predictions`), and
  :func:`aggregate` / :func:`score_samples` / :func:`evaluate_run` (:mod:`.aggregate`).
  ``tests/test_dora_parity.py`` holds them to DORA's own verdicts.
"""

from plancheck.dora.aggregate import (
    DIMENSIONS,
    aggregate,
    aggregate_tasks,
    evaluate_run,
    sample_gsd,
    score_samples,
    task_row,
)
from plancheck.dora.answers import score_answer
from plancheck.dora.errors import DoraInputError, MissingExtraError
from plancheck.dora.metrics import METRICS, trajectory_metrics
from plancheck.dora.polygons import PolygonWarning
from plancheck.dora.predictions import merge_predictions, parse_prediction

__all__ = [
    "DIMENSIONS",
    "METRICS",
    "DoraInputError",
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
