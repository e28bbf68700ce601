"""plancheck.Guard, the online check of an agent loop (issue 22 item 3, issue 23's guard side),
driven through the public API against a real pool: the MCP filesystem server's ``tools/list``
(``tests/data/real/PROVENANCE.md``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import plancheck

POOL_FILE = Path(__file__).resolve().parents[1] / "data" / "real" / "mcp" / "server-filesystem.json"
POOL: dict[str, Any] = json.loads(POOL_FILE.read_text(encoding="utf-8"))


def anthropic(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def openai(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def text_result(text: str, structured: Any = None) -> dict[str, Any]:
    """An MCP CallToolResult as the SDK serialises it."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
    if structured is not None:
        result["structuredContent"] = structured
    return result


def test_a_good_call_is_allowed_and_joins_the_trajectory() -> None:
    guard = plancheck.Guard(POOL)
    verdict = guard.propose(anthropic("toolu_1", "read_text_file", {"path": "/tmp/a.txt"}))
    assert verdict.allowed and verdict.call_id == "toolu_1" and verdict.feedback == ""
    assert [c["name"] for c in guard.trajectory()] == ["read_text_file"]


def test_a_bad_call_is_refused_with_feedback_in_the_models_terms() -> None:
    guard = plancheck.Guard(POOL)
    verdict = guard.propose(openai("call_7", "write_file", {"path": 5}))
    assert not verdict.allowed
    assert {d.code for d in verdict.errors} == {"PC203", "PC302"}  # `content` missing, bad type
    feedback = verdict.feedback
    assert "call_7" in feedback and "`write_file`" in feedback and "`content`" in feedback
    for word in ("step", "agent", "dependence", "<GENERATED>"):  # DisasterBench's words
        assert word not in feedback
    assert guard.trajectory() == []


def test_an_unknown_tool_gets_the_nearest_name() -> None:
    verdict = plancheck.Guard(POOL).propose(openai("c1", "write_fil", {"path": "x"}))
    assert not verdict.allowed and "did you mean `write_file`?" in verdict.feedback


def test_refused_calls_do_not_shift_the_numbering_of_references() -> None:
    guard = plancheck.Guard(POOL, references="template")
    assert guard.propose(anthropic("a", "read_text_file", {"path": "/tmp/a"})).allowed
    guard.record("a", text_result("hello", {"content": "hello"}))
    assert not guard.propose(anthropic("b", "no_such_tool", {})).allowed
    # call 0 is still `a`: the refused call never joined the trajectory
    verdict = guard.propose(anthropic("c", "write_file", {
        "path": "/tmp/b", "content": "{{steps.0.output.content}}"}))
    assert verdict.allowed, verdict.feedback
    assert [c["id"] for c in guard.trajectory()] == ["a", "c"]


def test_a_reference_to_a_key_the_result_lacks_is_refused() -> None:
    guard = plancheck.Guard(POOL, references="template")
    guard.propose(anthropic("a", "read_text_file", {"path": "/tmp/a"}))
    guard.record("a", text_result("hello", {"content": "hello"}))
    verdict = guard.propose(anthropic("b", "write_file", {
        "path": "/tmp/b", "content": "{{steps.0.output.contnet}}"}))
    assert not verdict.allowed and "contnet" in verdict.feedback


def test_a_reference_to_a_call_not_made_is_refused() -> None:
    verdict = plancheck.Guard(POOL, references="generated").propose(anthropic(
        "b", "write_file", {"path": "/tmp/b", "content": "<GENERATED>-3-<content>"}))
    assert not verdict.allowed


def test_the_parallel_calls_of_one_turn_get_one_verdict_each() -> None:
    guard = plancheck.Guard(POOL)
    message = {"role": "assistant", "content": None, "tool_calls": [
        openai("c1", "read_text_file", {"path": "/a"}),
        openai("c2", "read_text_file", {}),
    ]}
    turn = guard.propose([message])
    assert isinstance(turn, plancheck.TurnVerdict)
    assert [v.allowed for v in turn] == [True, False] and not turn.allowed
    assert "c2" in turn.feedback and [c["id"] for c in guard.trajectory()] == ["c1"]


def test_record_of_an_unknown_call_is_a_warning_not_an_exception() -> None:
    found = plancheck.Guard(POOL).record("nope", text_result("x"))
    assert [d.code for d in found] == ["PC206"]


def test_profiles_decide_what_blocks() -> None:
    call = anthropic("t", "read_text_file", {"path": "/tmp/a", "head": "ten"})  # not a number
    assert not plancheck.Guard(POOL, profile="guard").propose(call).allowed
    lenient = plancheck.Guard(POOL, profile="default").propose(call)
    assert lenient.allowed and "PC302" in {d.code for d in lenient.diagnostics}


def test_pools_from_values_text_and_several_servers() -> None:
    as_text = plancheck.Guard(json.dumps(POOL))
    assert as_text.propose(anthropic("t", "read_text_file", {"path": "/a"})).allowed
    other = {"tools": [{"name": "read_text_file", "inputSchema": {
        "type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}}]}
    merged = plancheck.load_toolset({"fs": POOL, "web": other})
    assert "fs.read_text_file" in merged.tools and "web.read_text_file" in merged.tools
    assert plancheck.load_toolset(POOL) is plancheck.load_toolset(POOL)  # reused, not re-read


def test_a_deny_policy_blocks_and_names_its_rule(tmp_path: Path) -> None:
    policy = tmp_path / "p.wf"
    policy.write_text('policy safe "no writes after a read of /etc" {\n'
                      '  forbid write_file after read_text_file\n}\n', encoding="utf-8")
    guard = plancheck.Guard(POOL, policies=policy)
    assert guard.propose(anthropic("a", "read_text_file", {"path": "/etc/passwd"})).allowed
    verdict = guard.propose(anthropic("b", "write_file", {"path": "/tmp/x", "content": "y"}))
    assert not verdict.allowed
    assert "after a `read_text_file`" in verdict.feedback  # the earlier call, by its id
    assert "(policy safe: `forbid write_file after read_text_file`) [PC802]" in verdict.feedback
    assert [c["id"] for c in guard.trajectory()] == ["a"]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(call=JSON | st.text(max_size=30), result=JSON)
def test_the_guard_never_raises(call: Any, result: Any) -> None:
    guard = plancheck.Guard(POOL)
    verdict = guard.propose(call)
    assert isinstance(verdict.allowed, bool) and isinstance(verdict.feedback, str)
    verdicts = list(verdict) if isinstance(verdict, plancheck.TurnVerdict) else [verdict]
    for one in verdicts:
        assert one.allowed or one.feedback
        guard.record(one.call_id, result)
    assert isinstance(guard.trajectory(), list)


TOOL_NAMES = [tool["name"] for tool in POOL["tools"]]
REFERENCES = st.sampled_from(["{{steps.0.output.content}}", "$first.text$", "<GENERATED>-0-<x>",
                              "{{steps.9.output}}", "<node-0>.text", "TBD"])
ARGUMENT_VALUES = st.one_of(JSON, REFERENCES, st.lists(REFERENCES, max_size=2))


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from([*TOOL_NAMES, "no_such_tool", ""]),
       arguments=st.dictionaries(st.sampled_from(["path", "paths", "content", "edits", "x"]),
                                 ARGUMENT_VALUES, max_size=4) | JSON,
       call_id=st.none() | st.sampled_from(["c1", 7, True, ""]))
def test_a_plain_call_gets_the_verdict_of_the_same_call_in_a_turn(
        name: str, arguments: Any, call_id: Any) -> None:
    """``{"name", "arguments", "id"}`` objects, the shape agent loops build, are read by a
    shortcut; the same call inside a list is read by the registry's walk. Each guard first
    accepts and records one call, so references have something to resolve against."""
    call: dict[str, Any] = {"name": name, "arguments": arguments}
    if call_id is not None:
        call["id"] = call_id
    verdicts = []
    for given_as in (call, [call]):
        guard = plancheck.Guard(POOL, references="all")
        first = guard.propose({"name": "read_text_file", "arguments": {"path": "/a"},
                               "id": "first"})
        guard.record(first.call_id, {"content": [{"type": "text", "text": "/tmp/a.txt"}]})
        verdict = guard.propose(given_as)
        one = verdict.verdicts[0] if isinstance(verdict, plancheck.TurnVerdict) else verdict
        verdicts.append((one.allowed, [d.code for d in one.diagnostics], one.feedback,
                         one.call_id, one.tool, one.flows, guard.trajectory()))
    assert verdicts[0] == verdicts[1]
