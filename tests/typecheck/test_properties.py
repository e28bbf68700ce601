"""Properties of the type checker: well-typed plans check clean, and each single mutation of
one yields exactly the diagnostic it should."""

from __future__ import annotations

import copy
from difflib import SequenceMatcher
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import plancheck
from plancheck.ir.lattice import Compat
from plancheck.ir.nodes import ToolSignature
from tests.strategies import REFERENCE, TOOLSET, linked_plan, literal_for, well_typed_plan

SETTINGS = settings(max_examples=120, deadline=None)
Plan = list[dict[str, Any]]


def errors(plan: Plan) -> list[tuple[str, Any, Any]]:
    """(code, step, key) of every error plancheck reports."""
    report = plancheck.check(plan, TOOLSET)
    return sorted((d.code, d.data.get("step"), d.data.get("key")) for d in report.errors)


def reference(step: int, key: str) -> str:
    return f"<GENERATED>-{step}-<{key}>"


def rederive(step: dict[str, Any]) -> None:
    """Rewrite a step's dependence fields from its references (mutations change only what
    they mean to change)."""
    content: dict[str, list[str]] = {}
    for value in step["inputs"].values():
        match = REFERENCE.match(value) if isinstance(value, str) else None
        if match:
            keys = content.setdefault(match.group(1), [])
            if match.group(2) not in keys:
                keys.append(match.group(2))
    step["dependence"] = sorted(int(k) for k in content) or [-1]
    step["dependence_content"] = content or None


@SETTINGS
@given(well_typed_plan() | linked_plan())
def test_well_typed_plans_check_clean(plan: Plan) -> None:
    assert errors(plan) == []


@SETTINGS
@given(linked_plan(), st.data())
def test_rebinding_to_an_incompatible_output_is_a_type_error(plan: Plan,
                                                             data: st.DataObject) -> None:
    lattice = TOOLSET.lattice
    sites = [
        (consumer, param.name, producer["step"], output.name)
        for consumer in plan
        for param in TOOLSET.tools[consumer["agent"]].inputs
        for producer in plan[:consumer["step"]]
        for output in TOOLSET.tools[producer["agent"]].outputs
        if lattice.compat(output, param.type) is Compat.INCOMPATIBLE
    ]
    assume(sites)
    consumer, key, producer, output = data.draw(st.sampled_from(sites))
    tool = TOOLSET.tools[consumer["agent"]]
    consumer["inputs"][key] = reference(producer, output)
    for other, value in list(consumer["inputs"].items()):
        match = REFERENCE.match(value) if isinstance(value, str) else None
        if other != key and match and int(match.group(1)) != producer:
            # The pool allows one predecessor per step: keep the mutation single.
            param = tool.input(other)
            assert param is not None
            consumer["inputs"][other] = data.draw(literal_for(param.type))
    rederive(consumer)
    assert errors(plan) == [("PC301", consumer["step"], key)]


@SETTINGS
@given(well_typed_plan(), st.data())
def test_a_reference_pointing_forward_is_reported_once(plan: Plan, data: st.DataObject) -> None:
    consumer = data.draw(st.sampled_from(plan))
    key = data.draw(st.sampled_from(sorted(consumer["inputs"])))
    target = data.draw(st.sampled_from(plan[consumer["step"]:]))
    output = data.draw(st.sampled_from(TOOLSET.tools[target["agent"]].output_names))
    consumer["inputs"][key] = reference(target["step"], output)
    assert errors(plan) == [("PC207", consumer["step"], key)]


@SETTINGS
@given(linked_plan(), st.data())
def test_adding_or_dropping_a_dependence_entry(plan: Plan, data: st.DataObject) -> None:
    step = data.draw(st.sampled_from(plan))
    declared = [d for d in step["dependence"] if d != -1]
    choices = ["add"] if step["step"] > len(declared) else []
    if declared:
        choices.append("drop")
    assume(choices)
    if data.draw(st.sampled_from(choices)) == "drop":
        dropped = data.draw(st.sampled_from(declared))
        step["dependence"] = [d for d in declared if d != dropped]
    else:
        extra = data.draw(st.sampled_from([n for n in range(step["step"]) if n not in declared]))
        step["dependence"] = sorted([*declared, extra])
    assert errors(plan) == [("PC401", step["step"], None)]


@SETTINGS
@given(linked_plan(), st.data())
def test_adding_or_dropping_a_dependence_content_key(plan: Plan, data: st.DataObject) -> None:
    consumers = [s for s in plan if s["dependence_content"]]
    assume(consumers)
    step = data.draw(st.sampled_from(consumers))
    ((producer, keys),) = step["dependence_content"].items()
    unused = [k for k in TOOLSET.tools[plan[int(producer)]["agent"]].output_names
              if k not in keys]
    if unused and data.draw(st.booleans()):
        keys.append(data.draw(st.sampled_from(unused)))
    else:
        keys.remove(data.draw(st.sampled_from(keys)))
    assert errors(plan) == [("PC402", step["step"], None)]


def look_alikes(tool: ToolSignature) -> list[ToolSignature]:
    """Tools a planner could mistake for ``tool``: same category or a similar description,
    but other input keys."""
    return [
        other for other in TOOLSET.tools.values()
        if other is not tool and set(other.input_names) != set(tool.input_names) and (
            other.category == tool.category or SequenceMatcher(
                None, other.description.lower(), tool.description.lower()).ratio() >= 0.5)
    ]


def test_the_pool_has_look_alikes() -> None:
    assert sum(1 for tool in TOOLSET.tools.values() if look_alikes(tool)) >= 15


@pytest.mark.slow
@SETTINGS
@given(well_typed_plan(), st.data())
def test_swapping_a_tool_for_a_look_alike_reports_its_inputs(plan: Plan,
                                                            data: st.DataObject) -> None:
    candidates = [s for s in plan if look_alikes(TOOLSET.tools[s["agent"]])]
    assume(candidates)
    step = data.draw(st.sampled_from(candidates))
    swapped = data.draw(st.sampled_from(look_alikes(TOOLSET.tools[step["agent"]])))
    original = copy.deepcopy(step)
    step["agent"] = swapped.name
    step["outputs"] = list(swapped.output_names)
    found = errors(plan)
    given_keys = set(original["inputs"])
    unknown = {k for code, s, k in found if code == "PC202" and s == step["step"]}
    missing = {k for code, s, k in found if code == "PC203" and s == step["step"]}
    assert unknown == given_keys - set(swapped.input_names)
    assert missing <= {p.name for p in swapped.inputs if p.required} - given_keys
    assert unknown or missing
    consumers = {s["step"] for s in plan if any(
        REFERENCE.match(v) and int(REFERENCE.match(v).group(1)) == step["step"]  # type: ignore[union-attr]
        for v in s["inputs"].values() if isinstance(v, str))}
    for code, at, _ in found:
        # Besides the inputs, only the uses of the swapped step's results can go wrong.
        assert (code in ("PC202", "PC203", "PC301") and at == step["step"]) or (
            code in ("PC208", "PC301") and at in consumers), (code, at, found)
