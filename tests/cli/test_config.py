"""Configuration files: discovery, validation, precedence of the command line."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancheck.cli import main
from plancheck.config import ConfigError, load_config
from plancheck.diagnostics.severity import Severity
from tests.support.samples import FOG_CHAIN

GOOD = FOG_CHAIN


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory with a plan that has a warning (PC302) and an error (PC201), and a
    subdirectory the tests run from (discovery walks up)."""
    plan = copy.deepcopy(GOOD)
    plan[0]["inputs"]["weather_degraded_image_path"] = "notes.txt"  # PC302 warning
    plan[1]["agent"] = "Nope"  # PC201 error
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "plan.json").write_text(json.dumps(plan, indent=2))
    monkeypatch.chdir(tmp_path / "plans")
    return tmp_path


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", "plan.json", *args])
    out, err = capsys.readouterr()
    return code, out, err


def codes_in(out: str) -> dict[str, str]:
    """code -> severity, from JSON output."""
    return {d["code"]: d["severity"] for d in json.loads(out)["diagnostics"]}


def test_pyproject_table_is_found_walking_up(project: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "plans"\n\n[tool.plancheck]\nselect = ["PC3"]\nformat = "json"\n'
        'fail-level = "warning"\n')
    code, out, _ = check(capsys)
    assert codes_in(out) == {"PC302": "warning"} and code == 1


def test_plancheck_toml_wins_and_pyproject_without_table_is_skipped(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "plancheck.toml").write_text('format = "json"\nignore = ["unknown-tool"]\n')
    (project / "pyproject.toml").write_text('[tool.plancheck]\nformat = "concise"\n')
    (project / "plans" / "pyproject.toml").write_text('[project]\nname = "plancheck-ish"\n')
    code, out, _ = check(capsys)
    assert codes_in(out) == {"PC302": "warning"} and code == 0


@pytest.mark.parametrize(("codec", "why"), [
    ("latin-1", "it is not UTF-8 text (byte 0xe9 at offset 38); TOML files are UTF-8"),
    ("utf-16", "it is UTF-16 text; TOML files are UTF-8"),
])
def test_a_pyproject_that_is_not_utf8_is_pc001_as_a_plancheck_toml(
        project: Path, capsys: pytest.CaptureFixture[str], codec: str, why: str) -> None:
    """It was passed over without a word (and its settings silently not applied)."""
    body = 'format = "json"\n# caf\u00e9\n'
    (project / "pyproject.toml").write_bytes(("[tool.plancheck]\n" + body).encode(codec))
    code, out, err = check(capsys)
    assert code == 2
    assert f"error[PC001]: cannot read configuration {project / 'pyproject.toml'}: {why}" \
        in out + err
    (project / "pyproject.toml").unlink()
    (project / "plancheck.toml").write_bytes(body.encode(codec))
    code, out, err = check(capsys)
    assert code == 2 and "error[PC001]: cannot read configuration" in out + err


def test_a_pyproject_that_is_not_utf8_and_never_names_plancheck_is_passed_over(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_bytes(b'[project]\nname = "caf\xe9"\n')
    assert check(capsys)[0] == 1  # the plan's own error; no configuration involved


def test_nearest_configuration_wins(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "plancheck.toml").write_text('format = "concise"\n')
    (project / "plans" / "plancheck.toml").write_text('format = "json"\n')
    assert codes_in(check(capsys)[1]).keys() == {"PC201", "PC302"}


def test_command_line_overrides_configuration(project: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (project / "plancheck.toml").write_text(
        'select = ["PC3"]\nformat = "json"\nfail-level = "warning"\nstrict-json = true\n')
    code, out, _ = check(capsys, "--select", "PC2", "--fail-level", "error", "--format",
                         "concise")
    assert code == 1 and "error[PC201]" in out and "PC302" not in out
    code, out, _ = check(capsys, "--ignore", "PC302")
    assert code == 0 and json.loads(out)["diagnostics"] == []  # select from the file still holds
    alias_step = {("agent_name" if key == "agent" else key): v for key, v in GOOD[0].items()}
    (project / "plans" / "alias.json").write_text(json.dumps([alias_step]))
    strict = main(["check", "alias.json", "--format", "json", "--select", "PC1"])
    relaxed = main(["check", "alias.json", "--format", "json", "--select", "PC1",
                    "--no-strict-json"])
    out = capsys.readouterr().out
    assert strict == 1 and relaxed == 0 and '"PC104"' in out
    code, out, _ = check(capsys, "--no-config", "--format", "concise")
    assert code == 1 and "PC201" in out and "PC302" in out


def test_severity_overrides_regrade_and_change_the_exit_code(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "plancheck.toml").write_text(
        'format = "json"\n[severity]\nPC2 = "info"\nliteral-type-mismatch = "error"\n')
    code, out, _ = check(capsys)
    assert codes_in(out) == {"PC201": "info", "PC302": "error"} and code == 1
    (project / "plancheck.toml").write_text(
        'format = "json"\n[severity]\nPC3 = "error"\nPC302 = "info"\nPC201 = "warning"\n')
    code, out, _ = check(capsys)
    assert codes_in(out) == {"PC201": "warning", "PC302": "info"} and code == 0


@settings(max_examples=30, deadline=None)
@given(st.permutations([("PC3", "error"), ("PC30", "warning"), ("PC302", "info"),
                        ("literal-type-mismatch", "info"), ("PC", "warning")]))
def test_the_most_specific_severity_pattern_wins_in_any_order(
    table: list[tuple[str, str]]
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "plancheck.toml"
        path.write_text("[severity]\n" + "".join(f'"{k}" = "{v}"\n' for k, v in table))
        config = load_config(path)
    patterns = [pattern for pattern, _ in config.severity]
    # Exact codes and names before prefixes; longer prefixes before shorter ones.
    assert patterns.index("PC302") < patterns.index("PC30") < patterns.index("PC3") \
        < patterns.index("PC")
    assert patterns.index("literal-type-mismatch") < patterns.index("PC30")
    assert dict(config.severity)["PC30"] is Severity.WARNING


def test_tools_path_is_relative_to_the_configuration_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "plancheck.toml").write_text('tools = "pools/missing.wf"\n')
    code, _, err = check(capsys)
    assert code == 2 and str(project / "pools" / "missing.wf") in err
    (project / "plancheck.toml").write_text('tools = "builtin"\nformat = "json"\n')
    assert check(capsys)[0] == 1


def test_explicit_config_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = project / "elsewhere.toml"
    other.write_text('select = ["PC201"]\nformat = "json"\n')
    (project / "plancheck.toml").write_text('format = "concise"\n')
    code, out, _ = check(capsys, "--config", str(other))
    assert codes_in(out) == {"PC201": "error"} and code == 1
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.plancheck]\nselect = ["PC302"]\nformat = "json"\n')
    assert codes_in(check(capsys, "--config", str(pyproject))[1]) == {"PC302": "warning"}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('colour = true\n', ["unknown key `colour`", "`select`, `ignore`"]),
        ('fail-level = "fatal"\n', ["`fail-level`", "'error', 'warning' or 'info'", '"fatal"']),
        ('select = ["PC2", "PC999"]\n', ["`select[1]`", "`PC999` is not a diagnostic code"]),
        ('select = "PC2"\n', ["`select`", "valid list"]),
        ('format = "xml"\n', ["`format`", "must be one of text, concise"]),
        ('strict-json = "yes"\n', ["`strict-json`", "valid boolean"]),
        ('[severity]\nPC201 = "loud"\nPC99 = "error"\n',
         ["`severity.PC201`", "`PC99` is not a diagnostic code"]),
        ('select = [\n', ["invalid TOML"]),
    ],
)
def test_invalid_configuration_is_a_clear_error(
    project: Path, capsys: pytest.CaptureFixture[str], content: str, expected: list[str]
) -> None:
    path = project / "plancheck.toml"
    path.write_text(content)
    code, out, err = check(capsys)
    assert code == 2 and out == ""
    assert "error[PC003]" in err and str(path) in err
    for text in expected:
        assert text in err
    assert "nothing was checked" in err and "Traceback" not in err


def test_invalid_table_in_pyproject_points_at_the_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.plancheck]\nselect = ["PC2"]\nfail-level = "fatal"\n')
    code, _, err = check(capsys)
    assert code == 2
    assert f"--> {project / 'pyproject.toml'}:6:1" in err and '6 | fail-level = "fatal"' in err


def test_unreadable_or_unsuitable_explicit_config(project: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = check(capsys, "--config", str(project / "missing.toml"))
    assert code == 2 and "error[PC001]" in err and "missing.toml" in err
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n')
    code, _, err = check(capsys, "--config", str(project / "pyproject.toml"))
    assert code == 2 and "has no [tool.plancheck] table" in err
    with pytest.raises(ConfigError) as raised:
        load_config(project / "pyproject.toml", explicit=True)
    assert raised.value.diagnostics[0].code == "PC003"


def test_no_config_ignores_a_broken_file(project: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (project / "plancheck.toml").write_text("nonsense = [\n")
    assert check(capsys, "--no-config")[0] == 1
    code, _, err = check(capsys, "--no-config", "--config", "plancheck.toml")
    assert code == 2 and "contradict" in err


def test_pydantic_is_imported_only_when_a_table_is_found(project: Path) -> None:
    probe = ("import sys\nfrom plancheck.cli import main\ncode = main(['check', 'plan.json', "
             "'-q'])\nprint(code, 'pydantic' in sys.modules)")

    def run() -> str:
        result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                cwd=project / "plans", check=False)
        assert result.stderr == ""
        return result.stdout.splitlines()[-1]

    (project / "pyproject.toml").write_text('[project]\nname = "plancheck-plans"\n')
    assert run() == "1 False"
    (project / "pyproject.toml").write_text('[tool.plancheck]\nfail-level = "warning"\n')
    assert run() == "1 True"
