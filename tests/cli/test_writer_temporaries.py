"""Writers' temporary files (issue 25): short names, so that an output whose own name is near
the file system's 255-byte limit can be written (and locked), and the temporaries a killed
writer left behind are removed by the next writer in that directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plancheck.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "flood_plan.json"


def test_a_250_character_output_name_is_written(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / ("r" * 245 + ".json")
    assert main(["check", str(EXAMPLE), "--format", "json", "--output", str(out)]) == 1
    assert json.loads(out.read_text(encoding="utf-8"))["summary"]["errors"] == 3
    per_item = tmp_path / ("p" * 244 + ".jsonl")  # a locked writer too
    gold = tmp_path / "gold.jsonl"
    steps = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    gold.write_text(json.dumps({"task_id": 1, "structured_plan": steps}) + "\n", "utf-8")
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text(json.dumps({"task_id": 1, "plan": steps}) + "\n", "utf-8")
    capsys.readouterr()
    assert main(["score", "--gold", str(gold), str(predictions), "--per-item",
                 str(per_item)]) in (0, 1), capsys.readouterr().err
    assert len(per_item.read_text(encoding="utf-8").splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def _dead_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    return int(child.stdout)


def test_a_killed_writers_temporary_is_removed_by_the_next(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    dead = _dead_pid()
    stale = tmp_path / f".pc-{dead}-abcd1234.tmp"
    stale.write_text("half a report", encoding="utf-8")
    ours = tmp_path / f".pc-{dead}-live0000.tmp"  # a live writer's (it holds its flock): kept
    ours.write_text("in progress", encoding="utf-8")
    import fcntl

    held = os.open(ours, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)
    other = tmp_path / ".notes.tmp"  # not a plancheck temporary: kept
    other.write_text("mine", encoding="utf-8")
    try:
        assert main(["check", str(EXAMPLE), "--output", str(tmp_path / "report.txt")]) == 1
    finally:
        os.close(held)
    assert not stale.exists()
    assert ours.exists() and other.exists()
