"""The fused checker against the phases run one after the other.

``check_json_plan`` settles clean steps straight from their JSON and sends every other step
through the phases' own per-step checks; ``check_plan`` runs those per-step checks in one
pass over a lowered plan. Both must report exactly what lowering followed by the registered
rules run one phase after the other (``tests/support/phased.py``) reports: the same
diagnostics (codes, messages, labels and their spans, notes, help, data, suggestions), in the
same order, and the same canonical form. Checked on generated plans, on the built-in
mutations of plans (``plancheck.testing.completions``), on random edits of their JSON, and on
the release's gold plans.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancheck.checks.registry import optional_codes
from plancheck.compiler.checker import check_json_plan
from plancheck.compiler.driver import CheckOptions, check_plan
from plancheck.compiler.lowering import lower_plan
from plancheck.diagnostics.codes import CODES
from plancheck.diagnostics.limits import MAX_FIELDS, plan_limit
from plancheck.diagnostics.model import Diagnostic, Severity
from plancheck.diagnostics.span import Span
from plancheck.interp.canonical import form_and_completeness
from plancheck.ir.nodes import Plan, Toolset
from plancheck.scoring.metrics import PredictionAnalyzer, compact_entry
from tests.strategies import TOOL_NAMES, TOOLSET, json_values, linked_plan, well_typed_plan
from tests.support.completions import MUTATIONS, make_completion
from tests.support.phased import check_phase_by_phase

ROOT = Span("<test>", pointer="")
_UNKNOWN_TERM = re.compile(r"\?\d+")  # an unknown value's fresh token
_DIGEST = re.compile(r"#[0-9a-f]{32}")  # a long sub-term, written as its digest


def phases(plan: Plan, toolset: Toolset, *, types: bool = True, interpret: bool = True,
           unreachable: bool = False, kept: frozenset[str] = frozenset()) -> list[Diagnostic]:
    """The rules run one phase after the other."""
    return check_phase_by_phase(plan, toolset, types=types, interpret=interpret,
                                unreachable=unreachable, kept=kept)


def _form(form: tuple[str, ...] | None) -> list[str] | None:
    """A form with each unknown value's token blanked (each run draws fresh ones), and the
    digests of long terms too (the digest of a term holding an unknown differs as well)."""
    if form is None:
        return None
    return sorted(_DIGEST.sub("#", _UNKNOWN_TERM.sub("?", term)) for term in form)


def assert_checked_alike(value: list[Any], toolset: Toolset = TOOLSET) -> None:
    plan, expected = lower_plan(value, ROOT)
    assert plan is not None
    general = phases(plan, toolset)
    # One pass over the lowered plan, under each set of options that changes the phases run.
    assert check_plan(plan, toolset) == general
    # (every code selected: the rules off by default run too, PC210's for an empty argument)
    assert check_plan(plan, toolset, CheckOptions(select=("PC",))) == phases(
        plan, toolset, unreachable=True, kept=optional_codes()
    )
    assert check_plan(plan, toolset, CheckOptions(types=False)) == phases(
        plan, toolset, types=False
    )
    assert check_plan(plan, toolset, CheckOptions(interpret=False)) == phases(
        plan, toolset, interpret=False
    )
    # One pass over the JSON.
    expected += general
    checked = check_json_plan(value, toolset, ROOT, form=True)
    assert checked.diagnostics() == expected
    assert check_json_plan(value, toolset, ROOT).codes() == [d.code for d in expected]
    form, complete = form_and_completeness(plan, toolset)
    assert checked.complete == complete
    if complete:  # no unknown value: the very same terms
        assert checked.form == form
    else:
        assert _form(checked.form) == _form(form)


# --------------------------------------------------------------------------- random edits

_ALIASES = {"agent": "agent_name", "step": "step_index", "dependence": "dependencies",
            "dependence_content": "dependency_content", "inputs": "input"}


@st.composite
def edited(draw: st.DrawFn, plan: list[dict[str, Any]]) -> list[Any]:
    """``plan`` with a few random edits of its JSON: what a model gets wrong, and worse."""
    plan = copy.deepcopy(plan)
    for _ in range(draw(st.integers(0, 4))):
        if not plan:
            break
        position = draw(st.integers(0, len(plan) - 1))
        step = plan[position]
        if not isinstance(step, dict):
            continue
        edit = draw(st.sampled_from([
            "tool", "unknown tool", "input key", "drop input", "literal", "reference",
            "malformed reference", "outputs", "dependence", "content", "number",
            "field type", "alias", "extra field", "drop field", "not a step", "swap",
            "duplicate", "value",
        ]))
        inputs = step.get("inputs")
        if edit == "tool":
            step["agent"] = draw(st.sampled_from(TOOL_NAMES))
        elif edit == "unknown tool":
            step["agent"] = draw(st.sampled_from(["Foggy_Detection", "geochat", " ", ""]))
        elif edit == "input key" and isinstance(inputs, dict) and inputs:
            key = draw(st.sampled_from(sorted(inputs)))
            inputs[draw(st.sampled_from([key.upper(), key + "s", "path", "a/b~c"]))] = (
                inputs.pop(key)
            )
        elif edit == "drop input" and isinstance(inputs, dict) and inputs:
            del inputs[draw(st.sampled_from(sorted(inputs)))]
        elif edit == "literal" and isinstance(inputs, dict) and inputs:
            inputs[draw(st.sampled_from(sorted(inputs)))] = draw(st.sampled_from([
                "data/x.tif", "data/x.txt", "x.json", "no_extension", "GENERATED", 3, 2.5,
                None, True, ["a.tif"], {"k": 1},
            ]))
        elif edit == "reference" and isinstance(inputs, dict) and inputs:
            number = draw(st.integers(-1, len(plan) + 1))
            key = draw(st.sampled_from(
                ["result_path", "restored_image_path", "detected_objects_path", "x"]
                + [o for t in TOOL_NAMES[:4] for o in TOOLSET.tools[t].output_names]
            ))
            inputs[draw(st.sampled_from(sorted(inputs)))] = f"<GENERATED>-{number}-<{key}>"
        elif edit == "malformed reference" and isinstance(inputs, dict) and inputs:
            inputs[draw(st.sampled_from(sorted(inputs)))] = draw(st.sampled_from([
                "<GENERATED>-0", "<GENERATED>-x-<y>", "GENERATED-1-<a>", "<generated>-0-<b>",
                "<GENERATED>-0-<a>-<b>",
            ]))
        elif edit == "outputs":
            outputs = step.get("outputs")
            if isinstance(outputs, list):
                step["outputs"] = draw(st.sampled_from(
                    [outputs[::-1], outputs[1:], [*outputs, "extra"], [], "x", [1]]
                ))
        elif edit == "dependence":
            step["dependence"] = draw(st.sampled_from(
                [[-1], [0], [0, 1], [position], 0, [0.0], ["0"], [True], None, []]
            ))
        elif edit == "content":
            step["dependence_content"] = draw(st.sampled_from(
                [None, {}, {"0": ["result_path"]}, {" 0": []}, {"-1": []}, {"x": []},
                 {"0": "a"}, {"0": [1]}, [], {"0": ["a"], "00": ["b"]}]
            ))
        elif edit == "number":
            step["step"] = draw(st.sampled_from([0, 1, position + 1, 99, -1, "1", 1.0, None]))
        elif edit == "field type":
            field = draw(st.sampled_from(sorted(_ALIASES)))
            step[field] = draw(json_values)
        elif edit == "alias":
            field = draw(st.sampled_from(sorted(_ALIASES)))
            if field in step:
                step[_ALIASES[field]] = step.pop(field)
        elif edit == "extra field":
            step[draw(st.sampled_from(["reason", "thought", "a/b"]))] = "..."
        elif edit == "drop field":
            step.pop(draw(st.sampled_from(sorted(_ALIASES))), None)
        elif edit == "not a step":
            plan[position] = draw(json_values)
        elif edit == "swap" and len(plan) > 1:
            other = draw(st.integers(0, len(plan) - 1))
            plan[position], plan[other] = plan[other], plan[position]
        elif edit == "duplicate":
            plan.insert(position, copy.deepcopy(step))
        elif edit == "value" and isinstance(inputs, dict):
            inputs[draw(st.text(max_size=5))] = draw(json_values)
    return plan


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_edited_plans_are_checked_alike(data: st.DataObject) -> None:
    plan = data.draw(st.one_of(well_typed_plan(max_steps=5), linked_plan(max_steps=5)))
    assert_checked_alike(data.draw(edited(plan)))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=st.one_of(well_typed_plan(max_steps=6), linked_plan(max_steps=6)))
def test_generated_plans_are_checked_alike(plan: list[dict[str, Any]]) -> None:
    assert_checked_alike(plan)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=linked_plan(max_steps=5), seed=st.integers(0, 10**6))
def test_built_in_mutations_are_checked_alike(plan: list[dict[str, Any]], seed: int) -> None:
    for mutation in MUTATIONS:
        mutated = json.loads(make_completion(plan, mutation, "raw", seed=seed))
        if isinstance(mutated, list):
            assert_checked_alike(mutated)


def test_a_plan_with_empty_arguments_is_checked_alike() -> None:
    """Empty strings, under an input of the tool and under keys it lacks (``""`` among them),
    with every code selected: the off-by-default rule of empty arguments (PC210) runs in the
    fused checker and in the phase-by-phase oracle alike (found by the property above)."""
    for inputs in ({"image_path": ""}, {"": ""}, {"foo": " "}, {"": "x"}):
        assert_checked_alike([{"agent": "Anomaly_Detection_Forest", "step": 0,
                               "dependence": [-1], "dependence_content": None,
                               "inputs": inputs, "outputs": ["anomaly_map_path"]}])


@settings(max_examples=60, deadline=None)
@given(value=st.lists(json_values, max_size=4))
def test_arrays_of_anything_are_checked_alike(value: list[Any]) -> None:
    assert_checked_alike(value)


@pytest.mark.slow
def test_the_release_gold_plans_and_their_mutations_are_checked_alike(
    gold_tasks: list[dict[str, Any]],
) -> None:
    for number, task in enumerate(gold_tasks):
        gold = task["structured_plan"]
        assert_checked_alike(gold)
        for mutation in MUTATIONS[number % 3 :: 3]:
            mutated = json.loads(make_completion(gold, mutation, "raw", seed=number))
            if isinstance(mutated, list):
                assert_checked_alike(mutated)


# --------------------------------------------------------------------------- the analyzer


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_static_results_are_the_pipelines(data: st.DataObject) -> None:
    """The batch analyzer's static result (validity, lint codes, per-item entries) is what
    lowering and checking report, whether cached or not, and however often it is asked."""
    prediction = data.draw(edited(data.draw(linked_plan(max_steps=4))))
    plan, diagnostics = lower_plan(prediction, Span("<prediction>", pointer=""))
    assert plan is not None
    diagnostics += check_plan(plan, TOOLSET)
    kept = [d for d in diagnostics if CODES[d.code].default_enabled]
    valid = not any(d.severity is Severity.ERROR for d in kept)
    codes = tuple(dict.fromkeys(d.code for d in kept))
    entries = ", ".join(json.dumps(compact_entry(d), ensure_ascii=False) for d in kept)
    for cache_size in (0, 8):
        for render in (False, True):
            analyzer = PredictionAnalyzer(TOOLSET, cache_size=cache_size, entries=render)
            for _ in range(2):
                result = analyzer.static(prediction)
                assert (result.valid, result.codes) == (valid, codes)
                assert result.entries == (entries if render else None)


def _wide_step(number: int, inputs: int, *, content: int = 0, clean: bool = True
               ) -> dict[str, Any]:
    """A step of ``inputs`` literal inputs (and ``content`` numbers in its dependence
    content); not clean (lowered field by field) when ``clean`` is false."""
    step: dict[str, Any] = {
        "agent": TOOL_NAMES[0], "step": number, "dependence": [-1],
        "dependence_content": {str(k): [] for k in range(content)} if content else None,
        "inputs": {f"k{i}": "data/a.txt" for i in range(inputs)}, "outputs": []}
    if not clean:
        step["note"] = "an extra field"
    return step


@pytest.mark.slow
@pytest.mark.parametrize("shape", [
    "clean at the limit", "clean past the limit", "content past the limit",
    "unclean after wide clean steps", "unclean and wide", "unclean at the limit"])
def test_work_limits_are_counted_as_plan_limit_counts_them(shape: str) -> None:
    """``check_json_plan`` counts a clean step's fields as it reads it and the whole plan's
    before it lowers a step that is not clean: the plan gets ``PC006`` alone exactly when
    ``plan_limit`` finds one, with the same count."""
    room = MAX_FIELDS - 2 * 7  # two clean steps: six fields and a dependence of one each
    plans = {
        "clean at the limit": [_wide_step(0, room // 2), _wide_step(1, room - room // 2)],
        "clean past the limit": [_wide_step(0, room // 2), _wide_step(1, room - room // 2 + 1)],
        "content past the limit": [_wide_step(0, room // 2, content=room - room // 2 + 1),
                                   _wide_step(1, 0)],
        "unclean after wide clean steps": [_wide_step(0, room), _wide_step(1, 5, clean=False)],
        "unclean and wide": [_wide_step(0, 1, clean=False), _wide_step(1, room)],
        "unclean at the limit": [_wide_step(0, room - 1, clean=False), _wide_step(1, 0)],
    }
    value = plans[shape]
    expected = plan_limit(value, ROOT)
    diagnostics = check_json_plan(value, TOOLSET, ROOT).diagnostics()
    if expected is None:
        assert "PC006" not in [d.code for d in diagnostics]
        assert shape.endswith("at the limit")
    else:
        assert [_described(d) for d in diagnostics] == [_described(expected)]
        assert not shape.endswith("at the limit")


def _described(diagnostic: Diagnostic) -> tuple[object, ...]:
    return (diagnostic.code, diagnostic.message, diagnostic.data, diagnostic.notes,
            [(label.span, label.message) for label in diagnostic.labels])
