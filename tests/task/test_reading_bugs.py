"""Three readings where one entry point disagreed with another or with the reference evaluator
(issue 37): each test fails on the code before the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.api import check_trajectory
from plancheck.cli import main
from plancheck.guard import Guard


def test_an_array_of_plans_is_read_as_the_reference_reads_it(
        gold_tasks: list[dict[str, Any]]) -> None:
    """RAP writes its rollouts as ``[[{step}, ...], ...]``; the reference evaluator
    (``normalize_answer_for_evaluation``: the first item that is an array of step objects with
    ``agent`` and ``step``) scores the embedded plan, so ``check`` reads it too (it said
    ``PC106`` on every such completion)."""
    for task in gold_tasks[:40]:
        gold = task["structured_plan"]
        clean = plancheck.check(gold)
        for value in ([gold], [gold, [{"note": 1}]], ["thinking", gold]):
            report = plancheck.check(json.dumps(value))
            assert "PC106" not in report.codes
            assert sorted(report.codes) == sorted(["PC103", *clean.codes]), \
                (task["task_id"], report.codes, clean.codes)
            assert report.ok == clean.ok


def test_an_array_of_plans_in_the_cli(tmp_path: Path, gold_tasks: list[dict[str, Any]],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "rollouts.json"
    path.write_text(json.dumps([gold_tasks[0]["structured_plan"]]), encoding="utf-8")
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "PC106" not in out and "item 0 of an outer array" in out


def test_an_array_of_arrays_that_are_no_plans_is_still_an_error() -> None:
    assert "PC106" in plancheck.check([[1, 2], [3]]).codes


DORA_STEPS: list[dict[str, Any]] = [
    {"call": "seg.flood", "args": {"pre_image_path": "pre.tif", "post_image_path": "post.tif"},
     "obs": {"tool": "seg.flood", "mask_path": "/tmp/flood.png", "mask_value": 255}},
    {"call": "ras.area", "args": {"mask_path": "<mask_path> from trajectory[0].obs",
                                  "pixel_size_m": 0.5, "classes": [255]},
     "obs": {"area_m2": 120.5}},
]


def test_dora_steps_under_a_bare_trajectory_key_read_as_the_bare_list() -> None:
    """``{"trajectory": [...]}`` with DORA's ``call`` key was lowered as other call shapes
    (no ``call`` among their name keys): ``PC107`` on every call, while the bare list and a
    DORA task file holding the same list read it."""
    bare = plancheck.check(DORA_STEPS)
    wrapped = plancheck.check({"trajectory": DORA_STEPS})
    task = plancheck.check({"question_id": "q1", "trajectory": DORA_STEPS})
    assert "PC107" not in wrapped.codes
    assert wrapped.codes == bare.codes == task.codes
    assert check_trajectory({"trajectory": DORA_STEPS}, "dora").codes == \
        check_trajectory(DORA_STEPS, "dora").codes
    broken = [DORA_STEPS[0], {**DORA_STEPS[1], "call": "ras.aera"}]
    assert "PC201" in plancheck.check({"trajectory": broken}).codes


def _pool(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"type": "function", "function": {
        "name": "now", "description": "The current time.",
        "parameters": {"type": "object", "properties": {}}}}]), encoding="utf-8")
    return path


@pytest.mark.parametrize("arguments", ["", "  ", "{}", None, "[]", "nope"])
def test_guard_and_check_agree_on_arguments_text(tmp_path: Path, arguments: Any) -> None:
    """Arguments ``""`` are no JSON object: ``check`` says ``PC108``, and the guard allowed the
    call (it read blank text as ``{}``). Both now refuse what the other refuses."""
    pool = _pool(tmp_path)
    verdict = Guard(pool).propose({"name": "now", "arguments": arguments})
    report = plancheck.check([{"type": "function",
                               "function": {"name": "now", "arguments": arguments}}], pool,
                             profile="guard")
    assert verdict.allowed == report.ok, (verdict.diagnostics, report.codes)
