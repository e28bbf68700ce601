"""Speed of ``plancheck compile --to python`` as the tool pool grows.

    python bench/bench_compile.py                 # 25 to 2,000 tools; exits 1 over budget
    python bench/bench_compile.py --sizes 100 1000

Each size is a synthetic DSL pool (``tests/support/large_pools.py``: one type per tool in a
random tree, conversions, polymorphic outputs) and a one-step plan, compiled by the
``plancheck`` beside this Python, process start included; the wall time of one run and the
time per tool are printed. Budget (issue 25): near-linear growth, checked as a 2,000-tool pool
compiling in at most 30 s.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.large_pools import PLAN, layered_pool  # noqa: E402

PLANCHECK = str(Path(sys.executable).with_name("plancheck"))
BUDGET_S = 30.0  # for the largest size


def compile_seconds(tools: int, directory: Path) -> float:
    pool = directory / f"pool{tools}.wf"
    pool.write_text(layered_pool(tools))
    plan = directory / "plan.wf"
    plan.write_text(PLAN)
    start = time.perf_counter()
    subprocess.run([PLANCHECK, "compile", "--to", "python", "--tools", str(pool), str(plan),
                    "-o", str(directory / "out.py")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 50, 100, 200, 500, 1000,
                                                                  2000])
    args = parser.parse_args()
    seconds = 0.0
    with tempfile.TemporaryDirectory() as directory:
        for tools in args.sizes:
            seconds = compile_seconds(tools, Path(directory))
            print(f"{tools:>6} tools  {seconds:7.2f} s  {1000 * seconds / tools:6.2f} ms/tool")
    if max(args.sizes) >= 2000 and seconds > BUDGET_S:
        print(f"over budget: {seconds:.1f} s > {BUDGET_S:.0f} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
