"""A call object that reads as two calls is refused by the guard (PC122).

Loops execute calls by reading keys of their own choosing: ``call["tool"]`` (LangChain's
actions), ``call["name"]``, ``call["function"]["name"]``, ``params.name``. An object that names
one tool under one key and another under a second key (or holds two sets of arguments) was
judged by its first reading and allowed, while a loop reading the other key ran an unchecked
call: ``{"name": "read_text_file", "tool": "write_file", ...}`` was allowed as a read. Every
shape's well-formed call, from real captures, still reads one way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plancheck
from plancheck.cli import main

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
POOL = REAL / "mcp" / "server-filesystem.json"
READ = {"path": "notes.txt"}
WRITE = {"path": "/etc/cron.d/job", "content": "* * * * * root sh"}

AMBIGUOUS: dict[str, Any] = {
    "name and tool": {"name": "read_text_file", "tool": "write_file", "arguments": READ},
    "name and action": {"name": "read_text_file", "action": "write_file", "arguments": READ},
    "arguments and args": {"name": "write_file", "arguments": {"path": "a.txt", "content": ""},
                           "args": WRITE},
    "arguments and input": {"name": "write_file", "arguments": {"path": "a.txt", "content": ""},
                            "input": WRITE},
    "openai item with a top-level name": {
        "id": "c1", "type": "function", "name": "write_file",
        "function": {"name": "read_text_file", "arguments": json.dumps(READ)}},
    "tool_use block with a function": {
        "type": "tool_use", "id": "t1", "name": "read_text_file", "input": READ,
        "function": {"name": "write_file", "arguments": json.dumps(WRITE)}},
    "tools/call with a top-level name": {
        "jsonrpc": "2.0", "id": 3, "method": "tools/call", "name": "write_file",
        "params": {"name": "read_text_file", "arguments": READ}},
}

ONE_READING: dict[str, Any] = {
    "plain": {"id": "c1", "name": "read_text_file", "arguments": READ},
    "openai chat": {"id": "c1", "type": "function",
                    "function": {"name": "read_text_file", "arguments": json.dumps(READ)}},
    "openai responses": {"type": "function_call", "id": "fc_1", "call_id": "c1",
                         "name": "read_text_file", "arguments": json.dumps(READ),
                         "status": "completed"},
    "anthropic": {"type": "tool_use", "id": "c1", "name": "read_text_file", "input": READ},
    "gemini": {"functionCall": {"name": "read_text_file", "args": READ}},
    "mcp": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "read_text_file", "arguments": READ, "_meta": {}}},
    "bedrock": {"toolUse": {"toolUseId": "c1", "name": "read_text_file", "input": READ}},
    "the same tool twice": {"name": "read_text_file", "tool": "read_text_file",
                            "arguments": json.dumps(READ), "args": READ},
}


def _codes(diagnostics: Any) -> list[tuple[str, str]]:
    return sorted((d.code, d.severity.label) for d in diagnostics)


def _checked_by_the_cli(call: Any, profile: str, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> tuple[list[tuple[str, str]], int]:
    """``plancheck check`` of ``call`` as a file: its (code, severity) pairs and exit status."""
    path = tmp_path / "call.json"
    path.write_text(json.dumps(call), encoding="utf-8")
    status = main(["check", str(path), "--tools", str(POOL), "--profile", profile,
                   "--format", "json"])
    printed = json.loads(capsys.readouterr().out)["diagnostics"]
    return sorted((d["code"], d["severity"]) for d in printed), status


@pytest.mark.parametrize("label", sorted(AMBIGUOUS))
def test_the_guard_refuses_a_call_that_reads_two_ways(label: str) -> None:
    verdict = plancheck.Guard(plancheck.load_toolset(POOL)).propose(AMBIGUOUS[label])
    assert isinstance(verdict, plancheck.Verdict)
    assert not verdict.allowed
    codes = [d.code for d in verdict.diagnostics]
    assert "PC122" in codes, verdict.feedback
    assert "reads as two calls" in verdict.feedback
    assert verdict.feedback.count("PC122") == 1
    assert plancheck.Guard(plancheck.load_toolset(POOL), profile="default").propose(
        AMBIGUOUS[label]).diagnostics[0].severity.label == "warning"


@pytest.mark.parametrize("label", sorted(ONE_READING))
def test_every_shape_written_once_reads_one_way(label: str) -> None:
    verdict = plancheck.Guard(plancheck.load_toolset(POOL)).propose(ONE_READING[label])
    assert isinstance(verdict, plancheck.Verdict)
    assert verdict.allowed, verdict.feedback
    assert verdict.diagnostics == []


@pytest.mark.parametrize("profile", ["default", "guard"])
def test_the_guard_check_and_the_cli_say_the_same(
        profile: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toolset = plancheck.load_toolset(POOL)
    for label in ("name and tool", "arguments and input", "openai item with a top-level name"):
        call = AMBIGUOUS[label]
        guard = _codes(plancheck.Guard(toolset, profile=profile, provenance=False)
                       .propose(call).diagnostics)
        checked = _codes(plancheck.check(call, toolset, profile=profile).diagnostics)
        cli, status = _checked_by_the_cli(call, profile, tmp_path, capsys)
        assert guard == checked == cli, (label, guard, checked, cli)
        assert ("PC122", "error" if profile == "guard" else "warning") in cli
        assert status == (1 if profile == "guard" else 0)


def test_a_trajectory_of_such_objects_is_flagged_where_its_reader_and_a_loop_differ(
        ) -> None:
    """A list of ``{name, tool, arguments}`` is read as a DORA-style trajectory, whose reader
    takes ``tool`` first, while the guard takes ``name``: either way the object is flagged."""
    calls = [AMBIGUOUS["name and tool"]]
    report = plancheck.check_trajectory(calls, plancheck.load_toolset(POOL), profile="guard")
    assert ("PC122", "error") in _codes(report.diagnostics)


REPEATED_KEY = '{"path": "/etc/passwd", "path": "notes.txt"}'  # (last value: notes.txt)
TWICE: dict[str, Any] = {
    "openai chat": {"id": "c1", "type": "function",
                    "function": {"name": "read_text_file", "arguments": REPEATED_KEY}},
    "openai responses": {"type": "function_call", "id": "fc_1", "call_id": "c1",
                         "name": "read_text_file", "arguments": REPEATED_KEY},
}


@pytest.mark.parametrize("label", sorted(TWICE))
@pytest.mark.parametrize("profile", ["default", "guard"])
def test_arguments_text_that_holds_a_key_twice_reads_two_ways(
        label: str, profile: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Arguments written as JSON text with a key twice: Python, JavaScript and msgspec keep the
    last value (`notes.txt`), C readers such as cJSON and yyjson the first (`/etc/passwd`), so
    a loop that runs the model's text may run another call than the one judged. The guard
    refuses it (PC118, an error under the guard profile), and check and the CLI say the same."""
    toolset = plancheck.load_toolset(POOL)
    call = TWICE[label]
    verdict = plancheck.Guard(toolset, profile=profile, provenance=False).propose(call)
    assert isinstance(verdict, plancheck.Verdict)
    assert verdict.allowed is (profile == "default")
    assert "the key `path` appears twice" in verdict.feedback or profile == "default"
    guard = _codes(verdict.diagnostics)
    checked = _codes(plancheck.check(call, toolset, profile=profile).diagnostics)
    cli, status = _checked_by_the_cli(call, profile, tmp_path, capsys)
    assert guard == checked == cli == [("PC118", "error" if profile == "guard" else "warning")]
    assert status == (1 if profile == "guard" else 0)


def _repeats(text: str) -> bool:
    """The oracle: whether some object of the JSON ``text`` holds a key twice."""
    found: list[bool] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        found.append(len({key for key, _ in items}) < len(items))
        return dict(items)

    json.loads(text, object_pairs_hook=pairs)
    return any(found)


_KEYS = st.sampled_from(["path", "content", "name", "mode", "é", "pathé"])


@st.composite
def _arguments_text(draw: st.DrawFn, depth: int = 0) -> str:
    """An object as a model writes it: keys from a few (so a repeat is common), some spelled
    with an escape, values that are strings (a key's name among them), numbers or objects."""
    members = []
    for _ in range(draw(st.integers(0, 4))):
        key = draw(_KEYS)
        plain = json.dumps(key, ensure_ascii=False)
        spelled = plain if not draw(st.booleans()) else f'"\\u{ord(key[0]):04x}{plain[2:]}'
        kind = draw(st.sampled_from(["text", "key", "number"] + (["object"] if depth < 2
                                                                  else [])))
        value = (draw(_arguments_text(depth + 1)) if kind == "object"
                 else json.dumps(draw(_KEYS), ensure_ascii=False) if kind == "key"
                 else "7" if kind == "number" else '"notes.txt"')
        members.append(f"{spelled}: {value}")
    return "{" + ", ".join(members) + "}"


@settings(max_examples=300, deadline=None)
@given(_arguments_text())
def test_a_key_written_twice_is_found_however_the_text_spells_it(text: str) -> None:
    """Through the guard: PC118 exactly when some object of the arguments text repeats a key
    (spelled the same or with an escape, at any depth), whatever the values hold."""
    toolset = plancheck.load_toolset(POOL)
    verdict = plancheck.Guard(toolset, profile="default", provenance=False).propose(
        {"id": "c1", "type": "function",
         "function": {"name": "read_text_file", "arguments": text}})
    assert isinstance(verdict, plancheck.Verdict)
    assert ("PC118" in [d.code for d in verdict.diagnostics]) is _repeats(text), text
