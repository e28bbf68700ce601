"""Run a planner over benchmark tasks into ``OUT/``, resumably.

``OUT/predictions.jsonl`` gets one JSON object per task, appended as one ``write`` on an
``O_APPEND`` descriptor and fsynced before the next task is taken: a result is either wholly in
the file or not at all, so Ctrl-C, a crash or a power cut loses nothing already finished. On a
rerun the finished task ids are skipped; a torn last line (a crash mid-write) is cut off and its
task run again. ``OUT/config.json`` records the configuration; a rerun with a different one is
refused rather than mixing two experiments in one file, and so is a rerun whose tasks file
describes a finished task differently (each record keeps the digest of the description it was
planned from, ``task_sha256``).

Ctrl-C stops taking new tasks and waits for the running ones to finish and be written (a
second Ctrl-C abandons them), so a task is never called twice across an interrupted run and
its resumption.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from plancheck.planners.base import Planner, PlanningTask, PlanResult

PREDICTIONS = "predictions.jsonl"
CONFIG = "config.json"
LOCK = ".lock"  # held by the running run (plancheck.locks); names its process
# Fields of config.json that may differ between a run and its resumption (a local server may
# come back on another port; the model and every setting that shapes answers may not change).
# A task that spent its request budget is an error, rerun with --retry-errors and a larger one.
_VOLATILE = frozenset({"created_at", "limit", "concurrency", "tasks", "plancheck_version",
                       "base_url", "retry_errors", "max_requests"})


class RunError(Exception):
    """The run cannot start (an unusable OUT directory, a configuration mismatch)."""


@dataclass(frozen=True)
class Prices:
    """USD per million prompt / completion tokens (``--price-in``, ``--price-out``)."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return round((prompt_tokens * self.prompt + completion_tokens * self.completion) / 1e6,
                     8)


@dataclass
class RunSummary:
    total: int = 0  # tasks selected for this run
    skipped: int = 0  # already finished before this run
    done: int = 0  # finished in this run
    errors: int = 0  # finished with a transport or internal error
    earlier_errors: int = 0  # skipped, but their earlier result is an error
    interrupted: bool = False
    endpoint_down: str | None = None  # the run stopped: the endpoint refused connections
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    elapsed_s: float = 0.0


# --------------------------------------------------------------------------- the results file


class ResultsFile:
    """``predictions.jsonl``: read what is finished, append one record at a time, durably."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._fd: int | None = None

    def load(self, *, drop_errors: bool = False) -> None:
        """Read the finished records; cut off a torn last line; optionally forget errors."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        complete = data.rfind(b"\n") + 1  # whatever follows the last newline is torn
        kept: list[bytes] = []
        changed = complete < len(data)
        for line in data[:complete].splitlines():
            record = _record_or_none(line)
            if record is None or (drop_errors and record.get("error")):
                changed = changed or bool(line.strip())
                continue  # a damaged line (or a forgotten error) is a task to run again
            self.records.append(record)
            kept.append(line)
        if changed:
            self._rewrite(kept)

    def _rewrite(self, lines: list[bytes]) -> None:
        temporary = self.path.with_suffix(".jsonl.tmp")
        with temporary.open("wb") as handle:
            handle.write(b"".join(line + b"\n" for line in lines))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)

    @property
    def finished(self) -> set[str]:
        return {str(r["id"]) for r in self.records}

    def open(self) -> None:
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, record: dict[str, Any]) -> None:
        # backslashreplace: a lone surrogate in a completion is written as its JSON escape.
        data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode(
            "utf-8", "backslashreplace")
        with self._lock:
            assert self._fd is not None, "ResultsFile.open() first"
            written = os.write(self._fd, data)
            while written < len(data):  # only on a full disk or similar; keep the line whole
                written += os.write(self._fd, data[written:])
            os.fsync(self._fd)
            self.records.append(record)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _record_or_none(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) and "id" in record else None


# --------------------------------------------------------------------------- configuration


def _write_json_atomically(path: Path, value: Any) -> None:
    from plancheck.fileio import write_text_atomically

    write_text_atomically(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _fingerprint(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k not in _VOLATILE}


def prepare_output(out: Path, config: dict[str, Any]) -> None:
    """Create ``out`` and its ``config.json``, or check that a resumed run matches it."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RunError(f"cannot create {out}: {error.strerror or error}") from None
    path = out / CONFIG
    if path.exists() and (out / PREDICTIONS).exists():
        try:
            existing = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise RunError(f"cannot read {path}: {error}") from None
        old, new = _fingerprint(existing), _fingerprint(json.loads(json.dumps(config)))
        differing = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        if differing:
            raise RunError(
                f"{out} holds results of a different configuration (differs in: "
                f"{', '.join(differing)}); use another --out, or remove {out} to start over"
            )
        return
    _write_json_atomically(path, config)


# --------------------------------------------------------------------------- progress


class Progress:
    """A one-line progress bar on a terminal; silent otherwise."""

    def __init__(self, total: int, label: str, stream: TextIO | None, enabled: bool) -> None:
        self.total = total
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.count = 0
        self.errors = 0
        self.tokens = 0
        self.started = time.monotonic()
        self._last = 0.0
        self._lock = threading.Lock()

    def tick(self, record: dict[str, Any]) -> None:
        with self._lock:
            self.count += 1
            self.errors += 1 if record.get("error") else 0
            self.tokens += int(record.get("prompt_tokens") or 0) + \
                int(record.get("completion_tokens") or 0)
            self.draw()

    def draw(self, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.2 and self.count < self.total:
            return
        self._last = now
        width = 24
        filled = int(width * self.count / self.total)
        elapsed = now - self.started
        eta = elapsed / self.count * (self.total - self.count) if self.count else 0.0
        line = (f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                f"{self.count}/{self.total}  errors {self.errors}  tokens {self.tokens}  "
                f"{_clock(elapsed)} elapsed, {_clock(eta)} left ")
        self.stream.write(line)
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.draw(force=True)
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


# --------------------------------------------------------------------------- the run


@dataclass
class RunOptions:
    out: Path
    method: str
    model: str | None
    config: dict[str, Any]
    concurrency: int = 1
    retry_errors: bool = False
    prices: Prices | None = None
    progress: bool = False
    stream: TextIO | None = None  # where progress and notices go (stderr)
    on_record: Callable[[dict[str, Any]], None] | None = field(default=None, repr=False)
    # Why the model endpoint cannot be reached now (None: it can), asked when a task failed
    # because the connection was refused: then the run stops instead of failing every task.
    endpoint_down: Callable[[], str | None] | None = field(default=None, repr=False)


def make_record(result: PlanResult, method: str, model: str | None, prices: Prices | None
                ) -> dict[str, Any]:
    record = {"id": str(result.task_id), "task_id": result.task_id, "method": method,
              "model": model}
    body = result.to_record()
    body.pop("task_id", None)
    body.pop("method", None)
    record.update(body)
    if record.get("cost_usd") is None and prices is not None:
        record["cost_usd"] = prices.cost(result.prompt_tokens, result.completion_tokens)
    return record


def _safe_plan(planner: Planner, task: PlanningTask, method: str) -> PlanResult:
    started = time.monotonic()
    try:
        result = planner.plan(task)
    except Exception as error:  # a planner bug costs one task, not the run
        result = PlanResult(task.task_id, method, None,
                            error=f"internal error: {type(error).__name__}: {error}")
    if not result.latency_s:
        result.latency_s = round(time.monotonic() - started, 6)
    return result


def run_tasks(tasks: Iterable[PlanningTask], factory: Callable[[], Planner],
              options: RunOptions) -> RunSummary:
    """Plan every task not yet in ``OUT/predictions.jsonl``; see the module doc."""
    started = time.monotonic()
    lock = _lock_output(options.out)
    try:
        return _run_locked(tasks, factory, options, started)
    finally:
        lock.release()


def _lock_output(out: Path) -> Any:
    """Hold ``OUT/.lock`` for the whole run: a second run into the same directory would call
    the model for the same tasks again and append duplicate records (or, with
    ``--retry-errors``, replace the file under the first run's open handle)."""
    from plancheck.locks import FileLock, LockHeld

    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RunError(f"cannot create {out}: {error.strerror or error}") from None
    lock = FileLock(out / LOCK, what=str(out))
    try:
        lock.acquire()
    except LockHeld as error:
        raise RunError(f"{error}; wait for it to finish (rerunning the same command then "
                       "resumes), or use another --out") from None
    except OSError as error:
        raise RunError(f"cannot lock {out / LOCK}: {error.strerror or error}") from None
    return lock


def _run_locked(tasks: Iterable[PlanningTask], factory: Callable[[], Planner],
                options: RunOptions, started: float) -> RunSummary:
    prepare_output(options.out, options.config)
    results = ResultsFile(options.out / PREDICTIONS)
    results.load(drop_errors=options.retry_errors)
    selected = list(tasks)
    _refuse_changed_tasks(options.out, results.records, selected)
    already = results.finished
    pending = [t for t in selected if str(t.task_id) not in already]
    summary = RunSummary(total=len(selected), skipped=len(selected) - len(pending))
    wanted = {str(t.task_id) for t in selected}
    summary.earlier_errors = sum(1 for r in results.records
                                 if r.get("error") and str(r["id"]) in wanted)
    work: queue.SimpleQueue[PlanningTask] = queue.SimpleQueue()
    for task in pending:
        work.put(task)
    stop = threading.Event()
    progress = Progress(len(pending), options.method, options.stream, options.progress)
    first = factory()  # built here, so that a bad configuration fails before any thread starts
    results.open()

    def worker(planner: Planner | None, stopped: threading.Event) -> None:
        try:
            planner = planner or factory()
        except Exception as error:
            _notice(options, f"cannot start a worker: {type(error).__name__}: {error}")
            stopped.set()
            return
        try:
            while not stop.is_set():
                try:
                    task = work.get_nowait()
                except queue.Empty:
                    return
                result = _safe_plan(planner, task, options.method)
                record = make_record(result, options.method, options.model, options.prices)
                record["task_sha256"] = task_digest(task)
                results.append(record)
                progress.tick(record)
                if options.on_record is not None:
                    options.on_record(record)
                if _refused(record) and options.endpoint_down is not None and not stop.is_set():
                    down = options.endpoint_down()
                    if down is not None:
                        summary.endpoint_down = down
                        stop.set()  # every other task would be refused too
                        _notice(options, f"stopping: {down}")
        finally:
            close = getattr(planner, "close", None)
            if callable(close):
                close()
            stopped.set()

    count = max(1, min(options.concurrency, len(pending) or 1))
    stopped = [threading.Event() for _ in range(count)]
    threads = [threading.Thread(target=worker, args=(first if i == 0 else None, stopped[i]),
                                name=f"plancheck-plan-{i}", daemon=True)
               for i in range(count)]
    try:
        for thread in threads:
            thread.start()
        _wait(stopped)
    except KeyboardInterrupt:
        stop.set()
        summary.interrupted = True
        running = sum(1 for event in stopped if not event.is_set())
        _notice(options, f"interrupted: finishing {running} running task(s) "
                         "(Ctrl-C again to abandon them)")
        try:
            _wait(stopped)
        except KeyboardInterrupt:
            _notice(options, "abandoned the running tasks; they will run again on resume")
    finally:
        progress.finish()
        results.close()
    done = [r for r in results.records if str(r["id"]) not in already]
    summary.done = len(done)
    summary.errors = sum(1 for r in done if r.get("error"))
    summary.prompt_tokens = sum(int(r.get("prompt_tokens") or 0) for r in done)
    summary.completion_tokens = sum(int(r.get("completion_tokens") or 0) for r in done)
    costs = [float(r["cost_usd"]) for r in done if r.get("cost_usd") is not None]
    summary.cost_usd = round(sum(costs), 6) if costs else None
    summary.elapsed_s = round(time.monotonic() - started, 3)
    return summary


def task_digest(task: PlanningTask) -> str:
    """What a result was planned from, kept in its record so that a resumed run can tell."""
    return hashlib.sha256(task.task_desc.encode("utf-8", "surrogatepass")).hexdigest()


def _refuse_changed_tasks(out: Path, records: list[dict[str, Any]],
                          tasks: list[PlanningTask]) -> None:
    """A resumed run whose tasks file describes a finished task differently would keep a
    result planned for another task: refuse it. (Records written before results carried the
    digest cannot be compared.)"""
    digests = {str(t.task_id): task_digest(t) for t in tasks}
    changed = [str(r["id"]) for r in records
               if isinstance(r.get("task_sha256"), str) and str(r["id"]) in digests
               and r["task_sha256"] != digests[str(r["id"])]]
    if changed:
        listed = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more"
                                           if len(changed) > 5 else "")
        raise RunError(
            f"{out} holds results planned from other descriptions of {len(changed)} of these "
            f"tasks (task {listed}): the tasks file changed since; use another --out, or "
            f"remove {out} to start over")


def _refused(record: dict[str, Any]) -> bool:
    return "refused the connection" in str(record.get("error") or "")


def _wait(stopped: list[threading.Event]) -> None:
    # Short waits on events keep the main thread responsive to Ctrl-C. (Not Thread.join: on
    # Python 3.11 a join interrupted by Ctrl-C can mark a running thread as finished.)
    for event in stopped:
        while not event.wait(0.1):
            pass


def _notice(options: RunOptions, message: str) -> None:
    stream = options.stream or sys.stderr
    stream.write(f"\nplancheck plan: {message}\n")
    stream.flush()
