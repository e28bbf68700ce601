"""The registry of tool-pool formats: each format is recognised and read (one row per format:
adding a format adds a row), the registry is where the format names and their words come from,
and a pool in the newest format (Gemini function declarations) works end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main
from plancheck.corpus.foreign import FORMATS
from plancheck.corpus.pool_formats import pool_kind
from plancheck.corpus.pool_registry import POOL_FORMATS
from plancheck.corpus.toolsets import load_toolset

# One tool `f` taking a required string `a` and an optional integer `b`, returning `r`, in
# each format (the manifest's keys are typed by the built-in pool, so it gets its own tool).
FORMAT_ROWS: list[tuple[str, Any, str, list[tuple[str, str, bool]]]] = [
    ("mcp", {"tools": [{"name": "f", "inputSchema": {
        "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"]}, "outputSchema": {"type": "object", "properties": {
            "r": {"type": "string"}}}}]},
     "f", [("a", "String", True), ("b", "Integer", False)]),
    ("openai", [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"]}}}],
     "f", [("a", "String", True), ("b", "Integer", False)]),
    ("gemini", {"tools": [{"functionDeclarations": [{"name": "f", "parameters": {
        "type": "OBJECT", "properties": {"a": {"type": "STRING"}, "b": {"type": "INTEGER"}},
        "required": ["a"]}, "response": {"type": "OBJECT", "properties": {
            "r": {"type": "STRING"}}}}]}]},
     "f", [("a", "String", True), ("b", "Integer", False)]),
    ("taskbench", {"nodes": [{"id": "f", "parameters": [{"name": "a", "type": "string"}]}],
                   "links": []},
     "f", [("a", "String", True)]),
    ("disasterbench-manifest", {"RGB_GeoImage_Classifier": {
        "desc": "d", "input": {"image_path": "str"}, "output": {"label": "str"}}},
     "RGB_GeoImage_Classifier", [("image_path", "OpticalImage", True)]),
]


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "value", "tool", "inputs"), FORMAT_ROWS,
                         ids=[row[0] for row in FORMAT_ROWS])
def test_each_format_is_recognised_and_read(name: str, value: Any, tool: str,
                                            inputs: list[tuple[str, str, bool]],
                                            tmp_path: Path) -> None:
    found = [f.name for f in POOL_FORMATS if f.sniff(value)]
    assert found[:1] == [name]
    toolset, warnings = load_toolset(write(tmp_path / f"{name}.json", value))
    assert [(p.name, p.type, p.required) for p in toolset.tools[tool].inputs] == inputs
    assert not [w for w in warnings if w.severity.name == "ERROR"]


def test_every_format_has_a_row_and_the_registry_names_them() -> None:
    # A format read from JSON has a row here; one in a language of its own (it owns file
    # suffixes) is tested in a file of its own, e.g. test_python_module_pool.py.
    assert sorted(row[0] for row in FORMAT_ROWS) == sorted(
        f.name for f in POOL_FORMATS if not f.suffixes)
    assert tuple(sorted(f.name for f in POOL_FORMATS)) == FORMATS
    for row in FORMAT_ROWS:
        assert pool_kind(row[1]) == next(f.words for f in POOL_FORMATS if f.name == row[0])


# A generateContent request body as Gemini's function-calling guide writes one (upper-case
# OpenAPI types, a response schema, and a built-in tool beside the declarations).
GEMINI_REQUEST = {
    "contents": [{"role": "user", "parts": [{"text": "Book a meeting with Ana tomorrow."}]}],
    "tools": [{"functionDeclarations": [
        {"name": "schedule_meeting", "description": "Schedules a meeting.",
         "parameters": {"type": "OBJECT", "properties": {
             "attendees": {"type": "ARRAY", "items": {"type": "STRING"}},
             "date": {"type": "STRING"}, "duration_minutes": {"type": "INTEGER"}},
             "required": ["attendees", "date"]},
         "response": {"type": "OBJECT", "properties": {"meeting_id": {"type": "STRING"}}}},
        {"name": "get_time", "description": "The current time."}]},
        {"googleSearch": {}}],
}


def _reply(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": call} for call in calls]}}]}


def test_a_gemini_pool_checks_gemini_calls(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    pool = write(tmp_path / "request.json", GEMINI_REQUEST)
    good = write(tmp_path / "good.json", _reply(
        {"name": "schedule_meeting", "args": {"attendees": ["Ana"], "date": "2026-12-04"}},
        {"name": "get_time", "args": {}}))
    bad = write(tmp_path / "bad.json", _reply(
        {"name": "schedule_meeting", "args": {"attendees": "Ana"}},
        {"name": "google_search", "args": {"q": "x"}}))
    assert main(["check", "--tools", str(pool), str(good)]) == 0
    capsys.readouterr()
    assert main(["check", "--tools", str(pool), "--format", "json", str(bad)]) == 1
    codes = sorted(d["code"] for d in json.loads(capsys.readouterr().out)["diagnostics"])
    assert "PC203" in codes  # `date` missing
    assert "PC201" in codes or "PC101" in codes  # no tool `google_search` in the pool
    assert len(codes) >= 3  # and `attendees` is no list


def test_a_gemini_pool_is_no_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = write(tmp_path / "request.json", GEMINI_REQUEST)
    main(["check", str(pool)])
    assert "holds Gemini function declarations (a tool pool), not a plan" in \
        capsys.readouterr().out
