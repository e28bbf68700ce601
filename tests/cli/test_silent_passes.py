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


REPEATED = ('[{"agent": "Nope", "agent": "Weather_Degraded_Image_Restoration", "step": 0, '
            '"dependence": [-1], "dependence_content": null, "inputs": '
            '{"weather_degraded_image_path": "a.jpg", "weather_degraded_image_path": "b.jpg"},'
            ' "outputs": ["restored_image_path"]}]')


@pytest.mark.parametrize("strict", [[], ["--strict-json"]], ids=["lenient", "strict"])
@pytest.mark.parametrize("where", ["file", "jsonl", "stdin"])
def test_a_key_written_twice_is_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch, where: str,
                                          strict: list[str]) -> None:
    """`{"agent": "Nope", "agent": "GeoChat"}` passed as GeoChat, also under --strict-json."""
    import io
    import sys

    if where == "file":
        (tmp_path / "plan.json").write_text(REPEATED)
        target = str(tmp_path / "plan.json")
    elif where == "jsonl":
        record = '{"task_id": 1, "plan": ' + REPEATED + "}"
        (tmp_path / "plans.jsonl").write_text(record + "\n" + json.dumps(
            {"task_id": 2, "plan": FOG_CHAIN}) + "\n")
        target = str(tmp_path / "plans.jsonl")
    else:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(REPEATED.encode())))
        target = "-"
    code = main(["check", "--format", "json", *strict, target])
    report = json.loads(capsys.readouterr().out)
    assert code == 0  # warnings
    repeated = [d for d in report["diagnostics"] if d["code"] == "PC118"]
    assert [d["message"] for d in repeated] == [
        "the key `agent` appears twice in one object; only its last value is read",
        "the key `weather_degraded_image_path` appears twice in one object; only its last "
        "value is read"]
    assert repeated[0]["severity"] == "warning"
    assert repeated[0]["span"]["start_col"] == (20 if where != "jsonl" else 43)
