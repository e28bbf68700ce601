"""JSON -> IR -> DSL -> IR -> JSON is the identity on well-formed plans."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import plancheck
from plancheck.cli import main
from plancheck.dsl.parser import MAX_VALUE_DEPTH, parse_dsl
from plancheck.dsl.printer import plan_to_dsl, plan_to_json
from plancheck.ir.nodes import Literal
from tests.strategies import well_typed_plan


def round_trip(plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    report = plancheck.check(plan, interpret=False, types=False)
    assert report.plan is not None
    text = plan_to_dsl(report.plan, name="t", toolset="disasterbench")
    module = parse_dsl(text, "t.wf")
    assert module.diagnostics == [] and len(module.plans) == 1
    return plan_to_json(module.plans[0])


@given(well_typed_plan())
@settings(max_examples=150, deadline=None)
def test_generated_plans_round_trip(plan: list[dict[str, Any]]) -> None:
    assert round_trip(plan) == plan


def test_clean_gold_plans_round_trip(gold_tasks: list[dict[str, Any]]) -> None:
    checked = 0
    for task in gold_tasks:
        plan = task["structured_plan"]
        if not plancheck.check(plan).ok:
            continue
        assert round_trip(plan) == plan, task["task_id"]
        assert json.dumps(round_trip(plan)) == json.dumps(plan)  # key order too
        checked += 1
    assert checked == 227


def test_literal_types_survive_the_round_trip() -> None:
    plan = [{"agent": "GeoChat", "step": 0, "dependence": [-1], "dependence_content": None,
             "inputs": {"image_path": 1.0, "user_query_path": [1, True, None, {"a": "b"}]},
             "outputs": ["contextual_description_path"]}]
    assert json.dumps(round_trip(plan)) == json.dumps(plan)


names = st.text(min_size=1, max_size=12).filter(lambda s: "\x00" not in s) | st.sampled_from(
    ["ras.grid_windows", "step0", "step", "in", "any", "null", "a-b", "a b", "-x", "é", "plan"])


# An output key holding `<` or `>` cannot be referred to as `<GENERATED>-k-<key>` at all.
output_names = names.filter(lambda s: not {"<", ">"} & set(s))
# A blank agent is no tool name at all (PC108): such a plan has no tool to print.
tool_names = names.filter(str.strip)


@given(tool=tool_names, key=names, output=output_names, pool=names)
@example(tool="0", key="0", output="0", pool="A\n")  # names that end in a newline
@example(tool="step\n", key="k\n", output="out\n", pool="p")
@settings(max_examples=200, deadline=None)
def test_any_name_round_trips(tool: str, key: str, output: str, pool: str) -> None:
    """Names the DSL cannot spell as identifiers are quoted, and read back as they were."""
    plan = [{"agent": tool, "step": 0, "dependence": [-1], "dependence_content": None,
             "inputs": {key: "a.tif"}, "outputs": [output]},
            {"agent": tool, "step": 1, "dependence": [0], "dependence_content": {"0": [output]},
             "inputs": {key: f"<GENERATED>-0-<{output}>"}, "outputs": [output]}]
    report = plancheck.check(plan, interpret=False, types=False)
    assert report.plan is not None and "PC108" not in {d.code for d in report.diagnostics}
    text = plan_to_dsl(report.plan, toolset=pool)
    module = parse_dsl(text, "t.wf")
    assert module.diagnostics == [], text
    assert module.plans[0].toolset == pool
    assert plan_to_json(module.plans[0]) == plan


def test_the_bundled_dora_example_reads_back(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "dora" / "gold_trajectory.json"
    assert main(["fmt", "--to", "dsl", "--tools", "dora", str(example)]) == 0
    dsl = capsys.readouterr().out
    assert 'step 0 = "ras.grid_windows"(' in dsl
    written = tmp_path / "gold.wf"
    written.write_text(dsl)
    assert main(["fmt", "--to", "dsl", "--tools", "dora", str(written)]) == 0
    assert capsys.readouterr().out == dsl
    assert main(["fmt", "--to", "json", "--tools", "dora", str(example)]) == 0
    from_json = capsys.readouterr().out
    assert main(["fmt", "--to", "json", "--tools", "dora", str(written)]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(from_json)


@pytest.mark.parametrize("depth", [MAX_VALUE_DEPTH, MAX_VALUE_DEPTH + 1, 5000])
def test_deeply_nested_values_are_read_or_refused(depth: int) -> None:
    """A DSL list literal 5,000 deep was a RecursionError (an internal error)."""
    value = "[" * depth + "]" * depth
    module = parse_dsl(f'plan {{ step 0 = GeoChat(image_path = {value}) }}', "deep.wf")
    if depth <= MAX_VALUE_DEPTH:
        assert module.diagnostics == []
        literal = module.plans[0].steps[0].args[0].value
        assert isinstance(literal, Literal)
        assert json.dumps(literal.value) == value
    else:
        assert [d.code for d in module.diagnostics] == ["PC114"]
        assert "nested more than 400 levels deep" in module.diagnostics[0].message
        assert module.plans == []


def test_a_deep_dsl_file_is_a_diagnostic_on_the_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.wf"
    path.write_text("plan { step 0 = GeoChat(image_path = " + "[" * 5000 + "]" * 5000 + ") }")
    assert main([str(path)]) == 1
    out = capsys.readouterr().out
    assert "PC114" in out and "internal error" not in out
