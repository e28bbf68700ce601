"""Batch scoring throughput and memory, against merely ``json.loads``-ing the same completions.

    python bench/bench_score.py                  # 10,019 completions, median of 5 runs
    python bench/bench_score.py --count 20000 --runs 7 --skip-cli

The corpus: ``tests.support.completions.generate_completions`` over the 233 gold plans of
the release, seed 2024, the realistic weighted mix of styles and mutations
(``cover_all_pairs=False``), 43 completions per task (>= 10,000 in all), as
``{id, task_id, completion}`` records.

**Baseline**: ``json.loads`` on every completion in a ``try``/``except`` loop (the floor of any
scorer). **In process**, each mode is the batch API exactly as ``plancheck score`` drives it,
minus file I/O: ``score_records(records, gold, toolset, options)`` over the records (already
parsed dicts, as ``RawRecord(value=...)``), every item added to a ``Summary``:

* ``reference verdict alone``: ``score_completion(completion, task.prepared)`` per record, for
  scale (the six numbers of the reference evaluator, nothing else);
* ``parity + FPoF`` (``plancheck score --parity-only`` without ``--per-item``): per item the
  reference's em, tool_acc, param_acc, dep_acc, fpof_type, fpof_step and fpof_category, and the
  summary's counts (execution equivalence is not computed: null);
* ``parity + FPoF + lines`` (``--parity-only --per-item``): as above, plus the per-item JSON
  line with its ``diagnostics`` (the FPoF diagnostic: message, position, cascaded notes);
* ``+ static + exec_equiv`` (``--no-extended`` without ``--per-item``): as parity + FPoF,
  plus execution equivalence with the gold plan and the static checker's validity and lint
  codes (names, dependencies, types, symbolic execution);
* ``+ static + exec_equiv + lines`` (``--no-extended --per-item``): plus the line, whose
  diagnostics now also list the static findings;
* ``..., no cache``: the two modes above with ``cache_size=0``: nothing is remembered between
  predictions (no LRU of static results, canonical forms, call signatures of steps or FPoF
  entries); only a prediction that is exactly its task's gold plan reuses the gold plan's
  own static result;
* ``everything + lines`` (plain ``plancheck score --per-item``): plus TaskBench F1s and DORA
  trajectory metrics.

Before the timings, the cache hit rate of the cached mode: of the static results asked for
(one per readable prediction), the share already known (an earlier identical prediction, or
the gold plan's own). Every scorer starts cold (a new one per run). Times are CPU seconds of
this process (``time.process_time``), each mode run right after its own baseline run, for
``--runs`` rounds; reported: the median CPU time per item, the median wall time per item, and
the median of the per-round ratios (baseline time / mode time), i.e. the throughput as a
share of ``json.loads``'s. The corpus is built, and then ``gc.freeze()``-d, before any timing: the
collector then walks what scoring allocates and keeps, not the benchmark's own corpus (which a
streaming ``plancheck score`` never holds).

**End to end**: ``plancheck score`` on the corpus as a JSONL file (process start, reading and
parsing each record, scoring, writing the per-item file, the summary with 1,000 bootstrap
resamples) with ``--jobs 1`` and ``--jobs 2``, interleaved; wall time and CPU time (the command
and its worker processes). **Memory**: peak RSS of ``plancheck score --per-item`` on the corpus
and on a four times larger one (flat = no growth).

Targets (the scoring issue): parity + FPoF >= 25% of the json.loads throughput; with static
checking and execution equivalence >= 10%. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.support

from plancheck.build_info import build_info
from plancheck.corpus.builtin import builtin_toolset
from plancheck.corpus.paths import parity_cases_path, release_dir
from plancheck.ir.nodes import Toolset
from plancheck.scoring.batch import ItemScorer, RawRecord, ScoreOptions, Summary, score_records
from plancheck.scoring.gold import GoldIndex
from plancheck.scoring.reference import score_completion
from tests.support.completions import generate_completions, load_gold_tasks

PLANCHECK = str(Path(sys.executable).with_name("plancheck"))
SEED = 2024

PARITY = ScoreOptions(static=False, extended=False, equivalence=False, lines=False)
CHECKED = ScoreOptions(extended=False, lines=False)
MODES: dict[str, ScoreOptions | None] = {
    "reference verdict alone": None,
    "parity + FPoF": PARITY,
    "parity + FPoF + lines": ScoreOptions(
        static=False, extended=False, equivalence=False, lines=True
    ),
    "+ static + exec_equiv": CHECKED,
    "+ static + exec_equiv + lines": ScoreOptions(extended=False, lines=True),
    "+ static + eq, no cache": ScoreOptions(extended=False, lines=False, cache_size=0),
    "+ static + eq + lines, no cache": ScoreOptions(extended=False, cache_size=0),
    "everything + lines": ScoreOptions(),
}
TARGETS = {"parity + FPoF": 0.25, "+ static + exec_equiv": 0.10}


@dataclass
class Timing:
    cpu: list[float]
    wall: list[float]
    ratios: list[float]


def _records(
    tasks: list[tuple[int, list[Any]]], count: int, corpus: str = "generated"
) -> list[dict[str, Any]]:
    """``count`` records: generated completions, or (``shared``) the 6,089 shared parity cases
    first, topped up with generated ones -- the corpus ``bench/bench_scoring.py`` uses, on which
    the reference evaluator itself runs at about 2% of json.loads."""
    records: list[dict[str, Any]] = []
    if corpus == "shared":
        with parity_cases_path().open(encoding="utf-8") as lines:
            for line in lines:
                case = json.loads(line)
                records.append({"id": f"shared-{case['id']}", "task_id": case["task_id"],
                                "completion": case["completion"]})
    missing = count - len(records)
    if missing > 0:
        per_task = math.ceil(missing / len(tasks))
        generated = generate_completions(tasks, per_task=per_task, seed=SEED,
                                         cover_all_pairs=False)
        records.extend({"id": c.id, "task_id": c.task_id, "completion": c.completion}
                       for c in generated)
    return records


def _loads_all(completions: list[str]) -> None:
    # A bare try/except: contextlib.suppress would slow the baseline down and flatter us.
    for text in completions:
        try:  # noqa: SIM105
            json.loads(text)
        except ValueError:
            pass


def _scorer(
    gold: GoldIndex, records: list[RawRecord], options: ScoreOptions | None
) -> Callable[[], Summary | None]:
    if options is None:
        pairs = []
        for raw in records:
            task = gold.get(raw.value["task_id"])
            assert task is not None
            pairs.append((raw.value["completion"], task.prepared))

        def reference() -> Summary | None:
            for completion, prepared in pairs:
                score_completion(completion, prepared)
            return None

        return reference
    toolset = builtin_toolset()

    def batch() -> Summary | None:
        summary = Summary()
        for item in score_records(records, gold, toolset, options):
            summary.add(item)
        return summary

    return batch


def _static_hits(gold: GoldIndex, records: list[RawRecord], toolset: Toolset) -> tuple[int, int]:
    """How many static results the cached mode asks for, and how many it computes."""
    scorer = ItemScorer(gold, toolset, CHECKED)
    for raw in records:
        scorer.score(raw)
    return scorer.analyzer.static_asked, scorer.analyzer.static_checked


def _measure(job: Callable[[], object]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    job()
    return time.process_time() - cpu, time.perf_counter() - wall


# Peak RSS and CPU time are read by a small launcher process: Linux keeps a process's peak RSS
# across exec, so a child forked straight from this (large) process would report our size;
# RUSAGE_CHILDREN covers the command and the worker processes it waited for.
_LAUNCHER = """
import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(code, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""


def _cli(args: list[str]) -> tuple[float, float, int]:
    """Wall time, CPU time and peak RSS (KiB) of one ``plancheck`` run."""
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, PLANCHECK, *args],
        capture_output=True,
        text=True,
        check=True,
    )
    code, wall, cpu, rss = done.stdout.split()
    if int(code) not in (0, 1):
        raise SystemExit(f"plancheck {' '.join(args)} failed with {code}")
    return float(wall), float(cpu), int(rss)


def _row(name: str, n: int, cpu: float, wall: float, ratio: float, note: str = "") -> str:
    return (
        f"{name:<34}{cpu / n * 1e6:>9.1f}{wall / n * 1e6:>10.1f}{n / cpu:>10.0f}"
        f"{ratio:>11.1%}{note}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000, help="completions (>= 10000)")
    parser.add_argument("--runs", type=int, default=5, help="timed rounds (median; >= 5)")
    parser.add_argument("--skip-cli", action="store_true", help="in-process modes only")
    parser.add_argument("--corpus", choices=("generated", "shared"), default="generated",
                        help="generated completions only, or the shared parity cases topped up "
                        "with generated ones (bench_scoring.py's corpus)")
    args = parser.parse_args()
    runs = max(args.runs, 5)
    benchmark = release_dir() / "benchmark.jsonl"
    if not benchmark.is_file():
        print(f"needs the release: {benchmark} (set PLANCHECK_DATA)", file=sys.stderr)
        return 2
    tasks = load_gold_tasks(benchmark)
    records = _records(tasks, max(args.count, 10_000), args.corpus)
    completions = [str(r["completion"]) for r in records]
    raw = [RawRecord("bench", i, value=r) for i, r in enumerate(records)]
    gold = GoldIndex.load(str(benchmark))
    for task in gold:
        task.prepared  # noqa: B018 - gold preparation is load-time work, done once
    n = len(records)
    jobs = {name: _scorer(gold, raw, options) for name, options in MODES.items()}
    toolset = builtin_toolset()

    # The modes must agree where they overlap: caching changes no number and no line.
    cached, uncached = jobs["+ static + exec_equiv"](), jobs["+ static + eq, no cache"]()
    assert cached is not None and uncached is not None
    assert cached.to_dict(resamples=0) == uncached.to_dict(resamples=0), "the cache changed it"
    asked, checked = _static_hits(gold, raw, toolset)
    for job in jobs.values():
        job()  # warm up (imports, regexes, lru caches of names and extensions)
    gc.collect()
    gc.freeze()

    print(f"build: {build_info().label}")
    print(
        f"{n} completions from {len(tasks)} gold plans (seed {SEED}, realistic mix); "
        f"{runs} rounds, medians; load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"static results: {asked} asked for (readable predictions), {checked} checked, "
        f"{asked - checked} known already: cache hit rate {1 - checked / asked:.1%}\n"
    )
    print(f"{'in process':<34}{'CPU us':>9}{'wall us':>10}{'items/s':>10}{'vs loads':>11}")
    timings = {name: Timing([], [], []) for name in ("json.loads", *MODES)}
    for _ in range(runs):
        for name, job in jobs.items():
            base_cpu, base_wall = _measure(lambda: _loads_all(completions))
            cpu, wall = _measure(job)
            timings["json.loads"].cpu.append(base_cpu)
            timings["json.loads"].wall.append(base_wall)
            timing = timings[name]
            timing.cpu.append(cpu)
            timing.wall.append(wall)
            timing.ratios.append(base_cpu / cpu)
    failed = False
    loads = timings.pop("json.loads")
    loads_cpu = statistics.median(loads.cpu)
    print(_row("json.loads", n, loads_cpu, statistics.median(loads.wall), 1.0))
    for name, timing in timings.items():
        ratio = statistics.median(timing.ratios)
        note = ""
        if name in TARGETS:
            ok = ratio >= TARGETS[name]
            failed |= not ok
            note = f"   target {TARGETS[name]:.0%}: {'ok' if ok else 'MISSED'}"
        print(
            _row(
                name, n, statistics.median(timing.cpu), statistics.median(timing.wall), ratio, note
            )
        )
    if not args.skip_cli:
        _end_to_end(records, tasks, benchmark, n, loads_cpu, runs, args.corpus)
    return 1 if failed else 0


def _end_to_end(
    records: list[dict[str, Any]],
    tasks: list[tuple[int, list[Any]]],
    benchmark: Path,
    n: int,
    loads_cpu: float,
    runs: int,
    corpus: str,
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        small, large = Path(scratch) / "small.jsonl", Path(scratch) / "large.jsonl"
        small.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        large.write_text(
            "".join(json.dumps(r) + "\n" for r in _records(tasks, 4 * n, corpus)),
            encoding="utf-8",
        )
        per_item = str(Path(scratch) / "per_item.jsonl")
        base = ["score", "--gold", str(benchmark), "--per-item", per_item, "--format", "json"]
        configs = {
            "--parity-only, 1 job": ["--parity-only"],
            "--parity-only, 2 jobs": ["--parity-only", "--jobs", "2"],
            "--no-extended, 1 job": ["--no-extended"],
            "--no-extended, 2 jobs": ["--no-extended", "--jobs", "2"],
            "everything, 1 job": [],
            "everything, 2 jobs": ["--jobs", "2"],
        }
        results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in configs}
        for _ in range(runs):
            for name, extra in configs.items():
                results[name].append(_cli([*base, str(small), *extra]))
        print(
            f"\n{'end to end (plancheck score)':<34}{'CPU us':>9}{'wall us':>10}{'items/s':>10}"
            f"{'vs loads':>11}{'(wall)':>9}"
        )
        for name, samples in results.items():
            wall = statistics.median(s[0] for s in samples)
            cpu = statistics.median(s[1] for s in samples)
            print(
                f"{name:<34}{cpu / n * 1e6:>9.1f}{wall / n * 1e6:>10.1f}{n / wall:>10.0f}"
                f"{loads_cpu / cpu:>11.1%}{loads_cpu / wall:>9.1%}"
            )
        print(
            "(CPU: the command and its workers; vs loads: json.loads's CPU time over that CPU "
            f"time, and over the wall time; load average {os.getloadavg()[0]:.1f})"
        )
        print(
            f"\n{'peak RSS, plancheck score --per-item':<38}{n:>8} items{4 * n:>8} items    growth"
        )
        for name, extra in {"--parity-only": ["--parity-only"], "everything": []}.items():
            rss = [_cli([*base, str(path), *extra])[2] for path in (small, large)]
            print(
                f"{name:<38}{rss[0] / 1024:>11.1f} MB{rss[1] / 1024:>11.1f} MB"
                f"{(rss[1] - rss[0]) / 1024:>+9.1f} MB"
            )


if __name__ == "__main__":
    sys.exit(main())
