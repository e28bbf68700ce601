"""The toolset compiled to a JSON Schema, and ``plancheck plan --schema`` against a scripted
loopback server (including one that refuses json_schema)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings

from plancheck.corpus.builtin import builtin_toolset
from plancheck.planners.schema import plan_schema, response_format
from plancheck.scoring.reference import score_completion
from tests.strategies import well_typed_plan
from tests.support.openai_server import ScriptedOpenAIServer
from tests.support.scripted_planning import GOLD, ScriptedPlanner
from tests.support.scripted_planning import write_tasks as write_task_file

SCHEMA = plan_schema(builtin_toolset())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def valid(plan: Any) -> bool:
    return VALIDATOR.is_valid({"structured_plan": plan})


def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    names = {s["properties"]["agent"]["enum"][0]
             for s in SCHEMA["properties"]["structured_plan"]["items"]["anyOf"]}
    assert names == set(builtin_toolset().tools)


@pytest.mark.parametrize("task", sorted(GOLD))
def test_clean_plans_are_valid(task: int) -> None:
    assert valid(GOLD[task])


@settings(max_examples=60, deadline=None)
@given(well_typed_plan())
def test_every_well_typed_plan_is_valid(plan: Any) -> None:
    assert valid(plan)


def _mutated(change: str) -> list[dict[str, Any]]:
    plan = json.loads(json.dumps(GOLD[102]))
    if change == "tool":
        plan[0]["agent"] = "Weather_Restoration"
    elif change == "key":
        plan[1]["inputs"] = {"img_path": plan[1]["inputs"]["image_path"]}
    elif change == "missing key":
        plan[0]["inputs"] = {}
    elif change == "reference key":
        plan[1]["inputs"]["image_path"] = "<GENERATED>-0-<restored_image>"
    elif change == "reference form":
        plan[1]["inputs"]["image_path"] = "<GENERATED>-0-restored_image_path"
    elif change == "output":
        plan[0]["outputs"] = ["restored_path"]
    elif change == "dependence":
        plan[1]["dependence"] = [0, 1]
    elif change == "field":
        del plan[0]["dependence_content"]
    return plan


@pytest.mark.parametrize("change", ["tool", "key", "missing key", "reference key",
                                    "reference form", "output", "dependence", "field"])
def test_what_the_schema_rules_out(change: str) -> None:
    assert not valid(_mutated(change))


@pytest.mark.slow
def test_release_gold_plans_that_the_checker_accepts_are_valid(
        gold_tasks: list[dict[str, Any]]) -> None:
    import plancheck

    clean = [t for t in gold_tasks if plancheck.check(t["structured_plan"]).ok]
    assert len(clean) >= 220
    invalid = [t["task_id"] for t in clean if not valid(t["structured_plan"])]
    assert invalid == []


def test_response_format_wraps_the_schema() -> None:
    fmt = response_format(builtin_toolset())
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == SCHEMA


def _json_answer(task: int, kind: str, call: int) -> str | None:
    if kind == "plan":
        return json.dumps({"reasoning": "the tools the task names", "structured_plan": GOLD[task]})
    return None


@pytest.mark.parametrize("rejecting", [False, True])
def test_schema_flag_end_to_end(tmp_path: Path, rejecting: bool) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl")
    out = tmp_path / "out"
    from plancheck.cli import main

    with ScriptedOpenAIServer(responder=ScriptedPlanner(_json_answer),
                              reject_json_schema=rejecting) as server:
        code = main(["plan", "--method", "dp", "--model", "scripted", "--base-url",
                     server.base_url, "--tasks", str(tasks), "--out", str(out), "--no-progress",
                     "--no-cache", "--concurrency", "1", "--schema"])
        kinds = [(r.get("response_format") or {}).get("type") for r in server.requests]
        prompt = server.requests[0]["messages"][0]["content"]
    assert code == 0
    assert '"structured_plan"' in prompt  # the prompt asks for the JSON object too
    records = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    assert all(score_completion(r["completion"], GOLD[r["task_id"]]).em for r in records)
    if rejecting:
        # Refused once, then json_object for that task and every later one.
        assert kinds == ["json_schema", "json_object", "json_object", "json_object",
                         "json_object"]
        assert {r["details"]["response_format"] for r in records} == {"json_object"}
    else:
        assert kinds == ["json_schema"] * 4
        assert server.requests[0]["response_format"]["json_schema"]["schema"] == SCHEMA


def test_a_server_that_fails_json_schema_with_a_500_falls_back(tmp_path: Path) -> None:
    """llama-cpp-python's server answers an unsupported json_schema with HTTP 500."""
    from plancheck.cli import main
    from tests.support.openai_server import Reply

    script = ScriptedPlanner(_json_answer)

    def respond(body: dict[str, Any]) -> Reply:
        if (body.get("response_format") or {}).get("type") == "json_schema":
            return Reply(status=500, error="1 validation error: response_format.type: Input "
                                           "should be 'text' or 'json_object'")
        return script(body)

    tasks = write_task_file(tmp_path / "tasks.jsonl")
    with ScriptedOpenAIServer(responder=respond) as server:
        code = main(["plan", "--method", "dp", "--model", "scripted", "--base-url",
                     server.base_url, "--tasks", str(tasks), "--out", str(tmp_path / "out"),
                     "--no-progress", "--no-cache", "--concurrency", "1", "--schema",
                     "--max-retries", "0", "--limit", "2"])
        kinds = [(r.get("response_format") or {}).get("type") for r in server.requests]
    assert code == 0 and kinds == ["json_schema", "json_object", "json_object"]
