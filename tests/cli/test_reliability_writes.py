"""No lost record: atomic per-item files, per-line decoding, and one run at a time per output
(concurrent runs, kill -9 and resume)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main
from plancheck.locks import FileLock, lock_path_for
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.samples import FOG_CHAIN
from tests.support.scripted_planning import GOLD, TASKS, ScriptedPlanner, plan_text
from tests.support.scripted_planning import write_tasks as write_task_file

REPO = Path(__file__).resolve().parents[2]


def _score(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["score", "--bootstrap", "0", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _predictions(path: Path, count: int = 3) -> Path:
    path.write_text("".join(json.dumps({"id": f"p{i}", "task_id": 1, "plan": FOG_CHAIN}) + "\n"
                            for i in range(count)))
    return path


@pytest.fixture
def gold(tmp_path: Path) -> Path:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(FOG_CHAIN))
    return path


# --------------------------------------------------------------------------- score --per-item


def test_a_failed_score_leaves_the_previous_per_item_file_as_it_was(
        tmp_path: Path, gold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    per_item = tmp_path / "per_item.jsonl"
    per_item.write_text('{"old": true}\n')
    bad = tmp_path / "detailed.json"
    bad.write_bytes(b'[{"task_id": 1, "model_answer": "caf\xe9"}]')  # not UTF-8: fails mid-run
    code, _, err = _score(capsys, "--gold", str(gold), str(_predictions(tmp_path / "p.jsonl")),
                          str(bad), "--per-item", str(per_item))
    assert code == 2 and "not UTF-8" in err
    assert per_item.read_text() == '{"old": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["detailed.json", "gold.json",
                                                          "p.jsonl", "per_item.jsonl"]


def test_a_finished_score_replaces_the_per_item_file(
        tmp_path: Path, gold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    per_item = tmp_path / "per_item.jsonl"
    per_item.write_text('{"old": true}\n')
    per_item.chmod(0o640)
    code, _, _ = _score(capsys, "--gold", str(gold), str(_predictions(tmp_path / "p.jsonl")),
                        "--per-item", str(per_item))
    assert code == 0
    assert [json.loads(line)["id"] for line in per_item.read_text().splitlines()] == \
        ["p0", "p1", "p2"]
    assert per_item.stat().st_mode & 0o777 == 0o640


def test_a_second_score_into_the_same_per_item_file_is_refused(
        tmp_path: Path, gold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    per_item = tmp_path / "per_item.jsonl"
    per_item.write_text('{"old": true}\n')
    with FileLock(lock_path_for(per_item), what=str(per_item)):
        code, _, err = _score(capsys, "--gold", str(gold),
                              str(_predictions(tmp_path / "p.jsonl")), "--per-item",
                              str(per_item))
    assert code == 2
    assert f"process {os.getpid()}" in err and "in use" in err
    assert per_item.read_text() == '{"old": true}\n'


def test_one_non_utf8_line_is_one_format_error_from_a_file_and_from_stdin(
        tmp_path: Path, gold: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [json.dumps({"id": f"p{i}", "task_id": 1, "plan": FOG_CHAIN, "note": "cafe"})
             .encode() for i in range(3)]
    lines[1] = lines[1].replace(b"cafe", b"caf\xe9")
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    outcomes = []
    for source in (str(path), "-"):
        if source == "-":
            import io

            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
        per_item = tmp_path / f"items-{len(outcomes)}.jsonl"
        code, _, err = _score(capsys, "--gold", str(gold), source, "--per-item", str(per_item))
        items = [json.loads(line) for line in per_item.read_text().splitlines()]
        assert code == 1, err
        assert [item["em"] for item in items] == [True, False, True]
        assert items[1]["id"] == "p1" and items[1]["fpof_type"] == "format_error"
        assert "line 2: the line is not UTF-8" in items[1]["diagnostics"][1]["message"]
        outcomes.append([(item["id"], item["em"]) for item in items])
    assert outcomes[0] == outcomes[1]


# --------------------------------------------------------------------------- plan runs


def _dp_args(base_url: str, tasks: Path, out: Path, *extra: str) -> list[str]:
    return ["plan", "--method", "dp", "--model", "scripted", "--base-url", base_url,
            "--tasks", str(tasks), "--out", str(out), "--no-progress", "--no-cache",
            "--timeout", "10", "--concurrency", "1", *extra]


def _records(out: Path) -> list[dict[str, Any]]:
    path = out / "predictions.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _wait_for(condition: Any, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.parametrize("extra", [(), ("--retry-errors",)])
def test_a_second_plan_run_into_the_same_directory_exits_2_and_nothing_is_duplicated(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...]) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl")
    out = tmp_path / "out"
    # The first run gets its first answer at once and the others only once the second run has
    # been answered: it holds --out meanwhile, however long the second takes to start.
    released = threading.Event()
    answered: list[int] = []

    def answer(task: int, kind: str, call: int) -> Reply:
        if answered:
            released.wait(60)
        answered.append(task)
        return Reply(content=plan_text(GOLD[task]), delay_s=0.3)

    slow = ScriptedPlanner(answer)
    with ScriptedOpenAIServer(responder=slow) as server:
        first = subprocess.Popen([sys.executable, "-m", "plancheck",
                                  *_dp_args(server.base_url, tasks, out)], cwd=REPO,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            _wait_for(lambda: len(_records(out)) >= 1)
            code = main(_dp_args(server.base_url, tasks, out, *extra))
            err = capsys.readouterr().err
            assert code == 2, err
            assert f"process {first.pid}" in err and "another --out" in err
        finally:
            released.set()
            _, stderr = first.communicate(timeout=60)
        assert first.returncode == 0, stderr.decode()
    ids = [r["task_id"] for r in _records(out)]
    assert sorted(ids) == sorted(t["task_id"] for t in TASKS)
    assert set(slow.calls.values()) == {1}, "a task was sent to the model twice"


@pytest.mark.slow
def test_kill_9_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl")
    out = tmp_path / "out"
    slow = ScriptedPlanner(lambda task, kind, call: Reply(content=plan_text(GOLD[task]),
                                                          delay_s=0.3))
    with ScriptedOpenAIServer(responder=slow) as server:
        argv = _dp_args(server.base_url, tasks, out)
        process = subprocess.Popen([sys.executable, "-m", "plancheck", *argv], cwd=REPO,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _wait_for(lambda: len(_records(out)) >= 1)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
        done = len(_records(out))
        assert 1 <= done < len(TASKS)
        # The killed run's lock died with it: the resumption is not refused.
        assert main(argv) == 0
    ids = [r["task_id"] for r in _records(out)]
    assert sorted(ids) == sorted(t["task_id"] for t in TASKS)
    assert len(ids) == len(set(ids))


# --------------------------------------------------------------------------- fix --in-place


def _limit_file_size() -> None:
    import resource

    # Writes past 300 bytes fail with EFBIG (as on a full disk) instead of killing the process.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))


# Python under that limit, writing no bytecode: a module it imports first would get a cache
# file cut at 300 bytes (the import system does not check how much of it was written), and
# every later process of the suite would fail to import that module.
CAPPED_PLANCHECK = [sys.executable, "-B", "-m", "plancheck"]


def test_fix_in_place_never_leaves_a_half_written_plan(tmp_path: Path) -> None:
    plan = [dict(step) for step in FOG_CHAIN]
    plan[1] = {**plan[1], "dependence": [-1]}  # repairable
    target = tmp_path / "plan.json"
    original = json.dumps(plan, indent=2)
    target.write_text(original)
    result = subprocess.run([*CAPPED_PLANCHECK, "fix", "--in-place", str(target)], cwd=REPO,
                            capture_output=True, text=True, preexec_fn=_limit_file_size,
                            timeout=60, check=False)
    assert result.returncode == 2, result.stderr
    assert "cannot write" in result.stderr and "internal error" not in result.stderr
    assert target.read_text() == original
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]
    # Without the limit the same command rewrites the plan, keeping its permissions.
    target.chmod(0o640)
    assert main(["fix", "--in-place", str(target)]) == 0
    assert json.loads(target.read_text())[1]["dependence"] == [0]
    assert target.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("command", [
    ["toolset", "export", "--to", "mcp", "-o", "OUT"],
    ["compile", "--to", "python", "-o", "OUT", "examples/flood_plan.json"],
])
def test_other_writers_never_leave_a_half_written_file(tmp_path: Path,
                                                       command: list[str]) -> None:
    """`toolset export -o` and `compile -o` replace their file whole: a write that fails
    (the disk full, here a 300-byte file size limit) leaves the old file as it was."""
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    arguments = [str(target) if word == "OUT" else word for word in command]
    result = subprocess.run([*CAPPED_PLANCHECK, *arguments], cwd=REPO,
                            capture_output=True, text=True, preexec_fn=_limit_file_size,
                            timeout=60, check=False)
    assert result.returncode == 2, result.stderr
    assert "cannot write" in result.stderr and "internal error" not in result.stderr
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def _call_gold(tmp_path: Path) -> list[str]:
    gold = tmp_path / "calls.jsonl"
    gold.write_text(json.dumps({"id": "a", "tool_calls": [{"name": "read_graph",
                                                             "arguments": {}}]}) + "\n")
    return ["--gold", str(gold), str(gold), "--tools",
            str(REPO / "tests" / "data" / "real" / "mcp" / "server-memory.json")]


@pytest.mark.parametrize("kind", ["tool calls", "dora"])
def test_every_score_per_item_file_is_locked_and_replaced_whole(
        tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The per-item files of tool-call and DORA scoring behave as DisasterBench's do: a second
    run into the same file is refused while one runs, and a finished run replaces it."""
    per_item = tmp_path / "per_item.jsonl"
    per_item.write_text('{"old": true}\n')
    inputs = (_call_gold(tmp_path) if kind == "tool calls" else
              ["--gold", str(REPO / "examples" / "dora" / "tasks"),
               str(REPO / "examples" / "dora" / "run")])
    with FileLock(lock_path_for(per_item), what=str(per_item)):
        code, _, err = _score(capsys, *inputs, "--per-item", str(per_item))
    assert code == 2 and "in use" in err
    assert per_item.read_text() == '{"old": true}\n'
    code, _, _ = _score(capsys, *inputs, "--per-item", str(per_item))
    assert code == 0
    lines = per_item.read_text().splitlines()
    assert lines and "old" not in json.loads(lines[0])
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("per_item")) == \
        ["per_item.jsonl"]


def test_a_run_stops_when_the_endpoint_goes_down(tmp_path: Path) -> None:
    from plancheck.planners.base import PlanningTask, PlanResult
    from plancheck.planners.runner import RunOptions, run_tasks

    refused = "127.0.0.1:9 refused the connection (is the model server running?)"

    class Unreachable:
        name = "dp"

        def plan(self, task: PlanningTask) -> PlanResult:
            return PlanResult(task.task_id, "dp", None, error=(
                f"TransportError: chat completion failed after 6 attempt(s): {refused}"))

    tasks = [PlanningTask(i, f"task {i}") for i in range(5)]
    summary = run_tasks(tasks, Unreachable, RunOptions(
        out=tmp_path / "out", method="dp", model="m", config={}, concurrency=1,
        endpoint_down=lambda: refused, stream=io.StringIO()))
    assert summary.endpoint_down == refused
    assert summary.done == 1, "every task was tried against a server that is down"
    # A task that failed for another reason does not stop the run.
    summary = run_tasks(tasks, Unreachable, RunOptions(
        out=tmp_path / "out2", method="dp", model="m", config={}, concurrency=1,
        endpoint_down=lambda: None, stream=io.StringIO()))
    assert summary.done == 5 and summary.endpoint_down is None
