"""Score files of predictions against gold plans, streaming, in constant memory.

Inputs are read one record at a time: JSONL files of ``{id?, task_id, completion | plan}``
records (what ``plancheck plan`` writes to ``results/<model>/<method>/predictions.jsonl``), or
the official harness's ``*_detailed_predictions.json`` (a JSON array, read element by element;
its ``model_answer`` is re-scored, or its ``raw_selected_completion`` with ``raw=True``).

Every record yields one :class:`ScoredItem`: the per-item JSON line (exactly the fields of
:data:`PER_ITEM_FIELDS`) and what the :class:`Summary` needs. A record that cannot be read is
scored as ``format_error``; the batch never stops on one. With ``jobs > 1`` chunks of records
go round this process and ``jobs - 1`` workers with a bounded window of chunks in flight, so
memory does not grow with the number of predictions, and results come back in input order.

:class:`ScoreOptions` says how much is computed, cheapest first: the reference's metrics and
FPoF (``static=False, extended=False, equivalence=False``: ``plancheck score --parity-only``);
plus execution equivalence and static checks (``extended=False``: ``--no-extended``); plus
TaskBench F1s and DORA trajectory metrics (the default). The per-item line, with its
diagnostics, is only rendered with ``lines=True`` (``--per-item``). Work that is implied is
skipped (exact match implies execution equivalence; a prediction identical to its gold plan
has the gold plan's static result), and what predictions repeat is kept in bounded caches
(``cache_size`` entries each; 0: none): static results and canonical forms by prediction,
gold-comparison entries by task, verdict and prediction.
"""

from __future__ import annotations

import itertools
import json
import marshal
import math
import multiprocessing
import os
import re
import signal
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from plancheck import fast_json
from plancheck.ir.nodes import Toolset
from plancheck.scoring.bootstrap import DEFAULT_RESAMPLES, Estimate, estimate_mean, estimate_rate
from plancheck.scoring.compact import entry_text
from plancheck.scoring.fpof import fpof_category, fpof_text
from plancheck.scoring.gold import GoldIndex, GoldTask, task_key
from plancheck.scoring.reference import ReferenceVerdict, score_completion, score_plan

if TYPE_CHECKING:
    # plancheck.scoring.metrics is imported only when its metrics are asked for: it loads the
    # static checker, which the reference's metrics alone (--parity-only) never need.
    from plancheck.scoring.metrics import PredictionAnalyzer, StaticResult, TrajectoryScorer

__all__ = [
    "PER_ITEM_FIELDS",
    "ItemScorer",
    "PerItemWriter",
    "ScoreOptions",
    "ScoredItem",
    "Summary",
    "clear_caches",
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
_CHUNK: Final = 512
# One encoder for every line: json.dumps with any option builds a new encoder per call.
_ENCODE: Final = json.JSONEncoder(ensure_ascii=False).encode
# What that encoder does with a string (it calls this directly), without its dispatch.
_ENCODE_STRING: Final = json.encoder.encode_basestring
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


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One prediction as read: a JSONL line still to parse, or an already parsed value."""

    source: str
    number: int  # line number (JSONL) or element index (JSON array)
    text: str | None = None
    value: Any = None
    problem: str | None = None  # the input around it could not be read

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as a plain call: several times cheaper than a slotted dataclass's default
        # (records cross a pipe to the worker processes of ``--jobs``).
        return RawRecord, (self.source, self.number, self.text, self.value, self.problem)


class InputError(Exception):
    """A prediction file cannot be read at all."""


def read_records(path: str) -> Iterator[RawRecord]:
    """Stream the records of one prediction file (``-`` is standard input, JSONL).

    JSONL is read as bytes and decoded a line at a time, so that a line that is not UTF-8 is
    one format error (with its line number) and the other lines are still scored, from a file
    and from standard input alike."""
    import io
    import sys

    if path == "-":
        yield from _jsonl_records(sys.stdin.buffer, "<stdin>")
        return
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed in finally below
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        first = _peek(handle)
        if path.lower().endswith(".json") or (
            first == b"[" and not path.lower().endswith((".jsonl", ".ndjson"))
        ):
            yield from _json_records(io.TextIOWrapper(handle, encoding="utf-8-sig"), path)
        else:
            yield from _jsonl_records(handle, path)
    except UnicodeDecodeError as error:
        raise InputError(f"cannot read {path}: not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    finally:
        handle.close()


_BOM: Final = b"\xef\xbb\xbf"


def _peek(handle: IO[bytes]) -> bytes:
    position = handle.tell()
    head = handle.read(4096)
    handle.seek(position)
    if head.startswith(_BOM):
        head = head[len(_BOM):]
    return head.lstrip()[:1]


def _jsonl_records(handle: Iterable[bytes], source: str) -> Iterator[RawRecord]:
    for number, data in enumerate(handle, start=1):
        if number == 1 and data.startswith(_BOM):
            data = data[len(_BOM):]
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError as error:
            yield RawRecord(source, number, text=data.decode("utf-8", "replace"), problem=(
                f"the line is not UTF-8 text (byte 0x{data[error.start]:02x} at column "
                f"{error.start + 1})"))
            continue
        if line and not line.isspace():  # (what line.strip() tells, without a copy)
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
            item.line = _line(
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
        if self.options.lines:
            item.line = _line(
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


_BOOL: Final = ("false", "true")
_MAYBE: Final = {True: "true", False: "false", None: "null"}


def _line(
    ident: Any,
    task_id: Any,
    em: bool,
    tool: bool,
    param: bool,
    dep: bool,
    exec_equiv: bool | None,
    fpof_type: str | None,
    fpof_step: Any,
    entries: str,
) -> str:
    """One per-item line, exactly as ``json.dumps`` writes the object of
    :data:`PER_ITEM_FIELDS` (``entries``: the diagnostics, encoded and joined by ``", "``),
    written out directly: most fields are booleans and short strings."""
    tail: str | None
    if fpof_type is None:
        tail = '"fpof_type": null, "fpof_step": null, "fpof_category": null'
    else:
        tail = _FPOF_TAILS.get((fpof_type, fpof_step)) if type(fpof_step) is int else None
        if tail is None:
            tail = (
                f'"fpof_type": {_ENCODE(fpof_type)}, "fpof_step": {_ENCODE(fpof_step)}, '
                f'"fpof_category": {_ENCODE(fpof_category(fpof_type))}'
            )
            if type(fpof_step) is int and len(_FPOF_TAILS) < 4096:
                _FPOF_TAILS[(fpof_type, fpof_step)] = tail  # few types, few steps
    return (
        f'{{"id": {_scalar(ident)}, "task_id": {_scalar(task_id)}, "em": {_BOOL[em]}, '
        f'"tool_acc": {_BOOL[tool]}, "param_acc": {_BOOL[param]}, "dep_acc": {_BOOL[dep]}, '
        f'"exec_equiv": {_MAYBE[exec_equiv]}, {tail}, "diagnostics": [{entries}]}}'
    )


_FPOF_TAILS: dict[tuple[str, int], str] = {}


def clear_caches() -> None:
    """Forget everything scoring remembers across batches in this process (bootstrap tables
    and estimates, how strings read as references, encoded FPoF fields): a benchmark that
    scores again in one process then pays for them as a new process does (what is known of
    gold steps lives with the gold index). Results never depend on it."""
    from plancheck.dora import paper_metrics
    from plancheck.scoring import bootstrap, metrics

    bootstrap.clear_caches()
    paper_metrics.clear_caches()
    metrics.clear_caches()
    _FPOF_TAILS.clear()


def _scalar(value: Any) -> str:
    """``_ENCODE(value)``, directly for the usual ids (a string, an integer)."""
    kind = type(value)
    if kind is str:
        return _ENCODE_STRING(value)
    if kind is int:
        return int.__repr__(value)
    return _ENCODE(value)


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
    """Score records in input order; ``jobs > 1`` uses that many processes: this one and
    ``jobs - 1`` workers (they rebuild the gold index from ``gold_text``, the gold file's
    text). Chunks of records go round the processes, this one taking every ``jobs``-th, so
    that it scores while the workers do, and only the workers' share crosses a pipe. No more
    processes than the CPUs this process may run on are used, and none is started for fewer
    records than two chunks (starting one would cost more than it saves)."""
    scorer = ItemScorer(gold, toolset, options)
    jobs = min(jobs, _usable_cpus())
    if jobs <= 1 or gold_text is None:
        for raw in records:
            yield scorer.score(raw)
        return
    chunks = _chunks(records, _CHUNK)
    head = list(itertools.islice(chunks, 2))
    if len(head) < 2:
        for chunk in head:
            yield from (scorer.score(raw) for raw in chunk)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    pool = context.Pool(
        jobs - 1, initializer=_init_worker, initargs=(gold_text, gold.file, toolset, options)
    )
    try:
        # At most a few chunks per process in flight: reading never runs ahead of scoring
        # by more, so memory stays flat however many records there are; enough that the
        # workers still have chunks queued while this process scores its own.
        window: deque[Any] = deque()
        for number, chunk in enumerate(itertools.chain(head, chunks)):
            if number % jobs == jobs - 1:
                window.append(chunk)  # this process's own, scored when its turn comes
            else:
                window.append(pool.apply_async(_score_chunk, (chunk,)))
            if len(window) >= 4 * jobs:
                yield from _collect(window.popleft(), scorer)
        while window:
            yield from _collect(window.popleft(), scorer)
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def _usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _collect(entry: Any, scorer: ItemScorer) -> list[ScoredItem]:
    if isinstance(entry, list):
        return [scorer.score(raw) for raw in entry]
    result: list[ScoredItem] = entry.get()
    return result


# --------------------------------------------------------------------------- per-item output


class PerItemWriter:
    """Writes per-item lines to a temporary file beside ``path``, renamed over it by
    :meth:`close` (or dropped by :meth:`discard`): an existing file keeps its content until a
    run has finished, and a failed or interrupted run never leaves it empty or half-written.
    A lock beside it makes a second run into the same file fail at once (``LockHeld``)."""

    def __init__(self, path: str) -> None:
        from plancheck.fileio import AtomicWriter
        from plancheck.locks import FileLock, lock_path_for

        self.path = path
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(lock_path_for(path), what=path)
        self._lock.acquire()
        try:
            self._out = AtomicWriter(path)
        except BaseException:
            self._lock.release()
            raise
        self._closed = False
        # Lines not yet handed to the file: written a few hundred at a time, one call each
        # rather than one per line (close writes the rest before the file is put in place).
        self._pending: list[str] = []

    def write(self, line: str) -> None:
        pending = self._pending
        pending.append(line)
        if len(pending) >= _PENDING_LINES:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._pending.append("")  # the last line's newline
            self._out.write("\n".join(self._pending))
            self._pending.clear()

    def close(self) -> None:
        """Put the finished file in place."""
        if self._closed:
            return
        self._closed = True
        try:
            try:
                self._flush()
            except BaseException:
                self._out.discard()  # (commit cleans up after itself, the flush must too)
                raise
            self._out.commit()
        finally:
            self._lock.release()

    def discard(self) -> None:
        """Leave ``path`` as it was before this run."""
        if self._closed:
            return
        self._closed = True
        self._pending.clear()
        self._out.discard()
        self._lock.release()

    def __enter__(self) -> PerItemWriter:
        return self

    def __exit__(self, kind: object, *_exc: object) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()


_PENDING_LINES: Final = 256


# --------------------------------------------------------------------------- summary

# What the summary counts of an item: em, tool_acc, param_acc, dep_acc, exec_equiv,
# fpof_type, malformed, static_valid (None: not checked), lint codes.
_Outcome = tuple[bool, bool, bool, bool, bool | None, str | None, bool, bool | None,
                 tuple[str, ...]]


@dataclass(slots=True)
class Summary:
    """Counts over scored predictions (constant memory: no item is kept; means are kept as
    histograms of values rounded to 4 decimals, at most 10,001 levels each)."""

    name: str = "all"
    n: int = 0
    unmatched: int = 0
    f1: dict[str, Counter[float]] = field(default_factory=dict)
    trajectory: dict[str, Counter[float]] = field(default_factory=dict)
    seen_tasks: set[str] = field(default_factory=set)
    # Items by everything the counts need of them (_Outcome): one dict increment per item;
    # the rates, FPoF counts and lint counts are added up from it when asked for. Few
    # combinations occur, so it stays small.
    _outcomes: dict[_Outcome, int] = field(default_factory=dict)
    # Items by their F1s and trajectory metrics, in first-seen order, not yet added to the
    # histograms: one dict increment per item rather than a rounding and an increment per
    # metric (few rows are distinct). Folded into the histograms in order (:meth:`_fold`),
    # which leaves each histogram's levels in the order items first showed them.
    _rows: dict[tuple[tuple[float | None, ...], tuple[tuple[str, float], ...]], int] = field(
        default_factory=dict
    )

    def add(self, item: ScoredItem) -> None:
        if not item.scored:
            self.unmatched += 1
            return
        self.n += 1
        outcome = (item.em, item.tool_acc, item.param_acc, item.dep_acc, item.exec_equiv,
                   item.fpof_type, item.malformed, item.static_valid, item.lint_codes)
        outcomes = self._outcomes
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if item.task_key is not None:
            self.seen_tasks.add(item.task_key)
        if item.f1 or item.trajectory:
            row = (item.f1, item.trajectory)
            rows = self._rows
            count = rows.get(row)
            if count is not None:
                rows[row] = count + 1
            elif _has_nan(row) or len(rows) >= _MAX_ROWS:
                # (NaN equals nothing: each such item is a level of its own, as tallied.)
                self._fold()
                self._tally(row, 1)
            else:
                rows[row] = 1

    def copy(self, *, name: str) -> Summary:
        """The same counts under another name, copied (each can go on counting)."""
        return Summary(
            name,
            self.n,
            self.unmatched,
            {metric: Counter(levels) for metric, levels in self.f1.items()},
            {metric: Counter(levels) for metric, levels in self.trajectory.items()},
            set(self.seen_tasks),
            dict(self._outcomes),
            dict(self._rows),
        )

    def _fold(self) -> None:
        """Add the rows kept so far to the histograms."""
        for row, count in self._rows.items():
            self._tally(row, count)
        self._rows.clear()

    def _tally(
        self, row: tuple[tuple[float | None, ...], tuple[tuple[str, float], ...]], count: int
    ) -> None:
        f1, trajectory = row
        if f1:
            from plancheck.scoring.metrics import TASKBENCH_METRICS

            _tally(self.f1, zip(TASKBENCH_METRICS, f1, strict=False), count)
        if trajectory:
            _tally(self.trajectory, trajectory, count)

    @property
    def rates(self) -> Counter[str]:
        """How many items had each rate metric true (and ``gap``: tool_acc without em)."""
        rates: Counter[str] = Counter(dict.fromkeys((*RATE_METRICS, "gap"), 0))
        for (em, tool, param, dep, exec_equiv, *_), count in self._outcomes.items():
            rates["em"] += em * count
            rates["tool_acc"] += tool * count
            rates["param_acc"] += param * count
            rates["dep_acc"] += dep * count
            rates["exec_equiv"] += bool(exec_equiv) * count
            rates["gap"] += (tool and not em) * count
        return rates

    @property
    def equivalence_n(self) -> int:
        """How many items have execution equivalence computed (the rate's denominator)."""
        return sum(count for outcome, count in self._outcomes.items() if outcome[4] is not None)

    @property
    def fpof(self) -> Counter[str]:
        """How many items failed first in each way (FPoF fine type)."""
        counts: Counter[str] = Counter()
        for outcome, count in self._outcomes.items():
            if outcome[5] is not None:
                counts[outcome[5]] += count
        return counts

    @property
    def malformed(self) -> int:
        """How many records held no readable prediction."""
        return sum(count for outcome, count in self._outcomes.items() if outcome[6])

    @property
    def static_n(self) -> int:
        """How many items were checked statically."""
        return sum(count for outcome, count in self._outcomes.items() if outcome[7] is not None)

    @property
    def static_valid(self) -> int:
        """How many items checked clean statically."""
        return sum(count for outcome, count in self._outcomes.items() if outcome[7])

    @property
    def lint(self) -> Counter[str]:
        """How many items each lint code was reported on."""
        counts: Counter[str] = Counter()
        for outcome, count in self._outcomes.items():
            if outcome[7] is not None:
                for code in outcome[8]:
                    counts[code] += count
        return counts

    def to_dict(
        self, gold: GoldIndex | None = None, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
    ) -> dict[str, Any]:
        def rate(name: str, k: int, n: int) -> dict[str, Any]:
            # Keyed by the metric, not by the file's name: the interval of the same counts must
            # not change with how a path is spelt (and `report --ci` gives the same).
            return estimate_rate(k, n, resamples=resamples, seed=seed, name=name).to_dict()

        rates = self.rates
        fpof = self.fpof  # (each of these counts is added up from the tally when asked for)
        failures = sum(fpof.values())
        categories: Counter[str] = Counter()
        for kind, count in fpof.items():
            categories[fpof_category(kind) or "?"] += count
        document: dict[str, Any] = {
            "name": self.name,
            "predictions": self.n,
            "malformed": self.malformed,
            "unmatched": self.unmatched,
            "metrics": {name: rate(name, rates[name], self.n) for name in (*RATE_METRICS, "gap")},
        }
        equivalence_n = self.equivalence_n
        if self.n and not equivalence_n:
            document["metrics"]["exec_equiv"] = None  # not computed (--parity-only)
        elif equivalence_n != self.n:
            document["metrics"]["exec_equiv"] = rate(
                "exec_equiv", rates["exec_equiv"], equivalence_n
            )
        document |= {
            "fpof": {
                "failures": failures,
                "types": {
                    kind: {"count": count, **rate(f"fpof:{kind}", count, failures)}
                    for kind, count in fpof.most_common()
                },
                "categories": {
                    cat: {"count": count, **rate(f"cat:{cat}", count, failures)}
                    for cat, count in categories.most_common()
                },
            },
        }
        if gold is not None and gold.single is None:
            document["missing_tasks"] = sum(1 for task in gold.tasks if task not in self.seen_tasks)
        static_n = self.static_n
        if static_n:
            document["static"] = {
                "valid": rate("static_valid", self.static_valid, static_n),
                "lint_rates": {
                    code: {"count": count, **rate(f"lint:{code}", count, static_n)}
                    for code, count in sorted(self.lint.items())
                },
            }
        self._fold()
        if self.f1:
            from plancheck.scoring.metrics import TASKBENCH_METRICS

            document["taskbench"] = {
                name: _mean(self.f1[name], resamples, seed, name)
                for name in TASKBENCH_METRICS
                if name in self.f1
            }
        if self.trajectory:
            document["trajectory"] = {
                name: _mean(values, resamples, seed, f"traj:{name}")
                for name, values in sorted(self.trajectory.items())
            }
        return document


_MAX_ROWS: Final = 4096


def _has_nan(row: tuple[tuple[float | None, ...], tuple[tuple[str, float], ...]]) -> bool:
    f1, trajectory = row
    return any(v is not None and math.isnan(v) for v in f1) or any(
        math.isnan(v) for _, v in trajectory
    )


def _tally(
    histograms: dict[str, Counter[float]],
    values: Iterable[tuple[str, float | None]],
    count: int = 1,
) -> None:
    """Add ``count`` items of each value, rounded to 4 decimals, to its metric's histogram
    (None: skipped)."""
    for name, value in values:
        if value is None:
            continue
        histogram = histograms.get(name)
        if histogram is None:
            histogram = histograms[name] = Counter()
        histogram[round(value, 4)] += count


def _mean(histogram: Counter[float], resamples: int, seed: int, name: str) -> dict[str, Any]:
    estimate: Estimate = estimate_mean(histogram, resamples=resamples, seed=seed, name=name)
    return estimate.to_dict()
