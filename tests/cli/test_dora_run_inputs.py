"""A DORA run with one bad record is a run with one bad record (issue 25, items 5 and 6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from plancheck.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "dora"
RECORDS = "t1_perception_and_assessment/benchmark.jsonl"


def _run_copy(tmp_path: Path) -> tuple[Path, list[str]]:
    run = tmp_path / "run"
    shutil.copytree(EXAMPLES / "run", run)
    return run, (run / RECORDS).read_text(encoding="utf-8").splitlines()


def test_an_answer_nested_fifty_thousand_deep_is_one_unreadable_answer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It aborted the whole score (RecursionError: nothing scored, no per-item file)."""
    run, lines = _run_copy(tmp_path)
    record = json.loads(lines[1])
    record["predicted_answer"] = "[" * 50_000
    lines[1] = json.dumps(record)
    (run / RECORDS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    items = tmp_path / "items.jsonl"
    code = main(["score", "--gold", str(EXAMPLES / "tasks"), str(run),
                 "--per-item", str(items)])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert "PC002" not in err and "internal error" not in err
    scored = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    assert len(scored) == 4
    (deep,) = [item for item in scored if item["question_id"] == record["question_id"]]
    assert deep["answer"] == 0.0 and deep["t_em"] == 1.0  # its trajectory still counts
    assert "DORA Score" in out


def test_records_answering_one_task_are_said_to_collapse(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, lines = _run_copy(tmp_path)
    (run / RECORDS).write_text("\n".join([*lines, *[lines[1]] * 7]) + "\n", encoding="utf-8")
    main(["score", "--gold", str(EXAMPLES / "tasks"), str(run)])
    err = capsys.readouterr().err
    assert "warning: 8 records of t1 answer task 1 of sample beirut_1; the last one is " \
           "scored" in err
    main(["score", "--gold", str(EXAMPLES / "tasks"), str(EXAMPLES / "run")])
    assert "warning" not in capsys.readouterr().err
