"""The checker in the loop: ``plancheck.repair`` for anyone's agent, and ``plancheck plan
--check`` end to end against a scripted loopback server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.cli import main
from plancheck.scoring.reference import score_completion
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.scripted_planning import GOLD, ScriptedPlanner, plan_text, wrong_tool
from tests.support.scripted_planning import write_tasks as write_task_file

GOOD = GOLD[102]
BAD_TOOL = wrong_tool(GOOD)


def bad_key(plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    damaged = json.loads(json.dumps(plan))
    step = damaged[-1]
    step["inputs"] = {"img_path": next(iter(step["inputs"].values()))}
    return damaged


# -------------------------------------------------------------------------- the Python API


def test_repair_feeds_diagnostics_back_until_the_plan_is_clean() -> None:
    seen: list[str] = []
    answers = iter([plan_text(bad_key(GOOD)), plan_text(GOOD)])

    def generate(feedback: str) -> str:
        seen.append(feedback)
        return next(answers)

    result = plancheck.repair(generate, BAD_TOOL, None, max_rounds=3)
    assert result.ok and result.rounds == 2 and len(seen) == 2
    assert score_completion(result.completion, GOOD).em
    assert [a.ok for a in result.attempts] == [False, False, True]
    first = seen[0]
    assert "PC201" in first and "/0/agent" in first  # the code and the JSON path
    assert "Weather_Degraded_Image_Restoration" in first  # did-you-mean
    assert "allowed:" in first and "Toponym_Detection" in first  # the allowed tools
    second = seen[1]
    assert "img_path" in second and "image_path" in second  # the unknown and allowed keys
    assert result.attempts[0].to_record()["diagnostics"][0]["code"] == "PC201"


def test_a_clean_plan_is_not_sent_back() -> None:
    def generate(feedback: str) -> str:
        raise AssertionError("a clean plan needs no repair")

    result = plancheck.repair(generate, GOOD, None, max_rounds=3)
    assert result.ok and result.rounds == 0 and result.attempts[0].feedback is None


def test_when_rounds_run_out_the_attempt_with_fewest_errors_is_kept() -> None:
    two_errors = wrong_tool(bad_key(GOOD))
    answers = iter([plan_text(two_errors), "no plan at all"])
    result = plancheck.repair(lambda feedback: next(answers), BAD_TOOL, None, max_rounds=2)
    assert not result.ok and result.rounds == 2
    assert result.attempts[0].errors == 1 and result.attempts[1].errors == 2
    assert result.completion == json.dumps(BAD_TOOL)  # the first attempt had the fewest
    assert result.attempts[-1].feedback is None  # no feedback after the last round


def test_errors_raised_by_generate_propagate_unchanged() -> None:
    class Unreachable(Exception):
        pass

    def generate(feedback: str) -> str:
        raise Unreachable("down")

    with pytest.raises(Unreachable):
        plancheck.repair(generate, BAD_TOOL, None, max_rounds=2)


def test_report_feedback_lists_each_allowed_set_once() -> None:
    plan = wrong_tool(GOOD)
    plan[1]["agent"] = "Crowd_Counting_v2"
    feedback = plancheck.check(plan).to_feedback()
    assert feedback.count("Toponym_Detection") == 1, feedback
    assert "allowed: as above" in feedback


# -------------------------------------------------------------------------- plancheck plan --check


@pytest.fixture
def tasks_file(tmp_path: Path) -> Path:
    return write_task_file(tmp_path / "tasks.jsonl")


def plan(server: ScriptedOpenAIServer, tasks: Path, out: Path, *extra: str) -> int:
    return main(["plan", "--model", "scripted", "--base-url", server.base_url, "--tasks",
                 str(tasks), "--out", str(out), "--no-progress", "--no-cache", "--timeout", "5",
                 "--concurrency", "1", *extra])


def records(out: Path) -> dict[int, dict[str, Any]]:
    lines = (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["task_id"]: json.loads(line) for line in lines}


def test_check_repairs_and_keeps_only_the_last_failed_attempt_in_context(
        tmp_path: Path, tasks_file: Path) -> None:
    def answer(task: int, kind: str, call: int) -> str | None:
        if task != 102:
            return None
        return {1: plan_text(BAD_TOOL), 2: plan_text(bad_key(GOOD))}.get(call)

    with ScriptedOpenAIServer(responder=ScriptedPlanner(answer)) as server:
        assert plan(server, tasks_file, tmp_path / "out", "--method", "dp", "--check") == 0
        requests = [r for r in server.requests if "harbor_fog" in json.dumps(r)]
    assert [len(r["messages"]) for r in requests] == [1, 3, 3]
    second, third = requests[1]["messages"], requests[2]["messages"]
    assert second[0] == third[0] == requests[0]["messages"][0]
    assert "_v2" in second[1]["content"] and "PC201" in second[2]["content"]
    assert "img_path" in third[1]["content"] and "_v2" not in json.dumps(third)
    record = records(tmp_path / "out")[102]
    assert score_completion(record["completion"], GOOD).em
    assert [a["ok"] for a in record["attempts"]] == [False, False, True]
    assert record["attempts"][0]["diagnostics"][0]["code"] == "PC201"
    assert record["attempts"][1]["feedback"] and record["calls"] == 3
    clean = records(tmp_path / "out")[101]
    assert [a["ok"] for a in clean["attempts"]] == [True] and clean["calls"] == 1


@pytest.mark.slow
def test_every_method_runs_with_the_checker(tmp_path: Path, tasks_file: Path) -> None:
    def answer(task: int, kind: str, call: int) -> str | None:
        # Every first answer of every method is wrong; repairs get the gold plan.
        if kind in ("plan", "rap-answer", "tot-plan") and task == 103:
            return plan_text(BAD_TOOL) if kind != "tot-plan" else " " + json.dumps(BAD_TOOL)
        return None

    small = ["--samples", "2", "--tot-generate", "2", "--tot-votes", "1", "--rap-rollouts", "1",
             "--rap-depth", "2", "--rap-subquestions", "1", "--rap-confidence", "1",
             "--rap-answer-rounds", "1", "--limit", "3"]
    for method in ("dp", "cot", "tot", "rap", "react"):
        with ScriptedOpenAIServer(responder=ScriptedPlanner(answer)) as server:
            out = tmp_path / method
            assert plan(server, tasks_file, out, "--method", method, "--check", *small) == 0
        record = records(out)[103]
        assert record["attempts"][0]["ok"] is False, method
        assert record["attempts"][-1]["ok"] is True, method
        assert score_completion(record["completion"], GOLD[103]).em, method


def test_cot_with_the_checker_votes_among_clean_samples(tmp_path: Path, tasks_file: Path
                                                       ) -> None:
    def answer(task: int, kind: str, call: int) -> str | None:
        # Two of three samples agree on a wrong plan; the checker rules them out.
        return plan_text(BAD_TOOL) if call in (1, 2) else plan_text(GOOD)

    with ScriptedOpenAIServer(responder=ScriptedPlanner(answer)) as server:
        assert plan(server, tasks_file, tmp_path / "out", "--method", "cot", "--samples", "3",
                    "--check", "--limit", "2") == 0
    record = records(tmp_path / "out")[102]
    assert record["details"]["selected_sample"] == 2 and record["calls"] == 1
    assert score_completion(record["completion"], GOOD).em


def test_transport_errors_are_never_fed_back_as_plan_errors(tmp_path: Path, tasks_file: Path
                                                           ) -> None:
    def answer(task: int, kind: str, call: int) -> str | Reply | None:
        if task != 102:
            return None
        if kind == "repair":
            return Reply(status=503, error="overloaded", retry_after_s=0)
        return plan_text(BAD_TOOL)

    with ScriptedOpenAIServer(responder=ScriptedPlanner(answer)) as server:
        code = plan(server, tasks_file, tmp_path / "out", "--method", "dp", "--check",
                    "--max-retries", "1")
        bodies = json.dumps(server.requests)
    assert code == 1
    assert "overloaded" not in bodies and "503" not in bodies and "TransportError" not in bodies
    record = records(tmp_path / "out")[102]
    assert record["error"].startswith("TransportError")
    assert record["completion"] == plan_text(BAD_TOOL)  # the best attempt so far is kept
    assert len(record["attempts"]) == 1 and record["attempts"][0]["ok"] is False


def test_a_model_that_repeats_itself_is_not_asked_again() -> None:
    calls: list[str] = []

    def generate(feedback: str) -> str:
        calls.append(feedback)
        return plan_text(BAD_TOOL)

    result = plancheck.repair(generate, plan_text(BAD_TOOL), None, max_rounds=5)
    assert len(calls) == 1 and result.rounds == 1 and not result.ok
