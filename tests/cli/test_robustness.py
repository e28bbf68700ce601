"""No input makes the command line print a traceback: exit 0, 1 or 2, with diagnostics."""

from __future__ import annotations

import json
import string
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancheck.cli import main
from tests.strategies import json_values, well_typed_plan

_SETTINGS = settings(max_examples=120, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])


def run_on(text: str, suffix: str, capsys: pytest.CaptureFixture[str],
           *extra: str) -> tuple[int, str, str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"input{suffix}"
        path.write_text(text, encoding="utf-8")
        code = main([str(path), "--format", "json", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def assert_clean_exit(code: int, out: str, err: str) -> None:
    assert code in (0, 1, 2)
    assert "Traceback" not in out + err
    if out:
        document = json.loads(out)
        assert {"schema_version", "summary", "diagnostics"} <= set(document)
        if code == 1:
            assert document["diagnostics"]


@_SETTINGS
@given(text=st.text(alphabet=string.printable + "{}[]\"'<>-é\u2028", max_size=300),
       suffix=st.sampled_from([".txt", ".json", ".jsonl", ".wf"]))
def test_arbitrary_text(text: str, suffix: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert_clean_exit(*run_on(text, suffix, capsys))


@pytest.mark.slow
@_SETTINGS
@given(value=json_values, suffix=st.sampled_from([".json", ".txt", ".jsonl"]))
def test_arbitrary_json(value: Any, suffix: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert_clean_exit(*run_on(json.dumps(value), suffix, capsys))


@st.composite
def damaged_plans(draw: st.DrawFn) -> str:
    plan = draw(well_typed_plan(max_steps=4))
    step = draw(st.integers(0, len(plan) - 1))
    field = draw(st.sampled_from(["agent", "step", "dependence", "dependence_content",
                                  "inputs", "outputs"]))
    plan[step][field] = draw(json_values)
    text = json.dumps(plan, indent=draw(st.sampled_from([None, 2])))
    cut = draw(st.integers(0, len(text)))
    damage = draw(st.sampled_from(["none", "truncate", "prose", "fence", "braces"]))
    if damage == "truncate":
        text = text[:cut]
    elif damage == "prose":
        text = "Thinking... The structured task plan is: " + text
    elif damage == "fence":
        text = "```json\n" + text + "\n```"
    elif damage == "braces":
        text = text.replace("{", "{{").replace("}", "}}")
    return text


@pytest.mark.slow
@_SETTINGS
@given(text=damaged_plans(), suffix=st.sampled_from([".txt", ".json"]), strict=st.booleans())
def test_damaged_plans(text: str, suffix: str, strict: bool,
                       capsys: pytest.CaptureFixture[str]) -> None:
    extra = ("--strict-json",) if strict else ()
    assert_clean_exit(*run_on(text, suffix, capsys, *extra))


def test_deeply_nested_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert_clean_exit(*run_on("[" * 50000 + "]" * 50000, ".json", capsys))
    assert_clean_exit(*run_on("[" * 50000, ".txt", capsys))


def test_invalid_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff\xfe\x00[")
    code = main([str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and "PC001" in out + err and "Traceback" not in out + err


@pytest.mark.parametrize(("data", "why"), [
    ('[{"name": "Flood_Detection"}]'.encode("utf-16"), "it is UTF-16 text"),
    ('[{"name": "Flood_Detection"}]'.encode("utf-16-be").join([b"\xfe\xff", b""]),
     "it is UTF-16 text"),
    ('[{"name": "Flood_Detection"}]'.encode("utf-32"), "it is UTF-32 text"),
    (b'[{"name": "caf\xe9"}]', "it is not UTF-8 text (byte 0xe9 at offset 14)"),
])
def test_a_file_that_is_not_utf8_says_what_it_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, why: str) -> None:
    """A plan saved as UTF-16 (Windows PowerShell's `>` writes it) or in Latin-1 is named as
    such, not with Python's codec message ("'utf-8' codec can't decode byte 0xff in position
    0: invalid start byte"), in a file and on standard input."""
    path = tmp_path / "plan.json"
    path.write_bytes(data)
    code = main(["check", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and f"cannot read {path}: {why}; plans are read as UTF-8" in out + err
    assert "codec" not in out + err
    piped = subprocess.run([sys.executable, "-m", "plancheck", "check", "-"], input=data,
                           capture_output=True, timeout=60, check=False)
    shown = (piped.stdout + piped.stderr).decode()
    assert piped.returncode == 2 and f"{why}; plans are read as UTF-8" in shown, shown


@pytest.mark.parametrize(("option", "name", "text", "what"), [
    ("--tools", "tools.json", '{"tools": []}', "toolset"),
    ("--policy", "rules.wf", 'policy p "x" {\n  at most 1 a\n}\n', "policy"),
])
def test_a_pool_or_policy_file_in_utf16_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, name: str,
        text: str, what: str) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text("[]", encoding="utf-8")
    (tmp_path / name).write_bytes(text.encode("utf-16"))
    code = main(["check", str(plan), option, str(tmp_path / name)])
    out, err = capsys.readouterr()
    assert code == 2 and f"cannot read {what} {tmp_path / name}: it is UTF-16 text" in out + err
