"""Regenerate the bundled example results tree, ``examples/results/<model>/<method>/``.

    python examples/make_example_results.py      # needs the release ($PLANCHECK_DATA)

The "models" are model-free simulated planners: for each task a seeded coin (weighted by the
planner's skill, a bonus per method, and a penalty per extra step of the gold plan, so that
exact match falls with depth as in the paper's Figure 2) decides whether the planner writes the
gold plan or a mistaken one, drawn from plancheck's completion generator (a look-alike tool, a
wrong reference, a truncated plan, prose around damaged JSON, ...). Each run directory gets the
``predictions.jsonl`` a real run of ``plancheck plan`` would write (records that reference task
ids; no task text and no copy of the release) and the ``per_item.jsonl`` that
``plancheck score`` writes from it, so that ``plancheck report examples/results`` works as is.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.support

from plancheck.cli import main
from plancheck.corpus.paths import release_dir
from tests.support.completions import generate_completions, load_gold_tasks

OUT = Path(__file__).resolve().parent / "results"
PLANNERS = {"sim-large": 0.92, "sim-small": 0.62}  # skill: P(exact) on a one-step task
METHODS = {"dp": 0.0, "react": 0.06}  # bonus of the method
DEPTH_PENALTY = 0.11
TASKS_PER_DEPTH = 15  # depths 1, 2, 3 and 4+: 60 tasks


def _tasks(benchmark: Path) -> list[tuple[int, list[object]]]:
    by_depth: dict[int, list[tuple[int, list[object]]]] = {}
    for task_id, plan in load_gold_tasks(benchmark):
        by_depth.setdefault(min(len(plan), 4), []).append((task_id, plan))
    chosen = []
    for depth in sorted(by_depth):
        pool = by_depth[depth]
        chosen += random.Random(f"example-tasks:{depth}").sample(
            pool, min(TASKS_PER_DEPTH, len(pool))
        )
    return sorted(chosen, key=lambda task: task[0])


def _render(plan: list[object], method: str) -> str:
    body = json.dumps(plan, separators=(",", ":"))
    if method == "react":
        return f"Thought: the plan is complete.\nFinal Answer:\n```json\n{body}\n```"
    return body


def _completion(model: str, method: str, task_id: int, plan: list[object], seed: int) -> str:
    rng = random.Random(f"example:{model}:{method}:{task_id}")
    p_exact = PLANNERS[model] + METHODS[method] - DEPTH_PENALTY * (len(plan) - 1)
    if rng.random() < p_exact:
        return _render(plan, method)
    (mistake,) = generate_completions(
        [(task_id, plan)], per_task=1, seed=seed + rng.randrange(1 << 16)
    )
    return mistake.completion


def main_() -> int:
    benchmark = release_dir() / "benchmark.jsonl"
    if not benchmark.is_file():
        print(f"the release is needed: {benchmark} not found (set PLANCHECK_DATA)", file=sys.stderr)
        return 2
    tasks = _tasks(benchmark)
    for seed, model in enumerate(PLANNERS):
        for method in METHODS:
            run = OUT / model / method
            run.mkdir(parents=True, exist_ok=True)
            predictions = run / "predictions.jsonl"
            with predictions.open("w", encoding="utf-8") as out:
                for task_id, plan in tasks:
                    record = {
                        "id": f"{model}-{method}-{task_id}",
                        "task_id": task_id,
                        "method": method,
                        "model": model,
                        "completion": _completion(model, method, task_id, plan, seed),
                    }
                    out.write(json.dumps(record) + "\n")
            code = main(
                [
                    "score",
                    "--gold",
                    str(benchmark),
                    str(predictions),
                    "--per-item",
                    str(run / "per_item.jsonl"),
                    "--parity-only",
                    "--bootstrap",
                    "0",
                ]
            )
            if code not in (0, 1):
                return code
    return 0


if __name__ == "__main__":
    sys.exit(main_())
