"""A call shape owns its calls (issue 35): the blocks of a transcript that are not calls (a
Gemini ``functionResponse`` part, a Bedrock ``toolResult`` block) are never read as calls,
each call's id is read by its shape, and results pair with their calls by those ids."""

from __future__ import annotations

import json
from typing import Any

import pytest

import plancheck
from plancheck.formats.shapes import find_calls, read_call

POOL = {"tools": [{"name": "get_weather", "description": "weather",
                   "inputSchema": {"type": "object",
                                   "properties": {"city": {"type": "string"}},
                                   "required": ["city"]}}]}

GEMINI_REQUEST = {"contents": [
    {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
    {"role": "model", "parts": [{"functionCall": {"id": "fc-1", "name": "get_weather",
                                                  "args": {"city": "Paris"}}}]},
    {"role": "user", "parts": [{"functionResponse": {"id": "fc-1", "name": "get_weather",
                                                     "response": {"temp": 20}}}]},
]}


def test_a_gemini_function_response_is_no_call() -> None:
    # The live bug: the user turn's part was taken for BFCL output, "PC201 unknown tool
    # `functionResponse`".
    calls = find_calls(GEMINI_REQUEST)
    assert [(c.shape, c.name, c.call_id) for c in calls] == [("gemini", "get_weather", "fc-1")]
    report = plancheck.check(GEMINI_REQUEST, plancheck.load_toolset(POOL))
    assert report.diagnostics == []


def test_a_chat_container_holds_no_guessed_bfcl_output() -> None:
    # One-key objects inside a chat container are a format's blocks, not BFCL's decoded output.
    message = {"messages": [{"role": "user", "content": [{"image": {"format": "png"}}]}]}
    assert find_calls(message) == []
    # A bare list of one-key objects is still BFCL's decoded output.
    assert [c.shape for c in find_calls([{"f": {"a": 1}}])] == ["name-keyed"]


@pytest.mark.parametrize(("call", "call_id"), [
    ({"id": "call_9", "type": "function", "function": {"name": "f", "arguments": "{}"}},
     "call_9"),
    ({"type": "function_call", "id": "fc_1", "call_id": "call_2", "name": "f",
      "arguments": "{}"}, "call_2"),
    ({"type": "tool_use", "id": "toolu_3", "name": "f", "input": {}}, "toolu_3"),
    ({"functionCall": {"id": "g4", "name": "f", "args": {}}}, "g4"),
    ({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "f"}}, "5"),
    ({"name": "f", "arguments": {}, "id": "plain_6"}, "plain_6"),
    ({"functionCall": {"name": "f", "args": {}}}, None),
])
def test_each_shape_reads_its_ids(call: dict[str, Any], call_id: str | None) -> None:
    found = read_call(call)
    assert found is not None and found.call_id == call_id


def test_the_guard_records_a_gemini_result_by_its_id() -> None:
    guard = plancheck.Guard(POOL)
    verdict = guard.propose({"functionCall": {"id": "fc-1", "name": "get_weather",
                                              "args": {"city": "Paris"}}})
    assert verdict.allowed
    assert guard.record("fc-1", {"temp": 20}) == []  # was PC206: the id read as call_0


def test_gemini_results_pair_with_their_calls_by_id() -> None:
    frames = "out/frames.npy"
    pool = {"tools": [
        {"name": "nowcast", "inputSchema": {"type": "object", "properties": {
            "radar": {"type": "string"}}, "required": ["radar"]},
         "outputSchema": {"type": "object", "properties": {"frames": {"type": "integer"}}}},
        {"name": "flood", "inputSchema": {"type": "object", "properties": {
            "frames": {"type": "string"}}, "required": ["frames"]}}]}
    transcript = {"contents": [
        {"role": "model", "parts": [{"functionCall": {"id": "a", "name": "nowcast",
                                                      "args": {"radar": "r.npy"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "a", "name": "nowcast",
                                                         "response": {"frames": frames}}}]},
        {"role": "model", "parts": [{"functionCall": {"id": "b", "name": "flood",
                                                      "args": {"frames": frames}}}]}]}
    report = plancheck.check(json.dumps(transcript), plancheck.load_toolset(pool))
    assert [(f["from"], f["to"], f["argument"]) for f in report.flows] == [("a", "b", "frames")]


def test_gemini_results_without_ids_pair_with_their_calls_by_name_and_order() -> None:
    # The Gemini API leaves `id` out of both parts (the Developer API does, unless the request
    # set one); a `functionResponse` answers the earliest unanswered `functionCall` of its name.
    pool = {"tools": [
        {"name": "geocode", "inputSchema": {"type": "object", "properties": {
            "place": {"type": "string"}}, "required": ["place"]},
         "outputSchema": {"type": "object", "properties": {"cell": {"type": "string"}}}},
        {"name": "nowcast", "inputSchema": {"type": "object", "properties": {
            "cell": {"type": "string"}}, "required": ["cell"]},
         "outputSchema": {"type": "object", "properties": {"frames": {"type": "string"}}}},
        {"name": "flood", "inputSchema": {"type": "object", "properties": {
            "frames": {"type": "string"}}, "required": ["frames"]}}]}
    transcript = {"contents": [
        {"role": "user", "parts": [{"text": "Flood risk in Lyon?"}]},
        {"role": "model", "parts": [
            {"functionCall": {"name": "geocode", "args": {"place": "Paris"}}},
            {"functionCall": {"name": "geocode", "args": {"place": "Lyon"}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "geocode", "response": {"cell": "cell-75"}}},
            {"functionResponse": {"name": "geocode", "response": {"cell": "cell-69"}}}]},
        {"role": "model", "parts": [
            {"functionCall": {"name": "nowcast", "args": {"cell": "cell-69"}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "nowcast", "response": {"frames": "out/f.npy"}}}]},
        {"role": "model", "parts": [
            {"functionCall": {"name": "flood", "args": {"frames": "out/f.npy"}}}]}]}
    report = plancheck.check(json.dumps(transcript), plancheck.load_toolset(pool))
    # The second geocode (Lyon, cell-69) feeds nowcast, which feeds flood.
    assert [(f["from"], f["to"], f["argument"], f["path"]) for f in report.flows] == [
        ("step 1", "step 2", "cell", "cell"), ("step 2", "step 3", "frames", "frames")]
