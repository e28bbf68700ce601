"""The scorers of ``plancheck score``: one registry, tried in order, the last taking any gold
file; a new kind of gold data is one entry."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main
from plancheck.cli import score as score_command


def test_the_registry_names_each_kind_and_ends_with_the_catch_all() -> None:
    names = [scorer.name for scorer in score_command.SCORERS]
    assert names == ["DORA runs", "tool calls", "DisasterBench"]
    last = score_command.SCORERS[-1]
    assert last.reads_text is not None and last.reads_text("anything", "f") is not None


def test_a_scorer_added_to_the_registry_is_dispatched_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []

    def run(args: argparse.Namespace, found: Any) -> int:
        seen.append((args.gold, args.predictions, found))
        return 0

    def reads(text: str, _file: str) -> Any:
        value = json.loads(text)
        return value["custom"] if isinstance(value, dict) and "custom" in value else None

    custom = score_command.Scorer("custom", run, reads_text=reads)
    monkeypatch.setattr(score_command, "SCORERS", (custom, *score_command.SCORERS))
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"custom": [1, 2]}), encoding="utf-8")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("{}\n", encoding="utf-8")
    assert main(["score", "--gold", str(gold), str(pred)]) == 0
    assert seen == [(str(gold), [str(pred)], [1, 2])]
    # A gold file the new scorer does not read goes on down the registry (here: a gold plan
    # that DisasterBench's scorer rejects, with its own diagnostic and exit code).
    gold.write_text(json.dumps({"other": 1}), encoding="utf-8")
    assert main(["score", "--gold", str(gold), str(pred)]) == 2
    assert len(seen) == 1
