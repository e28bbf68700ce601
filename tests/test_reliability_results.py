"""Results that must not mislead: RAP re-sampling through the response cache, RAP's truncated
flag, model-free runs filed under a model, contradictory flags, duplicate inputs, bootstrap
seeds, transport failures counted as the model's."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main
from plancheck.scoring.reference import score_completion
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.samples import FOG_CHAIN
from tests.support.scripted_planning import GOLD, ScriptedPlanner, plan_text
from tests.support.scripted_planning import write_tasks as write_task_file

RAP_SMALL = ["--rap-rollouts", "1", "--rap-depth", "2", "--rap-subquestions", "1",
             "--rap-confidence", "1", "--rap-answer-rounds", "3"]


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in
            (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]


def _rap(server: ScriptedOpenAIServer, tasks: Path, out: Path, *extra: str) -> int:
    return main(["plan", "--method", "rap", "--model", "scripted", "--base-url",
                 server.base_url, "--tasks", str(tasks), "--out", str(out), "--no-progress",
                 "--limit", "1", "--timeout", "5", *RAP_SMALL, *extra])


def test_rap_resamples_a_failed_answer_even_with_the_response_cache(tmp_path: Path) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl")
    script = ScriptedPlanner()
    asked: dict[str, int] = {}

    def first_round_fails(body: dict[str, Any]) -> Reply:
        if script.kind_of(body) != "rap-answer":
            return script(body)
        prompt = json.dumps(body["messages"])
        asked[prompt] = asked.get(prompt, 0) + 1
        # The first round of answers to a sub-question holds no plan; fresh samples do.
        if asked[prompt] == 1:
            return Reply(content="I am not sure.")
        return Reply(content=plan_text(GOLD[script.task_of(body)]))

    with ScriptedOpenAIServer(responder=first_round_fails) as server:
        assert _rap(server, tasks, tmp_path / "out") == 0  # the cache is on (OUT/cache.sqlite)
    assert asked and max(asked.values()) >= 2, "the second round was answered from the cache"
    (record,) = _records(tmp_path / "out")
    assert score_completion(record["completion"], GOLD[record["task_id"]]).em


def test_rap_reports_a_truncated_answer(tmp_path: Path) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl")

    def cut(task: int, kind: str, call: int) -> Reply | None:
        if kind != "rap-answer":
            return None
        return Reply(content=plan_text(GOLD[task]), finish_reason="length")

    with ScriptedOpenAIServer(responder=ScriptedPlanner(cut)) as server:
        assert _rap(server, tasks, tmp_path / "out", "--no-cache") == 0
    (record,) = _records(tmp_path / "out")
    assert record["truncated"] is True
