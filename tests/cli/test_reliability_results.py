"""Results that must not mislead: RAP re-sampling through the response cache, RAP's truncated
flag, model-free runs filed under a model, contradictory flags, duplicate inputs, bootstrap
seeds, transport failures counted as the model's."""

from __future__ import annotations

import json
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


# --------------------------------------------------------------------------- flags


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_model_free_method_refuses_a_model(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    tasks = write_task_file(tmp_path / "tasks.jsonl")
    code, _, err = _cli(capsys, "plan", "--method", "solver", "--model", "gpt-x", "--tasks",
                        str(tasks), "--no-progress")
    assert code == 2 and "--model" in err
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("argv", [
    ("plan", "--method", "dp", "--model", "m", "--no-cache", "--cache", "c.sqlite"),
    ("score", "--gold", "g.json", "p.jsonl", "--strict", "--scoring", "reference"),
])
def test_contradictory_flags_are_refused(capsys: pytest.CaptureFixture[str],
                                         argv: tuple[str, ...]) -> None:
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and "contradict" in err


# --------------------------------------------------------------------------- score


@pytest.fixture
def scored(tmp_path: Path) -> tuple[Path, Path]:
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(FOG_CHAIN))
    wrong = [dict(step) for step in FOG_CHAIN]
    wrong[1] = {**wrong[1], "agent": "Crowd_Counting_in_Adverse_Weather"}
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(
        json.dumps({"id": i, "task_id": 1, "plan": FOG_CHAIN if i % 3 else wrong}) + "\n"
        for i in range(30)))
    return gold, predictions


def test_the_same_file_twice_is_scored_once(scored: tuple[Path, Path],
                                            capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    gold, predictions = scored
    monkeypatch.chdir(predictions.parent)
    code, out, err = _cli(capsys, "score", "--gold", str(gold), "p.jsonl", "./p.jsonl",
                          "--format", "json", "--bootstrap", "0")
    assert code == 0
    document = json.loads(out)
    assert document["total"]["predictions"] == 30
    assert "same file" in err


def test_intervals_do_not_depend_on_the_path_and_report_agrees(
        scored: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    gold, predictions = scored
    monkeypatch.chdir(predictions.parent)
    intervals = []
    documents: list[dict[str, Any]] = []
    results = predictions.parent / "results"
    for spelling in ("p.jsonl", "./p.jsonl", str(predictions)):
        per_item = results / "m" / f"dp{len(intervals)}" / "per_item.jsonl"
        code, out, _ = _cli(capsys, "score", "--gold", str(gold), spelling, "--format", "json",
                            "--per-item", str(per_item))
        assert code == 0
        document = json.loads(out)["files"][0]
        document.pop("name")
        documents.append(document)
        em = document["metrics"]["em"]
        intervals.append((em["ci_low"], em["ci_high"]))
    assert documents[0] == documents[1] == documents[2]  # every interval of every metric
    assert intervals[0][0] < intervals[0][1]
    code, out, _ = _cli(capsys, "report", str(results), "--format", "json", "--table", "em",
                        "--ci")
    assert code == 0
    (row,) = json.loads(out)["tables"][0]["rows"]
    cell = row["DP0"] if "DP0" in row else next(v for k, v in row.items() if k != "Model")
    assert (cell["ci_low"] / 100, cell["ci_high"] / 100) == pytest.approx(intervals[0])


def test_runner_failures_are_not_passed_off_as_model_output(
        scored: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    gold, predictions = scored
    with predictions.open("a") as out:
        out.write(json.dumps({"id": "x", "task_id": 1, "completion": None,
                              "error": "TransportError: Connection error"}) + "\n")
    code, _, err = _cli(capsys, "score", "--gold", str(gold), str(predictions),
                        "--bootstrap", "0")
    assert "1 record(s) hold no model output" in err and "--retry-errors" in err
    assert code in (0, 1)


def test_raw_on_a_file_without_raw_completions_says_why(
        scored: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    gold, predictions = scored
    per_item = tmp_path / "items.jsonl"
    code, _, err = _cli(capsys, "score", "--gold", str(gold), str(predictions), "--raw",
                        "--bootstrap", "0", "--per-item", str(per_item))
    assert code == 1
    assert "raw_selected_completion" in err
    first = json.loads(per_item.read_text().splitlines()[0])
    assert "raw_selected_completion" in first["diagnostics"][1]["message"]


def test_repeated_runner_records_are_pointed_out(tmp_path: Path, gold_plan: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    record = {"id": "1", "task_id": 1, "method": "dp", "model": "m", "completion": None,
              "plan": FOG_CHAIN, "error": None}
    line = json.dumps(record, separators=(",", ":")) + "\n"
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(line + line.replace('"1"', '"2"', 1) + line)
    code, _, err = _cli(capsys, "score", "--gold", str(gold_plan), str(predictions),
                        "--bootstrap", "0")
    assert code == 0
    assert "1 record(s) repeat the id of an earlier record" in err


@pytest.fixture
def gold_plan(tmp_path: Path) -> Path:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(FOG_CHAIN))
    return path
