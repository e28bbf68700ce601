"""Batch scoring speed and memory, against merely ``json.loads``-ing the same completions.

    python bench/bench_score.py                # >= 10,000 completions, median of 3 runs
    python bench/bench_score.py --count 20000 --runs 5

The completions are generated from the 233 gold plans by ``plancheck.scoring.completions``
(seeded: every run scores the same text). Reported, each as a throughput ratio to a plain
``json.loads`` loop over the completions (timed in the same process, interleaved with the
scoring runs so that machine load affects both alike):

* in process, ``ItemScorer.score`` on each record: parity metrics + FPoF (+ execution
  equivalence, always on), then with static checking, then with everything (F1s, DORA);
  and, for scale, the reference-parity verdict (``score_completion``) alone;
* end to end, the ``plancheck score`` command over a JSONL file with ``--per-item``
  (process start, reading, scoring, writing, the summary's bootstrap), with 1 and 2 jobs;
* memory: peak RSS of ``plancheck score`` on 10k and on 40k predictions (flat = no growth).

Targets (from the issue): parity + FPoF >= 25% of the json.loads throughput; with static
checking and execution equivalence >= 10%. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plancheck.corpus.builtin import builtin_toolset
from plancheck.corpus.paths import release_dir
from plancheck.scoring.batch import ItemScorer, RawRecord, ScoreOptions
from plancheck.scoring.completions import generate_completions, load_gold_tasks
from plancheck.scoring.gold import GoldIndex
from plancheck.scoring.reference import score_completion

PLANCHECK = str(Path(sys.executable).with_name("plancheck"))
TARGETS = {"parity + FPoF": 0.25, "+ static checks": 0.10}


def _records(tasks: list[tuple[int, list[object]]], count: int) -> list[dict[str, object]]:
    per_task = math.ceil(count / len(tasks))
    return [
        {"id": c.id, "task_id": c.task_id, "completion": c.completion}
        for c in generate_completions(tasks, per_task=per_task, seed=2024)
    ]


def _write(records: list[dict[str, object]], path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(record) + "\n" for record in records)


def _timed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def _loads_all(completions: list[str]) -> None:
    # A bare try/except: contextlib.suppress would slow the baseline down and flatter us.
    for text in completions:
        try:  # noqa: SIM105
            json.loads(text)
        except ValueError:
            pass


def _reference_all(pairs: list[tuple[Any, Any]]) -> None:
    """The reference-parity verdicts alone (what any score costs at least)."""
    for completion, task in pairs:
        score_completion(completion, task.prepared)


def _score_all(gold: GoldIndex, options: ScoreOptions, records: list[RawRecord]) -> None:
    scorer = ItemScorer(gold, builtin_toolset(), options)  # a fresh (cold) cache every run
    for record in records:
        scorer.score(record)


# Peak RSS is read by a small launcher process: Linux keeps a process's peak RSS across
# exec, so a child forked straight from this (large) benchmark process would report our size.
_LAUNCHER = """
import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
wall = time.perf_counter() - start
print(code, wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _cli(args: list[str]) -> tuple[float, int]:
    """Wall time and peak RSS (KiB) of one ``plancheck`` run."""
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, PLANCHECK, *args],
        capture_output=True,
        text=True,
        check=True,
    )
    code, wall, rss = done.stdout.split()
    if int(code) not in (0, 1):
        raise SystemExit(f"plancheck {' '.join(args)} failed with {code}")
    return float(wall), int(rss)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000, help="completions (>= 10000)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs (median; >= 3)")
    args = parser.parse_args()
    benchmark = release_dir() / "benchmark.jsonl"
    if not benchmark.is_file():
        print(f"needs the release: {benchmark} (set PLANCHECK_DATA)", file=sys.stderr)
        return 2
    tasks = load_gold_tasks(benchmark)
    records = _records(tasks, max(args.count, 10_000))
    completions = [str(r["completion"]) for r in records]
    raw = [RawRecord("bench", i, value=r) for i, r in enumerate(records)]
    gold = GoldIndex.load(str(benchmark))
    n = len(records)
    print(f"{n} completions from {len(tasks)} gold plans, {max(args.runs, 3)} runs each (median)\n")

    modes = {
        "parity + FPoF": ScoreOptions(static=False, extended=False),
        "+ static checks": ScoreOptions(static=True, extended=False),
        "+ F1s and DORA": ScoreOptions(static=True, extended=True),
    }
    pairs = [(r.value["completion"], gold.get(r.value["task_id"])) for r in raw]
    reference = "(score_completion alone)"
    times: dict[str, list[float]] = {
        "json.loads": [],
        reference: [],
        **{name: [] for name in modes},
    }
    for _ in range(max(args.runs, 3)):
        times["json.loads"].append(_timed(lambda: _loads_all(completions)))
        times[reference].append(_timed(lambda: _reference_all(pairs)))
        for name, options in modes.items():
            times[name].append(_timed(lambda options=options: _score_all(gold, options, raw)))
    base = statistics.median(times["json.loads"])
    print(f"{'in process':<28}{'us/item':>10}{'items/s':>12}{'vs json.loads':>15}")
    failed = False
    for name, samples in times.items():
        median = statistics.median(samples)
        ratio = base / median
        verdict = ""
        if name in TARGETS:
            ok = ratio >= TARGETS[name]
            failed |= not ok
            verdict = f"   target {TARGETS[name]:.0%}: {'ok' if ok else 'MISSED'}"
        print(f"{name:<28}{median / n * 1e6:>10.1f}{n / median:>12.0f}{ratio:>14.1%}{verdict}")

    with tempfile.TemporaryDirectory() as scratch:
        small, large = Path(scratch) / "small.jsonl", Path(scratch) / "large.jsonl"
        _write(records, small)
        _write(_records(tasks, 4 * len(records)), large)
        per_item = str(Path(scratch) / "per_item.jsonl")
        print(
            f"\n{'end to end (plancheck score)':<28}{'us/item':>10}{'items/s':>12}"
            f"{'vs json.loads':>15}"
        )
        runs = {
            "parity-only, 1 job": ["--parity-only"],
            "everything, 1 job": [],
            "parity-only, 2 jobs": ["--parity-only", "--jobs", "2"],
            "everything, 2 jobs": ["--jobs", "2"],
        }
        for name, extra in runs.items():
            walls = [
                _cli(
                    [
                        "score",
                        "--gold",
                        str(benchmark),
                        str(small),
                        "--per-item",
                        per_item,
                        "--format",
                        "json",
                        *extra,
                    ]
                )[0]
                for _ in range(max(args.runs, 3))
            ]
            wall = statistics.median(walls)
            print(f"{name:<28}{wall / n * 1e6:>10.1f}{n / wall:>12.0f}{base / wall:>14.1%}")
        print(
            f"\n{'peak RSS of plancheck score':<36}{len(records):>8} items{4 * len(records):>8}"
            " items     growth"
        )
        for name, extra in {"parity-only": ["--parity-only"], "everything": []}.items():
            rss = [
                _cli(
                    ["score", "--gold", str(benchmark), str(path), "--per-item", per_item, *extra]
                )[1]
                for path in (small, large)
            ]
            print(
                f"{name:<36}{rss[0] / 1024:>11.1f} MB{rss[1] / 1024:>11.1f} MB"
                f"{(rss[1] - rss[0]) / 1024:>+9.1f} MB"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
