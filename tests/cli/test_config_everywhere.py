"""The configuration file means the same to every command: a ``policy`` in
``[tool.plancheck]`` is decided by compile, fix, fmt and score as by check (or said not to
apply), ``tools = "dora"`` names DORA's pool as ``--tools dora`` does, and docs/configuration.md
says which command reads which key. ``fix --in-place`` keeps the file's owner and mode and
refuses a file this user may not write."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from plancheck.cli import SUBCOMMANDS, main
from plancheck.config import KEYS

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose pyproject.toml names a policy the example plan breaks."""
    shutil.copy(EXAMPLES / "flood_policy.wf", tmp_path / "policy.wf")
    shutil.copy(EXAMPLES / "policy_plan.json", tmp_path / "plan.json")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The exit code and output (a configured file is named by its whole path: shortened)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    here = os.getcwd() + os.sep
    return code, out.replace(here, ""), err.replace(here, "")


def _configure(project: Path, *lines: str) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "p"\n\n[tool.plancheck]\n' + "\n".join(lines) + "\n")


@pytest.mark.parametrize("command", [
    ["check", "plan.json"],
    ["compile", "plan.json", "--to", "python"],
    ["fix", "plan.json"],
    ["fmt", "plan.json", "--to", "dsl"],
])
def test_a_configured_policy_is_decided_as_the_option_is(
        project: Path, command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    given = _run(capsys, *command, "--policy", "policy.wf")
    plain = _run(capsys, *command)
    _configure(project, 'policy = "policy.wf"')
    configured = _run(capsys, *command)
    assert configured == given
    if command[0] != "fmt":  # (fmt reads the policies only to refuse unusable ones)
        assert configured != plain
    assert _run(capsys, *command, "--no-config")[0] == plain[0]


def test_score_reports_the_configured_policy(project: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    steps = json.loads((project / "plan.json").read_text())
    (project / "preds.jsonl").write_text(json.dumps({"id": "a", "task_id": 1, "plan": steps})
                                         + "\n")
    command = ["score", "--gold", "plan.json", "preds.jsonl", "--format", "json",
               "--bootstrap", "0"]
    code, out, _ = _run(capsys, *command, "--policy", "policy.wf")
    given = json.loads(out)
    assert "policy" in given
    _configure(project, 'policy = "policy.wf"')
    configured_code, out, _ = _run(capsys, *command)
    assert (configured_code, json.loads(out)) == (code, given)


def test_a_configured_policy_synth_cannot_apply_is_said(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _configure(project, 'policy = "policy.wf"')
    code, _, err = _run(capsys, "synth", "--goal", "Flood_depth_prediction", "--max-steps",
                        "1", "--limit", "1")
    assert "not applied by `synth`" in err, (code, err)


def test_tools_dora_in_the_config_is_dora_s_pool(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    given = _run(capsys, "toolset", "show", "--tools", "dora", "--format", "json")
    assert given[0] == 0
    _configure(project, 'tools = "dora"')
    assert _run(capsys, "toolset", "show", "--format", "json") == given
    trajectory = str(EXAMPLES / "dora" / "gold_trajectory.json")
    checked = _run(capsys, "check", trajectory, "--no-config", "--tools", "dora")
    assert _run(capsys, "check", trajectory) == checked
    assert "cannot read toolset" not in checked[2]


def test_an_invalid_config_stops_every_command(project: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _configure(project, 'policy = 3')
    for command in (["compile", "plan.json", "--to", "python"], ["fix", "plan.json"],
                    ["score", "--gold", "plan.json", "plan.json"]):
        code, _, err = _run(capsys, *command)
        assert code == 2 and "PC003" in err and "configuration is invalid" in err, command


def test_the_configuration_page_has_a_row_for_every_key_and_a_column_per_command() -> None:
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    header = next(line for line in page.splitlines() if line.startswith("| key"))
    columns = [cell.strip().strip("`") for cell in header.strip("|").split("|")][1:]
    assert set(columns) == set(SUBCOMMANDS) - {"explain", "mcp-proxy"}
    rows = {match.group(1) for match in re.finditer(r"^\| `([a-z-]+)` \|", page, re.M)}
    assert rows == set(KEYS)


# --------------------------------------------------------------------------- fix --in-place


def _broken(project: Path) -> Path:
    plan = json.loads((EXAMPLES / "flood_plan.json").read_text())
    plan[1]["dependence"] = [-1]  # a PC401 fix repairs
    path = project / "broken.json"
    path.write_text(json.dumps(plan, indent=2))
    return path


def test_fix_in_place_refuses_a_read_only_file(project: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = _broken(project)
    before = path.read_bytes()
    path.chmod(0o444)
    code, _, err = _run(capsys, "fix", str(path), "--in-place")
    assert code == 2 and "read-only" in err
    assert path.read_bytes() == before and path.stat().st_mode & 0o777 == 0o444


def test_fix_in_place_keeps_owner_and_mode(project: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = _broken(project)
    path.chmod(0o640)
    if os.geteuid() == 0:  # another user's file (root may give it one)
        os.chown(path, 65534, 65534)
    owner = path.stat().st_uid, path.stat().st_gid
    code, _, err = _run(capsys, "fix", str(path), "--in-place")
    assert code == 0, err
    assert path.stat().st_mode & 0o777 == 0o640
    assert (path.stat().st_uid, path.stat().st_gid) == owner
    assert json.loads(path.read_text())[1]["dependence"] == [0]


def test_a_configured_pool_does_not_replace_dora_s_for_dora_runs(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dora = EXAMPLES / "dora"
    command = ["score", "--gold", str(dora / "tasks"), str(dora / "run"), "--format", "json"]
    plain = _run(capsys, *command, "--no-config")
    (project / "pool.wf").write_text('toolset p {\n  type T\n  tool A {\n    in x: T\n'
                                     '    out y: T\n  }\n}\n')
    _configure(project, 'tools = "pool.wf"', 'policy = "policy.wf"')
    code, out, err = _run(capsys, *command)
    assert (code, out) == plain[:2]
    assert "not decided on DORA runs" in err
