"""Score a DORA run: DORA's numbers (``plancheck.dora``), per task and per dimension, plus
plancheck's labels of each task and the first point of failure of every predicted trajectory.

Gold is DORA's task files (``tasks/t1_perception_and_assessment.json`` ...: lists of samples):
a tasks directory, read as DORA reads it (its five task files, no other), or files named one by
one (the dimension from the name, else from the first task's category code). A run is what
DORA's runner writes: a run directory (``<run>/<task>/benchmark.jsonl``), read as DORA's
``scripts/evaluate.py --run`` reads it (:mod:`plancheck.dora.run_reader`), or
``benchmark.jsonl`` files named one by one, whose records are matched to gold tasks by
``question_id`` (``<sample_id>_task<i>``), within the dimension their ``task_category``
names when it names one.

The numbers and the labels are :mod:`plancheck.dora.runs`' (the same as
:func:`plancheck.dora.evaluate_run`'s); the summary is made from the per-item lines
(:func:`summary_from_items`), so ``plancheck report`` on those lines says what ``score`` said.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plancheck.dora.dimensions import DIMENSIONS, task_file_name
from plancheck.dora.errors import DoraRunError
from plancheck.dora.metrics import METRICS, flatten, tool_sequence
from plancheck.dora.normalize import normalize_tool_name
from plancheck.dora.predictions import record_task
from plancheck.dora.run_reader import (
    RunRecords,
    read_records,
    read_run,
    read_task_dir,
    read_task_file,
)
from plancheck.dora.runs import score_dimensions, summarize, zero_task_warnings
from plancheck.formats.sniff import is_dora_task_dir
from plancheck.ir.nodes import Toolset

BENCHMARK = "dora"


# --------------------------------------------------------------------------- gold


def dimension_of(path: Path, samples: Sequence[Any]) -> str:
    """``t1`` ... ``t5`` from DORA's file name, else from the first task's category code."""
    stem = path.stem
    for dim, task in DIMENSIONS.items():
        if stem in (dim, task):
            return dim
    for sample in samples:
        for task in sample.get("tasks", []):
            code = task.get("task_category_code")
            if isinstance(code, str) and code.lower() in DIMENSIONS:
                return code.lower()
    return stem


def load_gold(paths: Sequence[str], warnings: list[str]
              ) -> tuple[dict[str, list[Any]], list[Path]]:
    """The gold samples per dimension, and the directories polygons are looked for in."""
    gold: dict[str, list[Any]] = {}
    roots: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            if not is_dora_task_dir(path):
                # As DORA's evaluator does with such a --tasks-dir: nothing scored, score 0.
                warnings.append(f"{path} holds none of DORA's task files "
                                f"({task_file_name('t1')} ...); nothing in the run is scored, "
                                "and the DORA score is 0, as DORA's evaluator gives")
                roots.append(path)
                continue
            for dim, samples in read_task_dir(path, warnings).items():
                gold.setdefault(dim, []).extend(samples)
            roots.append(path)
        else:
            samples = read_task_file(path, warnings)
            gold.setdefault(dimension_of(path, samples), []).extend(samples)
            roots.append(path.parent)
    if not gold and not all(Path(name).is_dir() for name in paths):
        raise DoraRunError("no DORA task files in " + ", ".join(paths))
    return gold, roots


# --------------------------------------------------------------------------- the run


@dataclass(slots=True)
class Run:
    found: RunRecords = field(default_factory=RunRecords)
    unmatched: list[str] = field(default_factory=list)  # question ids of loose records
    roots: list[Path] = field(default_factory=list)

    @property
    def records(self) -> dict[str, list[dict[str, Any]]]:
        return self.found.records


def load_run(paths: Sequence[str], gold: Mapping[str, Sequence[Any]]) -> Run:
    run = Run()
    keys = {dim: {(s.get("sample_id", ""), i) for s in samples
                  for i, _ in enumerate(s.get("tasks", []))} for dim, samples in gold.items()}
    for name in paths:
        path = Path(name)
        if path.is_dir():
            run.roots.append(path)
            read_run(path, gold, run.found)
            continue
        run.roots.append(path.parent)
        for record in read_records(path, run.found):
            target = _dimension(record, keys)
            if target is None:
                run.unmatched.append(str(record.get("question_id")))
            else:
                run.found.records.setdefault(target, []).append(record)
    return run


def _dimension(record: Mapping[str, Any], keys: Mapping[str, set[tuple[Any, int]]]
               ) -> str | None:
    """The dimension of a record of a loose ``benchmark.jsonl``: the one its category names
    when that one has its task, else the only one that has it."""
    named = [record.get("task_category"), record.get("task_category_code")]
    key = record_task(record)
    for value in named:
        if not isinstance(value, str):
            continue
        for dim, task in DIMENSIONS.items():
            if value.lower() in (dim, task) and key in keys.get(dim, ()):
                return dim
    holders = [dim for dim, found in keys.items() if key in found]
    return holders[0] if len(holders) == 1 else None


# --------------------------------------------------------------------------- scoring


@dataclass(slots=True)
class DoraResults:
    summary: dict[str, Any]
    items: list[dict[str, Any]]  # per-item lines: one per gold task, one per empty dimension
    warnings: list[str]


def score_run(gold: Mapping[str, Sequence[Any]], run: Run, roots: Sequence[Path],
              toolset: Toolset | None) -> DoraResults:
    """DORA's figures for the run, and one item per gold task of a scored dimension."""
    scored = score_dimensions(gold, run.records, [str(r) for r in roots])
    items: list[dict[str, Any]] = []
    for dim, found in scored.items():
        if not found.rows:
            items.append({"benchmark": BENCHMARK, "category": dim, "n_tasks": 0})
        for row, status, pair in zip(found.rows, found.statuses, found.pairs, strict=True):
            items.append(_item(dim, row, status, pair.pred_task.get("trajectory", []),
                               pair.gold_task.get("trajectory", []), toolset))
    summary = summary_from_items(items)
    summary["malformed_records"] = len(run.found.malformed)
    summary["unmatched_records"] = len(run.unmatched) + sum(
        len(found.unmatched) for found in scored.values())
    return DoraResults(summary, items, [*run.found.warnings, *zero_task_warnings(scored)])


def _item(dim: str, row: Mapping[str, Any], status: str, pred: Any, gold: Any,
          toolset: Toolset | None) -> dict[str, Any]:
    return {
        "benchmark": BENCHMARK,
        "question_id": f"{row['sample_id']}_task{row['task_idx']}",
        "category": dim,
        "status": status,
        "sample_id": row["sample_id"],
        "task_idx": row["task_idx"],
        "answer": row["task_score"],
        "fields": row["field_scores"],
        **{name: row[name] for name in METRICS},
        "fpof": first_point_of_failure(pred, gold, toolset, row["par_acc"]),
    }


def first_point_of_failure(pred: Any, gold: Any, toolset: Toolset | None,
                           par_acc: float = 1.0) -> dict[str, Any] | None:
    """The first error the checker finds in ``pred`` (with ``toolset``), else the first
    difference from ``gold``'s tool sequence (steps counted without loop/reduce wrappers),
    else a parameter error when the arguments lose credit; ``None`` when nothing fails."""
    from plancheck.dora.fpof import fpof_of_code

    if not pred:
        return _failure("empty_output", None, "the trajectory has no calls", "PC112")
    if toolset is not None:
        found = _first_error(pred, toolset)
        if found is not None:
            mapped = fpof_of_code(found["code"])
            if mapped is not None:
                return {**found, "fpof_type": mapped[0], "fpof_category": mapped[1]}
    try:
        pred_seq = tool_sequence(flatten(pred if isinstance(pred, list) else []))
        gold_seq = tool_sequence(flatten(gold if isinstance(gold, list) else []))
    except (TypeError, ValueError):
        return _failure("format_error", None, "a call name cannot be read", "PC108")
    for index, expected in enumerate(gold_seq):
        if index >= len(pred_seq):
            return _failure("early_stop", index, f"the trajectory stops before `{expected}`",
                            "PC609")
        if pred_seq[index] != expected:
            return _failure("agent_mismatch", index, f"calls `{pred_seq[index]}` where the "
                            f"gold trajectory calls `{expected}`", "PC604")
    if len(pred_seq) > len(gold_seq):
        return _failure("hallucinated_extra_steps", len(gold_seq),
                        f"calls `{pred_seq[len(gold_seq)]}` after the gold trajectory ends",
                        "PC610")
    if par_acc < 1.0:
        step = _first_argument_difference(pred, gold)
        return _failure("parameter_error", step, "arguments differ from the gold trajectory's",
                        "PC605")
    return None


def _failure(kind: str, step: int | None, message: str, code: str) -> dict[str, Any]:
    from plancheck.dora.fpof import category

    return {"code": code, "fpof_type": kind, "fpof_category": category(kind), "step": step,
            "message": message}


def _first_error(pred: Any, toolset: Toolset) -> dict[str, Any] | None:
    from plancheck.compiler.dora_native import lower_dora
    from plancheck.compiler.driver import check_unit
    from plancheck.compiler.units import PlanUnit
    from plancheck.diagnostics.positions import LineIndex, Positions
    from plancheck.diagnostics.span import Span

    plan, lowered = lower_dora(pred, Span("<trajectory>", pointer=""))
    unit = PlanUnit("<trajectory>", None, Positions("<trajectory>", LineIndex("")), plan=plan,
                    diagnostics=lowered)
    report = check_unit(unit, toolset)
    for diagnostic in report.errors:
        span = diagnostic.span
        return {"code": diagnostic.code, "step": diagnostic.data.get("position"),
                "message": diagnostic.message,
                "pointer": span.pointer if span is not None else None}
    return None


def _first_argument_difference(pred: Any, gold: Any) -> int | None:
    pred_steps = flatten(pred if isinstance(pred, list) else [])
    gold_steps = flatten(gold if isinstance(gold, list) else [])
    for index, (p, g) in enumerate(zip(pred_steps, gold_steps, strict=False)):
        p_args, g_args = p.get("args"), g.get("args")
        if normalize_tool_name(p.get("call")) != normalize_tool_name(g.get("call")):
            return index
        if not isinstance(p_args, dict) or not isinstance(g_args, dict) or \
                set(p_args) != set(g_args) or p_args != g_args:
            return index
    return None


# --------------------------------------------------------------------------- the table


def results_table(summary: Mapping[str, Any]) -> str:
    """DORA's results table (its layout: tasks, answer score and the five metrics per
    dimension, then the DORA line), with run failures counted on the right."""
    header = (f"{'Dim':<6} {'Tasks':>6} {'Answer':>10} {'T-Any':>9} {'T-Ord':>9} {'T-EM':>9} "
              f"{'ParAcc':>9} {'Eff':>9} {'Failed':>7}")
    rule = "-" * len(header)
    lines = [rule, header, rule]
    dims = summary["dimensions"]
    failures = summary.get("run_failures", {})
    for dim, figures in dims.items():
        if figures.get("n_tasks", 0) == 0:
            lines.append(f"{dim:<6} {0:>6}")
            continue
        lines.append(f"{dim:<6} {figures['n_tasks']:>6} {figures['dim_score']:>10.6f} "
                     + " ".join(f"{figures[m]:>9.6f}" for m in METRICS)
                     + f" {failures.get(dim, 0):>7}")
    lines.append(rule)
    if any(f.get("n_tasks", 0) > 0 for f in dims.values()):
        trajectory = summary["trajectory"]
        lines.append(f"{'DORA':<6} {summary['n_tasks']:>6} {summary['dora_score']:>10.6f} "
                     + " ".join(f"{trajectory[m]:>9.6f}" for m in METRICS)
                     + f" {sum(failures.values()):>7}")
    lines.append(rule)  # (with no DORA line too: DORA's table closes with this rule always)
    lines.append("")
    lines.append(f"  DORA Score: {summary['dora_score']:.6f}")
    return "\n".join(lines) + "\n"


def summary_from_items(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The summary of per-item lines (what ``score`` prints and ``plancheck report``
    renders): DORA's aggregation of the rows the lines carry, and the labels counted; a line
    ``{"category": D, "n_tasks": 0}`` stands for a dimension without tasks."""
    rows: dict[str, list[dict[str, Any]]] = {}
    statuses: dict[str, list[str]] = {}
    for item in items:
        dim = str(item["category"])
        rows.setdefault(dim, [])
        statuses.setdefault(dim, [])
        if "n_tasks" in item:
            continue
        rows[dim].append({"task_score": item["answer"], **{m: item[m] for m in METRICS}})
        statuses[dim].append(str(item.get("status")))
    return summarize(rows, statuses)


def iter_items(text: str) -> Iterator[dict[str, Any]]:
    """The DORA per-item lines of ``text`` (lines end at ``\n`` only: an answer may hold
    U+2028 raw)."""
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(item, dict) or item.get("benchmark") != BENCHMARK or \
                not isinstance(item.get("category"), str):
            continue
        if item.get("n_tasks") == 0 or (
                all(isinstance(item.get(m), (int, float)) for m in METRICS)
                and (item.get("answer") is None or isinstance(item.get("answer"), (int, float)))):
            yield item
