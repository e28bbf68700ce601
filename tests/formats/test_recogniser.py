"""One recogniser of input kinds (issue 35): ``plancheck.formats.sniff`` says what every kind
of input is, and the readers ask it rather than deciding for themselves (the deciders that
were spread over nine modules are gone from them; the generic driver names no format)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from plancheck.formats.shapes import CALL_SHAPES, call_shapes, find_calls
from plancheck.formats.sniff import (
    is_dora_task_file,
    is_gold_record,
    is_gold_record_list,
    is_plain_plan,
    is_plan_record,
    is_plan_record_list,
    reads_as_trajectory,
    sniff,
)

PACKAGE = Path(__file__).resolve().parents[2] / "plancheck"
STEP = {"agent": "GeoChat", "step": 0, "dependence": [-1], "dependence_content": None,
        "inputs": {"image_path": "/d/a.png"}, "outputs": ["contextual_description_path"]}
DORA_STEP = {"call": "seg.flood", "args": {"image_path": "a.tif"}, "obs": {}}
DORA_TASK = {"question_id": "q1", "question": "?", "trajectory": [DORA_STEP]}


@pytest.mark.parametrize(("value", "kind"), [
    ([{"name": "f", "inputSchema": {"type": "object"}}], "tools"),
    ([STEP], "plan"),
    ({"structured_plan": [STEP]}, "plan"),
    ([DORA_STEP], "dora"),
    (DORA_TASK, "dora"),
    ({"sample_id": "s", "tasks": [DORA_TASK]}, "dora"),
    ([{"sample_id": "s", "tasks": [DORA_TASK]}], "dora"),
    ({"functionCall": {"name": "f", "args": {}}}, "calls:gemini"),
    ([{"name": "f", "arguments": {}}], "calls:generic"),
    ({"trajectory": []}, "trajectory"),
    ({"hello": 1}, None),
    ([], None),
])
def test_each_kind_is_recognised(value: Any, kind: str | None) -> None:
    assert sniff(value) == kind


def test_the_record_kinds() -> None:
    assert is_gold_record({"task_id": 1, "gt_solution": [STEP]})
    assert not is_gold_record({"task_id": 1, "completion": "..."})
    assert is_gold_record_list([{"task_id": 1, "gt_solution": [STEP]}])
    assert not is_gold_record_list([]) and not is_gold_record_list([{"task_id": 1}])
    assert is_plain_plan([STEP]) and not is_plain_plan([STEP, {"tasks": []}])
    assert is_dora_task_file([{"sample_id": "s", "tasks": [DORA_TASK]}])
    assert not is_dora_task_file([{"sample_id": "s", "tasks": ["not a task"]}])
    # A record to check keeps its plan where predictions do; `gt_solution` is gold's only.
    assert is_plan_record({"task_id": 1, "completion": "..."})
    assert not is_plan_record({"task_id": 1, "gt_solution": [STEP]})
    assert not is_plan_record({"completion": "..."})
    assert is_plan_record_list([{"task_id": 1, "plan": [STEP]}, {"task_id": 2, "plan": []}])
    assert not is_plan_record_list([]) and not is_plan_record_list([{"task_id": 1}])


def test_a_list_of_records_is_checked_record_by_record(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from plancheck.cli import main

    records = tmp_path / "records.json"
    records.write_text(json.dumps([{"task_id": 1, "plan": [STEP]},
                                   {"task_id": 2, "plan": []}]), encoding="utf-8")
    assert main(["check", str(records)]) == 1
    out = capsys.readouterr().out
    assert "(record 1)" in out and "(record 2)" in out and "2 plans in 1 file" in out


# The deciders the recogniser replaced, each once defined in a reader of its own.
_REPLACED = {"_plainly_plan_steps", "_is_plan_steps", "_is_plan", "_is_dora_document",
             "_is_gold_record", "is_task", "is_trajectory", "is_sample", "is_step",
             "looks_like_trajectory", "is_task_file_value", "_looks_like_trajectory",
             "dora_results", "_is_record", "_is_record_list", "_looks_like_jsonl",
             "looks_like_jsonl", "sniff_kind", "reads_as_trajectory", "scored_lines",
             "_scored_record"}


def test_no_reader_defines_a_decider_of_its_own() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "sniff.py" and path.parent.name == "formats":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name in _REPLACED:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}")
    assert found == []


@pytest.mark.parametrize("module", ["driver.py", "callshapes.py"])
def test_the_generic_lowering_and_the_driver_name_no_format(module: str) -> None:
    # DORA's reading lives in its own modules (compiler/trajectories.py, dora_native.py),
    # behind the recogniser.
    assert "dora" not in (PACKAGE / "compiler" / module).read_text("utf-8").lower()


# A function whose name says it decides what a file, a record or a trajectory is.
_DECIDER = re.compile(r"_?(is|looks_like|reads_as|seems)_\w*"
                      r"(jsonl|record|trajector|batch|gold|per_item|kind|dora)\w*")


def test_no_function_outside_the_formats_decides_an_input_kind_by_its_name() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name == "formats":  # the recogniser and its field lists
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and _DECIDER.fullmatch(node.name):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}")
    assert found == []


# Readers name no call shape: what a shape's calls are is the registry's (its declarations:
# CallShape.references, .trajectories, ...). Left: BFCL's alternatives read in the lowering.
_NAMED_SHAPES = {"compiler/callshapes.py": {"bfcl-answer"}}


def test_the_readers_ask_the_call_shapes_rather_than_name_them() -> None:
    names = set(CALL_SHAPES)
    found: dict[str, set[str]] = {}
    for package in ("compiler", "scoring", "dora", "guard", "policy", "integrations"):
        for path in sorted((PACKAGE / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            named = {node.value for node in ast.walk(tree)
                     if isinstance(node, ast.Constant) and node.value in names}
            if named:
                found[path.relative_to(PACKAGE).as_posix()] = named
    assert found == _NAMED_SHAPES


def _trajectory(value: Any) -> bool:
    return reads_as_trajectory(value, find_calls(value), set(), placeholders=False,
                               positional=False)


def test_a_trajectory_is_read_in_the_shapes_that_declare_it() -> None:
    assert {name for name, shape in call_shapes().items() if shape.trajectories} == {
        "generic", "openai-chat"}
    generic = [{"tool": "f", "args": {"x": 1}}, {"tool": "g", "args": {"y": "x from "
                                                                          "trajectory[0].obs"}}]
    openai = [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]
    anthropic = [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]
    assert _trajectory(generic) and _trajectory({"trajectory": generic}) and _trajectory(openai)
    assert not _trajectory(anthropic)
    calls = find_calls(generic)
    assert not reads_as_trajectory(generic, calls, {"template"}, placeholders=False,
                                   positional=False)
    assert not reads_as_trajectory(generic, calls, set(), placeholders=True, positional=False)
    assert not reads_as_trajectory(generic, calls, set(), placeholders=False, positional=True)
    assert reads_as_trajectory({"trajectory": generic}, calls, {"dora", "generated"},
                               placeholders=False, positional=True)


def test_records_that_hold_no_plan_are_told_apart_by_the_recogniser(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A per-item line, a run's configuration and a BFCL question are each one PC117 naming
    what they hold, the same reading whether the file is JSON or one record a line."""
    from plancheck.cli import main
    from plancheck.formats import sniff

    scored = {"id": "1-0", "task_id": 1, "em": True, "tool_acc": True, "fpof_type": None,
              "diagnostics": []}
    config = {"method": "zero-shot", "hyperparameters": {}, "toolset": "builtin",
              "plancheck_version": "0"}
    question = {"id": "simple_0", "question": [[{"role": "user", "content": "hi"}]],
                "function": [{"name": "f", "parameters": {"type": "object"}}]}
    assert sniff.is_scored_record(scored) and sniff.is_scored_line(json.dumps(scored))
    assert sniff.is_run_config(config) and sniff.is_task_record(question)
    assert not sniff.is_task_record({**question, "ground_truth": []})
    for name, value, said in (("items.jsonl", scored, "per-item lines"),
                              ("config.json", config, "configuration"),
                              ("questions.jsonl", question, "tasks")):
        path = tmp_path / name
        path.write_text(json.dumps(value) + "\n", encoding="utf-8")
        assert main(["check", str(path)]) == 0  # (a warning: nothing was checked)
        out = capsys.readouterr().out
        assert "PC117" in out and said in out, out
