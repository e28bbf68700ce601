"""The formats registry: call shapes, the one tool-definition test, sniff, and the field lists,
through the public API and CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.compiler.call_formats import CALL_FORMATS
from plancheck.formats.shapes import CALL_SHAPES, find_calls, is_definition, read_call
from plancheck.formats.sniff import sniff

GEMINI = {"candidates": [{"content": {"role": "model", "parts": [
    {"text": "Looking that up."},
    {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
]}}]}
WEATHER_POOL = {"tools": [{"name": "get_weather", "description": "weather",
                           "inputSchema": {"type": "object",
                                           "properties": {"city": {"type": "string"}},
                                           "required": ["city"]}}]}


def test_call_formats_and_cli_choices_come_from_the_registry() -> None:
    assert tuple(CALL_SHAPES) == CALL_FORMATS
    out = subprocess.run([sys.executable, "-m", "plancheck", "check", "--help"],
                         capture_output=True, text=True, check=True).stdout
    for name in CALL_SHAPES:
        assert name in out


@pytest.mark.parametrize(("value", "shape", "name", "arguments"), [
    ({"type": "function", "function": {"name": "f", "arguments": "{}"}}, "openai-chat", "f", "{}"),
    ({"type": "function_call", "name": "f", "arguments": "{}"}, "openai-responses", "f", "{}"),
    ({"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}}, "anthropic", "f", {"a": 1}),
    ({"functionCall": {"name": "f", "args": {"a": 1}}}, "gemini", "f", {"a": 1}),
    ({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "f",
      "arguments": {"a": 1}}}, "mcp-jsonrpc", "f", {"a": 1}),
    ({"tool": "f", "args": {"a": 1}}, "generic", "f", {"a": 1}),
])
def test_each_detected_shape_reads_its_call(value: Any, shape: str, name: str,
                                            arguments: Any) -> None:
    call = read_call(value)
    assert call is not None
    assert (call.shape, call.name, call.arguments) == (shape, name, arguments)


def test_gemini_parts_are_calls_not_bfcl_output() -> None:
    calls = find_calls(GEMINI)
    assert [(c.shape, c.name, c.pointer) for c in calls] == [
        ("gemini", "get_weather", "/candidates/0/content/parts/1")]
    # A bare list of one-key objects is still BFCL's decoded output.
    assert [c.shape for c in find_calls([{"f": {"a": 1}}, {"g": {}}])] == ["name-keyed"] * 2


def test_gemini_checked_against_a_pool(tmp_path: Path) -> None:
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps(WEATHER_POOL))
    assert plancheck.check(GEMINI, plancheck.load_toolset(pool)).ok
    bad = json.loads(json.dumps(GEMINI))
    bad["candidates"][0]["content"]["parts"][1]["functionCall"]["name"] = "get_wether"
    codes = [d.code for d in plancheck.check(bad, plancheck.load_toolset(pool)).diagnostics]
    assert codes == ["PC201"]


def test_one_definition_of_a_tool_definition() -> None:
    assert is_definition({"name": "f", "parameters": {"type": "object", "properties": {}}})
    assert is_definition({"name": "f", "inputSchema": {"type": "object"}})
    assert not is_definition({"name": "f", "parameters": {"city": "Paris"}})


def test_sniff_says_what_a_value_is() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "string"}}}}}]
    assert sniff(tools) == "tools"
    assert sniff({"tools": tools}) == "tools"
    assert sniff([{"step": 1, "agent": "a", "dependence": []}]) == "plan"
    assert sniff(GEMINI) == "calls:gemini"
    assert sniff([{"name": "f", "parameters": {"a": 1}}]) == "calls:generic"
    assert sniff({"hello": 1}) is None


@pytest.mark.parametrize("to", ["openai", "openai-responses", "mcp"])
def test_a_plain_exported_pool_checked_as_a_plan_is_pc117(tmp_path: Path, to: str) -> None:
    tools = tmp_path / "tools.json"
    subprocess.run([sys.executable, "-m", "plancheck", "toolset", "export", "--to", to,
                    "--plain", "-o", str(tools)], check=True, capture_output=True)
    run = subprocess.run([sys.executable, "-m", "plancheck", "check", "--format", "json",
                          str(tools)], check=False, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "PC117" in run.stdout and "PC107" not in run.stdout and "PC111" not in run.stdout
    codes = [d.code for d in plancheck.check(json.loads(tools.read_text())).diagnostics]
    assert codes == ["PC117"]
