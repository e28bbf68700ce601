"""DORA's aggregation: task rows, dimension means, and the DORA score.

DORA groups tasks into five dimensions (T1-T5, :data:`DIMENSIONS`). A dimension's answer
score is the mean of its tasks' answer scores, tasks scoring ``None`` (all fields ignored)
left out, 0 when none is left; each trajectory metric is the mean over all its tasks. Task
rows and dimension figures are rounded to 6 decimals, as DORA reports them, and the DORA
score is the mean of the dimension scores of the dimensions with tasks, rounded again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from plancheck.dora.answers import score_fields
from plancheck.dora.dimensions import DIMENSIONS
from plancheck.dora.errors import DoraInputError
from plancheck.dora.metrics import METRICS, trajectory_metrics

DIGITS = 6
CAUGHT = (TypeError, ValueError, AttributeError, OverflowError, RecursionError, KeyError, OSError)


def sample_gsd(sample: Mapping[str, Any]) -> float | None:
    """The scene's ground sample distance (``pixel_size_m``) from a sample's ``input_data``:
    the pre- or post-event image's, else the first temporal image's that has one. Raises
    :class:`DoraInputError` where DORA's ``get_gsd`` raises (a value that is not a number,
    ``input_data`` that is not an object)."""
    try:
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
    except (TypeError, ValueError, AttributeError, OverflowError) as error:
        raise DoraInputError(f"DORA cannot read the sample's pixel_size_m: {error}") from error
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


def ordered_dimensions(dimensions: Iterable[str]) -> list[str]:
    """DORA's order (t1..t5) first, then any other dimension in the order given."""
    given = list(dimensions)
    return [d for d in DIMENSIONS if d in given] + [d for d in given if d not in DIMENSIONS]


def aggregate(rows_by_dimension: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """The DORA score and per-dimension figures from task rows grouped by dimension.

    ``trajectory`` is the macro-average of each metric over the dimensions with tasks (the
    ``DORA`` line of DORA's results table, not rounded)."""
    dimensions = {d: aggregate_tasks(rows_by_dimension[d])
                  for d in ordered_dimensions(rows_by_dimension)}
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


class TaskPair(NamedTuple):
    """A gold task and the predicted task DORA scores it against."""

    sample_index: int
    gold_sample: Any
    task_index: int
    gold_task: Any
    pred_task: Any
    pred_position: int | None  # the predicted sample's position (None: the gold, or a stub)


def _matching_sample(
    index: int,
    gold_sample: Mapping[str, Any],
    pred_samples: Sequence[Any] | None,
    by_id: Mapping[Any, int],
) -> tuple[Any, int | None]:
    """The predicted sample for a gold one, and its position: by ``sample_id``, else by
    position, else none (an empty stub)."""
    if pred_samples is None:
        return gold_sample, None
    sample_id = gold_sample.get("sample_id", f"sample_{index}")
    if sample_id in by_id:
        return pred_samples[by_id[sample_id]], by_id[sample_id]
    if index < len(pred_samples):
        return pred_samples[index], index
    return {"sample_id": sample_id, "tasks": []}, None


def task_pairs(gold_samples: Sequence[Any], pred_samples: Sequence[Any] | None
               ) -> Iterator[TaskPair]:
    """Every task of every gold sample with the task at the same index of the matching
    predicted sample (``{}`` when it has none), in DORA's order; ``pred_samples=None`` pairs
    the gold with itself (DORA's sanity mode)."""
    by_id: dict[Any, int] = {}
    for position, sample in enumerate(pred_samples or ()):
        if sample.get("sample_id", ""):
            by_id[sample.get("sample_id", "")] = position
    for index, gold_sample in enumerate(gold_samples):
        pred_sample, pred_position = _matching_sample(index, gold_sample, pred_samples, by_id)
        pred_tasks = pred_sample.get("tasks", [])
        for task_index, gold_task in enumerate(gold_sample.get("tasks", [])):
            if pred_samples is None:
                pred_task = gold_task
            else:
                pred_task = pred_tasks[task_index] if task_index < len(pred_tasks) else {}
            yield TaskPair(index, gold_sample, task_index, gold_task, pred_task, pred_position)


def score_samples(
    gold_samples: Sequence[Any],
    pred_samples: Sequence[Any] | None = None,
    polygon_roots: Sequence[str | Path] = (),
) -> list[dict[str, Any]]:
    """The task rows of one dimension: every task of every gold sample against the task at the
    same index of the matching predicted sample (missing: scored against nothing).
    ``pred_samples=None`` scores the gold against itself (DORA's sanity mode)."""
    try:
        # Every sample's GSD is read, as DORA reads it, even a sample without tasks.
        gsds = [sample_gsd(sample) for sample in gold_samples]
        rows = []
        for pair in task_pairs(gold_samples, pred_samples):
            answer, fields, metrics = _score_task(pair.pred_task, pair.gold_task,
                                                  gsds[pair.sample_index], polygon_roots)
            sample_id = pair.gold_sample.get("sample_id", f"sample_{pair.sample_index}")
            rows.append(task_row(sample_id, pair.task_index, answer, fields, metrics))
        return rows
    except DoraInputError:
        raise
    except CAUGHT as error:
        raise DoraInputError(f"DORA cannot score these samples: {error}") from error
