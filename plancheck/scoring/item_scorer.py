"""One prediction record scored against its gold plan: the reference's metrics and first point of
failure, then as much more as :class:`ScoreOptions` asks for (execution equivalence, static
checks, TaskBench F1s, DORA trajectory metrics) and, with ``lines``, its per-item line. A record
that cannot be read is scored as ``format_error``: :meth:`ItemScorer.score` never raises."""

from __future__ import annotations

import json
import marshal
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Final

from plancheck import fast_json
from plancheck.formats.records import COMPLETION_FIELDS, PLAN_FIELDS, RAW_FIELD
from plancheck.ir.nodes import Toolset
from plancheck.scoring.compact import entry_text
from plancheck.scoring.fpof import fpof_text
from plancheck.scoring.gold import GoldIndex, GoldTask, task_key
from plancheck.scoring.per_item_line import per_item_line
from plancheck.scoring.prediction_files import RawRecord
from plancheck.scoring.reference import ReferenceVerdict, score_completion, score_plan

if TYPE_CHECKING:
    # plancheck.scoring.metrics is imported only when its metrics are asked for: it loads the
    # static checker, which the reference's metrics alone (--parity-only) never need.
    from plancheck.scoring.metrics import PredictionAnalyzer, StaticResult, TrajectoryScorer

__all__ = ["COMPLETION_FIELDS", "PLAN_FIELDS", "RAW_FIELD", "ItemScorer", "ScoreOptions",
           "ScoredItem"]

_ID_IN_TEXT: Final = re.compile(r'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')
_TASK_ID_IN_TEXT: Final = re.compile(r'"task_id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')


@dataclass(frozen=True, slots=True)
class ScoreOptions:
    strict: bool = False  # score with no leniency (score_completion(strict=True))
    raw: bool = False  # detailed predictions: score raw_selected_completion, not model_answer
    static: bool = True  # static validity and lint codes
    extended: bool = True  # TaskBench F1 and DORA trajectory metrics
    # Execution equivalence beyond exact match (off: exec_equiv is em, which it implies).
    equivalence: bool = True
    lines: bool = True  # render each item's per-item line (with its diagnostics)
    # Static results and canonical forms kept, by the prediction's JSON text (0: none kept).
    cache_size: int = 1024


@dataclass(slots=True)
class ScoredItem:
    """One scored prediction: its per-item line and the numbers the summary adds up."""

    # The per-item JSON line: None when the record has no gold plan, or when the scorer was
    # told not to render lines (``ScoreOptions(lines=False)``; ``scored`` then tells).
    line: str | None
    source: str = ""
    em: bool = False
    tool_acc: bool = False
    param_acc: bool = False
    dep_acc: bool = False
    exec_equiv: bool | None = False  # None: not computed (ScoreOptions(equivalence=False))
    fpof_type: str | None = None
    task_key: str | None = None
    malformed: bool = False
    problem: str | None = None  # why a record was not scored (no gold plan)
    static_valid: bool | None = None
    lint_codes: tuple[str, ...] = ()
    f1: tuple[float | None, ...] = ()
    trajectory: tuple[tuple[str, float], ...] = ()
    scored: bool = True  # False: no gold plan, nothing scored

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as a plain call (scored items come back from the worker processes).
        return ScoredItem, tuple(getattr(self, name) for name in _ITEM_SLOTS)


_ITEM_SLOTS: Final = tuple(f.name for f in fields(ScoredItem))


class ItemScorer:
    """Scores records one at a time against a gold index."""

    def __init__(self, gold: GoldIndex, toolset: Toolset, options: ScoreOptions) -> None:
        self.gold = gold
        self.options = options
        # What goes beyond the reference's metrics (None when none of it is asked for).
        self.analyzer: PredictionAnalyzer | None = None
        self.trajectory: TrajectoryScorer | None = None
        self._taskbench: Callable[[Any, Any], tuple[float | None, ...]] | None = None
        if options.static or options.equivalence or options.extended:
            from plancheck.scoring.metrics import (
                PredictionAnalyzer,
                taskbench_f1s,
                trajectory_scorer,
            )

            self.analyzer = PredictionAnalyzer(
                toolset, cache_size=options.cache_size, entries=options.lines
            )
            if options.extended:
                self.trajectory = trajectory_scorer()
                self._taskbench = taskbench_f1s
        self._keyed = gold.single is None  # items carry their task's key (missing tasks)
        # Nothing but the reference's numbers (--parity-only without --per-item): the item
        # is the verdict's first five fields.
        self._bare = not (options.static or options.equivalence or options.extended
                          or options.lines)
        # Encoded gold-comparison entries (per-item lines), by task, verdict and prediction;
        # the tasks are the gold index's, which outlives this scorer, so their ids are stable.
        self._entries: OrderedDict[tuple[Any, ...], str] | None = (
            OrderedDict() if options.lines and options.cache_size > 0 else None
        )

    def score(self, raw: RawRecord) -> ScoredItem:
        """Never raises for any record."""
        # (The hot path, tens of thousands of records a second: one call, not three.)
        ident: Any = None
        task_id: Any = None
        try:
            record = raw.value
            if raw.problem is not None:
                if raw.text:  # an undecodable line: its ids may still be read around the bytes
                    ident, task_id = _salvage_ids(raw.text)
                return self._malformed(raw, ident, task_id, raw.problem)
            if raw.text is not None:
                try:
                    record = fast_json.loads(raw.text)
                except (ValueError, RecursionError) as error:
                    ident, task_id = _salvage_ids(raw.text)
                    return self._malformed(raw, ident, task_id, f"the record is not JSON: {error}")
            if type(record) is not dict:
                if isinstance(record, list) and self.gold.single is not None:
                    return self._scored(raw, None, None, "plan", record)
                return self._malformed(raw, None, None, "the record is not a JSON object")
            task_id = record.get("task_id")
            ident = record.get("id")
            if ident is None:
                ident = task_id
            if self.options.raw:
                kind, payload = ("completion", record[RAW_FIELD]) if RAW_FIELD in record else _NONE
            elif "completion" in record:  # COMPLETION_FIELDS, the common case first
                kind, payload = "completion", record["completion"]
            else:
                kind, payload = next(
                    (("plan", record[key]) for key in PLAN_FIELDS if key in record), _NONE
                )
            if kind is None and self.options.raw:
                return self._malformed(raw, ident, task_id, (
                    f"--raw scores `{RAW_FIELD}`, which this record lacks (--raw is for the "
                    "official *_detailed_predictions.json files)"))
            if kind is None:
                fields = ", ".join(f"`{f}`" for f in (*COMPLETION_FIELDS, *PLAN_FIELDS, RAW_FIELD))
                return self._malformed(raw, ident, task_id, f"the record has none of {fields}")
            if task_id is None and self.gold.single is None:
                return self._malformed(raw, ident, task_id, "the record has no `task_id`")
            return self._scored(raw, ident, task_id, kind, payload)
        except Exception as error:  # one bad record must not sink the batch
            return self._malformed(
                raw, None, None, f"internal error: {type(error).__name__}: {error}", code="PC002"
            )

    def _scored(
        self, raw: RawRecord, ident: Any, task_id: Any, kind: str, payload: Any
    ) -> ScoredItem:
        task = self.gold.get(task_id)
        if task is None:
            return ScoredItem(
                None, raw.source, problem=f"no gold plan for task {task_id!r}", scored=False
            )
        strict = self.options.strict
        if kind == "completion":
            if payload is not None and not isinstance(payload, str):
                return self._malformed(
                    raw, ident, task_id, "`completion` is not a string", task=task
                )
            verdict = (
                score_completion(payload, task.prepared, strict=True)
                if strict
                else score_completion(payload, task.prepared)
            )
        else:
            verdict = score_plan(payload, task.prepared, strict=strict)
        if self._bare:
            return ScoredItem(None, raw.source, verdict[0], verdict[1], verdict[2], verdict[3],
                              None, verdict[4], task.key if self._keyed else None)
        return self._finish(raw, ident, task, verdict)

    def _finish(
        self, raw: RawRecord, ident: Any, task: GoldTask, verdict: ReferenceVerdict
    ) -> ScoredItem:
        em, tool_acc, param_acc, dep_acc, fpof_type, fpof_step, prediction = verdict[:7]
        options = self.options
        analyzer = self.analyzer  # (there is one whenever static, equivalence or extended)
        static: StaticResult | None = None
        exec_equiv: bool | None = em  # exact match implies execution equivalence
        if analyzer is not None and (options.static or (options.equivalence and not em)):
            equivalent, static = analyzer.assess(
                prediction,
                task.plan if options.equivalence else None,
                em=em,
                fpof_type=fpof_type,
                static=options.static,
            )
            if options.equivalence:
                exec_equiv = equivalent
        if not options.equivalence:
            exec_equiv = None  # not computed
        item = ScoredItem(
            None,
            raw.source,
            em,
            tool_acc,
            param_acc,
            dep_acc,
            exec_equiv,
            fpof_type,
            task.key if self._keyed else None,
        )
        if static is not None:
            item.static_valid = static.valid
            item.lint_codes = static.codes
        if analyzer is not None and options.extended:
            item.f1, item.trajectory = analyzer.against_gold(
                prediction, task.plan, lambda: self._extended(prediction, task.plan)
            )
        if options.lines:
            entries = self._fpof_entries(verdict, task) if fpof_type is not None else ""
            if static is not None and static.entries:
                entries = f"{entries}, {static.entries}" if entries else static.entries
            item.line = per_item_line(
                ident,
                task.task_id,
                em,
                tool_acc,
                param_acc,
                dep_acc,
                exec_equiv,
                fpof_type,
                fpof_step,
                entries,
            )
        return item

    def _extended(
        self, prediction: list[Any] | None, gold_plan: Any
    ) -> tuple[tuple[float | None, ...], tuple[tuple[str, float], ...]]:
        """The TaskBench F1s and the trajectory metrics of a prediction."""
        assert self._taskbench is not None  # (asked for only with options.extended)
        f1 = self._taskbench(prediction, gold_plan)
        if self.trajectory is None:
            return f1, ()
        return f1, _numeric(self.trajectory(prediction, gold_plan))

    def _fpof_entries(self, verdict: ReferenceVerdict, task: GoldTask) -> str:
        """The encoded gold-comparison entry of a failed item, kept by what it depends on
        (the task, the verdict's type and step, and the prediction compared) when the
        prediction is a plan: the same wrong plan recurs across a batch."""
        prediction = verdict.prediction
        key: tuple[Any, ...] | None = None
        if self._entries is not None and type(prediction) is list and type(task.plan) is list:
            try:
                serialised = marshal.dumps(prediction, 2)
            except ValueError:
                serialised = None
            if serialised is not None:
                key = (id(task), verdict.fpof_type, verdict.fpof_step, serialised)
                found = self._entries.get(key)
                if found is not None:
                    self._entries.move_to_end(key)
                    return found
        text = fpof_text(verdict, task)
        if key is not None and self._entries is not None:
            self._entries[key] = text
            if len(self._entries) > self.options.cache_size:
                self._entries.popitem(last=False)
        return text

    def _malformed(
        self,
        raw: RawRecord,
        ident: Any,
        task_id: Any,
        problem: str,
        *,
        code: str = "PC116",
        task: GoldTask | None = None,
    ) -> ScoredItem:
        from plancheck.diagnostics.codes import CODES

        if task is None and task_id is not None:
            task = self.gold.get(task_id)
        elif task is None:
            task = self.gold.single
        # The first point of failure comes first, as on every other item.
        diagnostics = [
            {
                "code": "PC602",
                "name": CODES["PC602"].name,
                "severity": "error",
                "message": "scored as format_error: the record holds no readable prediction",
            },
            {
                "code": code,
                "name": CODES[code].name,
                "severity": "error",
                "message": f"{raw.source}, {'line' if raw.text is not None else 'element'} "
                f"{raw.number}: {problem}",
            },
        ]
        item = ScoredItem(
            None,
            raw.source,
            exec_equiv=False if self.options.equivalence else None,
            fpof_type="format_error",
            malformed=True,
            task_key=task_key(task.task_id)
            if task is not None and self.gold.single is None
            else None,
        )
        if self.options.static:
            item.static_valid = False
            item.lint_codes = (code,)
        if self.options.extended:
            gold_plan = task.plan if task is not None else []
            assert self._taskbench is not None
            item.f1 = self._taskbench(None, gold_plan)
            if self.trajectory is not None:
                item.trajectory = _numeric(self.trajectory(None, gold_plan))
            if task is None:
                # No gold to pair it with: an empty prediction against an empty stand-in
                # would "match" (1.0 on every metric); a record that is not scored against
                # anything scores nothing.
                item.f1 = tuple(None if value is None else 0.0 for value in item.f1)
                item.trajectory = tuple((name, 0.0) for name, _ in item.trajectory)
        if self.options.lines:
            item.line = per_item_line(
                ident if ident is not None else task_id,
                task.task_id if task is not None else task_id,
                False,
                False,
                False,
                False,
                item.exec_equiv,
                "format_error",
                0,
                ", ".join([entry_text(entry) for entry in diagnostics]),
            )
        return item


_NONE: Final[tuple[None, None]] = (None, None)


def _numeric(values: Any) -> tuple[tuple[str, float], ...]:
    """The numeric entries of a metrics mapping (booleans count as 0 and 1)."""
    if not isinstance(values, Mapping):
        return ()
    return tuple((str(k), float(v)) for k, v in values.items() if isinstance(v, int | float))


def _salvage_ids(text: str) -> tuple[Any, Any]:
    """The id and task id of a record that is not JSON, when they can still be read."""

    def read(pattern: re.Pattern[str]) -> Any:
        found = pattern.search(text)
        if found is None:
            return None
        try:
            return json.loads(found.group(1))
        except ValueError:
            return None

    task_id = read(_TASK_ID_IN_TEXT)
    ident = read(_ID_IN_TEXT)
    return (ident if ident is not None else task_id), task_id
