"""Standard input is read by the rules of a file: a JSONL batch piped to ``plancheck -`` is
checked record by record (records with or without an id, bare plan arrays, comment lines), as
the same bytes in a ``.jsonl`` file are; ``--stdin-filename NAME`` reads it as a file named
NAME would be read."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main

ROOT = Path(__file__).resolve().parents[2]
_PLAN = json.loads((ROOT / "examples" / "flood_plan.json").read_text(encoding="utf-8"))
_BAD = [{"agent": "Nope", "step": 0, "dependence": [-1], "inputs": {}, "outputs": ["x"]}]


def _lines(*values: Any) -> str:
    return "".join(value if isinstance(value, str) else json.dumps(value) + "\n"
                   for value in values)


# Batch shapes a user pipes: each must be checked record by record.
SHAPES = {
    "ids": _lines({"id": 1, "plan": _PLAN}, {"id": 2, "plan": _BAD}),
    "no ids": _lines({"plan": _PLAN}, {"plan": _BAD}),
    "task ids": _lines({"task_id": "a", "plan": _PLAN}, {"task_id": "b", "plan": _BAD}),
    "bare plans": _lines(_PLAN, _BAD),
    "comment line": _lines("# two plans\n", {"id": 1, "plan": _PLAN}, {"id": 2, "plan": _BAD}),
    "completions": _lines({"id": "c1", "completion": "```json\n" + json.dumps(_PLAN) + "\n```"},
                          {"id": "c2", "completion": json.dumps(_BAD)}),
    "blank lines and CRLF": _lines({"plan": _PLAN}).replace("\n", "\r\n") + "\n\n"
    + _lines({"plan": _BAD}),
    "three records": _lines({"plan": _BAD}, {"plan": _PLAN}, {"plan": _BAD}),
}


def _run(args: list[str], stdin: bytes, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main(["check", "--format", "json", "--no-config", *args])
    report = json.loads(capsys.readouterr().out)
    for diagnostic in report["diagnostics"]:
        diagnostic["file"] = "FILE"
    return code, report


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_batch_reads_alike_from_stdin_and_from_files(
        shape: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = SHAPES[shape].encode("utf-8")
    records = sum(1 for line in SHAPES[shape].splitlines()
                  if line.strip() and not line.startswith("#"))
    batch = tmp_path / "batch.jsonl"
    batch.write_bytes(data)
    unnamed = tmp_path / "batch"  # no suffix: read by what it holds, as stdin is
    unnamed.write_bytes(data)
    expected = _run([str(batch)], b"", monkeypatch, capsys)
    assert expected[1]["summary"]["plans"] == records  # every record checked
    assert _run(["-"], data, monkeypatch, capsys) == expected
    assert _run([str(unnamed)], b"", monkeypatch, capsys) == expected
    assert _run(["-", "--stdin-filename", "piped.jsonl"], data, monkeypatch, capsys) == expected


def test_stdin_filename_picks_the_rules_and_names_the_input(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A pretty-printed plan named as a .jsonl is read line by line (each line a PC116), as a
    .jsonl file of those bytes is; the diagnostics name the given file."""
    data = (ROOT / "examples" / "flood_plan.json").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    code = main(["check", "--format", "json", "--no-config", "-",
                 "--stdin-filename", "plans/x.jsonl"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert {d["file"] for d in report["diagnostics"]} == {"plans/x.jsonl"}
    assert {d["code"] for d in report["diagnostics"]} == {"PC116"}
    code, plain = _run(["-"], data, monkeypatch, capsys)
    assert plain["summary"]["plans"] == 1 and "PC116" not in plain["summary"]["by_code"]


def test_stdin_filename_without_stdin_is_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--no-config", "--stdin-filename", "x.jsonl",
                 str(ROOT / "examples" / "flood_plan.json")]) == 2
    assert "--stdin-filename" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["fmt", "--to", "dsl"], ["fix"],
                                     ["compile", "--to", "python"]])
def test_every_command_reading_stdin_takes_its_name(
        command: list[str], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = (ROOT / "examples" / "flood_plan.json").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    main([*command, "--no-config", "-", "--stdin-filename", "plans/flood.json"])
    assert "plans/flood.json:" in capsys.readouterr().err
    assert main([*command, "--no-config", str(ROOT / "examples" / "flood_plan.json"),
                 "--stdin-filename", "x.json"]) == 2
    assert "--stdin-filename" in capsys.readouterr().err
