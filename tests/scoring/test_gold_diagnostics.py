"""FPoF as compiler diagnostics: ``plancheck check PRED --gold GOLD``.

The first point of failure is one error whose type and step are exactly the reference
verdict's; later divergences are cascaded notes on it; labels point into the prediction and,
with resolved positions, into the gold file.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main
from plancheck.diagnostics.codes import CODES, FPOF_CATEGORY
from plancheck.diagnostics.severity import Severity
from plancheck.scoring.fpof import fpof_diagnostics, fpof_text
from plancheck.scoring.gold import GoldIndex
from plancheck.scoring.metrics import compact_entry, diagnostic_text
from plancheck.scoring.reference import score_completion

GOLD_CODES = {f"PC6{n:02d}" for n in range(1, 12)}


def check_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    code = main(["check", *args, "--format", "json"])
    out, _ = capsys.readouterr()
    return code, json.loads(out)["diagnostics"] if out.strip() else []


def gold_only(diagnostics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in diagnostics if d["code"] in GOLD_CODES]


def task(gold_tasks: list[dict[str, Any]], task_id: int) -> dict[str, Any]:
    return next(t for t in gold_tasks if t["task_id"] == task_id)


def three_step_task(gold_tasks: list[dict[str, Any]]) -> dict[str, Any]:
    return next(t for t in gold_tasks if len(t["structured_plan"]) == 3 and t["task_id"] == 1)


# --------------------------------------------------------------------------- agreement


def test_primary_diagnostic_is_the_reference_verdict(
    parity_cases: Path, benchmark_path: Path
) -> None:
    """On every parity case of a sample (all mutation and output styles), exactly one gold
    error when the verdict has a first point of failure, none otherwise, and its type, step
    and category are the verdict's."""
    gold = GoldIndex.load(str(benchmark_path))
    with parity_cases.open(encoding="utf-8") as lines:
        cases = [json.loads(line) for line in itertools.islice(lines, 0, None, 7)]
    assert len(cases) > 800
    seen_types = set()
    for case in cases:
        gold_task = gold.get(case["task_id"])
        assert gold_task is not None
        verdict = score_completion(case["completion"], gold_task.prepared)
        diagnostics = fpof_diagnostics(verdict, gold_task)
        if verdict.fpof_type is None:
            assert diagnostics == []
            continue
        (diagnostic,) = diagnostics
        seen_types.add(verdict.fpof_type)
        assert diagnostic.severity is Severity.ERROR
        assert CODES[diagnostic.code].fpof_type == verdict.fpof_type, case["id"]
        assert diagnostic.data["fpof_type"] == verdict.fpof_type
        assert diagnostic.data["fpof_step"] == verdict.fpof_step
        expected_category = FPOF_CATEGORY.get(verdict.fpof_type, "Structural Error")
        assert diagnostic.data["fpof_category"] == expected_category
    assert {
        "agent_mismatch",
        "parameter_error",
        "dependency_error",
        "early_stop",
        "hallucinated_extra_steps",
    } <= seen_types


# --------------------------------------------------------------------------- the CLI


def test_tool_mismatch_points_into_prediction_and_gold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gold_tasks: list[dict[str, Any]]
) -> None:
    gold_plan = three_step_task(gold_tasks)["structured_plan"]
    gold_file = tmp_path / "gold.json"
    gold_file.write_text(json.dumps(gold_plan, indent=2))
    predicted = copy.deepcopy(gold_plan)
    predicted[1]["agent"] = "Landslide_Segmentation"
    predicted[2]["inputs"]["user_query_path"] = "/elsewhere/query.txt"
    prediction = tmp_path / "pred.json"
    prediction.write_text(json.dumps(predicted, indent=2))

    code, diagnostics = check_json(capsys, str(prediction), "--gold", str(gold_file))
    assert code == 1
    (mismatch,) = gold_only(diagnostics)
    assert mismatch["code"] == "PC604" and mismatch["name"] == "tool-mismatch"
    assert mismatch["data"]["fpof_type"] == "agent_mismatch"
    assert mismatch["data"]["fpof_step"] == 1
    assert mismatch["data"]["fpof_category"] == "Tool Mismatch"
    # The primary label is the prediction's agent, at its exact line and column.
    lines = prediction.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "Landslide_Segmentation" in text)
    assert mismatch["span"]["start_line"] == line
    assert mismatch["span"]["start_col"] == lines[line - 1].index('"Landslide') + 1
    assert mismatch["span"]["pointer"] == "/1/agent"
    # The secondary label is the gold plan's agent, resolved in the gold file.
    gold_label = next(label for label in mismatch["labels"] if not label["primary"])
    gold_lines = gold_file.read_text().splitlines()
    gold_line = next(i for i, text in enumerate(gold_lines, 1) if gold_plan[1]["agent"] in text)
    assert gold_label["span"]["start_line"] == gold_line
    assert gold_label["span"]["start_col"] == gold_lines[gold_line - 1].index('"') + 1 + len(
        '"agent": '
    )
    # The later input divergence is a cascaded note, not a second error.
    assert any("user_query_path" in note for note in mismatch["notes"])
    assert any("cascaded" in note for note in mismatch["notes"])


def test_jsonl_predictions_are_matched_by_task_id(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    benchmark_path: Path,
    gold_tasks: list[dict[str, Any]],
) -> None:
    first, second = gold_tasks[0], gold_tasks[1]
    extra = [*first["structured_plan"], copy.deepcopy(first["structured_plan"][0])]
    records = [
        {"id": "right", "task_id": first["task_id"], "plan": first["structured_plan"]},
        {
            "id": "as-text",
            "task_id": str(second["task_id"]),
            "completion": "Plan:\n```json\n" + json.dumps(second["structured_plan"]) + "\n```",
        },
        {"id": "short", "task_id": first["task_id"], "plan": first["structured_plan"][:-1]},
        {"id": "long", "task_id": first["task_id"], "plan": extra},
        {"id": "nothing", "task_id": first["task_id"], "completion": "I cannot help."},
        {"id": "lost", "task_id": 99999, "plan": first["structured_plan"]},
    ]
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, diagnostics = check_json(capsys, str(path), "--gold", str(benchmark_path))
    assert code == 1
    by_record: dict[str, list[str]] = {}
    for diagnostic in diagnostics:
        if diagnostic["code"] in GOLD_CODES or diagnostic["code"] == "PC004":
            by_record.setdefault(diagnostic["record"], []).append(diagnostic["code"])
    assert "right" not in by_record and "as-text" not in by_record
    assert by_record["short"] == ["PC609"]
    assert by_record["long"] == ["PC610"]
    assert by_record["nothing"] == ["PC601"]
    assert by_record["lost"] == ["PC004"]
    early = next(d for d in diagnostics if d["code"] == "PC609")
    assert early["data"]["fpof_step"] == len(first["structured_plan"])
    assert early["data"]["fpof_category"] == "Structural Error"


def test_single_plan_gold_compares_every_prediction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gold_tasks: list[dict[str, Any]]
) -> None:
    gold_plan = three_step_task(gold_tasks)["structured_plan"]
    gold_file = tmp_path / "gold.json"
    gold_file.write_text(json.dumps(gold_plan))
    swapped = copy.deepcopy(gold_plan)
    swapped[0]["dependence"] = [0]
    records = [
        {"id": "same", "task_id": 5, "plan": gold_plan},
        {"id": "dep", "task_id": 6, "plan": swapped},
    ]
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    _, diagnostics = check_json(capsys, str(path), "--gold", str(gold_file))
    (dependency,) = gold_only(diagnostics)
    assert dependency["record"] == "dep" and dependency["code"] == "PC607"
    assert dependency["data"]["fpof_type"] == "dependency_error"


def test_evaluator_crash_is_its_own_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gold_tasks: list[dict[str, Any]]
) -> None:
    gold_plan = three_step_task(gold_tasks)["structured_plan"]
    gold_file = tmp_path / "gold.json"
    gold_file.write_text(json.dumps(gold_plan))
    crashing = copy.deepcopy(gold_plan)
    crashing[2]["dependence"] = [0, "1"]  # sorting it raises TypeError in the reference
    prediction = tmp_path / "pred.json"
    prediction.write_text(json.dumps(crashing))
    _, diagnostics = check_json(capsys, str(prediction), "--gold", str(gold_file))
    (crash,) = gold_only(diagnostics)
    assert crash["code"] == "PC611" and crash["data"]["fpof_type"] == "exception"
    assert crash["data"]["fpof_step"] == 0


def test_text_output_names_the_first_point_of_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gold_tasks: list[dict[str, Any]]
) -> None:
    gold_plan = three_step_task(gold_tasks)["structured_plan"]
    gold_file = tmp_path / "gold.json"
    gold_file.write_text(json.dumps(gold_plan))
    predicted = copy.deepcopy(gold_plan)
    predicted[0]["inputs"] = {"image_path": "/tmp/x.tif"}
    prediction = tmp_path / "pred.json"
    prediction.write_text(json.dumps(predicted, indent=2))
    assert main(["check", str(prediction), "--gold", str(gold_file)]) == 1
    out = capsys.readouterr().out
    assert "error[PC605]" in out
    assert "first point of failure: parameter_error at step 0 (Parameter Binding Error)" in out
    assert f"{gold_file}:" in out  # where the gold step is


def test_unusable_gold_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prediction = tmp_path / "pred.json"
    prediction.write_text("[]")
    assert main(["check", str(prediction), "--gold", str(tmp_path / "missing.jsonl")]) == 2
    assert "PC001" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": 1, "structured_plan": []}\n{"nope": 1}\n')
    assert main(["check", str(prediction), "--gold", str(bad)]) == 2
    assert "PC004" in capsys.readouterr().err
    scalar = tmp_path / "scalar.json"
    scalar.write_text("42")
    assert main(["check", str(prediction), "--gold", str(scalar)]) == 2
    assert "PC004" in capsys.readouterr().err


def test_dsl_prediction_is_compared_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gold_tasks: list[dict[str, Any]]
) -> None:
    gold_plan = three_step_task(gold_tasks)["structured_plan"]
    gold_file = tmp_path / "gold.json"
    gold_file.write_text(json.dumps(gold_plan))
    source = tmp_path / "plan.wf"
    source.write_text(
        'plan "p" uses disasterbench {\n'
        '  step 0 = Anomaly_Detection_Forest(image_path = "data/a.tif")\n'
        "}\n"
    )
    _, diagnostics = check_json(capsys, str(source), "--gold", str(gold_file))
    (mismatch,) = gold_only(diagnostics)
    assert mismatch["code"] == "PC604" and mismatch["span"]["start_line"] == 2
    # The DSL writes no outputs: they are the tool's, as the signature gives them.
    assert any('lists outputs ["anomaly_map_path"]' in note for note in mismatch["notes"])


def test_per_item_entry_is_the_diagnostic_in_short(
    parity_cases: Path, benchmark_path: Path
) -> None:
    """A per-item line's gold-comparison entry is built without a Diagnostic (a batch builds
    one per failed item); it must say exactly what the diagnostic says."""
    gold = GoldIndex.load(str(benchmark_path))
    with parity_cases.open(encoding="utf-8") as lines:
        cases = [json.loads(line) for line in itertools.islice(lines, 3, None, 5)]
    compared = 0
    for case in cases:
        gold_task = gold.get(case["task_id"])
        assert gold_task is not None
        verdict = score_completion(case["completion"], gold_task.prepared)
        text = fpof_text(verdict, gold_task)
        entry = json.loads(text) if text else None
        diagnostics = fpof_diagnostics(verdict, gold_task, gold_spans=False)
        if not diagnostics:
            assert entry is None and verdict.fpof_type is None
            continue
        (diagnostic,) = diagnostics
        assert entry == compact_entry(diagnostic), case["id"]
        assert text == diagnostic_text(diagnostic), case["id"]
        assert entry["notes"] and entry["notes"][-1]  # the cascade is there too
        compared += 1
    assert compared > 500
