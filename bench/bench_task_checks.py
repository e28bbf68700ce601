"""What the request buys: real model-style outputs, labelled by their benchmark's own scores,
checked without gold, first without the request and then with it (the PC9xx rules).

    python bench/bench_task_checks.py [--limit N]
    python bench/bench_task_checks.py --taskbench-predictions P.jsonl --taskbench-gold G.jsonl \
        --taskbench-tools tool_desc.json

DisasterBench-style completions: the 6,089 of ``parity/cases.jsonl`` (``expected.em``, the
reference evaluator's exact match), each joined by ``task_id`` to its request (``task_desc``
of ``benchmark.jsonl``). TaskBench (when the files are given): each prediction joined by
``id`` to its gold record; a prediction is wrong when the multiset of its tools or of its
(tool, argument) pairs differs from the gold's (TaskBench's per-item node or argument F1 < 1).

Two verdicts are counted for each output, under the ``guard`` profile (what an agent loop
would block):

* **blocked**: the report has an error;
* **flagged**: blocked, or a request rule warns (a PC9xx warning).

Printed for each corpus: the share of wrong outputs (EM = 0) and of right ones (EM = 1) that
each verdict catches, without and with the request, each rule's own share, and the CPU time
of the checks (``time.process_time``), side by side.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import plancheck
from plancheck.checks.request import request_of
from plancheck.corpus.paths import parity_cases_path, release_dir
from plancheck.ir.nodes import Toolset

RULES = ("PC901", "PC902", "PC903", "PC904", "PC905")


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


class Tally:
    """Counts by label (wrong or right) of what each verdict caught."""

    def __init__(self) -> None:
        self.total: Counter[bool] = Counter()
        self.caught: Counter[tuple[bool, str]] = Counter()
        self.seconds: dict[str, float] = {"without": 0.0, "with": 0.0}

    def add(self, wrong: bool, output: Any, toolset: Toolset, request: str | None) -> None:
        self.total[wrong] += 1
        for side, task in (("without", None), ("with", request)):
            started = time.process_time()
            report = plancheck.check(output, toolset, profile="guard", task=task)
            self.seconds[side] += time.process_time() - started
            blocked = not report.ok
            warned = {d.code for d in report.warnings if d.code in RULES}
            self.caught[(wrong, f"blocked {side}")] += blocked
            self.caught[(wrong, f"flagged {side}")] += blocked or bool(warned)
            if task is not None:
                for code in {d.code for d in report.diagnostics if d.code in RULES}:
                    self.caught[(wrong, code)] += 1

    def print(self, title: str, wrong_name: str, right_name: str) -> None:
        print(f"\n{title}: {self.total[True]} {wrong_name}, {self.total[False]} {right_name}")
        print(f"  {'verdict':<18} {wrong_name + ' caught':>18} {right_name + ' caught':>18}")
        rows = [f"{kind} {side}" for side in ("without", "with")
                for kind in ("blocked", "flagged")] + list(RULES)
        for row in rows:
            print(f"  {row:<18} {self._share(True, row):>18} {self._share(False, row):>18}")
        print(f"  CPU: {self.seconds['without']:.2f} s without the request, "
              f"{self.seconds['with']:.2f} s with it")

    def _share(self, wrong: bool, row: str) -> str:
        total = self.total[wrong]
        found = self.caught[(wrong, row)]
        return f"{found}/{total} {100 * found / total:.1f}%" if total else "-"


def disasterbench(limit: int) -> None:
    requests = {task["task_id"]: task["task_desc"]
                for task in _lines(release_dir() / "benchmark.jsonl")}
    toolset = plancheck.load_toolset()
    tally = Tally()
    for number, case in enumerate(_lines(parity_cases_path())):
        if limit and number >= limit:
            break
        tally.add(not case["expected"]["em"], case["completion"], toolset,
                  requests.get(case["task_id"]))
    tally.print("DisasterBench-style completions (parity/cases.jsonl)", "EM=0", "EM=1")


def _tool_multisets(nodes: Any) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    tools: Counter[str] = Counter()
    arguments: Counter[tuple[str, str]] = Counter()
    for node in nodes if isinstance(nodes, list) else []:
        if not isinstance(node, dict):
            continue
        name = str(node.get("task"))
        tools[name] += 1
        values = node.get("arguments")
        for value in values if isinstance(values, list) else [values]:
            arguments[(name, json.dumps(value, sort_keys=True))] += 1
    return tools, arguments


def taskbench(predictions: Path, gold: Path, tools: Path, limit: int) -> None:
    golden = {str(record["id"]): record for record in _lines(gold)}
    toolset = plancheck.load_toolset(tools)
    tally = Tally()
    for number, record in enumerate(_lines(predictions)):
        if limit and number >= limit:
            break
        expected = golden.get(str(record.get("id")))
        result = record.get("result")
        if expected is None or not isinstance(result, dict):
            continue
        wrong = _tool_multisets(result.get("task_nodes")) != _tool_multisets(
            expected.get("task_nodes"))
        tally.add(wrong, record, toolset, request_of(record) or request_of(expected))
    tally.print(f"TaskBench predictions ({predictions.name})", "wrong", "right")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=0, help="outputs of each corpus to read")
    parser.add_argument("--taskbench-predictions", type=Path, default=None)
    parser.add_argument("--taskbench-gold", type=Path, default=None)
    parser.add_argument("--taskbench-tools", type=Path, default=None)
    args = parser.parse_args()
    disasterbench(args.limit)
    if args.taskbench_predictions is not None:
        if args.taskbench_gold is None or args.taskbench_tools is None:
            parser.error("--taskbench-predictions needs --taskbench-gold and --taskbench-tools")
        taskbench(args.taskbench_predictions, args.taskbench_gold, args.taskbench_tools,
                  args.limit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
