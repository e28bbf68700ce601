"""The interpreter: canonical forms, equivalence, replay with real callables, and the
diagnostics found by running a plan symbolically (PC501, PC502, PC503)."""

from __future__ import annotations

import copy
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plancheck
from plancheck.cli import main
from plancheck.interp import (
    CallableExecutor,
    ExecutionError,
    canonical_form,
    equivalent,
    replay,
    run,
)
from plancheck.ir.nodes import Plan
from tests.strategies import (
    REFERENCE,
    TOOLSET,
    linked_plan,
    renumbered,
    well_typed_plan,
)

SETTINGS = settings(max_examples=100, deadline=None)
plans = well_typed_plan() | linked_plan()


def ir(value: list[dict[str, Any]]) -> Plan:
    report = plancheck.check(value, TOOLSET)
    assert report.plan is not None
    return report.plan


def form(value: list[dict[str, Any]]) -> tuple[str, ...]:
    return canonical_form(ir(value), TOOLSET)


def term_tools() -> dict[str, Any]:
    """A callable per tool that returns, for each output, a text naming the call: replaying
    with them computes every value explicitly."""

    def make(name: str, outputs: tuple[str, ...]) -> Any:
        def call(**inputs: Any) -> dict[str, str]:
            arguments = ",".join(f"{k}={inputs[k]}" for k in sorted(inputs))
            return {key: f"{name}({arguments}).{key}" for key in outputs}
        return call

    return {name: make(name, tool.output_names) for name, tool in TOOLSET.tools.items()}


# --------------------------------------------------------------------------- canonical form


@SETTINGS
@given(plans.flatmap(lambda p: st.tuples(st.just(p), renumbered(p))))
def test_canonical_form_ignores_numbering_and_branch_order(
        pair: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    original, moved = pair
    assert plancheck.check(moved, TOOLSET).errors == []  # the reordering is itself a good plan
    assert form(moved) == form(original)
    assert equivalent(ir(original), ir(moved), TOOLSET)
    assert equivalent(ir(moved), ir(original), TOOLSET)
    # Replaying with real callables agrees: the same values, whatever the numbering.
    values = Counter(v for outputs in replay(ir(original), term_tools(), TOOLSET).values()
                     for v in outputs.values())
    assert values == Counter(v for outputs in replay(ir(moved), term_tools(), TOOLSET).values()
                             for v in outputs.values())


@SETTINGS
@given(plans, st.data())
def test_canonical_form_changes_with_any_binding(value: list[dict[str, Any]],
                                                 data: st.DataObject) -> None:
    sites = [(step, key) for step in value for key in step["inputs"]]
    step, key = data.draw(st.sampled_from(sites))
    changed = copy.deepcopy(value)
    target = changed[step["step"]]
    old = step["inputs"][key]
    trace = run(ir(value), TOOLSET)
    match = REFERENCE.match(old) if isinstance(old, str) else None
    old_value = trace.values[(int(match.group(1)), match.group(2))] if match else None
    others = [(number, output) for (number, output), produced in trace.values.items()
              if number < step["step"] and produced != old_value]
    if others and data.draw(st.booleans()):
        number, output = data.draw(st.sampled_from(others))
        target["inputs"][key] = f"<GENERATED>-{number}-<{output}>"
    elif match:
        target["inputs"][key] = data.draw(st.sampled_from(["data/new.tif", "other.json"]))
    else:
        target["inputs"][key] = old + data.draw(st.sampled_from([".bak", "2", ",x=s:y"]))
    assert form(changed) != form(value)
    assert not equivalent(ir(value), ir(changed), TOOLSET)
    assert not equivalent(ir(changed), ir(value), TOOLSET)


@SETTINGS
@given(plans, plans)
def test_equivalent_is_symmetric(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    assert equivalent(ir(a), ir(b), TOOLSET) == equivalent(ir(b), ir(a), TOOLSET)
    assert equivalent(ir(a), ir(a), TOOLSET)


def _step(number: int, tool: str, inputs: dict[str, Any]) -> dict[str, Any]:
    content: dict[str, list[str]] = {}
    for value in inputs.values():
        match = REFERENCE.match(value) if isinstance(value, str) else None
        if match:
            content.setdefault(match.group(1), []).append(match.group(2))
    return {"agent": tool, "step": number,
            "dependence": sorted(int(k) for k in content) or [-1],
            "dependence_content": content or None, "inputs": inputs,
            "outputs": list(TOOLSET.tools[tool].output_names)}


def test_independent_branches_in_either_order_are_equivalent() -> None:
    restore = _step(0, "Weather_Degraded_Image_Restoration",
                    {"weather_degraded_image_path": "fog.jpg"})
    branch_a = [_step(1, "Foggy_Scenario_Object_Detection",
                      {"image_path": "<GENERATED>-0-<restored_image_path>"})]
    branch_b = [_step(2, "Crowd_Counting_in_Adverse_Weather",
                      {"image_path": "<GENERATED>-0-<restored_image_path>"})]
    first = [restore, *branch_a, *branch_b]
    swapped = [restore, {**branch_b[0], "step": 1}, {**branch_a[0], "step": 2}]
    assert form(first) == form(swapped)
    assert form(first) != form([restore, *branch_a])  # a missing branch is a difference


def test_literals_cannot_impersonate_other_arguments() -> None:
    # Written naively, both calls read `image_1_path=x,image_2_path=y,image_2_path=z`.
    a = [_step(0, "Change_Mapping_and_Detection",
               {"image_1_path": "x,image_2_path=s:y", "image_2_path": "z"})]
    b = [_step(0, "Change_Mapping_and_Detection",
               {"image_1_path": "x", "image_2_path": "y,image_2_path=s:z"})]
    assert not equivalent(ir(a), ir(b), TOOLSET)
    c = [_step(0, "Change_Mapping_and_Detection", {"image_1_path": 1, "image_2_path": "1"})]
    d = [_step(0, "Change_Mapping_and_Detection", {"image_1_path": "1", "image_2_path": 1})]
    assert not equivalent(ir(c), ir(d), TOOLSET)  # literals compare type-exactly


def _deep_chain(depth: int, source: str) -> list[dict[str, Any]]:
    """Every step compares the previous step's result with itself: the full term of the last
    value doubles in size with each step."""
    steps = [_step(0, "Weather_Degraded_Image_Restoration",
                   {"weather_degraded_image_path": source})]
    for number in range(1, depth):
        key = "restored_image_path" if number == 1 else "change_map_path"
        steps.append(_step(number, "Change_Mapping_and_Detection", {
            "image_1_path": f"<GENERATED>-{number - 1}-<{key}>",
            "image_2_path": f"<GENERATED>-{number - 1}-<{key}>"}))
    return steps


def test_canonical_form_stays_linear_on_deep_plans() -> None:
    started = time.perf_counter()
    deep = form(_deep_chain(60, "a.png"))
    assert time.perf_counter() - started < 2
    assert len(deep) == 60 and max(map(len, deep)) < 1000
    assert deep != form(_deep_chain(60, "b.png"))  # a leaf change still reaches the top
    assert deep == form(_deep_chain(60, "a.png"))


# --------------------------------------------------------------------------- replay

FOG = [
    _step(0, "Weather_Degraded_Image_Restoration", {"weather_degraded_image_path": "fog.jpg"}),
    _step(1, "Crowd_Counting_in_Adverse_Weather",
          {"image_path": "<GENERATED>-0-<restored_image_path>"}),
    _step(2, "GeoChat", {"image_path": "<GENERATED>-1-<density_map_path>",
                         "user_query_path": "question.txt"}),
]


def test_replay_runs_real_callables_in_order() -> None:
    calls: list[str] = []

    def restore(weather_degraded_image_path: str) -> dict[str, str]:
        calls.append("restore")
        return {"restored_image_path": weather_degraded_image_path.replace(".jpg", "_clear.png")}

    def count(image_path: str) -> dict[str, Any]:
        calls.append("count")
        return {"density_map_path": image_path + ".density.npy", "crowd_count_path": 42}

    def chat(image_path: str, user_query_path: str) -> dict[str, str]:
        calls.append("chat")
        return {"contextual_description_path": f"answer about {image_path} to {user_query_path}"}

    tools = {"Weather_Degraded_Image_Restoration": restore,
             "Crowd_Counting_in_Adverse_Weather": count, "GeoChat": chat}
    produced = replay(ir(FOG), tools, TOOLSET)
    assert calls == ["restore", "count", "chat"]
    assert produced == {
        0: {"restored_image_path": "fog_clear.png"},
        1: {"density_map_path": "fog_clear.png.density.npy", "crowd_count_path": 42},
        2: {"contextual_description_path":
            "answer about fog_clear.png.density.npy to question.txt"},
    }
    assert replay(ir(FOG), tools, TOOLSET) == produced  # deterministic
    trace = run(ir(FOG), TOOLSET, CallableExecutor(tools))  # the executor behind replay
    assert trace.values[(1, "crowd_count_path")] == 42


def test_replay_explains_what_stops_it() -> None:
    tools = term_tools()
    partial = {k: v for k, v in tools.items() if k != "GeoChat"}
    with pytest.raises(ExecutionError, match=r"step 2 \(`GeoChat`\): no callable"):
        replay(ir(FOG), partial, TOOLSET)

    def broken(**_inputs: Any) -> dict[str, Any]:
        raise OSError("disk full")

    with pytest.raises(ExecutionError, match=r"step 1 .* raised OSError: disk full") as caught:
        replay(ir(FOG), {**tools, "Crowd_Counting_in_Adverse_Weather": broken}, TOOLSET)
    assert isinstance(caught.value.__cause__, OSError)
    with pytest.raises(ExecutionError, match="returned no `crowd_count_path`"):
        replay(ir(FOG), {**tools, "Crowd_Counting_in_Adverse_Weather":
                         lambda **_: {"density_map_path": "d.npy"}}, TOOLSET)
    with pytest.raises(ExecutionError, match="not a mapping"):
        replay(ir(FOG), {**tools, "GeoChat": lambda **_: "text"}, TOOLSET)
    reordered = [FOG[1], FOG[0], FOG[2]]
    with pytest.raises(ExecutionError, match=r"step 1 input `image_path`.*no step listed"):
        replay(ir(reordered), tools, TOOLSET)


# --------------------------------------------------------------------------- diagnostics


def _codes(value: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    return sorted((d.code, d.data.get("step"), d.data.get("key"))
                  for d in plancheck.check(value, TOOLSET).diagnostics)


def test_use_before_definition_when_the_listing_contradicts_the_numbers() -> None:
    listed_late = [FOG[1], FOG[0], FOG[2]]  # step 1 listed before the step 0 it reads
    found = _codes(listed_late)
    assert ("PC501", 1, "image_path") in found
    assert not any(code == "PC207" for code, _, _ in found)
    report = plancheck.check(listed_late, TOOLSET)
    (diagnostic,) = [d for d in report.diagnostics if d.code == "PC501"]
    assert diagnostic.message == ("step 1 uses `restored_image_path` of step 0 before step 0 "
                                  "runs")


def test_a_forward_reference_is_not_also_a_use_before_definition() -> None:
    forward = copy.deepcopy(FOG)
    forward[1]["inputs"]["image_path"] = "<GENERATED>-2-<contextual_description_path>"
    found = [c for c in _codes(forward) if c[0] in ("PC207", "PC501")]
    assert found == [("PC207", 1, "image_path")]


def test_an_output_produced_and_never_consumed_is_a_warning() -> None:
    report = plancheck.check(FOG, TOOLSET)
    assert report.ok
    (unused,) = [d for d in report.diagnostics if d.code == "PC502"]
    assert unused.severity.name == "WARNING"
    assert unused.data["step"] == 1 and unused.data["unused"] == ["crowd_count_path"]
    assert unused.data["used"] == ["density_map_path"]
    # The last step's outputs are the plan's results; a step none of whose outputs is used is
    # a separate result (PC503, reported only when selected), not an unused output.
    separate = [*FOG, _step(3, "Toponym_Detection", {"sentence": "news.txt"})]
    assert [c for c in _codes(separate) if c[0] == "PC502"] == [("PC502", 1, None)]


def test_results_that_reach_nothing_are_reported_when_selected(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    separate = [*FOG[:2], _step(2, "Toponym_Detection", {"sentence": "news.txt"})]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(separate))
    assert main(["check", str(path), "--select", "PC503", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)["diagnostics"]
    assert sorted(d["data"]["step"] for d in found if d["code"] == "PC503") == [0, 1]


def test_values_carry_provenance() -> None:
    trace = run(ir(FOG), TOOLSET)
    answer = trace.values[(2, "contextual_description_path")]
    assert answer.tool == "GeoChat" and answer.step == 2 and answer.type == "Description"
    assert [v.value for v in answer.inputs()] == ["fog.jpg", "question.txt"]
    assert trace.consumed[(0, "restored_image_path")][0][1] == "image_path"
