"""``plancheck score`` end to end on two checkouts, side by side in one run.

    python bench/bench_score_trees.py --against /work/wt/base             # this checkout vs base
    python bench/bench_score_trees.py --against BASE --tree OTHER --rounds 7

Each round runs ``plancheck score --gold benchmark.jsonl --per-item FILE --format json`` over
the shared parity cases (6,089 completions; ``$PLANCHECK_DATA``) once in each checkout, as a
fresh process with ``PYTHONPATH`` set to it (``-P``: neither the working directory nor
``bench/`` shadows it) and an empty cache directory, the side run first alternating. Reported:
each side's median CPU time (user + system of the child) and the ratio of the medians (this
checkout over the other). Both run with this Python; each runs the build it holds (plain or
compiled), which ``plancheck --version`` prints. Make the other checkout with
``git worktree add --detach PATH COMMIT``. ``--max-ratio R`` exits 1 when the ratio exceeds R.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plancheck.corpus.paths import parity_cases_path, release_dir  # noqa: E402


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def score_once(tree: Path, cases: Path, gold: Path) -> float:
    """CPU seconds of one ``plancheck score`` of ``cases`` by the plancheck in ``tree``."""
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPATH=str(tree), PLANCHECK_CACHE_DIR=cache)
        before = _child_cpu()
        done = subprocess.run(
            [sys.executable, "-P", "-m", "plancheck", "score", "--gold", str(gold),
             "--per-item", str(Path(out) / "items.jsonl"), "--format", "json", str(cases)],
            env=env, cwd=out, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            check=False)
        spent = _child_cpu() - before
        if done.returncode not in (0, 1):
            raise SystemExit(f"plancheck score in {tree} failed: {done.stderr.strip()[-500:]}")
        return spent


def build_of(tree: Path) -> str:
    done = subprocess.run([sys.executable, "-P", "-m", "plancheck", "--version"],
                          env=dict(os.environ, PYTHONPATH=str(tree)), capture_output=True,
                          text=True, check=False)
    return done.stdout.strip() or done.stderr.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout")
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="this checkout (default: the one holding this file)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-ratio", type=float, default=None)
    args = parser.parse_args(argv)
    cases, gold = parity_cases_path(), release_dir() / "benchmark.jsonl"
    if not cases.is_file() or not gold.is_file():
        print(f"needs the parity cases and the release: {cases}, {gold} (PLANCHECK_DATA)",
              file=sys.stderr)
        return 2
    trees = [args.tree.resolve(), args.against.resolve()]
    for tree in trees:
        print(f"{tree}: {build_of(tree)}")
    times: dict[Path, list[float]] = {tree: [] for tree in trees}
    for round_ in range(args.rounds):
        for tree in trees if round_ % 2 == 0 else trees[::-1]:
            times[tree].append(score_once(tree, cases, gold))
    medians = [statistics.median(times[tree]) for tree in trees]
    for tree, median in zip(trees, medians, strict=True):
        shown = ", ".join(f"{t:.2f}" for t in sorted(times[tree]))
        print(f"{tree!s:40} median {median:6.2f} s CPU   ({shown})")
    ratio = medians[0] / medians[1]
    print(f"ratio (tree / against): {ratio:.3f}")
    return 1 if args.max_ratio is not None and ratio > args.max_ratio else 0


if __name__ == "__main__":
    raise SystemExit(main())
