"""The command line: exit codes, formats, positions, options."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from plancheck.cli import main
from tests.support.samples import FOG_CHAIN

GOOD = FOG_CHAIN


def write(tmp_path: Path, name: str, content: object) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2))
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_plan_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, str(write(tmp_path, "p.json", GOOD)))
    assert code == 0
    assert "All checks passed (1 plan in 1 file)." in out


def test_error_has_exact_line_and_column(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    plan = json.loads(json.dumps(GOOD))
    plan[1]["agent"] = "Foggy_Object_Detection"
    path = write(tmp_path, "p.json", plan)
    code, out, _ = run_cli(capsys, "check", str(path), "--format", "json")
    assert code == 1
    document = json.loads(out)
    assert document["schema_version"] == 1 and document["tool"]["name"] == "plancheck"
    (diagnostic,) = [d for d in document["diagnostics"] if d["severity"] == "error"]
    assert diagnostic["code"] == "PC201" and diagnostic["name"] == "unknown-tool"
    lines = path.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "Foggy_Object_Detection" in text)
    column = lines[line - 1].index('"Foggy_Object_Detection"') + 1
    assert diagnostic["span"] == {"start_line": line, "start_col": column, "end_line": line,
                                  "end_col": column + len('"Foggy_Object_Detection"'),
                                  "pointer": "/1/agent"}
    assert diagnostic["data"]["suggestion"] == "Foggy_Scenario_Object_Detection"
    assert document["summary"]["errors"] == 1 and document["summary"]["by_code"]["PC201"] == 1


def test_text_renderer_shows_excerpt_and_caret(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    plan = json.loads(json.dumps(GOOD))
    plan[1]["inputs"]["image_path"] = "<GENERATED>-0-<restored_image>"
    code, out, _ = run_cli(capsys, str(write(tmp_path, "p.json", plan)))
    assert code == 1
    assert "error[PC208]: step 0 (`Weather_Degraded_Image_Restoration`) has no output" in out
    assert '"image_path": "<GENERATED>-0-<restored_image>"' in out
    assert "^^^^" in out and "did you mean `restored_image_path`?" in out
    assert "\x1b[" not in out  # no colour when not on a terminal


def test_unknown_tool_does_not_cascade(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    plan = json.loads(json.dumps(GOOD))
    plan[0]["agent"] = "Image_Restorer"
    plan[0]["inputs"] = {"foo": 1, "bar": 2}
    code, out, _ = run_cli(capsys, str(write(tmp_path, "p.json", plan)), "--format", "json")
    errors = [d["code"] for d in json.loads(out)["diagnostics"] if d["severity"] == "error"]
    assert code == 1 and errors == ["PC201"]


def test_select_ignore_and_fail_level(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    plan = json.loads(json.dumps(GOOD))
    plan[0]["inputs"]["weather_degraded_image_path"] = "notes.txt"  # PC302 warning
    path = str(write(tmp_path, "p.json", plan))
    assert run_cli(capsys, path)[0] == 0
    assert run_cli(capsys, path, "--fail-level", "warning")[0] == 1
    assert run_cli(capsys, path, "--fail-level", "warning", "--ignore", "PC3")[0] == 0
    code, out, _ = run_cli(capsys, path, "--select", "literal-type-mismatch", "--format", "json")
    assert code == 0 and [d["code"] for d in json.loads(out)["diagnostics"]] == ["PC302"]


def test_usage_and_io_errors_exit_two(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, str(tmp_path / "missing.json"))[0] == 2
    assert run_cli(capsys, "check")[0] == 2
    code, _, err = run_cli(capsys, str(write(tmp_path, "p.json", GOOD)), "--select", "PC999")
    assert code == 2 and "not a diagnostic code" in err
    code, _, err = run_cli(capsys, str(write(tmp_path, "p.json", GOOD)), "--tools", "nope.wf")
    assert code == 2 and "PC001" in err


def test_explain(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "explain", "PC101")
    assert code == 0 and out.startswith("PC101 no-plan-found")
    code, out, _ = run_cli(capsys, "explain", "unknown-tool")
    assert code == 0 and "PC201" in out
    assert run_cli(capsys, "explain", "PC9999")[0] == 2
    code, out, _ = run_cli(capsys, "explain")
    assert code == 0 and "PC604" in out and "gold comparison:" in out


def test_stdin_and_jsonl_records_are_named(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bad = json.loads(json.dumps(GOOD))
    bad[0]["agent"] = "Nope"
    lines = [json.dumps({"id": "a", "task_id": 7, "plan": GOOD}),
             json.dumps({"task_id": 8, "completion": "no plan here"}),
             json.dumps(bad), "{not json"]
    path = write(tmp_path, "batch.jsonl", "\n".join(lines) + "\n")
    code, out, _ = run_cli(capsys, str(path), "--format", "json")
    document = json.loads(out)
    records = {(d["record"], d["code"]) for d in document["diagnostics"]}
    assert ("8", "PC101") in records and ("line 3", "PC201") in records
    assert ("line 4", "PC116") in records
    assert not any(r == "a" for r, _ in records)
    assert document["summary"]["files"] == 1 and code == 1


def test_module_entry_point_runs_without_traceback(tmp_path: Path) -> None:
    path = write(tmp_path, "p.txt", "I could not make a plan, sorry.")
    result = subprocess.run([sys.executable, "-m", "plancheck", str(path)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "PC101" in result.stdout and "Traceback" not in result.stderr


def test_no_color_env_and_force_color(tmp_path: Path) -> None:
    plan = json.loads(json.dumps(GOOD))
    plan[0]["agent"] = "Nope"
    path = write(tmp_path, "p.json", plan)
    env = {"FORCE_COLOR": "1", "PATH": ""}
    coloured = subprocess.run([sys.executable, "-m", "plancheck", str(path)],
                              capture_output=True, text=True, env=env, check=False)
    assert "\x1b[" in coloured.stdout
    env["NO_COLOR"] = "1"
    plain = subprocess.run([sys.executable, "-m", "plancheck", str(path)],
                           capture_output=True, text=True, env=env, check=False)
    assert "\x1b[" not in plain.stdout


def test_a_directory_stands_for_its_plan_files(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "plans" / "nested").mkdir(parents=True)
    write(tmp_path / "plans", "a.json", GOOD)
    write(tmp_path / "plans" / "nested", "b.json", [dict(GOOD[0], agent="Nope")])
    write(tmp_path / "plans", "notes.md", "not a plan")
    code, out, _ = run_cli(capsys, str(tmp_path / "plans"))
    assert code == 1 and "(2 plans in 2 files checked)" in out and "b.json" in out
