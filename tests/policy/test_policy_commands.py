"""``--policy`` on every command that judges plans besides ``check`` (``score``, ``compile``,
``plan``) and on ``fmt``, which only reads it: exit 1 on a violation, 2 on a policy file that
cannot be used (naming what is wrong, before anything else happens), and the parity numbers of
``score`` never changed by it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main
from tests.support.scripted_planning import TASKS, write_tasks

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "mcp"

# Task 103's plan passes the nowcast on to the converter; task 101 calls Toponym_Detection.
BROKEN_BY_103 = """policy p {
  forbid flow from Precipitation_Nowcasting
    to precipitation_data_convert_tool.radar_echo_frames_path
  warn at most 0 Toponym_Detection
}
"""
KEPT = "policy p {\n  at most 5 Anomaly_Detection_Forest\n}\n"
UNUSABLE = "policy p {\n  at most 1 Toponym_Detecton\n}\n"  # a misspelt tool: PC811


def _write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _predictions(tmp_path: Path) -> tuple[str, str]:
    gold = write_tasks(tmp_path / "gold.jsonl")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"id": f"r{t['task_id']}", "task_id": t["task_id"],
                                               "plan": t["structured_plan"]}) + "\n"
                                   for t in TASKS), encoding="utf-8")
    return str(gold), str(predictions)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --------------------------------------------------------------------------- score


def test_score_reports_violations_per_item_and_leaves_the_parity_numbers_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold, predictions = _predictions(tmp_path)
    policy = _write(tmp_path / "p.wf", BROKEN_BY_103)
    plain, judged = tmp_path / "plain.jsonl", tmp_path / "judged.jsonl"
    code, _, _ = _run(capsys, "score", predictions, "--gold", gold, "--bootstrap", "0",
                      "--per-item", str(plain), "--format", "json")
    assert code == 0
    code, out, err = _run(capsys, "score", predictions, "--gold", gold, "--bootstrap", "0",
                          "--per-item", str(judged), "--format", "json", "--policy", policy)
    assert code == 1
    without, with_policy = _lines(plain), _lines(judged)
    assert [{k: v for k, v in line.items() if k != "policy"} for line in with_policy] == without
    verdicts = {line["task_id"]: [(e["code"], e["severity"]) for e in line["policy"]]
                for line in with_policy}
    assert verdicts == {101: [("PC803", "warning")], 102: [], 103: [("PC805", "error")],
                        104: []}
    document = json.loads(out)
    assert document["policy"] == {"policy_file": policy, "plans": 4, "breaking": 1,
                                  "warned": 1, "by_code": {"PC803": 1, "PC805": 1}}
    assert "error[PC805]" in err and "(r103)" in err
    code, out, _ = _run(capsys, "score", predictions, "--gold", gold, "--bootstrap", "0",
                        "--policy", policy)
    assert code == 1
    assert f"policy {policy}: 1 of 4 predictions break a deny rule, 1 only warn rules" in out


def test_score_with_a_policy_every_prediction_keeps_exits_0(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold, predictions = _predictions(tmp_path)
    code, out, _ = _run(capsys, "score", predictions, "--gold", gold, "--bootstrap", "0",
                        "--policy", _write(tmp_path / "p.wf", KEPT))
    assert code == 0 and "0 of 4 predictions break a deny rule" in out


def test_score_refuses_an_unusable_policy_before_scoring(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold, predictions = _predictions(tmp_path)
    policy = _write(tmp_path / "p.wf", UNUSABLE)
    items = tmp_path / "items.jsonl"
    code, out, err = _run(capsys, "score", predictions, "--gold", gold, "--policy", policy,
                          "--per-item", str(items))
    assert code == 2 and out == "" and not items.exists()
    assert "error[PC811]" in err and f"{policy}:2:13" in err and "`Toponym_Detection`" in err


def test_score_of_tool_calls_decides_the_policy_on_each_prediction(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = str(REAL / "server-github.json")
    calls = [{"name": "create_branch", "arguments": {"owner": "o", "repo": "r",
                                                     "branch": "main"}}]
    gold = _write(tmp_path / "gold.jsonl", json.dumps({"id": "t1", "tool_calls": calls}) + "\n")
    predictions = _write(tmp_path / "pred.jsonl",
                         json.dumps({"id": "t1", "tool_calls": calls}) + "\n")
    policy = _write(tmp_path / "p.wf",
                    'policy p {\n  forbid create_branch.branch in ["main", "master"]\n}\n')
    items = tmp_path / "items.jsonl"
    code, out, _ = _run(capsys, "score", predictions, "--gold", gold, "--tools", pool,
                        "--policy", policy, "--format", "json", "--per-item", str(items))
    assert code == 1 and json.loads(out)["policy"]["breaking"] == 1
    (line,) = _lines(items)
    assert line["metrics"]["tool_accuracy"] == 1.0
    assert [e["code"] for e in line["policy"]] == ["PC804"]


def test_score_of_dora_runs_says_it_does_not_take_a_policy(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dora = Path(__file__).resolve().parents[2] / "examples" / "dora"
    code, _, err = _run(capsys, "score", "--gold", str(dora / "tasks"), str(dora / "run"),
                        "--policy", _write(tmp_path / "p.wf", KEPT))
    assert code == 2 and "check RUN --policy FILE" in err


# --------------------------------------------------------------------------- compile


def _plan_file(tmp_path: Path, task: int = 2) -> str:
    return _write(tmp_path / "plan.json", json.dumps(TASKS[task]["structured_plan"], indent=2))


def test_compile_refuses_a_plan_that_breaks_a_deny_rule(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = _plan_file(tmp_path)
    code, out, err = _run(capsys, "compile", plan, "--to", "python",
                          "--policy", _write(tmp_path / "p.wf", BROKEN_BY_103))
    assert code == 1 and out == ""
    assert "error[PC805]" in err and f"--> {plan}:" in err and "not compiled" in err


def test_compile_says_a_warn_rule_and_compiles_the_plan(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = _plan_file(tmp_path, task=0)  # Toponym_Detection: the warn rule only
    code, out, err = _run(capsys, "compile", plan, "--to", "python",
                          "--policy", _write(tmp_path / "p.wf", BROKEN_BY_103))
    assert code == 0 and "def run_plan" in out and "warning[PC803]" in err


def test_compile_refuses_an_unusable_policy(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "compile", _plan_file(tmp_path), "--to", "python",
                          "--policy", _write(tmp_path / "p.wf", UNUSABLE))
    assert code == 2 and out == "" and "error[PC811]" in err and "cannot be used" in err


# --------------------------------------------------------------------------- fmt


def test_fmt_prints_the_policies_after_the_plan_and_check_reads_the_file_back(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = _plan_file(tmp_path)
    code, out, _ = _run(capsys, "fmt", plan, "--to", "dsl",
                        "--policy", _write(tmp_path / "p.wf", BROKEN_BY_103))
    assert code == 0 and "policy p {" in out and "plan uses" in out
    both = _write(tmp_path / "both.wf", out)
    code, out, _ = _run(capsys, "check", "--no-config", both, "--policy", both, "--format",
                        "concise")
    assert code == 1 and "PC805" in out


def test_fmt_to_json_only_reads_the_policy(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    plan = _plan_file(tmp_path)
    code, out, _ = _run(capsys, "fmt", plan, "--to", "json",
                        "--policy", _write(tmp_path / "p.wf", BROKEN_BY_103))
    assert code == 0 and "policy" not in out  # formatting is no verdict
    code, out, err = _run(capsys, "fmt", plan, "--to", "json",
                          "--policy", _write(tmp_path / "bad.wf", UNUSABLE))
    assert code == 2 and out == "" and "error[PC811]" in err


# --------------------------------------------------------------------------- plan


def test_plan_counts_the_plans_that_break_a_policy(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl")
    policy = _write(tmp_path / "p.wf", "policy p {\n  require Anomaly_Detection_Forest\n}\n")
    code, out, err = _run(capsys, "plan", "--method", "solver", "--tasks", str(tasks),
                          "--out", str(tmp_path / "run"), "--no-progress", "--policy", policy)
    records = _lines(tmp_path / "run" / "predictions.jsonl")
    assert len(records) == 4
    breaking = sum("Anomaly_Detection_Forest" not in r["completion"] for r in records)
    assert breaking > 0 and code == 1
    assert f"policy {policy}: {breaking} of 4 plans break a deny rule (PC806 x{breaking})" in out
    assert "error[PC806]" in err


def test_plan_refuses_an_unusable_policy_before_it_plans(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl")
    code, _, err = _run(capsys, "plan", "--method", "solver", "--tasks", str(tasks),
                        "--out", str(tmp_path / "run"), "--policy",
                        _write(tmp_path / "p.wf", UNUSABLE))
    assert code == 2 and "error[PC811]" in err and not (tmp_path / "run").exists()
