"""A DORA run scored: DORA's numbers, and beside them plancheck's labels of each task.

The numbers are DORA's ``run_evaluation``: each dimension with records (even none) has them
merged into a copy of its gold (:func:`merge_dimension`), and the copy scored
(:func:`score_samples`, :func:`aggregate`); a dimension without records is not scored.

The labels are read from where the records went and never change a number. A task is
*answered* when a record reached it, a *run failure* when the last record that reached it
carries an ``error`` (the runner's failed question; DORA scores the error's text, and the
earlier answer is gone; a later successful ``--resume`` record makes the task answered again),
*unanswered* when none did. Records that name no gold task are *unmatched*.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plancheck.dora.aggregation import (
    CAUGHT,
    TaskPair,
    aggregate,
    ordered_dimensions,
    score_samples,
    task_pairs,
)
from plancheck.dora.errors import DoraInputError, DoraRunError
from plancheck.dora.predictions import merge_dimension
from plancheck.dora.run_reader import RunRecords, read_run, read_task_dir

ANSWERED, RUN_FAILURE, UNANSWERED = "answered", "run_failure", "unanswered"


@dataclass(slots=True)
class ScoredDimension:
    rows: list[dict[str, Any]]  # DORA's task rows
    statuses: list[str]  # each row's label
    pairs: list[TaskPair]  # each row's gold and predicted task
    unmatched: list[Any] = field(default_factory=list)  # records that name no gold task


def score_dimension(gold_samples: Sequence[Any], records: Iterable[Any] | None,
                    polygon_roots: Sequence[str | Path] = ()) -> ScoredDimension:
    """One dimension's rows and labels (``records=None``: the gold against itself)."""
    if records is None:
        rows = score_samples(gold_samples, None, polygon_roots)
        pairs = list(task_pairs(gold_samples, None))
        return ScoredDimension(rows, [ANSWERED] * len(rows), pairs)
    try:
        merged = merge_dimension(gold_samples, records)
    except CAUGHT as error:
        raise DoraInputError(f"DORA cannot read these run records: {error}") from error
    rows = score_samples(gold_samples, merged.samples, polygon_roots)
    pairs = list(task_pairs(gold_samples, merged.samples))
    statuses = [_status(merged.landed.get((pair.pred_position, pair.task_index), []))
                if pair.pred_position is not None else UNANSWERED for pair in pairs]
    return ScoredDimension(rows, statuses, pairs, merged.unmatched)


def _status(records: Sequence[Any]) -> str:
    if not records:
        return UNANSWERED
    return RUN_FAILURE if records[-1].get("error") else ANSWERED


def score_dimensions(gold: Mapping[str, Sequence[Any]],
                     records: Mapping[str, Iterable[Any]] | None,
                     polygon_roots: Sequence[str | Path] = ()) -> dict[str, ScoredDimension]:
    """Each dimension DORA scores, in its order (t1..t5, then any other)."""
    return {dimension: score_dimension(gold[dimension],
                                       None if records is None else records[dimension],
                                       polygon_roots)
            for dimension in ordered_dimensions(gold)
            if records is None or dimension in records}


def summarize(rows: Mapping[str, Sequence[Mapping[str, Any]]],
              statuses: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """DORA's figures of the rows (:func:`aggregate`) and the labels counted per dimension
    (``run_failures``, ``unanswered``): the one summary ``score``, ``report`` and
    :func:`evaluate_run` give."""
    summary = aggregate(rows)
    for key, label in (("run_failures", RUN_FAILURE), ("unanswered", UNANSWERED)):
        summary[key] = {d: sum(1 for s in statuses.get(d, ()) if s == label) for d in rows}
    return summary


def zero_task_warnings(scored: Mapping[str, ScoredDimension]) -> list[str]:
    return [f"{dimension} has no tasks: its line says 0 tasks and it is left out of the DORA "
            "score (DORA's evaluator stops on such a dimension)"
            for dimension, found in scored.items() if not found.rows]


@dataclass(slots=True)
class _Read:
    gold: Mapping[str, Sequence[Any]]
    records: Mapping[str, Iterable[Any]] | None
    roots: Sequence[str | Path]
    run: RunRecords | None = None


def _read(gold: Any, records: Any, polygon_roots: Sequence[str | Path]) -> _Read:
    """Task and run directories read as DORA reads them; polygons found from both, as DORA
    finds them, unless ``polygon_roots`` says otherwise."""
    found = RunRecords()
    roots: list[str | Path] = []
    if isinstance(gold, (str, os.PathLike)):
        roots.append(Path(gold))
        gold = read_task_dir(Path(gold), found.warnings)
    run = None
    if isinstance(records, (str, os.PathLike)):
        roots.append(Path(records))
        if not Path(records).is_dir():
            raise DoraRunError(f"run directory not found: {records}")
        read_run(Path(records), gold, found)
        records, run = found.records, found
    elif roots:
        run = found
    return _Read(gold, records, polygon_roots or roots, run)


def evaluate_run(
    gold: Mapping[str, Sequence[Any]] | str | os.PathLike[str],
    records: Mapping[str, Iterable[Any]] | str | os.PathLike[str] | None = None,
    polygon_roots: Sequence[str | Path] = (),
) -> dict[str, Any]:
    """A whole run, as DORA's ``scripts/evaluate.py --run`` scores it.

    ``gold`` maps dimensions to gold samples, or is a tasks directory; ``records`` maps
    dimensions to run records in order, or is a run directory (both read as DORA reads them,
    :mod:`plancheck.dora.run_reader`), or is None (the gold against itself). Dimensions
    without records are not scored. The result is :func:`summarize`'s (DORA's figures, the
    labels counted) with the task rows under ``tasks``, their labels under ``statuses`` and
    the count of ``unmatched_records``; read from directories, also ``malformed_records`` and
    the ``warnings`` (what DORA would stop on, read anyway)."""
    read = _read(gold, records, polygon_roots)
    scored = score_dimensions(read.gold, read.records, read.roots)
    rows = {d: found.rows for d, found in scored.items()}
    statuses = {d: found.statuses for d, found in scored.items()}
    result = {**summarize(rows, statuses), "tasks": rows, "statuses": statuses,
              "unmatched_records": sum(len(found.unmatched) for found in scored.values())}
    if read.run is not None:
        result["malformed_records"] = len(read.run.malformed)
        result["warnings"] = [*read.run.warnings, *read.run.malformed,
                              *zero_task_warnings(scored)]
    return result
