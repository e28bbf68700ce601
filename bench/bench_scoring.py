#!/usr/bin/env python3
"""How fast is reference-parity scoring, compared with merely parsing the completions?

Builds a corpus of raw completions - every shared parity case (when the data is present) plus
completions generated from the gold plans with the generator's realistic style mix - and times,
median of 5 interleaved runs:

(a) ``json.loads`` on every completion (``try``/``except`` around it), the floor of any scorer;
(b) :func:`plancheck.scoring.reference.score_completion` on every completion, with each gold
    plan prepared once (:func:`prepare_gold`), as a batch scorer would.

and prints both throughputs and their ratio (b)/(a). The target is a ratio of at least 0.25;
the reference evaluator itself manages about 0.02-0.05.

    python bench/bench_scoring.py [--generated N] [--seed S] [--by-style]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plancheck.corpus.paths import parity_cases_path, release_dir
from plancheck.scoring.completions import generate_completions, load_gold_tasks
from plancheck.scoring.reference import GoldPlan, prepare_gold, score_completion

Corpus = list[tuple[str, str, GoldPlan]]  # (style, completion, gold)


def build_corpus(generated: int, seed: int) -> Corpus:
    tasks = load_gold_tasks(release_dir() / "benchmark.jsonl")
    golds = {task_id: prepare_gold(plan) for task_id, plan in tasks}
    corpus: Corpus = []
    cases = parity_cases_path()
    if cases.is_file():
        with cases.open(encoding="utf-8") as lines:
            for line in lines:
                case = json.loads(line)
                corpus.append(
                    (f"shared:{case['style']}", case["completion"], golds[case["task_id"]])
                )
    per_task = -(-generated // len(tasks))
    # The realistic weighted mix (no walk through every mutation x style pair first).
    for item in generate_completions(tasks, per_task=per_task, seed=seed, cover_all_pairs=False):
        corpus.append((item.style, item.completion, golds[item.task_id]))
    return corpus


def loads_all(corpus: Corpus) -> None:
    for _, completion, _ in corpus:
        # try/except rather than contextlib.suppress: the cheapest form is the fair floor.
        try:  # noqa: SIM105
            json.loads(completion)
        except Exception:
            pass


def score_all(corpus: Corpus) -> None:
    for _, completion, gold in corpus:
        score_completion(completion, gold)


def median_seconds(runs: int, *jobs: Callable[[], None]) -> list[float]:
    """Median wall time of each job, running them interleaved so drift hits all alike."""
    timings: list[list[float]] = [[] for _ in jobs]
    for _ in range(runs):
        for job, times in zip(jobs, timings, strict=True):
            start = time.perf_counter()
            job()
            times.append(time.perf_counter() - start)
    return [statistics.median(times) for times in timings]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--generated",
        type=int,
        default=4000,
        help="generated completions to add to the shared cases (default 4000)",
    )
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--by-style", action="store_true", help="also break down by style")
    args = parser.parse_args()

    corpus = build_corpus(args.generated, args.seed)
    score_all(corpus)  # warm the caches (gold preparation, regexes) once, untimed
    loads_time, score_time = median_seconds(
        args.runs, lambda: loads_all(corpus), lambda: score_all(corpus)
    )
    n = len(corpus)
    print(f"completions: {n:,}")
    print(
        f"(a) json.loads:       {n / loads_time:12,.0f} /s  ({loads_time * 1e6 / n:6.1f} us each)"
    )
    print(
        f"(b) score_completion: {n / score_time:12,.0f} /s  ({score_time * 1e6 / n:6.1f} us each)"
    )
    print(f"ratio (b)/(a): {loads_time / score_time:.3f}  (target >= 0.25)")

    if args.by_style:
        groups: dict[str, Corpus] = defaultdict(list)
        for entry in corpus:
            groups[entry[0]].append(entry)
        print(f"\n{'style':28s} {'n':>6s} {'loads us':>9s} {'score us':>9s} {'ratio':>6s}")
        for style, group in sorted(groups.items()):
            a, b = median_seconds(
                args.runs, lambda g=group: loads_all(g), lambda g=group: score_all(g)
            )
            print(
                f"{style:28s} {len(group):6d} {a * 1e6 / len(group):9.1f} "
                f"{b * 1e6 / len(group):9.1f} {a / b:6.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
