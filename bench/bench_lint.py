"""Linting speed: the command line on one small plan, and in-process ``check()``.

    python bench/bench_lint.py            # prints medians; exits 1 if a budget is exceeded
    python bench/bench_lint.py --against TREE   # the in-process rows, this tree against TREE

``--against`` (see ``bench_compare_trees.py``) times the in-process rows in CPU time on the
plancheck of this checkout and on that of another checkout (a worktree of an older commit, say),
in alternating child processes, and prints each side's median and their ratio.

Budgets (from the issues): CLI on one small plan, process start included, <= 80 ms median wall
(issue 15; measured as by ``bench_startup.py``, which also times ``--version`` and ``--help``);
in-process check() of a typical 3-step plan (names and dependencies) <= 50 us median; the full
static check (plus types, flows and symbolic execution, no Z3) <= 100 us median.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

TYPICAL = [  # a 3-step chain, the benchmark's average depth
    {"agent": "Weather_Degraded_Image_Restoration", "step": 0, "dependence": [-1],
     "dependence_content": None, "inputs": {"weather_degraded_image_path": "data/fog.jpg"},
     "outputs": ["restored_image_path"]},
    {"agent": "Foggy_Scenario_Object_Detection", "step": 1, "dependence": [0],
     "dependence_content": {"0": ["restored_image_path"]},
     "inputs": {"image_path": "<GENERATED>-0-<restored_image_path>"},
     "outputs": ["detected_objects_path"]},
    {"agent": "GeoChat", "step": 2, "dependence": [1],
     "dependence_content": {"1": ["detected_objects_path"]},
     "inputs": {"image_path": "<GENERATED>-1-<detected_objects_path>",
                "user_query_path": "data/query.txt"},
     "outputs": ["contextual_description_path"]},
]


CLI_SMALL_PLAN = "plancheck examples/flood_plan.json"


def cli_median_ms(runs: int = 21) -> tuple[float, float]:
    """Median wall ms of the command line on the example, and its budget (bench_startup's)."""
    from bench_startup import COMMANDS, measure

    command, budget = COMMANDS[CLI_SMALL_PLAN]
    assert budget is not None
    return measure({CLI_SMALL_PLAN: command}, runs=runs)[CLI_SMALL_PLAN][0], budget


def check_median_us(*, types: bool, interpret: bool, rounds: int = 41, loops: int = 500,
                    clock: Callable[[], float] = time.perf_counter) -> float:
    """Median µs of ``plancheck.check()`` on :data:`TYPICAL` (``clock``: wall time unless
    told)."""
    import plancheck

    toolset = plancheck.load_toolset()
    plan = json.loads(json.dumps(TYPICAL))
    assert plancheck.check(plan, toolset).ok
    samples = []
    for _ in range(rounds):
        start = clock()
        for _ in range(loops):
            plancheck.check(plan, toolset, types=types, interpret=interpret)
        samples.append((clock() - start) / loops)
    return statistics.median(samples) * 1e6


# The in-process rows: name -> check_median_us's options (what --against compares).
IN_PROCESS: dict[str, dict[str, bool]] = {
    "check_core_us": {"types": False, "interpret": False},
    "check_full_static_us": {"types": True, "interpret": True},
}


def _json_plan_checker(toolset: Any, plan: Any) -> Callable[[], object]:
    """The batch scorer's check of a JSON plan (``check_json_plan``: every rule, the plan read
    straight from its JSON), compared by --against beside the in-process rows."""
    from plancheck.compiler.checker import check_json_plan

    return lambda: check_json_plan(plan, toolset).codes()


def serve(loops: int = 200) -> None:
    """Answer ``bench_compare_trees.py``: a first line naming the plancheck imported and its
    build, then for each row name read from stdin the CPU µs per check of ``loops`` checks
    (the in-process rows, and ``check_json_plan_us``)."""
    import plancheck
    from plancheck.build_info import build_info

    toolset = plancheck.load_toolset()
    plan = json.loads(json.dumps(TYPICAL))
    assert plancheck.check(plan, toolset).ok
    rows: dict[str, Callable[[], object]] = {
        name: partial(plancheck.check, plan, toolset, **options)
        for name, options in IN_PROCESS.items()}
    rows["check_json_plan_us"] = _json_plan_checker(toolset, plan)
    print(json.dumps({"source": plancheck.__file__, "build": build_info().label}), flush=True)
    for line in sys.stdin:
        run = rows[line.strip()]
        start = time.process_time()
        for _ in range(loops):
            run()
        print((time.process_time() - start) / loops * 1e6, flush=True)


def main() -> int:
    if "--serve" in sys.argv:  # a child of --against: the plancheck on PYTHONPATH
        serve()
        return 0
    if "--against" in sys.argv:
        from bench_compare_trees import main as compare

        return compare(sys.argv[1:])
    from plancheck.build_info import build_info

    print(f"build: {build_info().label}")
    results = {
        "cli_small_plan_ms": cli_median_ms(),
        "check_core_us": (check_median_us(**IN_PROCESS["check_core_us"]), 50.0),
        "check_full_static_us": (check_median_us(**IN_PROCESS["check_full_static_us"]), 100.0),
    }
    failed = False
    for name, (value, budget) in results.items():
        verdict = "ok" if value <= budget else "OVER BUDGET"
        failed |= value > budget
        print(f"{name:<24} median {value:8.1f}   budget {budget:6.1f}   {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
