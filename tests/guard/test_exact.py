"""Issue 31: the guard gives the tool schema's own verdict, keeps text as text and fails
closed. Each test here failed on the guard before (rebuilt per-parameter schemas, every
syntax read as a reference, a validator that raised let the call through)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import plancheck

POOL_FILE = Path(__file__).resolve().parents[1] / "data" / "real" / "mcp" / "server-filesystem.json"
POOL: dict[str, Any] = json.loads(POOL_FILE.read_text(encoding="utf-8"))

_IDS = iter(range(10**9))


def call(name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"c{next(_IDS)}", "name": name, "input": arguments}


def one_tool(schema: Any, name: str = "t") -> dict[str, Any]:
    return {"tools": [{"name": name, "inputSchema": schema}]}


def codes(verdict: Any) -> list[str]:
    return sorted(d.code for d in verdict.diagnostics)


# ------------------------------------------------------------------ the schema decides

@pytest.mark.parametrize(("schema", "good", "bad"), [
    # keywords a per-parameter rebuild lost: the call they reject was allowed
    ({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"a": 1}, {}),
    ({"type": "object", "properties": {"n": {"type": "integer"}},
      "allOf": [{"properties": {"n": {"minimum": 3}}}]}, {"n": 3}, {"n": 2}),
    ({"type": "object", "not": {"required": ["x"]}}, {"y": 1}, {"x": 1}),
    ({"type": "object", "patternProperties": {"^n_": {"type": "number"}}}, {"n_a": 1},
     {"n_a": "x"}),
    ({"type": "object", "minProperties": 1}, {"a": 1}, {}),
    ({"type": "object", "dependentRequired": {"a": ["b"]}}, {"a": 1, "b": 2}, {"a": 1}),
    ({"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}},
     {"a": 1, "b": "x"}, {"b": 1}),
    ({"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}},
     {"a": 1, "b": 1}, {"a": 1}),
    ({"type": "object", "$defs": {"pos": {"type": "integer", "minimum": 0}},
      "properties": {"n": {"$ref": "#/$defs/pos"}}}, {"n": 1}, {"n": -1}),
    ({"type": "object", "$defs": {"p": {"$anchor": "pos", "type": "integer", "minimum": 0}},
      "properties": {"n": {"$ref": "#pos"}}}, {"n": 1}, {"n": -1}),
    # the schema's $schema draft is honoured: draft-04's boolean exclusiveMaximum ...
    ({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
      "properties": {"n": {"type": "number", "maximum": 5, "exclusiveMaximum": True}}},
     {"n": 4}, {"n": 5}),
    # ... and draft-07's tuple `items`
    ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
      "properties": {"p": {"type": "array", "items": [{"type": "number"}, {"type": "string"}]}}},
     {"p": [1, "a"]}, {"p": ["a", 1]}),
    # what plancheck refused and the schema accepts
    ({"type": "object", "propertyNames": {"maxLength": 3}}, {"abc": 1}, {"abcd": 1}),
    ({"type": "object", "properties": {"o": {"const": {"a": [1]}}}}, {"o": {"a": [1]}},
     {"o": {"a": [2]}}),
    ({"type": "object", "properties": {"o": {"enum": [{"k": 1}, [1, 2]]}}}, {"o": [1, 2]},
     {"o": {"k": 2}}),
    ({"type": "object", "maxProperties": 1}, {"a": 1}, {"a": 1, "b": 2}),
    ({"type": "object", "properties": {"v": {"type": ["string", "null"]}}}, {"v": None},
     {"v": 1}),
])
def test_the_tool_schema_decides_whole(schema: Any, good: Any, bad: Any) -> None:
    guard = plancheck.Guard(one_tool(schema))
    assert guard.pool_diagnostics == []
    allowed = guard.propose(call("t", good))
    assert allowed.allowed, allowed.feedback
    refused = guard.propose(call("t", bad))
    assert not refused.allowed, bad


def test_an_argument_the_schema_does_not_forbid_is_a_warning_not_a_refusal() -> None:
    """``additionalProperties`` absent: the schema admits other arguments, so the call runs;
    plancheck still says the name is not declared (often a misspelling)."""
    verdict = plancheck.Guard(POOL).propose(call("write_file", {"path": "a", "content": "b",
                                                                 "mode": "x"}))
    assert verdict.allowed and codes(verdict) == ["PC202"]
    assert verdict.diagnostics[0].severity is plancheck.Severity.WARNING
    closed = one_tool({"type": "object", "properties": {"a": {}}, "additionalProperties": False})
    refused = plancheck.Guard(closed).propose(call("t", {"a": 1, "b": 2}))
    assert not refused.allowed and codes(refused) == ["PC202"]


def test_a_nested_error_names_the_path_of_its_value() -> None:
    guard = plancheck.Guard(POOL)
    verdict = guard.propose(call("edit_file", {"path": "a", "edits": [{"oldText": "x"}]}))
    assert not verdict.allowed and codes(verdict) == ["PC302"]
    assert "argument `edits[0].newText` is required and missing" in verdict.feedback
    assert verdict.diagnostics[0].primary.span.pointer == "/arguments/edits/0/newText"
    typed = guard.propose(call("edit_file", {"path": "a",
                                             "edits": [{"oldText": "x", "newText": 5}]}))
    assert "argument `edits[0].newText` must be a string, found integer 5" in typed.feedback


def test_a_number_written_as_a_string_is_refused_with_the_number_to_write() -> None:
    verdict = plancheck.Guard(POOL).propose(call("read_text_file", {"path": "a", "head": "10"}))
    assert not verdict.allowed and codes(verdict) == ["PC305"]
    assert "write it as the number 10" in verdict.feedback


# ------------------------------------------------------------------ it fails closed

def _cyclic() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


@pytest.mark.parametrize(("value", "words"), [
    (b"bytes", "bytes is not a JSON value"),
    ({1, 2}, "set is not a JSON value"),
    ("\ud800", "lone surrogate"),
    (float("nan"), "JSON has no NaN"),
    (float("inf"), "JSON has no NaN or Infinity"),
    (10**5000, "more than the validator reads"),
    (_cyclic(), "contains itself"),
], ids=["bytes", "set", "surrogate", "nan", "inf", "huge-int", "cycle"])
def test_a_value_json_cannot_hold_refuses_the_call_saying_why(value: Any, words: str) -> None:
    """Before, the validator raised and the call ran: with a required argument missing and an
    unknown one too (``write_file`` lacks ``content``; ``mode`` is not declared)."""
    verdict = plancheck.Guard(POOL).propose(call("write_file", {"path": value, "mode": 1}))
    assert not verdict.allowed and codes(verdict) == ["PC100"]
    assert words in verdict.feedback and "argument `path" in verdict.feedback


def test_arguments_that_are_no_object_are_refused_as_check_refuses_them() -> None:
    guard = plancheck.Guard(POOL)
    for arguments in ("", "null", None, "[]", 5):
        verdict = guard.propose({"name": "list_allowed_directories", "arguments": arguments,
                                 "id": f"n{next(_IDS)}"})
        assert not verdict.allowed and codes(verdict) == ["PC108"], arguments
    assert guard.propose({"name": "list_allowed_directories", "arguments": "{}"}).allowed


def test_a_tool_whose_schema_is_invalid_is_pc711_at_load_and_refused() -> None:
    pool = {"tools": [{"name": "bad", "inputSchema": {"type": "object", "properties": {
        "n": {"type": "number", "minimum": "ten"}}}},
        {"name": "good", "inputSchema": {"type": "object"}}]}
    guard = plancheck.Guard(pool)
    assert [(d.code, d.data["tool"]) for d in guard.pool_diagnostics] == [("PC711", "bad")]
    verdict = guard.propose(call("bad", {"n": 1}))
    assert not verdict.allowed and codes(verdict) == ["PC711"]
    assert "no call to it is run" in verdict.feedback
    assert guard.propose(call("good", {})).allowed
    lenient = plancheck.Guard(pool, invalid_schemas="allow").propose(call("bad", {"n": 1}))
    assert lenient.allowed and codes(lenient) == ["PC711"]
    with pytest.raises(ValueError, match="invalid_schemas"):
        plancheck.Guard(pool, invalid_schemas="maybe")


# ------------------------------------------------------------------ text stays text

@pytest.mark.parametrize("text", ["$HOME$", "API_call_0", "mask from trajectory[0].obs",
                                  "<output of step 2> shows up in logs",
                                  "{{steps.0.output.text}}", "<GENERATED>-0-<x>"])
def test_in_a_foreign_pool_text_that_looks_like_a_reference_is_text(text: str) -> None:
    guard = plancheck.Guard(POOL)
    assert guard.propose(call("read_text_file", {"path": "a"})).allowed
    verdict = guard.propose(call("write_file", {"path": "notes.md", "content": text}))
    assert verdict.allowed and verdict.diagnostics == [], verdict.feedback
    assert verdict.arguments == {"path": "notes.md", "content": text}


def test_a_reference_in_a_declared_syntax_is_substituted_and_then_validated() -> None:
    pool = one_tool({"type": "object", "properties": {
        "direction": {"enum": ["asc", "desc"]}}, "required": ["direction"]}, "sort")
    pool["tools"].append({"name": "ask", "inputSchema": {"type": "object"}})
    guard = plancheck.Guard(pool, references="template")
    first = guard.propose(call("ask", {}))
    # not recorded yet: the value it must run with is unknown, so it does not run
    early = guard.propose(call("sort", {"direction": "{{steps.0.output.dir}}"}))
    assert not early.allowed and codes(early) == ["PC206"]
    guard.record(first.call_id, {"dir": "up"})
    wrong = guard.propose(call("sort", {"direction": "{{steps.0.output.dir}}"}))
    assert not wrong.allowed and codes(wrong) == ["PC301"]  # "up" is no direction

    guard = plancheck.Guard(pool, references="template")
    first = guard.propose(call("ask", {}))
    guard.record(first.call_id, {"dir": "desc"})
    verdict = guard.propose(call("sort", {"direction": "{{steps.0.output.dir}}"}))
    assert verdict.allowed, verdict.feedback
    assert verdict.arguments == {"direction": "desc"}  # what the tool must run with
    assert guard.trajectory()[-1]["arguments"] == {"direction": "desc"}


def test_the_builtin_pools_keep_their_syntaxes() -> None:
    assert plancheck.Guard().references == ("generated",)
    assert plancheck.Guard("dora").references == ("dora",)
    assert plancheck.Guard(POOL).references == ()
    with pytest.raises(ValueError, match="unknown reference syntax"):
        plancheck.Guard(POOL, references="mustache")


# ------------------------------------------------------------------ one loop, many threads

def test_threads_sharing_a_guard_never_exceed_a_count_policy() -> None:
    policy = 'policy cap "at most 100 writes" {\n  at most 100 write_file\n}\n'
    guard = plancheck.Guard(POOL, policies=policy, provenance=False)
    allowed = [0] * 8

    def worker(slot: int) -> None:
        for i in range(20):
            verdict = guard.propose({"name": "write_file", "id": f"w{slot}-{i}",
                                     "arguments": {"path": f"{slot}/{i}", "content": "x"}})
            allowed[slot] += verdict.allowed

    threads = [threading.Thread(target=worker, args=(slot,)) for slot in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sum(allowed) == 100 and len(guard.trajectory()) == 100


def test_a_repeated_call_id_is_refused() -> None:
    guard = plancheck.Guard(POOL)
    assert guard.propose({"name": "read_text_file", "id": "x", "arguments": {"path": "a"}}).allowed
    again = guard.propose({"name": "read_text_file", "id": "x", "arguments": {"path": "b"}})
    assert not again.allowed and codes(again) == ["PC110"]
    assert len(guard.trajectory()) == 1


def test_a_policy_judges_the_substituted_value_not_the_template() -> None:
    """Before, the policy saw `{{steps.0.output.p}}` and the tool ran with `.env`."""
    rules = 'policy p "no env files" {\n  forbid write_file.path matches ".*\\\\.env"\n}\n'
    guard = plancheck.Guard(POOL, policies=rules, references="template")
    first = guard.propose(call("read_text_file", {"path": "a"}))
    guard.record(first.call_id, {"p": ".env", "q": "notes.txt"})
    refused = guard.propose(call("write_file", {"path": "{{steps.0.output.p}}", "content": "x"}))
    assert not refused.allowed and codes(refused) == ["PC804"]
    allowed = guard.propose(call("write_file", {"path": "{{steps.0.output.q}}", "content": "x"}))
    assert allowed.allowed and allowed.arguments == {"path": "notes.txt", "content": "x"}
    assert [f["kind"] for f in allowed.flows] == ["explicit"]


def test_each_keyword_is_worded_with_the_path_of_its_value() -> None:
    pool = one_tool({"type": "object", "properties": {"o": {"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 1}, "s": {"maxLength": 2},
        "p": {"pattern": "^a"}, "e": {"enum": ["x", "y"]}}}}})
    verdict = plancheck.Guard(pool).propose(call("t", {"o": {"n": 0, "s": "abc", "p": "b",
                                                              "e": "z"}}))
    lines = verdict.feedback.splitlines()
    for words in ("argument `o.n` must be at least 1, found integer 0",
                  "argument `o.s` must have at most 2 characters, found 3",
                  "argument `o.p` must match the pattern /^a/, found string \"b\"",
                  "argument `o.e` must be one of \"x\", \"y\", found string \"z\""):
        assert any(words in line for line in lines), (words, lines)


def test_null_for_an_optional_argument_is_refused_by_the_guard_a_note_by_default() -> None:
    arguments = {"path": "a", "head": None}  # head: {"type": "number"}, optional
    refused = plancheck.Guard(POOL).propose(call("read_text_file", arguments))
    assert not refused.allowed and codes(refused) == ["PC302"]
    assert 'it reads as "not given": leave `head` out instead' in refused.feedback
    noted = plancheck.Guard(POOL, profile="default").propose(call("read_text_file", arguments))
    assert noted.allowed
    assert [d.severity for d in noted.diagnostics] == [plancheck.Severity.INFO]


def test_a_validator_that_fails_refuses_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """The library raising must not let the call through (before, schema_errors returned no
    error and the call ran)."""
    from plancheck.ir import schema_validation

    guard = plancheck.Guard(POOL)
    tool = guard.toolset.tools["write_file"]

    class Broken:
        def is_valid(self, value: Any) -> bool:
            raise RuntimeError("the library failed")

    monkeypatch.setitem(schema_validation._VALIDATORS, schema_validation.tool_schema_text(tool),
                        Broken())
    verdict = guard.propose(call("write_file", {"path": "a", "content": "b"}))
    assert not verdict.allowed and codes(verdict) == ["PC002"]
    assert "the library failed" in verdict.feedback


def test_a_call_without_an_id_never_takes_one_already_accepted() -> None:
    guard = plancheck.Guard(POOL)
    assert guard.propose({"name": "read_text_file", "id": "call_1",
                          "arguments": {"path": "a"}}).allowed
    unnamed = guard.propose({"name": "read_text_file", "arguments": {"path": "b"}})
    assert unnamed.allowed and unnamed.call_id not in ("call_1",)
    assert len({c["id"] for c in guard.trajectory()}) == 2
