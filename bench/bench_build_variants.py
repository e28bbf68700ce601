"""The scoring hot path's CPU time under two or more builds of plancheck, interleaved.

    python bench/bench_build_variants.py O3=/tmp/o3-tree O2=/tmp/o2-tree
    python bench/bench_build_variants.py O3=A O2=B --rounds 7 --count 4000

Each ``NAME=DIR`` is a plancheck tree (a clone holding a build's compiled modules, e.g. the
``.so`` files and ``plancheck/_build.json`` unzipped from a wheel that ``pip wheel`` built); the
first is the baseline. Every round runs one worker process per build, in turn, each with
``PYTHONPATH=DIR`` (it prints which build it imported, so a tree whose modules did not load
shows up as plain Python). A worker builds ``bench/bench_score.py``'s corpus (``--count``
generated completions, seed 2024), warms up, then times by CPU time (``time.process_time``)
``json.loads`` of every completion and three of ``bench_score.py``'s modes through the batch
API: ``parity + FPoF``, ``+ static + exec_equiv`` and the same with no cache. Reported per
build and mode: the median CPU time per item over the rounds, and the median over rounds of
(mode time / json.loads time) relative to the baseline's in the same round -- the ratio,
so that a busy machine slows both sides of it alike. A ratio of 1.05 is 5% slower than the
baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

MODES = ("parity + FPoF", "+ static + exec_equiv", "+ static + eq, no cache")

# Run in each worker: bench_score.py's own corpus and modes, loaded from the tree under test.
_WORKER = r"""
import gc, json, sys, time
from importlib.util import module_from_spec, spec_from_file_location
spec = spec_from_file_location("bench_score", sys.argv[1])
bench = module_from_spec(spec)
sys.modules["bench_score"] = bench
spec.loader.exec_module(bench)
modes, count = json.loads(sys.argv[2]), int(sys.argv[3])
benchmark = bench.release_dir() / "benchmark.jsonl"
tasks = bench.load_gold_tasks(benchmark)
records = bench._records(tasks, count)
completions = [str(r["completion"]) for r in records]
raw = [bench.RawRecord("bench", i, value=r) for i, r in enumerate(records)]
gold = bench.GoldIndex.load(str(benchmark))
for task in gold:
    task.prepared
jobs = {name: bench._scorer(gold, raw, bench.MODES[name]) for name in modes}
for job in jobs.values():
    job()
gc.collect()
gc.freeze()
times = {"json.loads": bench._measure(lambda: bench._loads_all(completions))[0]}
for name, job in jobs.items():
    times[name] = bench._measure(job)[0]
print(json.dumps({"build": bench.build_info().label, "n": len(records), "cpu": times}))
"""


def _run(tree: Path, count: int) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", _WORKER, str(tree / "bench" / "bench_score.py"),
         json.dumps(MODES), str(count)],
        env=env, capture_output=True, text=True, check=False, timeout=1800,
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree}: the worker failed:\n{done.stderr[-3000:]}")
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs="+", metavar="NAME=DIR",
                        help="plancheck trees to compare; the first is the baseline")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (medians)")
    parser.add_argument("--count", type=int, default=4000, help="completions per worker")
    args = parser.parse_args()
    builds: dict[str, Path] = {}
    for spec in args.builds:
        name, sep, path = spec.partition("=")
        if not sep or not (Path(path) / "plancheck").is_dir():
            parser.error(f"{spec!r} is no NAME=DIR of a plancheck tree")
        builds[name] = Path(path).resolve()
    cpu: dict[str, dict[str, list[float]]] = {b: {m: [] for m in MODES} for b in builds}
    relative: dict[str, dict[str, list[float]]] = {b: {m: [] for m in MODES} for b in builds}
    labels: dict[str, str] = {}
    n = 0
    for _ in range(max(args.rounds, 1)):
        results = {name: _run(tree, args.count) for name, tree in builds.items()}
        base = results[next(iter(builds))]
        for name, result in results.items():
            labels[name] = str(result["build"])
            n = int(str(result["n"]))
            times = result["cpu"]
            base_times = base["cpu"]
            assert isinstance(times, dict) and isinstance(base_times, dict)
            for mode in MODES:
                cpu[name][mode].append(times[mode])
                relative[name][mode].append((times[mode] / times["json.loads"])
                                            / (base_times[mode] / base_times["json.loads"]))
    print(f"{n} completions, {args.rounds} rounds, medians; load average "
          f"{os.getloadavg()[0]:.1f}")
    for name in builds:
        print(f"{name}: {labels[name]}")
    print(f"\n{'mode':<26}" + "".join(f"{name + ' us':>12}{'ratio':>7}" for name in builds))
    for mode in MODES:
        row = f"{mode:<26}"
        for name in builds:
            row += (f"{statistics.median(cpu[name][mode]) / n * 1e6:>12.1f}"
                    f"{statistics.median(relative[name][mode]):>7.2f}")
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
