"""DORA's aggregation: task rows, dimension means, and the DORA score.

DORA groups tasks into five dimensions (T1-T5, :data:`DIMENSIONS`). A dimension's answer
score is the mean of its tasks' answer scores, tasks scoring ``None`` (all fields ignored)
left out, 0 when none is left; each trajectory metric is the mean over all its tasks. Task
rows and dimension figures are rounded to 6 decimals, as DORA reports them, and the DORA
score is the mean of the dimension scores of the dimensions with tasks, rounded again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from plancheck.dora.answers import score_fields
from plancheck.dora.errors import DoraInputError
from plancheck.dora.metrics import METRICS, trajectory_metrics
from plancheck.dora.predictions import merge_predictions

DIMENSIONS = {
    "t1": "t1_perception_and_assessment",
    "t2": "t2_spatial_relation_analysis",
    "t3": "t3_operational_planning",
    "t4": "t4_multi_temporal_reasoning",
    "t5": "t5_multi_modal_report_synthesis",
}
DIGITS = 6
_CAUGHT = (TypeError, ValueError, AttributeError, OverflowError, RecursionError, KeyError, OSError)


def sample_gsd(sample: Mapping[str, Any]) -> float | None:
    """The scene's ground sample distance (``pixel_size_m``) from a sample's ``input_data``:
    the pre- or post-event image's, else the first temporal image's that has one."""
    inputs = sample.get("input_data", {})
    for key in ("pre_image", "post_image"):
        image = inputs.get(key, {})
        if isinstance(image, dict) and "pixel_size_m" in image:
            return float(image["pixel_size_m"])
    temporal = inputs.get("temporal_images", {})
    if isinstance(temporal, dict):
        for image in temporal.values():
            if isinstance(image, dict) and "pixel_size_m" in image:
                return float(image["pixel_size_m"])
    return None


def task_row(
    sample_id: Any,
    task_index: int,
    answer_score: float | None,
    field_scores: Mapping[str, float],
    metrics: Mapping[str, float],
) -> dict[str, Any]:
    """One task's row as DORA reports it (figures rounded to 6 decimals)."""
    return {
        "sample_id": sample_id,
        "task_idx": task_index,
        "task_score": None if answer_score is None else round(answer_score, DIGITS),
        "field_scores": {k: round(v, DIGITS) for k, v in field_scores.items()},
        "n_scored_fields": len(field_scores),
        **{name: round(metrics[name], DIGITS) for name in METRICS},
    }


def aggregate_tasks(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A dimension's figures from its task rows (``task_score`` and the five metrics)."""
    if not rows:
        return {"n_tasks": 0, "n_scored_tasks": 0}
    scored = [row["task_score"] for row in rows if row["task_score"] is not None]
    answer = sum(scored) / len(scored) if scored else 0.0
    summary: dict[str, Any] = {
        "dim_score": round(answer, DIGITS),
        "n_tasks": len(rows),
        "n_scored_tasks": len(scored),
    }
    for name in METRICS:
        summary[name] = round(sum(row[name] for row in rows) / len(rows), DIGITS)
    return summary


def _ordered(dimensions: Iterable[str]) -> list[str]:
    """DORA's order (t1..t5) first, then any other dimension in the order given."""
    given = list(dimensions)
    return [d for d in DIMENSIONS if d in given] + [d for d in given if d not in DIMENSIONS]


def aggregate(rows_by_dimension: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """The DORA score and per-dimension figures from task rows grouped by dimension.

    ``trajectory`` is the macro-average of each metric over the dimensions with tasks (the
    ``DORA`` line of DORA's results table, not rounded)."""
    dimensions = {d: aggregate_tasks(rows_by_dimension[d]) for d in _ordered(rows_by_dimension)}
    active = [summary for summary in dimensions.values() if summary["n_tasks"] > 0]
    score = sum(s["dim_score"] for s in active) / len(active) if active else 0.0
    trajectory = {
        name: sum(s[name] for s in active) / len(active) if active else 0.0 for name in METRICS
    }
    return {
        "dora_score": round(score, DIGITS),
        "dimensions": dimensions,
        "trajectory": trajectory,
        "n_tasks": sum(s["n_tasks"] for s in active),
    }


def _score_task(
    pred_task: Any, gold_task: Any, gsd_m: float | None, roots: Sequence[str | Path]
) -> tuple[float | None, dict[str, float], dict[str, float]]:
    pred_answer = pred_task.get("final_answer", {})
    gold_answer = gold_task.get("final_answer", {})
    eval_spec = gold_task.get("eval_spec", {})
    fields = score_fields(pred_answer, gold_answer, eval_spec, gsd_m, roots)
    answer = sum(fields.values()) / len(fields) if fields else None
    metrics = trajectory_metrics(pred_task.get("trajectory", []), gold_task.get("trajectory", []))
    return answer, fields, metrics


def _matching_sample(
    index: int,
    gold_sample: Mapping[str, Any],
    pred_samples: Sequence[Any] | None,
    by_id: Mapping[Any, Any],
) -> Any:
    """The predicted sample for a gold one: by ``sample_id``, else by position, else none."""
    if pred_samples is None:
        return gold_sample
    sample_id = gold_sample.get("sample_id", f"sample_{index}")
    if sample_id in by_id:
        return by_id[sample_id]
    if index < len(pred_samples):
        return pred_samples[index]
    return {"sample_id": sample_id, "tasks": []}


def score_samples(
    gold_samples: Sequence[Any],
    pred_samples: Sequence[Any] | None = None,
    polygon_roots: Sequence[str | Path] = (),
) -> list[dict[str, Any]]:
    """The task rows of one dimension: every task of every gold sample against the task at the
    same index of the matching predicted sample (missing: scored against nothing).
    ``pred_samples=None`` scores the gold against itself (DORA's sanity mode)."""
    try:
        by_id = {}
        for sample in pred_samples or ():
            if sample.get("sample_id", ""):
                by_id[sample.get("sample_id", "")] = sample
        rows = []
        for index, gold_sample in enumerate(gold_samples):
            pred_sample = _matching_sample(index, gold_sample, pred_samples, by_id)
            gsd = sample_gsd(gold_sample)
            pred_tasks = pred_sample.get("tasks", [])
            for task_index, gold_task in enumerate(gold_sample.get("tasks", [])):
                if pred_samples is None:
                    pred_task = gold_task
                else:
                    pred_task = pred_tasks[task_index] if task_index < len(pred_tasks) else {}
                answer, fields, metrics = _score_task(pred_task, gold_task, gsd, polygon_roots)
                sample_id = gold_sample.get("sample_id", f"sample_{index}")
                rows.append(task_row(sample_id, task_index, answer, fields, metrics))
        return rows
    except _CAUGHT as error:
        raise DoraInputError(f"DORA cannot score these samples: {error}") from error


def evaluate_run(
    gold: Mapping[str, Sequence[Any]],
    records: Mapping[str, Iterable[Any]] | None = None,
    polygon_roots: Sequence[str | Path] = (),
) -> dict[str, Any]:
    """A whole run, as DORA's ``scripts/evaluate.py --run`` scores it: ``gold`` maps dimensions
    to gold samples, ``records`` dimensions to run records (None: gold against itself).
    Dimensions without records are not scored. The result is :func:`aggregate`'s with the
    task rows under ``tasks``."""
    try:
        predictions = None if records is None else merge_predictions(gold, records)
    except _CAUGHT as error:
        raise DoraInputError(f"DORA cannot read these run records: {error}") from error
    rows: dict[str, list[dict[str, Any]]] = {}
    for dimension in _ordered(gold):
        if predictions is not None and dimension not in predictions:
            continue
        pred = None if predictions is None else predictions[dimension]
        rows[dimension] = score_samples(gold[dimension], pred, polygon_roots)
    return {**aggregate(rows), "tasks": rows}
