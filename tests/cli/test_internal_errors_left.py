"""The internal errors of issue 34, each now a diagnostic of its own: a raw control character
in a DSL string literal (PC119), a 5,000-digit integer in the DSL (PC120), a --max-size past
what can be read (a usage error, PC003 in a configuration), DORA values DORA cannot score
(PC007, documented; not PC002, "internal error, please report it")."""

from __future__ import annotations

from pathlib import Path

import pytest

from plancheck.cli import main
from plancheck.diagnostics.codes import CODES

REPO = Path(__file__).resolve().parents[2]
PLAN = str(REPO / "examples" / "flood_plan.json")
BIG = "9" * 5000


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


@pytest.mark.parametrize(("literal", "code", "column"), [
    ('"a\tb"', "PC119", 27), ('"a\x1b[31mb"', "PC119", 27), ('"\x00"', "PC119", 27),
    (BIG, "PC120", 27), ("-" + BIG, "PC120", 27), (f"[1, {{\"k\": {BIG}}}]", "PC120", 37),
])
def test_a_plan_literal_that_cannot_be_read_is_its_own_diagnostic(
        tmp_path: Path, literal: str, code: str, column: int,
        capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "p.wf"
    plan.write_text(f"plan p {{\n  step 0 = GeoChat(prompt={literal})\n}}\n")
    status, output = _run(capsys, "check", "--no-config", str(plan), "--format", "concise")
    assert status == 1, output
    assert f"p.wf:2:{column}: error[{code}]" in output
    assert "internal error" not in output and "PC002" not in output


def test_a_5000_digit_step_number_is_pc120(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "p.wf"
    plan.write_text(f"plan p {{\n  step {BIG} = GeoChat(prompt=\"x\")\n}}\n")
    status, output = _run(capsys, "check", "--no-config", str(plan), "--format", "concise")
    assert status == 1 and "error[PC120]" in output, output


def test_a_toolset_literal_that_cannot_be_read_is_its_own_diagnostic(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = tmp_path / "pool.wf"
    pool.write_text('toolset t {\n  type Image "a\tb"\n  tool A {\n    in x: Image\n'
                    '    out y: Image\n  }\n}\n')
    status, output = _run(capsys, "toolset", "show", "--tools", str(pool))
    assert status == 2 and "PC119" in output and "internal error" not in output, output


@pytest.mark.parametrize(("rule", "code"), [
    ('require Flood_depth_prediction.region_topography_path matches "a\tb"', "PC119"),
    (f"warn at most {BIG} GeoChat", "PC120"),
])
def test_a_policy_literal_that_cannot_be_read_is_its_own_diagnostic(
        tmp_path: Path, rule: str, code: str, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "policy.wf"
    policy.write_text(f"policy p {{\n  {rule}\n}}\n")
    status, output = _run(capsys, "check", "--no-config", PLAN, "--policy", str(policy))
    assert status == 2 and f"error[{code}]" in output, output
    assert "internal error" not in output


@pytest.mark.parametrize("command", [
    ["check", PLAN], ["fmt", "--to", "dsl", PLAN], ["fix", PLAN],
    ["compile", "--to", "python", PLAN], ["score", "--gold", PLAN, PLAN],
    ["report", str(REPO / "examples" / "results")], ["toolset", "show"],
])
def test_a_size_past_any_file_is_refused_not_an_overflow(
        command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    status, output = _run(capsys, *command, "--max-size", "99999999999999999999G")
    assert status == 2 and "--max-size" in output and "largest size" in output, output
    assert "internal error" not in output
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.plancheck]\nmax-size = "99999999999999999999G"\n')
    status, output = _run(capsys, *command)
    assert status == 2 and "PC003" in output and "largest size" in output, output


def test_the_new_codes_are_documented() -> None:
    for code in ("PC007", "PC119", "PC120"):
        assert CODES[code].explanation


def test_a_value_dora_cannot_score_is_pc007(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    import json
    import shutil

    example = REPO / "examples" / "dora"
    run = tmp_path / "run"
    shutil.copytree(example / "run", run)
    records = run / "t1_perception_and_assessment" / "benchmark.jsonl"
    lines = records.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["trajectory"][0]["call"] = 5  # a tool name that is no string: DORA raises
    lines[0] = json.dumps(record)
    records.write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, output = _run(capsys, "score", "--gold", str(example / "tasks"), str(run))
    assert status == 2 and "error[PC007]" in output and "tool name" in output, output
    assert "PC002" not in output
    assert main(["explain", "PC007"]) == 0
    assert "DORA" in capsys.readouterr().out
