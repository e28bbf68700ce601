"""One reading of tool calls, whatever the entry point (issue 22): the same calls in each shape
plancheck knows get the same diagnostics from ``plancheck check FILE``,
``plancheck.check(value)``, ``plancheck.check(json_text)`` and ``plancheck.check_trajectory``
(value and text). The pool is a real one (the MCP filesystem server's ``tools/list``, see
``tests/data/real/PROVENANCE.md``); each input makes one good call and one bad call (a required
argument missing) so that agreement is about findings, not about finding nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.cli import main

POOL = Path(__file__).resolve().parents[1] / "data" / "real" / "mcp" / "server-filesystem.json"
GOOD = ("read_text_file", {"path": "/tmp/notes.txt"})
BAD = ("write_file", {"path": "/tmp/out.txt"})  # `content` is required
CALLS = (GOOD, BAD)


def _openai(i: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"call_{i}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def _anthropic(i: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": arguments}


SHAPES: dict[str, Any] = {
    "bare calls": [{"name": n, "arguments": a} for n, a in CALLS],
    "openai tool_calls items": [_openai(i, *c) for i, c in enumerate(CALLS)],
    "anthropic tool_use blocks": [_anthropic(i, *c) for i, c in enumerate(CALLS)],
    "responses function_call items": [
        {"type": "function_call", "call_id": f"fc_{i}", "name": n, "arguments": json.dumps(a)}
        for i, (n, a) in enumerate(CALLS)],
    "json-rpc tools/call requests": [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": n, "arguments": a}}
        for i, (n, a) in enumerate(CALLS)],
    "gemini functionCall parts": {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": n, "args": a}} for n, a in CALLS]}}]},
    "one openai assistant message": {
        "role": "assistant", "content": None,
        "tool_calls": [_openai(i, *c) for i, c in enumerate(CALLS)]},
    "one anthropic assistant message": {
        "role": "assistant",
        "content": [{"type": "text", "text": "Reading, then writing."},
                    *(_anthropic(i, *c) for i, c in enumerate(CALLS))]},
    "openai chat transcript": {"messages": [
        {"role": "user", "content": "Copy my notes."},
        {"role": "assistant", "content": None, "tool_calls": [_openai(0, *GOOD)]},
        {"role": "tool", "tool_call_id": "call_0", "content": "buy milk"},
        {"role": "assistant", "content": None, "tool_calls": [_openai(1, *BAD)]}]},
    "anthropic message list": [
        {"role": "user", "content": "Copy my notes."},
        {"role": "assistant", "content": [{"type": "text", "text": "Reading."},
                                          _anthropic(0, *GOOD)]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0",
                                      "content": "buy milk"}]},
        {"role": "assistant", "content": [_anthropic(1, *BAD)]}],
}


def _found(diagnostics: list[Any]) -> list[tuple[str, str]]:
    return sorted((d.code, d.message) for d in diagnostics)


@pytest.fixture(scope="module")
def pool() -> plancheck.Toolset:
    return plancheck.load_toolset(str(POOL))


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_entry_point_reads_a_shape_alike(shape: str, pool: plancheck.Toolset,
                                               tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    value = SHAPES[shape]
    text = json.dumps(value)
    path = tmp_path / "calls.json"
    path.write_text(text, encoding="utf-8")
    entry_points: dict[str, Callable[[], list[tuple[str, str]]]] = {
        "check(value)": lambda: _found(plancheck.check(value, pool).diagnostics),
        "check(text)": lambda: _found(plancheck.check(text, pool).diagnostics),
        "check(Path)": lambda: _found(plancheck.check(path, pool).diagnostics),
        "check_trajectory(value)": lambda: _found(
            plancheck.check_trajectory(value, pool).diagnostics),
        "check_trajectory(text)": lambda: _found(
            plancheck.check_trajectory(text, pool).diagnostics),
    }
    found = {name: run() for name, run in entry_points.items()}
    capsys.readouterr()
    assert main(["check", "--tools", str(POOL), "--format", "json", str(path)]) == 1
    found["plancheck check FILE"] = sorted(
        (d["code"], d["message"]) for d in json.loads(capsys.readouterr().out)["diagnostics"])
    expected = found["plancheck check FILE"]
    assert [code for code, _ in expected] == ["PC203"], expected  # `content` missing, only
    assert "write_file" in expected[0][1]
    assert {name: f for name, f in found.items() if f != expected} == {}


@pytest.mark.parametrize(("plan", "where", "key"), [
    ([{"agent": "x", "inputs": {1: "a"}}], "/0/inputs", "1"),
    ([{"agent": "x", "inputs": ({"k": {2: "b"}},)}], "/0/inputs/0/k", "2"),
    ([{"agent": "x", "inputs": {"a/b": [{None: 1}]}}], "/0/inputs/a~1b/0", "None"),
])
def test_a_python_value_json_cannot_hold_is_named_where_it_is(plan: Any, where: str,
                                                              key: str) -> None:
    """A key JSON cannot hold, found however deep (the walk that finds none builds no
    pointers; the one that found it says where)."""
    report = plancheck.check(plan)
    assert [d.code for d in report.diagnostics] == ["PC100"]
    assert f"the key {key} at `{where}` is not a string" in report.diagnostics[0].message
