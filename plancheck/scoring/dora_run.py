"""Score a DORA run: DORA's numbers (``plancheck.dora``), per task and per dimension, plus the
first point of failure of every predicted trajectory.

Gold is DORA's task files (``tasks/t1_perception_and_assessment.json`` ...: lists of samples),
named one by one or by their directory. A run is what DORA's runner writes: a run directory
(``<run>/<task>/benchmark.jsonl``, one per dimension, as ``scripts/evaluate.py --run`` reads
it) or ``benchmark.jsonl`` files, whose records are matched to gold tasks by ``question_id``
(``<sample_id>_task<i>``), within the dimension their ``task_category`` names when it names one.

The numbers are DORA's (:func:`plancheck.dora.merge_predictions`,
:func:`plancheck.dora.score_samples`, :func:`plancheck.dora.aggregate`), with one reading of
the records made explicit: a record whose ``error`` is set is a *run failure*. Its
``predicted_answer`` (the runner writes ``"Error: ..."``) is not taken as the model's answer;
DORA scores that text as an answer without the gold fields, which is what an unanswered task
scores, so the numbers do not change; the failures are counted apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plancheck.dora.aggregate import DIMENSIONS, aggregate, score_samples
from plancheck.dora.errors import DoraInputError
from plancheck.dora.metrics import METRICS, flatten, tool_sequence
from plancheck.dora.normalize import normalize_tool_name
from plancheck.dora.predictions import merge_predictions, record_task
from plancheck.fileio import reason
from plancheck.ir.nodes import Toolset

BENCHMARK = "dora"
RECORDS = "benchmark.jsonl"


def _why(error: OSError | UnicodeDecodeError) -> str:
    return reason(error) if isinstance(error, OSError) else f"not UTF-8 ({error.reason})"


class DoraRunError(Exception):
    """The gold task files or the run cannot be read."""


# --------------------------------------------------------------------------- gold


def is_task_file_value(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(s, dict) and isinstance(s.get("tasks"), list) for s in value)


def task_files(paths: Sequence[str]) -> list[Path]:
    """The task files ``paths`` name (a directory stands for its ``*.json`` files)."""
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found.extend(sorted(p for p in path.glob("*.json") if p.is_file()))
        else:
            found.append(path)
    return found


def looks_like_dora_gold(paths: Sequence[str]) -> bool:
    """Whether ``paths`` name DORA task files (a directory of them, or JSON lists of samples)."""
    files = task_files(paths)
    if not files or any(p.suffix.lower() != ".json" for p in files):
        return False
    try:
        return is_task_file_value(json.loads(files[0].read_text(encoding="utf-8-sig")))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False


def dimension_of(path: Path, samples: Sequence[Any]) -> str:
    """``t1`` ... ``t5`` from DORA's file name, else from the first task's category code."""
    stem = path.stem
    for dim, task in DIMENSIONS.items():
        if stem in (dim, task):
            return dim
    for sample in samples:
        for task in sample.get("tasks", []):
            code = task.get("task_category_code") if isinstance(task, dict) else None
            if isinstance(code, str) and code.lower() in DIMENSIONS:
                return code.lower()
    return stem


def load_gold(paths: Sequence[str]) -> tuple[dict[str, list[Any]], list[Path]]:
    gold: dict[str, list[Any]] = {}
    files = task_files(paths)
    if not files:
        raise DoraRunError("no DORA task files in " + ", ".join(paths))
    for path in files:
        try:
            value = json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError) as error:
            raise DoraRunError(f"cannot read {path}: {_why(error)}") from None
        except (ValueError, RecursionError) as error:
            raise DoraRunError(f"{path} is not valid JSON: {error}") from None
        if not is_task_file_value(value):
            raise DoraRunError(f"{path} is not a DORA task file (a list of samples with tasks)")
        gold.setdefault(dimension_of(path, value), []).extend(value)
    return gold, files


# --------------------------------------------------------------------------- the run


@dataclass(slots=True)
class Run:
    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    failures: dict[str, set[tuple[Any, int]]] = field(default_factory=dict)
    malformed: list[str] = field(default_factory=list)  # "file:line: why"
    unmatched: list[str] = field(default_factory=list)  # question ids
    roots: list[Path] = field(default_factory=list)


def load_run(paths: Sequence[str], gold: Mapping[str, Sequence[Any]]) -> Run:
    run = Run()
    keys = {dim: {(s.get("sample_id", ""), i) for s in samples
                  for i, _ in enumerate(s.get("tasks", []))} for dim, samples in gold.items()}
    for name in paths:
        path = Path(name)
        files: list[tuple[str | None, Path]]
        if path.is_dir():
            run.roots.append(path)
            files = [(dim, path / task / RECORDS) for dim, task in DIMENSIONS.items()
                     if (path / task / RECORDS).is_file()]
            if (path / RECORDS).is_file():
                files.append((None, path / RECORDS))
            if not files:
                raise DoraRunError(f"{path} holds no {RECORDS} (expected <run>/<task>/{RECORDS})")
        else:
            run.roots.append(path.parent)
            files = [(None, path)]
        for dim, file in files:
            _read_records(file, dim, keys, run)
    return run


def _read_records(file: Path, dim: str | None, keys: Mapping[str, set[tuple[Any, int]]],
                  run: Run) -> None:
    try:
        data = file.read_bytes()
    except OSError as error:
        raise DoraRunError(f"cannot read {file}: {_why(error)}") from None
    # A line that is not UTF-8 is one bad record, not a reason to drop the run (DORA's
    # evaluator stops at it): undecodable bytes become lone surrogates, found per line below.
    text = data.decode("utf-8-sig", errors="surrogateescape")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{file}:{number}"
        if not line.isascii() and not _is_utf8(line):
            run.malformed.append(f"{where}: the line is not UTF-8")
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            run.malformed.append(f"{where}: the line is not JSON")
            continue
        if not isinstance(record, dict):
            run.malformed.append(f"{where}: the line is not a JSON object")
            continue
        if not isinstance(record.get("question_id", ""), str) or \
                not isinstance(record.get("sample_id", ""), (str, int, type(None))):
            run.unmatched.append(repr(record.get("question_id")))  # DORA cannot read it
            continue
        target = dim if dim is not None else _dimension(record, keys)
        if target is None or target not in keys:
            run.unmatched.append(str(record.get("question_id")))
            continue
        if record.get("error"):
            # A run failure: its text is no answer (a partial trajectory is still DORA's).
            run.failures.setdefault(target, set()).add(record_task(record))
            record = {**record, "predicted_answer": None, "final_answer": None}
        run.records.setdefault(target, []).append(record)


def _is_utf8(line: str) -> bool:
    """Whether ``line`` (decoded with ``surrogateescape``) was valid UTF-8."""
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _dimension(record: Mapping[str, Any], keys: Mapping[str, set[tuple[Any, int]]]
               ) -> str | None:
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
    items: list[dict[str, Any]]


def score_run(gold: Mapping[str, Sequence[Any]], run: Run, roots: Sequence[Path],
              toolset: Toolset | None) -> DoraResults:
    """DORA's figures for the run, and one item per gold task of a scored dimension."""
    try:
        predictions = merge_predictions(gold, run.records)
    except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as error:
        raise DoraInputError(f"DORA cannot merge these records into the gold tasks: "
                             f"{error}") from error
    answered = {dim: {record_task(r) for r in records} for dim, records in run.records.items()}
    rows: dict[str, list[dict[str, Any]]] = {}
    items: list[dict[str, Any]] = []
    ordered = [d for d in DIMENSIONS if d in gold] + [d for d in gold if d not in DIMENSIONS]
    for dim in ordered:
        if dim not in predictions:
            continue  # as DORA: a dimension without records is not scored
        rows[dim] = score_samples(gold[dim], predictions[dim], [str(r) for r in roots])
        tasks = [(s, i, t) for s in predictions[dim] for i, t in enumerate(s.get("tasks", []))]
        gold_tasks = [t for s in gold[dim] for t in s.get("tasks", [])]
        for row, (sample, index, pred), gold_task in zip(rows[dim], tasks, gold_tasks,
                                                         strict=False):
            key = (sample.get("sample_id", ""), index)
            status = "run_failure" if key in run.failures.get(dim, set()) else (
                "answered" if key in answered.get(dim, set()) else "unanswered")
            items.append(_item(dim, row, status, pred.get("trajectory", []),
                               gold_task.get("trajectory", []), toolset))
    summary = aggregate(rows)
    summary["run_failures"] = {d: len(run.failures.get(d, ())) for d in rows}
    summary["unanswered"] = {d: sum(1 for i in items if i["category"] == d
                                    and i["status"] == "unanswered") for d in rows}
    summary["malformed_records"] = len(run.malformed)
    summary["unmatched_records"] = len(run.unmatched)
    return DoraResults(summary, items)


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
        lines.append(rule)
    lines.append("")
    lines.append(f"  DORA Score: {summary['dora_score']:.6f}")
    return "\n".join(lines) + "\n"


def summary_from_items(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The summary of per-item lines (what ``plancheck report`` renders): DORA's aggregation
    of the rows the lines carry."""
    rows: dict[str, list[dict[str, Any]]] = {}
    failures: dict[str, int] = {}
    for item in items:
        dim = str(item["category"])
        rows.setdefault(dim, []).append({"task_score": item["answer"],
                                         **{m: item[m] for m in METRICS}})
        failures[dim] = failures.get(dim, 0) + (item.get("status") == "run_failure")
    summary = aggregate(rows)
    summary["run_failures"] = failures
    return summary


def iter_items(text: str) -> Iterator[dict[str, Any]]:
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and item.get("benchmark") == BENCHMARK and \
                isinstance(item.get("category"), str) and \
                all(isinstance(item.get(m), (int, float)) for m in METRICS) and \
                (item.get("answer") is None or isinstance(item.get("answer"), (int, float))):
            yield item
