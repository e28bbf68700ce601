"""The runner: resumable, atomic, interruptible; and the planners that need no model."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main
from plancheck.scoring.reference import score_completion
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.scripted_planning import GOLD, TASKS, ScriptedPlanner, plan_text
from tests.support.scripted_planning import write_tasks as write_task_file

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def tasks_file(tmp_path: Path) -> Path:
    return write_task_file(tmp_path / "tasks.jsonl")


def dp_args(server: ScriptedOpenAIServer, tasks: Path, out: Path, *extra: str) -> list[str]:
    return ["plan", "--method", "dp", "--model", "scripted", "--base-url", server.base_url,
            "--tasks", str(tasks), "--out", str(out), "--no-progress", "--no-cache",
            "--timeout", "5", *extra]


def lines(out: Path) -> list[str]:
    path = out / "predictions.jsonl"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines(out)]


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what legitimately differs between two runs (timings)."""
    copy = json.loads(json.dumps(record))
    copy.pop("latency_s")
    for call in copy["details"].get("call_log", []):
        call.pop("latency_s")
    return copy


def test_a_rerun_skips_finished_tasks(tmp_path: Path, tasks_file: Path) -> None:
    script = ScriptedPlanner()
    with ScriptedOpenAIServer(responder=script) as server:
        assert main(dp_args(server, tasks_file, tmp_path / "out", "--limit", "2")) == 0
        assert main(dp_args(server, tasks_file, tmp_path / "out")) == 0
        assert main(dp_args(server, tasks_file, tmp_path / "out")) == 0
    assert sorted(r["task_id"] for r in records(tmp_path / "out")) == sorted(GOLD)
    assert set(script.calls.values()) == {1}  # no task was asked twice


def test_a_torn_last_line_is_cut_and_its_task_run_again(tmp_path: Path, tasks_file: Path
                                                       ) -> None:
    out = tmp_path / "out"
    with ScriptedOpenAIServer(responder=ScriptedPlanner()) as server:
        assert main(dp_args(server, tasks_file, out, "--limit", "3")) == 0
        whole = lines(out)
        torn = whole[-1][: len(whole[-1]) // 2]  # a crash in the middle of the last write
        (out / "predictions.jsonl").write_text("\n".join(whole[:-1]) + "\n" + torn)
        assert main(dp_args(server, tasks_file, out)) == 0
    got = records(out)  # every line parses again
    assert sorted(r["task_id"] for r in got) == sorted(GOLD)
    assert got[:2] == [json.loads(x) for x in whole[:2]]


@pytest.mark.slow
def test_ctrl_c_loses_nothing_and_the_resumed_file_equals_an_uninterrupted_run(
        tmp_path: Path, tasks_file: Path) -> None:
    slow = ScriptedPlanner(lambda task, kind, call: Reply(content=plan_text(GOLD[task]),
                                                          delay_s=0.4))
    interrupted = tmp_path / "interrupted"
    with ScriptedOpenAIServer(responder=slow) as server:
        argv = dp_args(server, tasks_file, interrupted, "--concurrency", "1")
        process = subprocess.Popen([sys.executable, "-m", "plancheck", *argv], cwd=REPO,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while len(lines(interrupted)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr.decode()
        assert b"interrupted" in stderr and b"Traceback" not in stderr
        before = records(interrupted)
        assert 2 <= len(before) < len(TASKS)
        assert main(argv) == 0
    assert set(slow.calls.values()) == {1} and len(slow.calls) == len(TASKS)
    fresh = ScriptedPlanner(lambda task, kind, call: plan_text(GOLD[task]))
    straight = tmp_path / "straight"
    with ScriptedOpenAIServer(responder=fresh) as server:
        assert main(dp_args(server, tasks_file, straight, "--concurrency", "1")) == 0
    assert [comparable(r) for r in records(interrupted)] == \
        [comparable(r) for r in records(straight)]


def test_a_different_configuration_is_refused(tmp_path: Path, tasks_file: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    with ScriptedOpenAIServer(responder=ScriptedPlanner()) as server:
        assert main(dp_args(server, tasks_file, tmp_path / "out", "--limit", "1")) == 0
        code = main(dp_args(server, tasks_file, tmp_path / "out", "--temperature", "0.7"))
    assert code == 2 and "differs in: temperature" in capsys.readouterr().err
    assert len(lines(tmp_path / "out")) == 1


def test_a_rerun_with_changed_task_descriptions_is_refused(
        tmp_path: Path, tasks_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Same ids, another description: the finished result was planned for another task."""
    out = tmp_path / "out"
    with ScriptedOpenAIServer(responder=ScriptedPlanner()) as server:
        assert main(dp_args(server, tasks_file, out, "--limit", "2")) == 0
        changed = [dict(t) for t in TASKS]
        changed[1]["task_desc"] += " Then also count the people."
        other = write_task_file(tmp_path / "other.jsonl", changed)
        capsys.readouterr()
        assert main(dp_args(server, other, out)) == 2
        err = capsys.readouterr().err
        assert f"other descriptions of 1 of these tasks (task {TASKS[1]['task_id']})" in err
        assert len(lines(out)) == 2  # nothing planned, nothing lost
        assert main(dp_args(server, tasks_file, out)) == 0  # the original file resumes
    assert len(lines(out)) == len(TASKS)
    assert all(isinstance(r["task_sha256"], str) for r in records(out))


def test_retry_errors_replaces_failed_results(tmp_path: Path, tasks_file: Path) -> None:
    out = tmp_path / "out"
    failing = ScriptedPlanner(
        lambda task, kind, call: Reply(status=503, retry_after_s=0) if task == 103 else None)
    with ScriptedOpenAIServer(responder=failing) as server:
        assert main(dp_args(server, tasks_file, out, "--max-retries", "0")) == 1
    with ScriptedOpenAIServer(responder=ScriptedPlanner()) as server:
        assert main(dp_args(server, tasks_file, out, "--max-retries", "0")) == 0  # kept as is
        assert server.requests == []
        assert main(dp_args(server, tasks_file, out, "--retry-errors")) == 0
        assert len(server.requests) == 1
    got = records(out)
    assert sorted(r["task_id"] for r in got) == sorted(GOLD)
    assert all(r["error"] is None for r in got)


def test_concurrent_workers_write_whole_lines(tmp_path: Path) -> None:
    many = [dict(t, task_id=t["task_id"] * 100 + i) for i in range(6) for t in TASKS]
    tasks = write_task_file(tmp_path / "many.jsonl", many)
    script = ScriptedPlanner(lambda task, kind, call: Reply(content="x", delay_s=0.05))
    with ScriptedOpenAIServer(responder=script) as server:
        assert main(dp_args(server, tasks, tmp_path / "out", "--concurrency", "6")) == 0
    assert sorted(r["task_id"] for r in records(tmp_path / "out")) == \
        sorted(t["task_id"] for t in many)


def test_prices_give_a_cost_per_task(tmp_path: Path, tasks_file: Path) -> None:
    with ScriptedOpenAIServer(responder=ScriptedPlanner()) as server:
        assert main(dp_args(server, tasks_file, tmp_path / "out", "--limit", "1",
                            "--price-in", "2", "--price-out", "8")) == 0
    (record,) = records(tmp_path / "out")
    expected = (record["prompt_tokens"] * 2 + record["completion_tokens"] * 8) / 1e6
    assert record["cost_usd"] == pytest.approx(expected) and record["cost_usd"] > 0


def test_the_progress_bar_draws_on_a_terminal(tmp_path: Path) -> None:
    from plancheck.planners.base import PlanningTask, PlanResult
    from plancheck.planners.runner import RunOptions, run_tasks

    class Echo:
        name = "echo"

        def plan(self, task: PlanningTask) -> PlanResult:
            return PlanResult(task.task_id, "echo", "[]")

    stream = io.StringIO()
    tasks = [PlanningTask(i, f"task {i}") for i in range(5)]
    summary = run_tasks(tasks, Echo, RunOptions(out=tmp_path / "out", method="echo",
                                                model=None, config={"method": "echo"},
                                                progress=True, stream=stream))
    assert summary.done == 5 and summary.errors == 0
    assert "5/5" in stream.getvalue() and "[#" in stream.getvalue()


def test_a_planner_that_raises_costs_one_task_not_the_run(tmp_path: Path) -> None:
    from plancheck.planners.base import PlanningTask, PlanResult
    from plancheck.planners.runner import RunOptions, run_tasks

    class Flaky:
        name = "flaky"

        def plan(self, task: PlanningTask) -> PlanResult:
            if task.task_id == 2:
                raise RuntimeError("boom")
            return PlanResult(task.task_id, "flaky", "[]")

    tasks = [PlanningTask(i, f"task {i}") for i in range(4)]
    summary = run_tasks(tasks, Flaky, RunOptions(out=tmp_path / "out", method="flaky",
                                                 model=None, config={}))
    assert (summary.done, summary.errors) == (4, 1)
    failed = next(r for r in records(tmp_path / "out") if r["task_id"] == 2)
    assert failed["error"] == "internal error: RuntimeError: boom"


# -------------------------------------------------------------------------- no model at all

STRUCTURAL = ("shortest_path", "oracle_random", "dag_greedy_tfidf", "dag_beam_tfidf")


@pytest.mark.parametrize("method", STRUCTURAL)
def test_structural_baselines_are_deterministic(tmp_path: Path, tasks_file: Path,
                                               method: str) -> None:
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        assert main(["plan", "--method", method, "--tasks", str(tasks_file), "--out", str(out),
                     "--no-progress", "--concurrency", "3"]) == 0
        runs.append(sorted((r["id"], r["completion"]) for r in records(out)))
    assert runs[0] == runs[1]
    for _, completion in runs[0]:
        plan = json.loads(completion)
        assert all(set(step) == {"agent", "step", "dependence", "dependence_content", "inputs",
                                 "outputs"} for step in plan)


@pytest.mark.slow
def test_structural_baselines_score_zero_em_on_the_benchmark(
        tmp_path: Path, benchmark_path: Path, gold_tasks: list[dict[str, Any]]) -> None:
    gold = {str(t["task_id"]): t["structured_plan"] for t in gold_tasks}
    for method in STRUCTURAL:
        out = tmp_path / method
        assert main(["plan", "--method", method, "--tasks", str(benchmark_path), "--out",
                     str(out), "--no-progress"]) == 0
        got = records(out)
        assert len(got) == len(gold_tasks) == 233
        verdicts = [score_completion(r["completion"], gold[r["id"]]) for r in got]
        assert sum(v.em for v in verdicts) == 0, method  # as the paper reports (Appendix K)
        if method == "oracle_random":  # right tools and wiring, invented inputs
            assert all(v.tool_acc and v.dep_acc and not v.param_acc for v in verdicts)


def _solver_available() -> bool:
    try:
        import plancheck.planners.smt_planner  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _solver_available(), reason="plancheck.planners.smt_planner not built yet")
def test_the_default_method_plans_the_whole_benchmark_without_a_model(
        tmp_path: Path, benchmark_path: Path) -> None:
    out = tmp_path / "solver"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY",
                                                          "OPENROUTER_API_KEY")}
    done = subprocess.run([sys.executable, "-m", "plancheck", "plan", "--tasks",
                           str(benchmark_path), "--out", str(out), "--no-progress"],
                          check=False, cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    got = records(out)
    assert len(got) == 233 and {r["method"] for r in got} == {"solver"}
    assert all(r["model"] is None and r["calls"] == 0 for r in got)
    scored = subprocess.run([sys.executable, "-m", "plancheck", "score",
                             str(out / "predictions.jsonl"), "--gold", str(benchmark_path),
                             "--bootstrap", "0"],
                            check=False, cwd=REPO, capture_output=True, text=True,
                            timeout=600)
    assert scored.returncode in (0, 1), scored.stderr
    assert "233" in scored.stdout
