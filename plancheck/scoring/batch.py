"""Score files of predictions against gold plans, streaming, in constant memory: the batch API
(:func:`score_records`, in this process or a pool of them), its parts in modules of their own -
reading (:mod:`~plancheck.scoring.prediction_files`), one item
(:mod:`~plancheck.scoring.item_scorer`, its line :mod:`~plancheck.scoring.per_item_line`), the
file of lines (:mod:`~plancheck.scoring.per_item_writer`) and the counts
(:mod:`~plancheck.scoring.summary`).

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
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any, Final

from plancheck.compiler.forced_formats import force_formats, forced_formats
from plancheck.ir.nodes import Toolset
from plancheck.scoring.gold import GoldIndex
from plancheck.scoring.item_scorer import ItemScorer, ScoredItem, ScoreOptions
from plancheck.scoring.per_item_line import PER_ITEM_FIELDS, clear_line_cache
from plancheck.scoring.per_item_writer import PerItemWriter
from plancheck.scoring.prediction_files import InputError, RawRecord, read_records
from plancheck.scoring.summary import Summary

# The batch's parts, each in its own module, are named here too: this is the batch API.
__all__ = [
    "PER_ITEM_FIELDS",
    "InputError",
    "ItemScorer",
    "PerItemWriter",
    "RawRecord",
    "ScoreOptions",
    "ScoredItem",
    "Summary",
    "clear_caches",
    "read_records",
    "score_records",
]


_CHUNK: Final = 512


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
    clear_line_cache()


# --------------------------------------------------------------------------- process pool


_WORKER: dict[str, ItemScorer] = {}  # the scorer of this worker process


def _init_worker(gold_text: str, gold_file: str, toolset: Toolset, options: ScoreOptions,
                 formats: tuple[str | None, str | None]) -> None:
    # The parent handles Ctrl-C (and stops the pool); workers must not die half-way through
    # a chunk with a traceback of their own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Stopping the pool sends SIGTERM: a worker ends at once (the parent's handler, which
    # turns SIGTERM and SIGHUP into an orderly stop, is not for workers).
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) not in (signal.SIG_IGN, None):
            signal.signal(number, signal.SIG_DFL)
    # The formats the parent reads with (--reference-syntax): a spawned worker starts without.
    force_formats(*formats)
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
        jobs - 1,
        initializer=_init_worker,
        initargs=(gold_text, gold.file, toolset, options, forced_formats()),
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
