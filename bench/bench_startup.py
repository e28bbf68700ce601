"""Start-up latency of the command line: what a user waits for, process start included.

    python bench/bench_startup.py             # 30 runs of each; exits 1 if a budget is exceeded
    python bench/bench_startup.py --runs 50
    python bench/bench_startup.py --parsers   # also: how the DSL parser is built (issue 33)

Measures the ``plancheck`` beside this Python (the build it finds: plain or compiled, printed
first). Budgets (issue 15), median wall time: ``plancheck --version`` and ``plancheck --help``
<= 60 ms each, ``plancheck examples/flood_plan.json`` (a small plan with three errors) <= 80
ms. ``python -c pass`` is measured as the floor no command can go below.

``--parsers`` adds a command that reads DSL (``check --policy``, which parses a policy file)
and, side by side, a process that builds the DSL parser each way plancheck could: from the
JSON tables shipped in the package (what it does), from ``grammar.lark`` with no cache, and
from Lark's ``cache=True`` pickle in a private temporary directory (what it did before issue
33; a file another user plants there runs code, so it is measured only as the baseline).

The commands run in turns (one run of each, then the next round), so that a change of load
during the measurement falls on all of them alike; the load average is printed with the
results. CPU time (user + system, of the child) is printed beside the wall time: on a busy
machine it varies less. Bytecode caching is on for the children even if
``PYTHONDONTWRITEBYTECODE`` is set here: an installed plancheck has its bytecode compiled, and
the warm-up runs write it for a source checkout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "flood_plan.json"
PLANCHECK = str(Path(sys.executable).with_name("plancheck"))

# name -> (command, budget in ms or None)
COMMANDS: dict[str, tuple[list[str], float | None]] = {
    "python -c pass": ([sys.executable, "-c", "pass"], None),
    "plancheck --version": ([PLANCHECK, "--version"], 60.0),
    "plancheck --help": ([PLANCHECK, "--help"], 60.0),
    "plancheck examples/flood_plan.json": ([PLANCHECK, str(EXAMPLE)], 80.0),
}


POLICY = [PLANCHECK, "check", str(ROOT / "examples" / "policy_plan.json"), "--policy",
          str(ROOT / "examples" / "flood_policy.wf")]
_BUILD = ("import lark\nfrom plancheck.dsl import tables\n"
          "grammar = tables.GRAMMAR_PATH.read_text(encoding='utf-8')\n")
PARSERS: dict[str, tuple[list[str], float | None]] = {
    "check --policy (reads DSL)": (POLICY, None),
    "parser: shipped JSON tables": (
        [sys.executable, "-c", _BUILD + "assert tables.load_parser(grammar)"], None),
    "parser: grammar, no cache": (
        [sys.executable, "-c", _BUILD + "tables.build_parser(grammar)"], None),
    "parser: Lark cache=True (old)": (
        [sys.executable, "-c", _BUILD + "lark.Lark(grammar, cache=True, **tables.OPTIONS)"],
        None),
}


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(ROOT)
    return env


def run_once(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``command``, its output discarded."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=_environment() if env is None else env)
    _pid, _status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime


def measure(commands: dict[str, list[str]], runs: int = 30, warmup: int = 3
            ) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) milliseconds of each command, over ``runs`` runs taken in turns after
    ``warmup`` unmeasured ones (which also fill the bytecode and toolset caches)."""
    env = _environment()
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for round_ in range(warmup + runs):
        for name, command in commands.items():
            wall, cpu = run_once(command, env)
            if round_ >= warmup:
                walls[name].append(wall)
                cpus[name].append(cpu)
    return {name: (statistics.median(walls[name]) * 1e3, statistics.median(cpus[name]) * 1e3)
            for name in commands}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=int, default=30, help="measured runs of each command")
    parser.add_argument("--parsers", action="store_true",
                        help="also measure DSL reading and each way of building its parser")
    args = parser.parse_args()
    commands = dict(COMMANDS)
    if args.parsers:
        import atexit
        import shutil
        import tempfile

        private = tempfile.mkdtemp()  # (0700: Lark's pickle is only ever read from here)
        atexit.register(shutil.rmtree, private, True)
        os.environ["TMPDIR"] = private
        commands.update(PARSERS)
    from plancheck.build_info import build_info

    print(f"build: {build_info().label}")
    print(f"machine: {os.cpu_count()} cores, load average before "
          f"{os.getloadavg()[0]:.2f}; {args.runs} runs each, medians")
    results = measure({name: command for name, (command, _budget) in commands.items()},
                      runs=args.runs)
    failed = False
    print(f"{'command':<36} {'wall ms':>8} {'CPU ms':>8} {'budget':>7}")
    for name, (wall, cpu) in results.items():
        budget = commands[name][1]
        verdict = "" if budget is None else "ok" if wall <= budget else "OVER BUDGET"
        failed |= budget is not None and wall > budget
        shown = "" if budget is None else f"{budget:.0f}"
        print(f"{name:<36} {wall:8.1f} {cpu:8.1f} {shown:>7}   {verdict}")
    print(f"load average after {os.getloadavg()[0]:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
