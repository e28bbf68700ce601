#!/usr/bin/env python3
"""Record the DisasterBench reference evaluator's verdicts on generated completions.

Runs the reference pipeline (``evaluators/evaluators.py`` from a checkout of
TamuChen18/DisasterBench_Open, imported from ``--reference`` at run time, never copied here)
on the completions that :func:`tests.support.completions.generate_completions` makes for
every task of the DisasterBench release, and writes one line per completion to
``tests/data/reference_verdicts.jsonl.gz``::

    {"id": "g7-1-0", "expected": {"em": ..., "tool_acc": ..., "param_acc": ...,
                                  "dep_acc": ..., "fpof_type": ..., "fpof_step": ...}}

Only ids and verdicts are stored: ``tests/scoring/test_parity.py`` regenerates the completions
from the same ``--per-task`` and ``--seed`` (stored in a header line) and compares its own scorer.

The driver mirrors ``baselines/test_baseline.py`` in "dp" mode: ``gt = json.dumps(gold)``,
extract, normalise, the four checks, then FPoF; an exception anywhere is recorded the way that
script records it (all false, ``fpof_type`` "exception", ``fpof_step`` 0).

Usage::

    python scripts/record_reference_verdicts.py --reference ~/src/DisasterBench_Open \\
        --per-task 26 --seed 7
    python scripts/record_reference_verdicts.py --reference ~/src/DisasterBench_Open \\
        --edge 3000 --seed 7      # the edge cases, to tests/data/reference_verdicts_edge.jsonl.gz
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import importlib.metadata
import io
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from plancheck.corpus.paths import release_dir  # noqa: E402
from tests.support.completions import (  # noqa: E402
    EDGE_KINDS,
    MUTATIONS,
    STYLES,
    generate_completions,
    generate_edge_completions,
    load_gold_tasks,
)

REQUIRED_JSON_REPAIR = "0.64.6"
DEFAULT_OUT = REPO / "tests" / "data" / "reference_verdicts.jsonl.gz"
EDGE_OUT = REPO / "tests" / "data" / "reference_verdicts_edge.jsonl.gz"


def load_reference_evaluator(checkout: Path) -> Any:
    """Import ``evaluators.evaluators.Evaluator`` from the user's checkout."""
    module_file = checkout / "evaluators" / "evaluators.py"
    if not module_file.is_file():
        raise SystemExit(f"{module_file} not found: is --reference a DisasterBench_Open checkout?")
    sys.path.insert(0, str(checkout))
    from evaluators.evaluators import Evaluator  # type: ignore[import-not-found]

    return Evaluator()


def reference_verdict(evaluator: Any, completion: str, gold_text: str) -> dict[str, Any]:
    """The reference's six numbers for one completion (stdout of the evaluator discarded)."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            answer = evaluator.extract_answer_from_model_completion(completion)
            answer = evaluator.normalize_answer_for_evaluation("dp", answer)
            em = evaluator.check_answers_equivalence(answer, gold_text)
            tools = evaluator.check_tools_correctness(answer, gold_text)
            params = evaluator.check_parameters_correctness(answer, gold_text)
            deps = evaluator.check_dependencies_correctness(answer, gold_text)
            fpof = evaluator.analyze_error_propagation(answer, gold_text)
    except Exception:
        return {
            "em": False,
            "tool_acc": False,
            "param_acc": False,
            "dep_acc": False,
            "fpof_type": "exception",
            "fpof_step": 0,
        }
    return {
        "em": em,
        "tool_acc": tools,
        "param_acc": params,
        "dep_acc": deps,
        "fpof_type": fpof["error_type"],
        "fpof_step": fpof["error_step"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--reference", type=Path, required=True, help="path to a DisasterBench_Open checkout"
    )
    parser.add_argument("--per-task", type=int, default=26)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="DisasterBench release directory (default: PLANCHECK_DATA)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--edge",
        type=int,
        default=0,
        metavar="COUNT",
        help="instead, record COUNT edge-case completions (generate_edge_completions) "
        f"with --seed, to {EDGE_OUT.relative_to(REPO)} unless --out is given",
    )
    args = parser.parse_args(argv)

    installed = importlib.metadata.version("json-repair")
    if installed != REQUIRED_JSON_REPAIR:
        raise SystemExit(
            f"json-repair {installed} is installed; the verdicts must be recorded with "
            f"{REQUIRED_JSON_REPAIR}, the version the reference results were produced with"
        )

    evaluator = load_reference_evaluator(args.reference.expanduser().resolve())
    tasks = load_gold_tasks((args.data or release_dir()) / "benchmark.jsonl")
    gold_text = {task_id: json.dumps(plan) for task_id, plan in tasks}
    if args.edge:
        out = args.out if args.out != DEFAULT_OUT else EDGE_OUT
        return record_edge(evaluator, tasks, gold_text, args.edge, args.seed, installed, out)

    pairs: Counter[tuple[str, str]] = Counter()
    tasks_seen: set[int] = set()
    lines = [
        json.dumps(
            {
                "per_task": args.per_task,
                "seed": args.seed,
                "json_repair": installed,
                "tasks": len(tasks),
            }
        )
    ]
    for item in generate_completions(tasks, per_task=args.per_task, seed=args.seed):
        verdict = reference_verdict(evaluator, item.completion, gold_text[item.task_id])
        lines.append(json.dumps({"id": item.id, "expected": verdict}))
        pairs[(item.mutation, item.style)] += 1
        tasks_seen.add(item.task_id)

    missing = [(m, s) for m in MUTATIONS for s in STYLES if not pairs[(m, s)]]
    if missing:
        raise SystemExit(f"{len(missing)} mutation x style pairs not covered, e.g. {missing[:5]}")
    write_lines(args.out, lines)
    print(
        f"wrote {len(lines) - 1} verdicts for {len(tasks_seen)} tasks "
        f"({len(pairs)} mutation x style pairs) to {args.out}"
    )
    return 0


def write_lines(out: Path, lines: list[str]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with (
        out.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed,
    ):
        packed.write(("\n".join(lines) + "\n").encode("utf-8"))


def record_edge(
    evaluator: Any,
    tasks: list[tuple[int, list[Any]]],
    gold_text: dict[int, str],
    count: int,
    seed: int,
    installed: str,
    out: Path,
) -> int:
    """Record the reference's verdicts on ``count`` edge-case completions."""
    header = {"count": count, "seed": seed, "json_repair": installed, "tasks": len(tasks)}
    lines = [json.dumps(header)]
    kinds: Counter[str] = Counter()
    for item in generate_edge_completions(tasks, count=count, seed=seed):
        verdict = reference_verdict(evaluator, item.completion, gold_text[item.task_id])
        lines.append(json.dumps({"id": item.id, "expected": verdict}))
        kinds[item.style] += 1
    if len(kinds) != len(EDGE_KINDS):
        raise SystemExit(f"only {len(kinds)} of {len(EDGE_KINDS)} edge kinds covered")
    write_lines(out, lines)
    print(f"wrote {count} edge-case verdicts ({len(kinds)} kinds) to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
