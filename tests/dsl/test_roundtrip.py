"""JSON -> IR -> DSL -> IR -> JSON is the identity on well-formed plans."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings

import plancheck
from plancheck.dsl.parser import parse_dsl
from plancheck.dsl.printer import plan_to_dsl, plan_to_json
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
