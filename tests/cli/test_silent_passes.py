"""Inputs that passed without a word (issue 25, item 5): predictions that share a task, and
JSON objects that hold a key twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main
from tests.support.samples import FOG_CHAIN


def _gold(tmp_path: Path) -> Path:
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"task_id": i, "task_desc": "t",
                                        "structured_plan": FOG_CHAIN}) + "\n"
                            for i in (1, 2, 3)))
    return gold


def _predictions(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("second", [{"id": "again", "task_id": 1}, {"id": "p1", "task_id": 1}],
                         ids=["another-id-one-task", "the-same-id"])
def test_predictions_that_share_a_task_are_said_to_weigh_twice(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], second: dict[str, Any]) -> None:
    plan = json.dumps(FOG_CHAIN)
    records = [{"id": "p1", "task_id": 1, "completion": plan},
               {"id": "p2", "task_id": 2, "completion": plan},
               {**second, "completion": plan}]
    code = main(["score", "--gold", str(_gold(tmp_path)), str(_predictions(tmp_path, records)),
                 "--bootstrap", "0"])
    err = capsys.readouterr().err
    assert code == 0
    assert "1 task(s) have more than one prediction, each scored, so they weigh more than " \
           "once: 1 (2 times)" in err
    records.pop()
    main(["score", "--gold", str(_gold(tmp_path)), str(_predictions(tmp_path, records)),
          "--bootstrap", "0"])
    assert "more than one prediction" not in capsys.readouterr().err
