"""An output option that names a file the command reads is refused before anything is read or
written (issue 25): exit 2, a message naming both, and the input left as it was."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from plancheck.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "flood_plan.json"


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.json"
    shutil.copyfile(EXAMPLE, path)
    return path


def _refused(arguments: list[str], kept: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = kept.read_bytes()
    assert main(arguments) == 2
    err = capsys.readouterr().err
    assert "this command reads; writing it would destroy the input" in err
    assert kept.read_bytes() == before


def test_check_output_onto_its_plan(plan: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _refused(["check", str(plan), "--output", str(plan)], plan, capsys)
    _refused(["check", str(plan), "-o", f"{plan.parent}/./{plan.name}"], plan, capsys)


def test_through_a_link_is_the_same_file(plan: Path, capsys: pytest.CaptureFixture[str]
                                         ) -> None:
    hard = plan.with_name("hard.json")
    os.link(plan, hard)
    _refused(["check", str(plan), "--output", str(hard)], plan, capsys)
    soft = plan.with_name("soft.json")
    soft.symlink_to(plan)
    _refused(["check", str(plan), "--output", str(soft)], plan, capsys)


def test_score_per_item_onto_its_predictions(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    predictions = tmp_path / "preds.jsonl"
    gold = tmp_path / "gold.jsonl"
    steps = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    gold.write_text(json.dumps({"task_id": 1, "structured_plan": steps}) + "\n", "utf-8")
    predictions.write_text(json.dumps({"task_id": 1, "plan": steps}) + "\n", "utf-8")
    _refused(["score", "--gold", str(gold), str(predictions), "--per-item", str(predictions)],
             predictions, capsys)
    _refused(["score", "--gold", str(gold), str(predictions), "--per-item", str(gold)],
             gold, capsys)


def test_compile_and_export_onto_their_input(plan: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _refused(["compile", str(plan), "--to", "python", "-o", str(plan)], plan, capsys)
    pool = tmp_path / "pool.json"
    assert main(["toolset", "export", "--to", "mcp", "-o", str(pool)]) == 0
    capsys.readouterr()
    _refused(["toolset", "export", "--tools", str(pool), "--to", "openai", "-o", str(pool)],
             pool, capsys)


def test_a_new_or_other_file_is_written(plan: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    assert main(["check", str(plan), "--format", "json", "--output", str(out)]) == 1
    assert json.loads(out.read_text(encoding="utf-8"))["summary"]["errors"] == 3
    assert main(["check", str(plan), "--format", "json", "--output", str(out)]) == 1  # again
