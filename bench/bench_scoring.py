#!/usr/bin/env python3
"""How fast is reference-parity scoring, compared with merely parsing the completions?

The acceptance criterion (issue 4): scoring >= 10,000 raw completions against the 233 gold
plans (the parity metrics and FPoF, i.e. :func:`plancheck.scoring.reference.score_completion`)
reaches at least 25% of the throughput of a bare ``json.loads`` loop over the same
completions. The reference evaluator itself manages about 2%.

The corpus is a realistic mix, not just JSON: every shared parity case (6,089 completions in
eight styles, when the data is present) plus ``--generated`` completions drawn from the
gold plans with the generator's realistic style and mutation weights (plain JSON, fences,
chain-of-thought prose, wrappers, doubled braces, broken JSON, junk, ...).

Each run times, back to back over the whole corpus,

(a) ``json.loads`` on every completion (``try``/``except`` around it), the floor of any
    scorer, and
(b) ``score_completion`` on every completion against its gold plan, prepared once per task
    (:func:`prepare_gold`), as a batch scorer does.

Timing is robust to a loaded machine: the headline numbers are the CPU time of this process
(``time.process_time``, so time spent descheduled does not count), with (a) and (b)
interleaved in every run so that drift hits both alike; the ratio is the median over the
runs of each run's (a)/(b). Wall-clock numbers are printed alongside. ``--by-style`` repeats
the measurement per style.

    python bench/bench_scoring.py [--generated N] [--seed S] [--runs R] [--by-style]

Exit status: 0 when the CPU-time ratio reaches 0.25, 1 when it does not, 2 when the data is
missing or the arguments are bad.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plancheck.build_info import build_info
from plancheck.corpus.paths import parity_cases_path, release_dir
from plancheck.scoring.reference import GoldPlan, prepare_gold, score_completion
from tests.support.completions import generate_completions, load_gold_tasks

TARGET = 0.25

Corpus = list[tuple[str, str, GoldPlan]]  # (style, completion, prepared gold)


def build_corpus(generated: int, seed: int) -> Corpus:
    """Shared parity cases (styles prefixed ``shared:``) plus generated completions."""
    benchmark = release_dir() / "benchmark.jsonl"
    if not benchmark.is_file():
        raise FileNotFoundError(f"{benchmark} not found (set PLANCHECK_DATA)")
    tasks = load_gold_tasks(benchmark)
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
    per_task = -(-generated // len(tasks)) if generated > 0 else 0
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


def reference_scorer(checkout: Path) -> Callable[[Corpus], None]:
    """The reference evaluator of a DisasterBench_Open checkout, driven as its
    ``baselines/test_baseline.py`` drives it (imported from the user's checkout; nothing of it
    is part of plancheck)."""
    import contextlib
    import io

    sys.path.insert(0, str(checkout))
    from evaluators.evaluators import Evaluator  # type: ignore[import-not-found]

    evaluator = Evaluator()

    def score(corpus: Corpus) -> None:
        # The reference prints on failures; its output is not part of what is timed.
        with contextlib.redirect_stdout(io.StringIO()):
            for _, completion, gold in corpus:
                try:  # the harness records a crash of the evaluator as an `exception` verdict
                    answer = evaluator.normalize_answer_for_evaluation(
                        "dp", evaluator.extract_answer_from_model_completion(completion))
                    evaluator.check_answers_equivalence(answer, gold.text)
                    evaluator.check_tools_correctness(answer, gold.text)
                    evaluator.check_parameters_correctness(answer, gold.text)
                    evaluator.check_dependencies_correctness(answer, gold.text)
                    evaluator.analyze_error_propagation(answer, gold.text)
                except Exception:  # any crash, as the harness catches it
                    continue

    return score


@dataclass(frozen=True)
class Timing:
    """Medians over the runs, in seconds per pass over the corpus, and the median ratio."""

    loads_cpu: float
    score_cpu: float
    loads_wall: float
    score_wall: float
    ratio_cpu: float  # median over runs of loads_cpu / score_cpu
    ratio_wall: float


def measure(runs: int, loads: Callable[[], None], score: Callable[[], None]) -> Timing:
    """Run (a) and (b) interleaved ``runs`` times, timing each by CPU and by wall clock."""
    samples: dict[str, list[float]] = defaultdict(list)
    for run in range(runs):
        # Alternate which goes first, so neither always inherits the other's cache state.
        order = [("loads", loads), ("score", score)]
        if run % 2:
            order.reverse()
        for name, job in order:
            wall, cpu = time.perf_counter(), time.process_time()
            job()
            samples[f"{name}_cpu"].append(time.process_time() - cpu)
            samples[f"{name}_wall"].append(time.perf_counter() - wall)
    ratios_cpu = [a / b for a, b in zip(samples["loads_cpu"], samples["score_cpu"], strict=True)]
    ratios_wall = [a / b for a, b in zip(samples["loads_wall"], samples["score_wall"], strict=True)]
    return Timing(
        loads_cpu=statistics.median(samples["loads_cpu"]),
        score_cpu=statistics.median(samples["score_cpu"]),
        loads_wall=statistics.median(samples["loads_wall"]),
        score_wall=statistics.median(samples["score_wall"]),
        ratio_cpu=statistics.median(ratios_cpu),
        ratio_wall=statistics.median(ratios_wall),
    )


def _per_second(count: int, seconds: float) -> str:
    return f"{count / seconds:10,.0f} /s ({seconds * 1e6 / count:6.1f} us each)"


def report(count: int, timing: Timing) -> None:
    print(f"build: {build_info().label}")
    print(f"completions: {count:,}")
    print("                          CPU time (headline)                   wall clock")
    print(
        f"(a) json.loads:       {_per_second(count, timing.loads_cpu)}   "
        f"{_per_second(count, timing.loads_wall)}"
    )
    print(
        f"(b) score_completion: {_per_second(count, timing.score_cpu)}   "
        f"{_per_second(count, timing.score_wall)}"
    )
    print(
        f"ratio (b)/(a): CPU {timing.ratio_cpu:.3f}   wall {timing.ratio_wall:.3f}"
        f"   (target >= {TARGET}; median of per-run ratios)"
    )


def report_by_style(corpus: Corpus, runs: int) -> None:
    groups: dict[str, Corpus] = defaultdict(list)
    for entry in corpus:
        groups[entry[0]].append(entry)
    print(
        f"\n{'style':24s} {'n':>6s} {'loads us':>9s} {'score us':>9s} {'CPU ratio':>9s}"
        f" {'wall ratio':>10s} {'share of (b)':>12s}"
    )
    rows = []
    for style, group in sorted(groups.items()):
        timing = measure(runs, partial(loads_all, group), partial(score_all, group))
        rows.append((style, len(group), timing))
    total = sum(timing.score_cpu for _, _, timing in rows)
    for style, n, timing in rows:
        print(
            f"{style:24s} {n:6d} {timing.loads_cpu * 1e6 / n:9.1f} "
            f"{timing.score_cpu * 1e6 / n:9.1f} {timing.ratio_cpu:9.2f} {timing.ratio_wall:10.2f}"
            f" {timing.score_cpu / total:11.1%}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--generated",
        type=int,
        default=4000,
        help="generated completions to add to the shared cases (default 4000)",
    )
    parser.add_argument("--seed", type=int, default=11, help="generator seed (default 11)")
    parser.add_argument("--runs", type=int, default=7, help="interleaved runs, >= 5 (default 7)")
    parser.add_argument("--by-style", action="store_true", help="also break down by style")
    parser.add_argument("--reference", type=Path, metavar="CHECKOUT", default=None,
                        help="also time the reference evaluator of a DisasterBench_Open checkout "
                        "(with json-repair 0.64.6) on the same corpus")
    args = parser.parse_args(argv)
    if args.runs < 5 or args.generated < 0:
        parser.error("--runs must be at least 5 and --generated not negative")

    try:
        corpus = build_corpus(args.generated, args.seed)
    except (OSError, ValueError, KeyError) as error:
        print(f"bench_scoring: cannot build the corpus: {error}", file=sys.stderr)
        return 2
    if len(corpus) < 10_000:
        print(f"note: only {len(corpus):,} completions (the criterion asks for >= 10,000)")
    score_all(corpus)  # warm the caches (gold preparation, regexes, recipes) once, untimed
    loads_all(corpus)
    timing = measure(args.runs, partial(loads_all, corpus), partial(score_all, corpus))
    report(len(corpus), timing)
    if args.reference is not None:
        reference = measure(args.runs, partial(loads_all, corpus),
                            partial(reference_scorer(args.reference), corpus))
        print(f"the reference evaluator: {reference.score_cpu * 1e6 / len(corpus):.1f} us each, "
              f"ratio CPU {reference.ratio_cpu:.3f}   wall {reference.ratio_wall:.3f}")
    if args.by_style:
        report_by_style(corpus, args.runs)
    return 0 if timing.ratio_cpu >= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
