"""The five planning paradigms, end to end through ``plancheck plan``, against a real loopback
server speaking the OpenAI chat-completions protocol with scripted answers (no network)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main
from plancheck.scoring.reference import score_completion
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.scripted_planning import GOLD, TASKS, ScriptedPlanner, plan_text, wrong_tool
from tests.support.scripted_planning import write_tasks as write_task_file

# Small search settings keep every method to a handful of requests per task.
SMALL = ["--samples", "3", "--tot-generate", "3", "--tot-votes", "2", "--rap-rollouts", "2",
         "--rap-depth", "3", "--rap-subquestions", "2", "--rap-confidence", "3",
         "--rap-answer-rounds", "2"]
PAPER_TEMPERATURE = {"dp": 0.0, "cot": 0.0, "react": 0.0, "tot": 0.5, "rap": 0.5}
RECORD_FIELDS = {"id", "task_id", "method", "model", "completion", "attempts", "calls",
                 "prompt_tokens", "completion_tokens", "latency_s", "cost_usd", "truncated",
                 "error"}


@pytest.fixture
def tasks_file(tmp_path: Path) -> Path:
    return write_task_file(tmp_path / "tasks.jsonl")


def plan(server: ScriptedOpenAIServer, tasks: Path, out: Path, method: str, *extra: str) -> int:
    return main(["plan", "--method", method, "--model", "scripted", "--base-url",
                 server.base_url, "--tasks", str(tasks), "--out", str(out), "--no-progress",
                 "--no-cache", "--concurrency", "2", "--timeout", "5", *SMALL, *extra])


def records(out: Path) -> list[dict[str, Any]]:
    lines = (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def em(record: dict[str, Any]) -> bool:
    return score_completion(record["completion"], GOLD[record["task_id"]]).em


@pytest.mark.parametrize("method", ["dp", "cot", "tot", "rap", "react"])
def test_every_method_plans_every_task(tmp_path: Path, tasks_file: Path, method: str) -> None:
    script = ScriptedPlanner()
    with ScriptedOpenAIServer(responder=script) as server:
        assert plan(server, tasks_file, tmp_path / "out", method) == 0
        requests = server.requests
    got = records(tmp_path / "out")
    assert sorted(r["task_id"] for r in got) == sorted(GOLD)
    for record in got:
        assert record.keys() >= RECORD_FIELDS
        assert record["id"] == str(record["task_id"])
        assert (record["method"], record["model"], record["error"]) == (method, "scripted", None)
        assert record["calls"] >= 1 and record["prompt_tokens"] > 0
        assert em(record), record["completion"]
    assert {r["temperature"] for r in requests} == {PAPER_TEMPERATURE[method]}
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["method"] == method and config["temperature"] == PAPER_TEMPERATURE[method]


def test_dp_sends_one_request_with_the_whole_tool_list(tmp_path: Path, tasks_file: Path
                                                      ) -> None:
    with ScriptedOpenAIServer(responder=ScriptedPlanner()) as server:
        assert plan(server, tasks_file, tmp_path / "out", "dp", "--limit", "1") == 0
        (request,) = server.requests
    prompt = request["messages"][0]["content"]
    from plancheck.corpus.builtin import builtin_toolset

    assert all(name in prompt for name in builtin_toolset().tools)
    assert "Examples:" not in prompt and TASKS[0]["task_desc"] in prompt
    assert len(request["messages"]) == 1 and "n" not in request


def test_cot_votes_for_the_plan_most_samples_agree_on(tmp_path: Path, tasks_file: Path) -> None:
    def answer(task: int, kind: str, call: int) -> str | None:
        # The first sample of every task is wrong; the other two agree on the gold plan.
        return plan_text(wrong_tool(GOLD[task])) if call == 1 else None

    with ScriptedOpenAIServer(responder=ScriptedPlanner(answer)) as server:
        assert plan(server, tasks_file, tmp_path / "out", "cot", "--concurrency", "1") == 0
        assert {r["n"] for r in server.requests} == {3}
        assert "Examples:" in server.requests[0]["messages"][0]["content"]
    for record in records(tmp_path / "out"):
        assert em(record)
        assert (record["details"]["votes"], record["details"]["selected_sample"]) == (2, 1)


def test_tot_searches_two_steps_with_critic_votes(tmp_path: Path, tasks_file: Path) -> None:
    script = ScriptedPlanner()
    with ScriptedOpenAIServer(responder=script) as server:
        assert plan(server, tasks_file, tmp_path / "out", "tot", "--limit", "1") == 0
        requests = server.requests
    # Per task: generate (step 0), vote, generate (step 1, after the marker), vote.
    assert [r["n"] for r in requests] == [3, 2, 3, 2]
    assert requests[0]["stop"] and "stop" not in requests[2]
    assert requests[2]["messages"][0]["content"].rstrip().endswith("The structured task plan is:")
    assert script.kinds["vote"] == 4  # 2 votes asked twice
    (record,) = records(tmp_path / "out")
    assert [s["votes"] for s in record["details"]["search"]] == [[2, 0, 0], [2, 0, 0]]


def test_rap_searches_sub_questions_with_usefulness_and_confidence(tmp_path: Path,
                                                                   tasks_file: Path) -> None:
    script = ScriptedPlanner()
    with ScriptedOpenAIServer(responder=script) as server:
        assert plan(server, tasks_file, tmp_path / "out", "rap", "--limit", "1") == 0
        requests = server.requests
    assert script.kinds["rap-question"] >= 1 and script.kinds["rap-useful"] >= 1
    assert script.kinds["rap-answer"] >= 1
    confidence = [r for r in requests if r["messages"][0]["content"].rstrip().endswith(":")
                  and r.get("n") == 3]
    assert confidence, "answers are sampled confidence_samples at a time"
    (record,) = records(tmp_path / "out")
    # The mean reward on the path root (0: nothing answered) -> terminal child (r0 = r1 = 1).
    assert record["details"]["best_reward"] == pytest.approx(0.5)
    assert record["completion"].startswith("Answer 4.1:")


def test_react_prompt_asks_for_thought_action_observation(tmp_path: Path, tasks_file: Path
                                                         ) -> None:
    with ScriptedOpenAIServer(responder=ScriptedPlanner()) as server:
        assert plan(server, tasks_file, tmp_path / "out", "react", "--limit", "1") == 0
        prompt = server.requests[0]["messages"][0]["content"]
    for word in ("Thought:", "Action:", "Observation:", "Examples:"):
        assert word in prompt
    assert '"Toponym_Detection"' in prompt  # the tool list goes in as JSON for ReAct


def test_a_prompts_file_laid_out_like_the_reference_replaces_the_templates(
        tmp_path: Path, tasks_file: Path) -> None:
    prompts = tmp_path / "prompts.yaml"
    prompts.write_text(
        "DIRECT_PLANNING:\n"
        "  system_prompt: |\n"
        "    CUSTOM SYSTEM {{literal}} tools={agents_desc} {examples}\n"
        "  user_prompt: |\n"
        "    CUSTOM TASK {task_desc}\n"
        "  examples: []\n", encoding="utf-8")
    with ScriptedOpenAIServer(responder=ScriptedPlanner()) as server:
        assert plan(server, tasks_file, tmp_path / "out", "dp", "--limit", "1",
                    "--prompts", str(prompts)) == 0
        prompt = server.requests[0]["messages"][0]["content"]
    assert prompt.startswith("CUSTOM SYSTEM {literal} tools={'Temporal_High_Resolution")
    assert f"CUSTOM TASK {TASKS[0]['task_desc']}" in prompt
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["prompts"]["source"] == str(prompts)
    assert config["prompts"]["sections_from_file"] == ["DIRECT_PLANNING"]


def test_a_prompts_file_without_the_fields_is_a_usage_error(
        tmp_path: Path, tasks_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompts = tmp_path / "prompts.yaml"
    prompts.write_text("DIRECT_PLANNING:\n  user_prompt: hi\n", encoding="utf-8")
    with ScriptedOpenAIServer(responder=ScriptedPlanner()) as server:
        assert plan(server, tasks_file, tmp_path / "out", "dp", "--prompts", str(prompts)) == 2
        assert server.requests == []
    assert "lacks system_prompt" in capsys.readouterr().err


@pytest.mark.parametrize("damage", [
    "The structured task plan is: [{\"agent\": \"Toponym_Detection\", \"step\": 0,",
    "I cannot help with that.",
    "The structured task plan is: [{\"agent\": \"GeoChat\", \"step\": 0, \"dependence\": [-1], "
    "\"dependence_content\": null, \"inputs\": {\"image_path\": \"a.png\"}}]}]]",
    "",
])
def test_malformed_output_is_recorded_not_fatal(tmp_path: Path, tasks_file: Path,
                                                damage: str) -> None:
    script = ScriptedPlanner(lambda task, kind, call: damage if task == 101 else None)
    with ScriptedOpenAIServer(responder=script) as server:
        assert plan(server, tasks_file, tmp_path / "out", "dp") == 0
    got = {r["task_id"]: r for r in records(tmp_path / "out")}
    assert got[101]["completion"] == damage.strip() and not em(got[101])
    assert all(em(got[t]) for t in (102, 103, 104))


def test_rate_limits_are_retried_and_counted(tmp_path: Path, tasks_file: Path) -> None:
    with ScriptedOpenAIServer(responder=ScriptedPlanner()) as server:
        server.enqueue(Reply(status=429, retry_after_s=0), Reply(status=429, retry_after_s=0))
        assert plan(server, tasks_file, tmp_path / "out", "dp", "--limit", "1") == 0
        assert len(server.requests) == 3
    (record,) = records(tmp_path / "out")
    assert em(record) and record["error"] is None
    assert record["details"]["call_log"][0]["retries"] == 2


def test_a_task_whose_requests_time_out_is_an_error_and_the_others_finish(
        tmp_path: Path, tasks_file: Path) -> None:
    script = ScriptedPlanner(
        lambda task, kind, call: Reply(content="late", delay_s=3) if task == 102 else None)
    with ScriptedOpenAIServer(responder=script) as server:
        code = plan(server, tasks_file, tmp_path / "out", "dp", "--timeout", "0.5",
                    "--max-retries", "1")
    assert code == 1  # some tasks ended with errors
    got = {r["task_id"]: r for r in records(tmp_path / "out")}
    assert got[102]["error"].startswith("TransportError") and got[102]["completion"] is None
    assert all(em(got[t]) and got[t]["error"] is None for t in (101, 103, 104))


def test_truncated_output_is_flagged(tmp_path: Path, tasks_file: Path) -> None:
    script = ScriptedPlanner(lambda task, kind, call: Reply(
        content=plan_text(GOLD[task])[:60], finish_reason="length"))
    with ScriptedOpenAIServer(responder=script) as server:
        assert plan(server, tasks_file, tmp_path / "out", "dp", "--limit", "2") == 0
    for record in records(tmp_path / "out"):
        assert record["truncated"] is True
        assert record["details"]["call_log"][0]["finish_reasons"] == ["length"]


def test_reference_postprocessing_rebuilds_dependencies(tmp_path: Path, tasks_file: Path
                                                       ) -> None:
    def sloppy(task: int, kind: str, call: int) -> str | None:
        broken = json.loads(json.dumps(GOLD[task]))
        for step in broken:
            step["dependence"], step["dependence_content"], step["outputs"] = [-1], None, []
        return plan_text(broken)

    with ScriptedOpenAIServer(responder=ScriptedPlanner(sloppy)) as server:
        assert plan(server, tasks_file, tmp_path / "raw", "dp") == 0
        assert plan(server, tasks_file, tmp_path / "ref", "dp", "--postprocess",
                    "reference") == 0
    raw = {r["task_id"]: r for r in records(tmp_path / "raw")}
    ref = {r["task_id"]: r for r in records(tmp_path / "ref")}
    assert not any(em(r) for r in raw.values())
    assert all(em(r) for r in ref.values())
    assert "raw_completion" in ref[102]["details"]


def test_reference_postprocessing_asks_once_to_reformat_a_bad_dp_answer(
        tmp_path: Path, tasks_file: Path) -> None:
    def answer(task: int, kind: str, call: int) -> str | None:
        if kind == "plan":  # a plan whose steps are not numbered: not canonical
            steps = [dict(s, step="first") for s in GOLD[task]]
            return plan_text(steps)
        return None  # the reformatting request gets the gold plan

    script = ScriptedPlanner(answer)
    with ScriptedOpenAIServer(responder=script) as server:
        assert plan(server, tasks_file, tmp_path / "out", "dp", "--postprocess", "reference",
                    "--limit", "2") == 0
    assert script.kinds["format"] == 2
    assert all(em(r) for r in records(tmp_path / "out"))


def test_method_choices_match_the_registry() -> None:
    from plancheck.cli.plan import _METHODS
    from plancheck.planners.registry import DEFAULT_METHOD, METHODS

    assert set(_METHODS) == set(METHODS) and DEFAULT_METHOD == "solver"


@pytest.mark.parametrize(("argv", "message"), [
    (["--method", "dp"], "needs --model"),
    (["--method", "shortest_path", "--check"], "only apply to the LLM methods"),
    (["--method", "dp", "--model", "m", "--samples", "0"], "--samples must be at least 1"),
    (["--method", "dp", "--model", "m", "--price-in", "1"], "both --price-in and --price-out"),
])
def test_usage_errors_exit_2(tmp_path: Path, tasks_file: Path, argv: list[str], message: str,
                             capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "--tasks", str(tasks_file), "--out", str(tmp_path / "o"), *argv])
    assert code == 2 and message in capsys.readouterr().err


def test_an_unreadable_tasks_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    bad = tmp_path / "tasks.jsonl"
    bad.write_text('{"task_id": 1, "task_desc": "x"}\nnot json\n', encoding="utf-8")
    code = main(["plan", "--method", "shortest_path", "--tasks", str(bad), "--out",
                 str(tmp_path / "o")])
    assert code == 2 and "tasks.jsonl:2: not JSON" in capsys.readouterr().err
    code = main(["plan", "--method", "shortest_path", "--tasks", str(tmp_path / "none.jsonl"),
                 "--out", str(tmp_path / "o")])
    assert code == 2 and "cannot read" in capsys.readouterr().err


def test_the_shipped_prompt_examples_are_clean_plans() -> None:
    """Every few-shot plan plancheck ships passes its own checker and the schema."""
    import re

    import plancheck
    from plancheck.planners.prompts import BUILTIN_DIR, fill

    texts = []
    for path in sorted(BUILTIN_DIR.glob("*.yaml")):
        import yaml

        for section in yaml.safe_load(path.read_text()).values():
            for value in section.values():
                if isinstance(value, str):
                    texts.append(fill(value))
                elif isinstance(value, list):
                    texts.extend(str(e["output"]) for e in value)
    plans = [m.group(1) for t in texts
             for m in re.finditer(r"The structured task plan is: (\[.*?\])(?=\n|$)", t)]
    assert len(plans) >= 10
    for text in plans:
        report = plancheck.check(json.loads(text))
        assert report.ok, report.to_feedback()


class _Toy:
    """A node of a fixed tree for the search alone (no model)."""

    def __init__(self, reward: float, children: list[_Toy] | None = None) -> None:
        self._reward, self._children, self.visited = reward, children or [], False
        self.expansions = 0

    def find_children(self) -> list[_Toy]:
        self.visited = True
        self.expansions += 1
        return self._children

    @property
    def is_terminal(self) -> bool:
        return not self._children

    @property
    def reward(self) -> float:
        return self._reward


def test_mcts_prefers_the_rewarding_branch_and_expands_each_node_once() -> None:
    from plancheck.planners.mcts import MCTS

    poor, rich = _Toy(0.1, [_Toy(0.1)]), _Toy(0.8, [_Toy(1.0)])
    root = _Toy(0.0, [poor, rich])
    search: MCTS[Any] = MCTS(w_exp=1.0)
    for _ in range(5):
        search.rollout(root)
    node, value = search.max_mean_terminal(root)
    assert node is rich._children[0] and value == pytest.approx((0.0 + 0.8 + 1.0) / 3)
    assert root.expansions == 1 and rich.expansions == 1
    assert search.visits[root] == 5 and search.visits[rich] >= search.visits[poor]


def _cut_off(_body: dict[str, Any]) -> Reply:
    """An endpoint whose every answer stops at max_tokens, mid-sentence (nothing parses)."""
    return Reply(content="Let me think about the sub", finish_reason="length")


@pytest.mark.slow
def test_rap_stops_at_the_request_budget(tmp_path: Path, tasks_file: Path) -> None:
    """RAP against cut-off answers sent 4,164 requests for one task; the budget ends it."""
    with ScriptedOpenAIServer(responder=_cut_off) as server:
        code = plan(server, tasks_file, tmp_path / "out", "rap", "--limit", "1",
                    "--rap-rollouts", "5", "--rap-depth", "5", "--rap-answer-rounds", "32",
                    "--max-requests", "40")
        sent = len(server.requests)
    assert code == 1  # the task ended with an error
    (record,) = records(tmp_path / "out")
    assert "request budget is spent: 40 requests sent, 40 allowed" in record["error"]
    assert record["details"]["requests"] == sent == 40
    assert record["details"]["request_budget"] == 40
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["max_requests"] == 40


@pytest.mark.parametrize("method", ["dp", "cot", "tot", "rap", "react"])
def test_every_method_counts_its_requests_against_the_budget(tmp_path: Path, tasks_file: Path,
                                                             method: str) -> None:
    """With the checker in the loop and answers that never parse, every method asks again
    after its first call; a budget of one request ends each of them there."""
    with ScriptedOpenAIServer(responder=_cut_off, honour_n=False) as server:
        assert plan(server, tasks_file, tmp_path / "out", method, "--limit", "1", "--check",
                    "--max-requests", "1") == 1
        sent = len(server.requests)
    (record,) = records(tmp_path / "out")
    assert "request budget is spent" in record["error"]
    assert record["details"]["requests"] == sent
    # Checked before each call: the first call of a method sampling n answers from a server
    # that ignores n sends n requests (SMALL: 3 samples, or 2 sub-questions for RAP), and no
    # call starts past the budget.
    assert sent == {"dp": 1, "react": 1, "cot": 3, "tot": 3, "rap": 2}[method]


def test_a_resumed_run_may_raise_the_budget_for_the_tasks_that_spent_it(
        tmp_path: Path, tasks_file: Path) -> None:
    with ScriptedOpenAIServer(responder=_cut_off) as server:
        assert plan(server, tasks_file, tmp_path / "out", "rap", "--limit", "1",
                    "--max-requests", "5") == 1
        assert plan(server, tasks_file, tmp_path / "out", "rap", "--limit", "1",
                    "--max-requests", "100", "--retry-errors") == 0
    (record,) = records(tmp_path / "out")
    assert record["error"] is None and 5 < record["details"]["requests"] <= 100
