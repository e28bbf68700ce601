"""Bad inputs and faults a new user meets: unreadable paths, directory walks, huge integers, a
batch on standard input, a missing optional package. Each gets a clear diagnostic and exit
code, never "internal error", and never a silent pass."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.samples import FOG_CHAIN
from tests.support.unprivileged import lock_directory, run_plancheck, shared_directory

BIG = "9" * 5000  # over Python's 4,300-digit limit for int(str)


@pytest.fixture
def work() -> Iterator[Path]:
    with shared_directory() as path:
        yield path


def _plan_file(path: Path, plan: object = FOG_CHAIN) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan, indent=2))
    path.chmod(0o644)
    path.parent.chmod(0o755)
    return path


def _no_crash(result: object) -> None:
    out = getattr(result, "stdout", "") + getattr(result, "stderr", "")
    assert "internal error" not in out and "Traceback" not in out, out


@pytest.fixture
def locked(work: Path) -> Path:
    """``work/locked/a.json``: a plan inside a directory that cannot be entered."""
    inner = _plan_file(work / "locked" / "a.json")
    lock_directory(inner.parent)
    return inner


# --------------------------------------------------------------------------- permissions


def test_check_reports_an_unreadable_file_and_still_checks_the_others(
        work: Path, locked: Path) -> None:
    good = _plan_file(work / "ok" / "good.json")
    result = run_plancheck("check", "--format", "json", "locked/a.json", "ok/good.json",
                           cwd=work)
    _no_crash(result)
    assert result.returncode == 2
    document = json.loads(result.stdout)
    codes = {(d["file"], d["code"]) for d in document["diagnostics"]}
    assert ("locked/a.json", "PC001") in codes
    assert "Permission denied" in json.dumps(document["diagnostics"])
    assert document["summary"]["plans"] == 1, "the readable plan was not checked"
    assert good.exists()


@pytest.mark.parametrize("command", [
    ("fmt", "--to", "json", "locked/a.json"),
    ("fix", "locked/a.json"),
    ("compile", "--to", "python", "locked/a.json"),
    ("score", "--gold", "locked/a.json", "locked/a.json"),
    ("toolset", "show", "--tools", "locked/a.json"),
    ("plan", "--tasks", "locked/a.json", "--out", "out"),
    ("check", "--tools", "locked/a.json", "locked/a.json"),
    ("check", "--gold", "locked/a.json", "locked/a.json"),
    ("toolset", "lint", "locked/a.json"),
    ("report", "locked"),
    ("check", "locked"),
])
def test_every_command_names_a_file_it_cannot_enter(work: Path, locked: Path,
                                                    command: tuple[str, ...]) -> None:
    result = run_plancheck(*command, cwd=work)
    _no_crash(result)
    assert result.returncode == 2
    assert "Permission denied" in result.stdout + result.stderr


def test_score_reports_an_unreadable_prediction_file(work: Path, locked: Path) -> None:
    gold = _plan_file(work / "gold.json")
    result = run_plancheck("score", "--gold", gold.name, "locked/a.json", cwd=work)
    _no_crash(result)
    assert result.returncode == 2 and "locked/a.json" in result.stderr


# --------------------------------------------------------------------------- directory walks


def test_unreadable_subdirectory_is_reported_not_skipped(work: Path, locked: Path) -> None:
    _plan_file(work / "plans" / "good.json")
    os.rename(work / "locked", work / "plans" / "locked")
    result = run_plancheck("check", "--format", "json", "plans", cwd=work)
    _no_crash(result)
    assert result.returncode == 2
    document = json.loads(result.stdout)
    problems = [d for d in document["diagnostics"] if d["code"] == "PC001"]
    assert problems and problems[0]["file"] == os.path.join("plans", "locked")
    assert "Permission denied" in problems[0]["message"]
    assert document["summary"]["plans"] == 1


def test_symbolic_link_loop_is_reported_and_walked_once(work: Path) -> None:
    _plan_file(work / "plans" / "good.json")
    (work / "plans" / "again").symlink_to("..", target_is_directory=True)
    (work / "plans" / "self").symlink_to("self")
    result = run_plancheck("check", "--format", "json", "plans", cwd=work)
    _no_crash(result)
    document = json.loads(result.stdout)
    assert document["summary"]["plans"] == 1
    messages = " ".join(d["message"] for d in document["diagnostics"] if d["code"] == "PC001")
    assert "again" in messages and "loop" in messages
    assert "self" in messages
    assert result.returncode == 2


def test_empty_directory_is_not_a_pass(work: Path) -> None:
    (work / "empty").mkdir()
    (work / "empty" / "notes.md").write_text("no plans here")
    result = run_plancheck("check", "empty", cwd=work)
    _no_crash(result)
    assert result.returncode == 2
    assert "All checks passed" not in result.stdout
    assert "no plan files" in result.stdout + result.stderr


@pytest.mark.parametrize(("command", "code", "said"), [
    (("check",), 0, "warning[PC117]: empty.jsonl holds no records"),
    (("fmt", "--to", "dsl"), 1, "no plan found in empty.jsonl"),
    (("fix",), 1, "no plan to repair"),
    (("compile", "--to", "python"), 1, "no plan found in empty.jsonl"),
    (("score", "--gold", "good.json"), 0, "warning[PC117]: empty.jsonl holds no records"),
])
def test_an_empty_batch_is_never_a_silent_pass(work: Path, command: tuple[str, ...], code: int,
                                               said: str) -> None:
    """A JSONL batch with only blank lines (a run that wrote nothing): every command says so."""
    _plan_file(work / "good.json")
    (work / "empty.jsonl").write_text("\n\n")
    result = run_plancheck(*command, "empty.jsonl", cwd=work)
    _no_crash(result)
    assert result.returncode == code, result.stderr
    assert said in result.stdout + result.stderr
    assert "All checks passed" not in result.stdout


def test_unreadable_directory_is_not_a_pass(work: Path, locked: Path) -> None:
    result = run_plancheck("check", "locked", cwd=work)
    _no_crash(result)
    assert result.returncode == 2
    assert "All checks passed" not in result.stdout
    assert "Permission denied" in result.stdout + result.stderr


# --------------------------------------------------------------------------- huge integers


def _step_line(task_id: int, extra: str = "") -> str:
    return json.dumps({"task_id": task_id, "plan": FOG_CHAIN})[:-1] + extra + "}"


def test_huge_integer_spoils_only_its_own_jsonl_record(work: Path) -> None:
    text = "\n".join([_step_line(1), _step_line(2, f', "n": {BIG}'), _step_line(3)]) + "\n"
    (work / "batch.jsonl").write_text(text)
    result = run_plancheck("check", "--format", "json", "batch.jsonl", cwd=work)
    _no_crash(result)
    document = json.loads(result.stdout)
    assert document["summary"]["plans"] == 2
    (bad,) = [d for d in document["diagnostics"] if d["code"] == "PC116"]
    assert bad["record"] == "line 2" and "4,300 digits" in bad["message"]


@pytest.mark.parametrize("suffix", [".json", ".txt"])
def test_huge_integer_in_a_plan_is_a_diagnostic(work: Path, suffix: str) -> None:
    (work / f"p{suffix}").write_text(json.dumps(FOG_CHAIN)[:-1] + f", {BIG}]")
    for command in (("check",), ("fmt", "--to", "dsl"), ("fix",), ("compile", "--to", "python")):
        result = run_plancheck(*command, f"p{suffix}", cwd=work)
        _no_crash(result)
        # A completion's text may still hold a plan before the number; a JSON file may not.
        assert result.returncode in ((1, 2) if suffix == ".json" else (0, 1, 2)), command


def test_huge_integer_in_tasks_and_gold_files(work: Path) -> None:
    (work / "tasks.jsonl").write_text(
        json.dumps({"task_id": 1, "task_desc": "x"}) + "\n"
        + '{"task_id": 2, "task_desc": "y", "n": ' + BIG + "}\n")
    result = run_plancheck("plan", "--tasks", "tasks.jsonl", "--out", "out", cwd=work)
    _no_crash(result)
    assert result.returncode == 2 and "tasks.jsonl:2" in result.stderr
    (work / "pred.jsonl").write_text(json.dumps({"task_id": 1, "plan": FOG_CHAIN}) + "\n")
    (work / "gold.jsonl").write_text(
        '{"task_id": 1, "structured_plan": [], "n": ' + BIG + "}\n")
    result = run_plancheck("score", "--gold", "gold.jsonl", "pred.jsonl", cwd=work)
    _no_crash(result)
    assert result.returncode == 2


# --------------------------------------------------------------------------- standard input


def test_a_batch_on_standard_input_checks_every_record(work: Path) -> None:
    bad = [dict(step) for step in FOG_CHAIN]
    bad[1] = {**bad[1], "agent": "No_Such_Tool"}
    text = "\n".join(json.dumps({"task_id": i, "plan": plan})
                     for i, plan in enumerate([FOG_CHAIN, bad, FOG_CHAIN])) + "\n"
    result = run_plancheck("check", "--format", "json", "-", cwd=work, stdin=text)
    _no_crash(result)
    document = json.loads(result.stdout)
    assert document["summary"]["plans"] == 3
    assert result.returncode == 1, "the second record's unknown tool was not reported"


# --------------------------------------------------------------------------- optional packages


def test_llm_method_without_openai_says_how_to_install_it(work: Path) -> None:
    fake = work / "site" / "openai"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'openai'\", name='openai')\n")
    for path in (fake, fake.parent):
        path.chmod(0o755)
    (fake / "__init__.py").chmod(0o644)
    tasks = work / "tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": 1, "task_desc": "map the flood"}) + "\n")
    root = Path(__file__).resolve().parents[2]
    for method in ("dp", "cot"):
        result = run_plancheck("plan", "--method", method, "--model", "m", "--base-url",
                               "http://127.0.0.1:9", "--tasks", "tasks.jsonl", "--out", "out",
                               cwd=work, env={"PYTHONPATH": f"{fake.parent}{os.pathsep}{root}"})
        _no_crash(result)
        assert result.returncode == 2
        assert "plancheck[llm]" in result.stderr
        assert not (work / "out").exists(), "a failed start left an output directory behind"


def test_explain_on_a_plan_with_unreadable_steps(work: Path) -> None:
    plan = ["not a step", {**FOG_CHAIN[0], "step": 1}]
    (work / "holes.json").write_text(json.dumps(plan))
    result = run_plancheck("check", "--explain", "holes.json", cwd=work)
    _no_crash(result)
    assert result.returncode == 1 and "PC106" in result.stdout


def test_lone_surrogates_are_printed_not_fatal(work: Path) -> None:
    (work / "s.json").write_text('[{"agent": "X\\udc80", "step": 0, "dependence": [-1], '
                                 '"dependence_content": null, "inputs": {"a\\udc81": "x"}, '
                                 '"outputs": ["y"]}]')
    for command in (("check", "--format", "json"), ("check", "--explain"),
                    ("fmt", "--to", "dsl")):
        result = run_plancheck(*command, "s.json", cwd=work,
                               env={"PYTHONIOENCODING": "utf-8:strict"})
        _no_crash(result)
        assert result.returncode in (0, 1), (command, result.stderr)
    result = run_plancheck("check", "--format", "json", "s.json", cwd=work,
                           env={"PYTHONIOENCODING": "utf-8:strict"})
    # Printed as the JSON escape it was read from, so the report reads back the same name.
    messages = [d["message"] for d in json.loads(result.stdout)["diagnostics"]]
    assert "unknown tool `X\udc80` in step 0" in messages


@pytest.mark.parametrize("command", [
    ("check", "ok/good.json", "--output", "ro/report.txt"),
    ("score", "--gold", "ok/good.json", "ok/p.jsonl", "--per-item", "ro/items.jsonl"),
    ("plan", "--method", "solver", "--tasks", "ok/tasks.jsonl", "--out", "ro/run"),
    ("fix", "--in-place", "ro/plan.json"),
])
def test_every_writer_names_a_place_it_cannot_write(work: Path, command: tuple[str, ...]) -> None:
    _plan_file(work / "ok" / "good.json")
    (work / "ok" / "p.jsonl").write_text(json.dumps({"task_id": 1, "plan": FOG_CHAIN}) + "\n")
    (work / "ok" / "tasks.jsonl").write_text(
        json.dumps({"task_id": 1, "task_desc": "restore /d/fog.jpg"}) + "\n")
    plan = [dict(step) for step in FOG_CHAIN]
    plan[1] = {**plan[1], "dependence": [-1]}
    _plan_file(work / "ro" / "plan.json", plan)
    (work / "ro").chmod(0o555)
    lock_directory_writes(work / "ro")
    result = run_plancheck(*command, cwd=work)
    _no_crash(result)
    assert result.returncode == 2, result.stderr
    assert "Permission denied" in result.stderr + result.stdout


def lock_directory_writes(path: Path) -> None:
    """Skip when this user may write into a read-only directory anyway (root without setpriv
    is handled by run_plancheck)."""
    if os.geteuid() != 0 and os.access(path, os.W_OK):
        pytest.skip("this user can write a mode-555 directory")
