"""The in-process rows of ``bench_lint.py`` on two checkouts, side by side in one run.

    python bench/bench_compare_trees.py --against /work/wt/base          # this checkout vs base
    python bench/bench_compare_trees.py --against BASE --tree OTHER --pairs 4 --max-ratio 1.05
    python bench/bench_lint.py --against BASE                            # the same

Make the other checkout with ``git worktree add --detach PATH COMMIT``. Each checkout gets a
child process (``bench_lint.py --serve`` with ``PYTHONPATH`` set to it, and ``-P`` so that
neither the working directory nor ``bench/`` shadows it); the parent asks the two in turn for
one sample (the CPU time, ``time.process_time``, of 200 checks), the side asked first
alternating, so that a change of the machine's speed (on a shared machine it drifts by tens of
percent over seconds) falls on both alike. That is repeated with ``--pairs`` fresh pairs of
children (a process's memory layout and hash seed move its speed a little too).

The rows: bench_lint's two in-process rows, and ``check_json_plan_us``, the batch scorer's
check of the same plan read from its JSON (every rule). The report per row: each side's median
sample and the range of its samples, the ratio of the medians (this checkout over the other:
what ``--max-ratio`` tests), and the median and quartiles of the ratios of samples taken one
after the other. Both checkouts are measured
with this checkout's benchmark code and the same Python; each runs the build (plain or
compiled) it holds, which is printed. ``--max-ratio R`` exits 1 when a ratio exceeds R.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import IO

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
ROWS = ("check_core_us", "check_full_static_us", "check_json_plan_us")  # bench_lint.serve


class Child:
    """A ``bench_lint.py --serve`` process on one checkout's plancheck."""

    def __init__(self, tree: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(tree))
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed plancheck: bytecode cached
        self.process = subprocess.Popen(
            [sys.executable, "-P", str(BENCH / "bench_lint.py"), "--serve"], env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        hello = json.loads(self._line())
        source = Path(hello["source"]).resolve()
        if not source.is_relative_to(tree.resolve()):
            raise SystemExit(f"the child for {tree} imported plancheck from {source}")
        self.build: str = hello["build"]

    def _line(self) -> str:
        stdout = self.process.stdout
        assert stdout is not None
        line = stdout.readline()
        if not line:
            raise SystemExit("a child of the benchmark stopped (its error is above)")
        return line

    def sample(self, row: str) -> float:
        stdin: IO[str] | None = self.process.stdin
        assert stdin is not None
        stdin.write(row + "\n")
        stdin.flush()
        return float(self._line())

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout")
    parser.add_argument("--tree", type=Path, default=ROOT, help="this checkout (default: "
                        "the one holding this file)")
    parser.add_argument("--pairs", type=int, default=3, help="pairs of children (default 3)")
    parser.add_argument("--samples", type=int, default=40,
                        help="samples per row from each child (default 40)")
    parser.add_argument("--max-ratio", type=float, default=None)
    options = parser.parse_args(argv)
    trees = (options.tree, options.against)
    for tree in trees:
        if not (tree / "plancheck" / "__init__.py").is_file():
            parser.error(f"{tree} holds no plancheck/ package")
    samples = {row: ([], []) for row in ROWS}  # type: dict[str, tuple[list[float], list[float]]]
    ratios: dict[str, list[float]] = {row: [] for row in ROWS}
    builds: tuple[set[str], set[str]] = (set(), set())
    for _ in range(options.pairs):
        children = (Child(trees[0]), Child(trees[1]))
        for side, child in enumerate(children):
            builds[side].add(child.build)
        for row in ROWS:
            for _ in range(5):  # warm-up: the tables, the interned strings
                children[0].sample(row), children[1].sample(row)
            for turn in range(options.samples):
                if turn % 2 == 0:
                    ours = children[0].sample(row)
                    theirs = children[1].sample(row)
                else:
                    theirs = children[1].sample(row)
                    ours = children[0].sample(row)
                samples[row][0].append(ours)
                samples[row][1].append(theirs)
                ratios[row].append(ours / theirs)
        for child in children:
            child.close()
    print(f"{options.pairs} pairs of children x {options.samples} samples of 200 checks a row, "
          f"CPU time, load average {os.getloadavg()[0]:.2f}")
    for name, tree, build in zip(("tree", "against"), trees, builds, strict=True):
        print(f"  {name:<8} {tree}  ({', '.join(sorted(build))})")
    print(f"{'row':<22}{'tree µs':>9}{'range':>13}{'against µs':>12}{'range':>13}"
          f"{'ratio':>7}   paired ratios: median (quartiles)")
    failed = False
    for row in ROWS:
        ours, theirs = samples[row]
        quartiles = statistics.quantiles(ratios[row], n=4)
        ratio = statistics.median(ours) / statistics.median(theirs)
        failed |= options.max_ratio is not None and ratio > options.max_ratio
        print(f"{row:<22}{statistics.median(ours):>9.1f}{_range(ours):>13}"
              f"{statistics.median(theirs):>12.1f}{_range(theirs):>13}{ratio:>7.3f}"
              f"   {quartiles[1]:.3f} ({quartiles[0]:.3f}-{quartiles[2]:.3f})")
    return 1 if failed else 0


def _range(values: list[float]) -> str:
    return f"{min(values):.1f}-{max(values):.1f}"


if __name__ == "__main__":
    sys.exit(main())
