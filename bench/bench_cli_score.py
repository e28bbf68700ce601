"""``plancheck score`` end to end, beside the reference evaluator, in one process.

    python bench/bench_cli_score.py --reference CHECKOUT        # DisasterBench_Open checkout
    python bench/bench_cli_score.py --reference CHECKOUT --runs 7 --per-style 1000

Everything is timed in this one process, by CPU time (``time.process_time``), in interleaved
rounds (medians over ``--runs``):

* **the reference evaluator** of a DisasterBench_Open checkout, in process, driven as
  ``bench/bench_scoring.py --reference`` drives it, over the completions of the corpus;
* **``plancheck score --per-item FILE``** with default flags, through the command line entry
  :func:`plancheck.cli.main` called in this process (argument parsing, reading the gold file
  and the toolset, reading and parsing each record, scoring, writing the per-item file, the
  JSON summary with 1,000 bootstrap resamples: everything but starting Python and importing
  plancheck, which a first untimed call does; the start-up is ``bench/bench_lint.py``'s;
  what scoring remembers across batches in one process is forgotten before every call);
* the same with ``--parity-only``.

The corpus mixes every output style the parity tests know: the shared parity cases
(``$PLANCHECK_DATA/../parity/cases.jsonl``, 6,089 completions in eight styles), plus
completions from plancheck's generator that walk every (mutation, style) pair of its 17 styles
(Python literals, single quotes, bare keys, pretty-printed, wrapped, escaped, doubled braces,
...) and then follow its realistic weights, plus its edge cases of the scorer's shortcuts.

**Per style**: for each of the generator's styles, ``--per-style`` completions made from the
same (task, mutation, seed) triples, so the style corpora hold the very same predictions and
differ only in how they are written down; each is scored by the command line as above (default
flags and ``--parity-only``), and its CPU time per item is given relative to plain JSON's
(``raw``).

Targets (issue 15): default ``score --per-item`` at least 8x the reference evaluator's
throughput, ``--parity-only --per-item`` at least 20x, and no style more than 3x the cost of
plain JSON. Exit status 1 when a target is missed, 2 when data or the checkout is missing.

**The floor**: beside each target's budget (the reference's CPU time per completion divided by
the target), two parts that any ``score`` run pays for every record, timed in the same rounds:
reading the records (``fast_json.loads`` of each JSONL line, as ``score`` reads them) and the
reference verdict alone (:func:`plancheck.scoring.reference.score_completion` on each
completion, warm: no file, no line, no summary). A budget below their sum cannot be met by
anything that reads the records and computes the reference's verdict in this implementation.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_score import _records  # (the bench scripts share their corpus code)
from bench_scoring import Corpus, reference_scorer

from plancheck import fast_json
from plancheck.build_info import build_info
from plancheck.cli import main as plancheck_main
from plancheck.corpus.paths import release_dir
from plancheck.scoring.batch import clear_caches
from plancheck.scoring.reference import prepare_gold, score_completion
from tests.support.completions import (
    MUTATION_WEIGHTS,
    STYLES,
    generate_completions,
    generate_edge_completions,
    load_gold_tasks,
    make_completion,
)

TARGET_DEFAULT = 8.0
TARGET_PARITY = 20.0
TARGET_STYLE = 3.0
SEED = 2024


def mixed_corpus(tasks: list[tuple[int, list[Any]]], generated: int, edge: int
                 ) -> list[dict[str, Any]]:
    """The shared parity cases, then ``generated`` completions walking every (mutation,
    style) pair first, then ``edge`` edge cases."""
    records = _records(tasks, 0, "shared")  # the shared cases alone (count 0: no top-up)
    per_task = -(-generated // len(tasks))
    records += [{"id": c.id, "task_id": c.task_id, "completion": c.completion}
                for c in generate_completions(tasks, per_task=per_task, seed=SEED)]
    records += [{"id": c.id, "task_id": c.task_id, "completion": c.completion}
                for c in generate_edge_completions(tasks, count=edge, seed=SEED)]
    return records


def style_corpora(tasks: list[tuple[int, list[Any]]], per_style: int
                  ) -> dict[str, list[dict[str, Any]]]:
    """For every style, ``per_style`` completions of the same (task, mutation, seed)
    triples: the same predictions, written in each style."""
    import random

    rng = random.Random(f"styles:{SEED}")
    names = list(MUTATION_WEIGHTS)
    weights = [MUTATION_WEIGHTS[name] for name in names]
    triples = [(tasks[n % len(tasks)], rng.choices(names, weights)[0], n)
               for n in range(per_style)]
    return {
        style: [{"id": f"{style}-{n}", "task_id": task_id,
                 "completion": make_completion(plan, mutation, style, seed=n)}
                for (task_id, plan), mutation, n in triples]
        for style in STYLES
    }


def _write(records: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _cli(arguments: list[str]) -> Callable[[], None]:
    def run() -> None:
        clear_caches()  # what a new process would not know yet
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = plancheck_main(arguments)
        if code not in (0, 1):
            raise SystemExit(f"plancheck {' '.join(arguments)} exited {code}")

    return run


def _read_all(lines: list[str]) -> None:
    loads = fast_json.loads
    for line in lines:
        loads(line)


def _verdicts(corpus: Corpus) -> None:
    for _, completion, gold in corpus:
        score_completion(completion, gold)


def _cpu(job: Callable[[], None]) -> float:
    start = time.process_time()
    job()
    return time.process_time() - start


def _medians(jobs: dict[str, Callable[[], None]], runs: int) -> dict[str, float]:
    """Median CPU seconds of each job over ``runs`` interleaved rounds (the order rotated
    every round, so that no job always runs after the same one)."""
    samples: dict[str, list[float]] = {name: [] for name in jobs}
    order = list(jobs)
    for round_ in range(runs):
        for name in order[round_ % len(order):] + order[:round_ % len(order)]:
            gc.collect()
            samples[name].append(_cpu(jobs[name]))
    return {name: statistics.median(times) for name, times in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--reference", type=Path, metavar="CHECKOUT", required=True,
                        help="a DisasterBench_Open checkout (its evaluators/evaluators.py, "
                        "with json-repair 0.64.6 installed)")
    parser.add_argument("--generated", type=int, default=4660,
                        help="generated completions beside the shared cases (default 4660)")
    parser.add_argument("--edge", type=int, default=600, help="edge cases (default 600)")
    parser.add_argument("--per-style", type=int, default=1000,
                        help="completions per style (default 1000; 0: no per-style table)")
    parser.add_argument("--runs", type=int, default=5, help="rounds, >= 3 (default 5)")
    args = parser.parse_args(argv)
    benchmark = release_dir() / "benchmark.jsonl"
    if not benchmark.is_file() or not (args.reference / "evaluators").is_dir():
        print(f"needs {benchmark} (set PLANCHECK_DATA) and a checkout with evaluators/",
              file=sys.stderr)
        return 2
    runs = max(args.runs, 3)
    tasks = load_gold_tasks(benchmark)
    records = mixed_corpus(tasks, args.generated, args.edge)
    golds = {task_id: prepare_gold(plan) for task_id, plan in tasks}
    corpus: Corpus = [("", str(r["completion"]), golds[r["task_id"]]) for r in records]
    reference = reference_scorer(args.reference)
    n = len(records)
    failed = False
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        predictions = _write(records, folder / "mixed.jsonl")
        per_item = str(folder / "items.jsonl")
        base = ["score", "--gold", str(benchmark), "--per-item", per_item, "--format", "json"]
        lines = predictions.read_text(encoding="utf-8").splitlines()
        jobs: dict[str, Callable[[], None]] = {
            "reference evaluator": lambda: reference(corpus),
            "reading the records": lambda: _read_all(lines),
            "the verdict alone": lambda: _verdicts(corpus),
            "score --per-item": _cli([*base, str(predictions)]),
            "score --parity-only --per-item": _cli([*base, "--parity-only", str(predictions)]),
        }
        for job in jobs.values():
            job()  # imports, the toolset cache, the reference's own warm-up: untimed
        times = _medians(jobs, runs)
        print(f"build: {build_info().label}")
        print(f"{n} completions (shared parity cases, generated in all "
              f"{len(STYLES)} styles, edge cases); CPU time in this process, median of "
              f"{runs} rounds; load average {os.getloadavg()[0]:.1f}\n")
        print(f"{'':34}{'CPU us/item':>12}{'items/s':>10}{'vs reference':>14}")
        reference_time = times.pop("reference evaluator")
        print(f"{'reference evaluator':34}{reference_time / n * 1e6:12.1f}"
              f"{n / reference_time:10.0f}{1.0:13.1f}x")
        floor = times.pop("reading the records") + times.pop("the verdict alone")
        for name, target in (("score --per-item", TARGET_DEFAULT),
                             ("score --parity-only --per-item", TARGET_PARITY)):
            speedup = reference_time / times[name]
            ok = speedup >= target
            failed |= not ok
            print(f"{name:34}{times[name] / n * 1e6:12.1f}{n / times[name]:10.0f}"
                  f"{speedup:13.1f}x   target {target:.0f}x: {'ok' if ok else 'MISSED'}")
        print(f"\nthe floor, paid by every run (in process, warm, no output): reading the "
              f"records and the reference verdict alone, {floor / n * 1e6:.1f} us/item; "
              f"budgets: {reference_time / n / TARGET_DEFAULT * 1e6:.1f} us/item for "
              f"{TARGET_DEFAULT:.0f}x, {reference_time / n / TARGET_PARITY * 1e6:.1f} for "
              f"{TARGET_PARITY:.0f}x")
        if args.per_style > 0:
            failed |= _per_style(tasks, args.per_style, folder, base, runs)
    return 1 if failed else 0


def _per_style(tasks: list[tuple[int, list[Any]]], per_style: int, folder: Path,
               base: list[str], runs: int) -> bool:
    """The per-style table; True when a style misses the target."""
    corpora = style_corpora(tasks, per_style)
    jobs: dict[str, Callable[[], None]] = {}
    for style, records in corpora.items():
        path = str(_write(records, folder / f"{style}.jsonl"))
        jobs[f"{style}"] = _cli([*base, path])
        jobs[f"{style} parity"] = _cli([*base, "--parity-only", path])
    for job in jobs.values():
        job()
    times = _medians(jobs, runs)
    raw, raw_parity = times["raw"], times["raw parity"]
    print(f"\nper style, {per_style} completions each (the same predictions), CPU us/item and "
          f"cost relative to plain JSON (raw)")
    print(f"{'style':18}{'default':>9}{'x raw':>7}{'parity-only':>13}{'x raw':>7}")
    failed = False
    for style in corpora:
        default, parity = times[style], times[f"{style} parity"]
        worst = max(default / raw, parity / raw_parity)
        miss = worst > TARGET_STYLE
        failed |= miss
        print(f"{style:18}{default / per_style * 1e6:9.1f}{default / raw:7.2f}"
              f"{parity / per_style * 1e6:13.1f}{parity / raw_parity:7.2f}"
              f"{'   MISSED (target ' + str(TARGET_STYLE) + 'x)' if miss else ''}")
    print(f"target: no style above {TARGET_STYLE:.0f}x plain JSON: "
          f"{'MISSED' if failed else 'ok'}")
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
