"""Score files of predictions against gold plans, streaming, in constant memory.

Inputs are read one record at a time: JSONL files of ``{id?, task_id, completion | plan}``
records (what ``plancheck plan`` writes to ``results/<model>/<method>/predictions.jsonl``), or
the official harness's ``*_detailed_predictions.json`` (a JSON array, read element by element;
its ``model_answer`` is re-scored, or its ``raw_selected_completion`` with ``raw=True``).

Every record yields one :class:`ScoredItem`: the per-item JSON line (exactly the fields of
:data:`PER_ITEM_FIELDS`) and what the :class:`Summary` needs. A record that cannot be read is
scored as ``format_error``; the batch never stops on one. With ``jobs > 1`` chunks of records
are scored in a process pool with a bounded window of chunks in flight, so memory does not
grow with the number of predictions, and results come back in input order.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import signal
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

from plancheck.compiler.diagnostics import Diagnostic
from plancheck.dsl.ast import Toolset
from plancheck.scoring.bootstrap import DEFAULT_RESAMPLES, Estimate, estimate_mean, estimate_rate
from plancheck.scoring.gold import (
    GoldIndex,
    GoldTask,
    fpof_category,
    fpof_diagnostics,
    task_key,
)
from plancheck.scoring.metrics import (
    TASKBENCH_METRICS,
    PredictionAnalyzer,
    TrajectoryScorer,
    taskbench_scores,
    trajectory_scorer,
)
from plancheck.scoring.reference import ReferenceVerdict, score_completion, score_plan

__all__ = [
    "PER_ITEM_FIELDS",
    "ItemScorer",
    "PerItemWriter",
    "ScoreOptions",
    "ScoredItem",
    "Summary",
    "read_records",
    "score_records",
]

PER_ITEM_FIELDS: Final = (
    "id",
    "task_id",
    "em",
    "tool_acc",
    "param_acc",
    "dep_acc",
    "exec_equiv",
    "fpof_type",
    "fpof_step",
    "fpof_category",
    "diagnostics",
)
RATE_METRICS: Final = ("em", "tool_acc", "param_acc", "dep_acc", "exec_equiv")
COMPLETION_FIELDS: Final = ("completion",)
PLAN_FIELDS: Final = ("plan", "structured_plan", "model_answer")
RAW_FIELD: Final = "raw_selected_completion"
_CHUNK: Final = 256
# One encoder for every line: json.dumps with any option builds a new encoder per call.
_ENCODE: Final = json.JSONEncoder(ensure_ascii=False).encode
_ID_IN_TEXT: Final = re.compile(r'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')
_TASK_ID_IN_TEXT: Final = re.compile(r'"task_id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')


@dataclass(frozen=True, slots=True)
class ScoreOptions:
    strict: bool = False  # score with no leniency (score_completion(strict=True))
    raw: bool = False  # detailed predictions: score raw_selected_completion, not model_answer
    static: bool = True  # static validity and lint codes
    extended: bool = True  # TaskBench F1 and DORA trajectory metrics


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One prediction as read: a JSONL line still to parse, or an already parsed value."""

    source: str
    number: int  # line number (JSONL) or element index (JSON array)
    text: str | None = None
    value: Any = None
    problem: str | None = None  # the input around it could not be read


class InputError(Exception):
    """A prediction file cannot be read at all."""


def read_records(path: str) -> Iterator[RawRecord]:
    """Stream the records of one prediction file (``-`` is standard input, JSONL)."""
    import sys

    if path == "-":
        yield from _jsonl_records(sys.stdin, "<stdin>")
        return
    try:
        handle = open(path, encoding="utf-8-sig")  # noqa: SIM115 - closed in finally below
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        first = _peek(handle)
        if path.lower().endswith(".json") or (
            first == "[" and not path.lower().endswith((".jsonl", ".ndjson"))
        ):
            yield from _json_records(handle, path)
        else:
            yield from _jsonl_records(handle, path)
    except UnicodeDecodeError as error:
        raise InputError(f"cannot read {path}: not UTF-8 text ({error.reason})") from None
    finally:
        handle.close()


def _peek(handle: IO[str]) -> str:
    position = handle.tell()
    head = handle.read(4096).lstrip()
    handle.seek(position)
    return head[:1]


def _jsonl_records(handle: Iterable[str], source: str) -> Iterator[RawRecord]:
    for number, line in enumerate(handle, start=1):
        if line.strip():
            yield RawRecord(source, number, text=line)


def _json_records(handle: IO[str], source: str) -> Iterator[RawRecord]:
    """The elements of a top-level JSON array, one at a time (or the one top-level value)."""
    decoder = json.JSONDecoder()
    buffer = handle.read(1 << 16)
    position = _skip(buffer, 0)
    if position >= len(buffer) or buffer[position] != "[":
        rest = buffer + handle.read()
        try:
            value = json.loads(rest)
        except (ValueError, RecursionError) as error:
            yield RawRecord(source, 0, problem=f"the file is not JSON: {error}")
            return
        yield RawRecord(source, 0, value=value)
        return
    position += 1
    index = 0
    chunk = 1 << 16
    eof = False
    while True:
        position = _skip(buffer, position, commas=index > 0)
        if position >= len(buffer):
            if eof:
                yield RawRecord(source, index, problem="the JSON array is not closed")
                return
            more = handle.read(chunk)
            eof = not more
            buffer, position = buffer[position:] + more, 0
            continue
        if buffer[position] == "]":
            return
        try:
            value, end = decoder.raw_decode(buffer, position)
            complete = end < len(buffer) or eof
        except (ValueError, RecursionError) as error:
            if eof:
                yield RawRecord(source, index, problem=f"element {index} is not JSON: {error}")
                return
            complete = False
        if not complete:
            more = handle.read(chunk)
            eof = not more
            chunk = min(chunk * 2, 1 << 24)
            buffer, position = buffer[position:] + more, 0
            continue
        yield RawRecord(source, index, value=value)
        index += 1
        position = end
        if position > (1 << 20):
            buffer, position = buffer[position:], 0


def _skip(text: str, position: int, *, commas: bool = False) -> int:
    while position < len(text) and (text[position].isspace() or (commas and text[position] == ",")):
        position += 1
    return position


# --------------------------------------------------------------------------- scoring


@dataclass(slots=True)
class ScoredItem:
    """One scored prediction: its per-item line and the numbers the summary adds up."""

    line: str | None  # the per-item JSON line; None when the record has no gold plan
    source: str = ""
    em: bool = False
    tool_acc: bool = False
    param_acc: bool = False
    dep_acc: bool = False
    exec_equiv: bool = False
    fpof_type: str | None = None
    task_key: str | None = None
    malformed: bool = False
    problem: str | None = None  # why a record was not scored (no gold plan)
    static_valid: bool | None = None
    lint_codes: tuple[str, ...] = ()
    f1: tuple[float | None, ...] = ()
    trajectory: tuple[tuple[str, float], ...] = ()


def _compact(diagnostic: Diagnostic) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity.label,
        "message": diagnostic.message,
    }
    position = diagnostic.data.get("position")
    if position is not None:
        entry["position"] = position
    if diagnostic.code.startswith("PC6"):
        entry["notes"] = list(diagnostic.notes)
    return entry


class ItemScorer:
    """Scores records one at a time against a gold index."""

    def __init__(self, gold: GoldIndex, toolset: Toolset, options: ScoreOptions) -> None:
        self.gold = gold
        self.options = options
        self.analyzer = PredictionAnalyzer(toolset)
        self.trajectory: TrajectoryScorer | None = trajectory_scorer() if options.extended else None

    def score(self, raw: RawRecord) -> ScoredItem:
        """Never raises for any record."""
        try:
            return self._score(raw)
        except Exception as error:  # one bad record must not sink the batch
            return self._malformed(
                raw, None, None, f"internal error: {type(error).__name__}: {error}", code="PC002"
            )

    def _score(self, raw: RawRecord) -> ScoredItem:
        record = raw.value
        if raw.problem is not None:
            return self._malformed(raw, None, None, raw.problem)
        if raw.text is not None:
            try:
                record = json.loads(raw.text)
            except (ValueError, RecursionError) as error:
                ident, task_id = _salvage_ids(raw.text)
                return self._malformed(raw, ident, task_id, f"the record is not JSON: {error}")
        if not isinstance(record, dict):
            if isinstance(record, list) and self.gold.single is not None:
                return self._scored(raw, None, None, ("plan", record))
            return self._malformed(raw, None, None, "the record is not a JSON object")
        task_id = record.get("task_id")
        ident = record.get("id", task_id)
        if ident is None:
            ident = task_id
        answer = self._answer(record)
        if answer is None:
            fields = ", ".join(f"`{f}`" for f in (*COMPLETION_FIELDS, *PLAN_FIELDS, RAW_FIELD))
            return self._malformed(raw, ident, task_id, f"the record has none of {fields}")
        if task_id is None and self.gold.single is None:
            return self._malformed(raw, ident, task_id, "the record has no `task_id`")
        return self._scored(raw, ident, task_id, answer)

    def _answer(self, record: dict[str, Any]) -> tuple[str, Any] | None:
        if self.options.raw:
            if RAW_FIELD in record:
                return "completion", record[RAW_FIELD]
            return None
        for key in COMPLETION_FIELDS:
            if key in record:
                return "completion", record[key]
        for key in PLAN_FIELDS:
            if key in record:
                return "plan", record[key]
        return None

    def _scored(
        self, raw: RawRecord, ident: Any, task_id: Any, answer: tuple[str, Any]
    ) -> ScoredItem:
        task = self.gold.get(task_id)
        if task is None:
            return ScoredItem(
                None, raw.source, task_key=None, problem=f"no gold plan for task {task_id!r}"
            )
        kind, payload = answer
        strict = self.options.strict
        if kind == "completion":
            if payload is not None and not isinstance(payload, str):
                return self._malformed(
                    raw, ident, task_id, "`completion` is not a string", task=task
                )
            verdict = score_completion(payload, task.prepared, strict=strict)
        else:
            verdict = score_plan(payload, task.prepared, strict=strict)
        return self._finish(raw, ident, task, verdict)

    def _finish(
        self, raw: RawRecord, ident: Any, task: GoldTask, verdict: ReferenceVerdict
    ) -> ScoredItem:
        prediction = verdict.prediction
        exec_equiv, static = self.analyzer.assess(
            prediction,
            task.plan,
            em=verdict.em,
            fpof_type=verdict.fpof_type,
            static=self.options.static,
        )
        diagnostics = [_compact(d) for d in fpof_diagnostics(verdict, task, gold_spans=False)]
        item = ScoredItem(
            None,
            raw.source,
            verdict.em,
            verdict.tool_acc,
            verdict.param_acc,
            verdict.dep_acc,
            exec_equiv,
            verdict.fpof_type,
            task_key(task.task_id) if self.gold.single is None else None,
        )
        if static is not None:
            item.static_valid = static.valid
            item.lint_codes = static.codes
            diagnostics.extend(_compact(d) for d in static.diagnostics)
        if self.options.extended:
            scores = taskbench_scores(prediction, task.plan)
            item.f1 = tuple(scores[name] for name in TASKBENCH_METRICS)
            if self.trajectory is not None:
                item.trajectory = _numeric(self.trajectory(prediction, task.plan))
        item.line = _line(
            ident,
            task.task_id,
            verdict.em,
            verdict.tool_acc,
            verdict.param_acc,
            verdict.dep_acc,
            exec_equiv,
            verdict.fpof_type,
            verdict.fpof_step,
            diagnostics,
        )
        return item

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
        from plancheck.compiler.codes import CODES

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
            scores = taskbench_scores(None, gold_plan)
            item.f1 = tuple(scores[name] for name in TASKBENCH_METRICS)
            if self.trajectory is not None:
                item.trajectory = _numeric(self.trajectory(None, gold_plan))
        item.line = _line(
            ident if ident is not None else task_id,
            task.task_id if task is not None else task_id,
            False,
            False,
            False,
            False,
            False,
            "format_error",
            0,
            diagnostics,
        )
        return item


def _numeric(values: Any) -> tuple[tuple[str, float], ...]:
    """The numeric entries of a metrics mapping (booleans count as 0 and 1)."""
    if not isinstance(values, Mapping):
        return ()
    return tuple((str(k), float(v)) for k, v in values.items() if isinstance(v, int | float))


def _line(
    ident: Any,
    task_id: Any,
    em: bool,
    tool: bool,
    param: bool,
    dep: bool,
    exec_equiv: bool,
    fpof_type: str | None,
    fpof_step: Any,
    diagnostics: list[dict[str, Any]],
) -> str:
    return _ENCODE(
        {
            "id": ident,
            "task_id": task_id,
            "em": em,
            "tool_acc": tool,
            "param_acc": param,
            "dep_acc": dep,
            "exec_equiv": exec_equiv,
            "fpof_type": fpof_type,
            "fpof_step": fpof_step if fpof_type is not None else None,
            "fpof_category": fpof_category(fpof_type),
            "diagnostics": diagnostics,
        }
    )


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


# --------------------------------------------------------------------------- process pool

_WORKER: dict[str, ItemScorer] = {}  # the scorer of this worker process


def _init_worker(gold_text: str, gold_file: str, toolset: Toolset, options: ScoreOptions) -> None:
    # The parent handles Ctrl-C (and stops the pool); workers must not die half-way through
    # a chunk with a traceback of their own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER["scorer"] = ItemScorer(GoldIndex.parse(gold_text, gold_file), toolset, options)


def _score_chunk(chunk: list[RawRecord]) -> list[ScoredItem]:
    scorer = _WORKER["scorer"]
    return [scorer.score(raw) for raw in chunk]


def _chunks(records: Iterable[RawRecord], size: int) -> Iterator[list[RawRecord]]:
    chunk: list[RawRecord] = []
    for record in records:
        chunk.append(record)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def score_records(
    records: Iterable[RawRecord],
    gold: GoldIndex,
    toolset: Toolset,
    options: ScoreOptions,
    *,
    jobs: int = 1,
    gold_text: str | None = None,
) -> Iterator[ScoredItem]:
    """Score records in input order; ``jobs > 1`` uses that many worker processes (they
    rebuild the gold index from ``gold_text``, the gold file's text)."""
    if jobs <= 1 or gold_text is None:
        scorer = ItemScorer(gold, toolset, options)
        for raw in records:
            yield scorer.score(raw)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    pool = context.Pool(
        jobs, initializer=_init_worker, initargs=(gold_text, gold.file, toolset, options)
    )
    try:
        # At most a few chunks per worker in flight: reading never runs ahead of scoring, so
        # memory stays flat however many records there are.
        window: deque[Any] = deque()
        for chunk in _chunks(records, _CHUNK):
            window.append(pool.apply_async(_score_chunk, (chunk,)))
            if len(window) >= 2 * jobs:
                yield from window.popleft().get()
        while window:
            yield from window.popleft().get()
        pool.close()
    finally:
        pool.terminate()
        pool.join()


# --------------------------------------------------------------------------- per-item output


class PerItemWriter:
    """Writes per-item lines; however it is stopped, the file holds only complete lines."""

    def __init__(self, path: str) -> None:
        self.path = path
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(path, "wb")  # noqa: SIM115 - closed by close()
        self._committed = 0

    def write(self, line: str) -> None:
        data = (line + "\n").encode("utf-8")
        self._handle.write(data)
        self._committed += len(data)

    def close(self) -> None:
        if self._handle.closed:
            return
        self._handle.flush()
        self._handle.truncate(self._committed)
        self._handle.close()

    def __enter__(self) -> PerItemWriter:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------- summary


@dataclass(slots=True)
class Summary:
    """Counts over scored predictions (constant memory: no item is kept; means are kept as
    histograms of values rounded to 4 decimals, at most 10,001 levels each)."""

    name: str = "all"
    n: int = 0
    rates: Counter[str] = field(default_factory=Counter)
    fpof: Counter[str] = field(default_factory=Counter)
    malformed: int = 0
    unmatched: int = 0
    static_n: int = 0
    static_valid: int = 0
    lint: Counter[str] = field(default_factory=Counter)
    f1: dict[str, Counter[float]] = field(default_factory=dict)
    trajectory: dict[str, Counter[float]] = field(default_factory=dict)
    seen_tasks: set[str] = field(default_factory=set)

    def add(self, item: ScoredItem) -> None:
        if item.line is None:
            self.unmatched += 1
            return
        self.n += 1
        rates = self.rates
        rates["em"] += item.em
        rates["tool_acc"] += item.tool_acc
        rates["param_acc"] += item.param_acc
        rates["dep_acc"] += item.dep_acc
        rates["exec_equiv"] += item.exec_equiv
        rates["gap"] += item.tool_acc and not item.em
        if item.fpof_type is not None:
            self.fpof[item.fpof_type] += 1
        self.malformed += item.malformed
        if item.task_key is not None:
            self.seen_tasks.add(item.task_key)
        if item.static_valid is not None:
            self.static_n += 1
            self.static_valid += item.static_valid
            self.lint.update(item.lint_codes)
        for name, value in zip(TASKBENCH_METRICS, item.f1, strict=False):
            if value is not None:
                self.f1.setdefault(name, Counter())[round(value, 4)] += 1
        for name, number in item.trajectory:
            self.trajectory.setdefault(name, Counter())[round(number, 4)] += 1

    def to_dict(
        self, gold: GoldIndex | None = None, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
    ) -> dict[str, Any]:
        def rate(name: str, k: int, n: int) -> dict[str, Any]:
            return estimate_rate(
                k, n, resamples=resamples, seed=seed, name=f"{self.name}:{name}"
            ).to_dict()

        failures = sum(self.fpof.values())
        categories: Counter[str] = Counter()
        for kind, count in self.fpof.items():
            categories[fpof_category(kind) or "?"] += count
        document: dict[str, Any] = {
            "name": self.name,
            "predictions": self.n,
            "malformed": self.malformed,
            "unmatched": self.unmatched,
            "metrics": {
                name: rate(name, self.rates[name], self.n) for name in (*RATE_METRICS, "gap")
            },
            "fpof": {
                "failures": failures,
                "types": {
                    kind: {"count": count, **rate(f"fpof:{kind}", count, failures)}
                    for kind, count in self.fpof.most_common()
                },
                "categories": {
                    cat: {"count": count, **rate(f"cat:{cat}", count, failures)}
                    for cat, count in categories.most_common()
                },
            },
        }
        if gold is not None and gold.single is None:
            document["missing_tasks"] = sum(1 for task in gold.tasks if task not in self.seen_tasks)
        if self.static_n:
            document["static"] = {
                "valid": rate("static_valid", self.static_valid, self.static_n),
                "lint_rates": {
                    code: {"count": count, **rate(f"lint:{code}", count, self.static_n)}
                    for code, count in sorted(self.lint.items())
                },
            }
        if self.f1:
            document["taskbench"] = {
                name: _mean(self.f1[name], resamples, seed, f"{self.name}:{name}")
                for name in TASKBENCH_METRICS
                if name in self.f1
            }
        if self.trajectory:
            document["trajectory"] = {
                name: _mean(values, resamples, seed, f"{self.name}:traj:{name}")
                for name, values in sorted(self.trajectory.items())
            }
        return document


def _mean(histogram: Counter[float], resamples: int, seed: int, name: str) -> dict[str, Any]:
    estimate: Estimate = estimate_mean(histogram, resamples=resamples, seed=seed, name=name)
    return estimate.to_dict()
