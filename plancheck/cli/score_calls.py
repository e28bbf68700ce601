"""``plancheck score`` when the gold plans are tool calls (:mod:`plancheck.scoring.callscore`):
the metrics defined on calls, and an error, never a number, for what cannot be paired."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from plancheck.cli.common import per_item_writer
from plancheck.ir.nodes import Toolset
from plancheck.scoring.callscore import (
    Calls,
    ScoredCalls,
    documents,
    render,
    score_calls,
    summarise,
)


def run_calls(args: argparse.Namespace, gold: list[Calls], toolset: Toolset | None) -> int:
    from plancheck.cli.policy_verdicts import PolicyVerdicts, with_policy
    from plancheck.compiler.frontends import read_text

    verdicts = None
    if args.policy is not None and toolset is not None:
        verdicts = PolicyVerdicts.load(args.policy, toolset)
        if verdicts is None:
            return EXIT_ERROR
    items: list[ScoredCalls] = []
    judged: list[list[Any]] = []  # each item's policy diagnostics
    for path in args.predictions:
        if path != "-" and Path(path).is_dir():  # the planner runner's output directory
            path = str(Path(path) / "predictions.jsonl")
        text, _ = read_text(path)
        if text is None:
            print(f"plancheck: error[PC001]: cannot read {path}", file=sys.stderr)
            return EXIT_ERROR
        predictions = list(documents(text, path))
        items.extend(score_calls(gold, predictions, path, toolset))
        if verdicts is not None:
            judged.extend(verdicts.of_calls(value, where) for value, where in predictions)
    if args.per_item:
        writer = per_item_writer(args.per_item)
        if writer is False:
            return EXIT_ERROR
        with writer:
            for number, item in enumerate(items):
                line = item.line()
                writer.write(with_policy(line, judged[number]) if verdicts is not None
                             else line)
    for item in items:
        problem = item.problem
        if problem is not None:
            span = problem.span
            print(f"{item.source}: error[{problem.code}]: {problem.message}", file=sys.stderr)
            where = f"{span.file}:{span.start_line}:{span.start_col}" \
                if span is not None and span.resolved else item.source
            record = f" (record {item.id})" if item.id is not None else ""
            print(f"  --> {where}{record}", file=sys.stderr)
    summary = summarise(items)
    if summary["scored"] == 0:
        print("plancheck: error: no prediction could be paired with a gold plan; nothing was "
              "scored", file=sys.stderr)
        return EXIT_ERROR
    name = ", ".join(args.predictions)
    if args.format == "json":
        document: dict[str, Any] = {"schema_version": 1, "gold": args.gold, "kind": "tool-calls",
                                    "predictions": args.predictions, **summary}
        if verdicts is not None:
            document["policy"] = verdicts.to_dict()
        print(json.dumps(document, indent=2))
    else:
        print(render(summary, name))
    if verdicts is not None:
        if args.format != "json":
            print(verdicts.summary("predictions"))
        verdicts.print_first()
    broken = verdicts is not None and verdicts.breaking
    return EXIT_FINDINGS if summary["unpaired"] or summary["unreadable"] or broken else EXIT_OK
