"""The Bedrock Converse call shape (``plancheck/formats/calls/bedrock.py``, issue 35's first
trial: one module and this test file): its calls found in a request and a response, its ids
read (the guard records a result by ``toolUseId``), its ``toolResult`` blocks never read as
calls but paired with their calls as results, and the command line's ``--call-format`` taking
its name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import plancheck
from plancheck.formats.shapes import CALL_SHAPES, find_calls

POOL = {"tools": [
    {"name": "nowcast", "description": "radar nowcast",
     "inputSchema": {"type": "object", "properties": {"radar": {"type": "string"}},
                     "required": ["radar"]},
     "outputSchema": {"type": "object", "properties": {"frames": {"type": "integer"}}}},
    {"name": "flood", "description": "flood depth",
     "inputSchema": {"type": "object", "properties": {"frames": {"type": "string"}},
                     "required": ["frames"]}}]}
FRAMES = "out/frames.npy"
REQUEST = {"modelId": "anthropic.claude-3-haiku", "messages": [
    {"role": "user", "content": [{"text": "Forecast flooding."}]},
    {"role": "assistant", "content": [
        {"text": "Nowcasting first."},
        {"toolUse": {"toolUseId": "tooluse_a", "name": "nowcast", "input": {"radar": "r.npy"}}}]},
    {"role": "user", "content": [
        {"toolResult": {"toolUseId": "tooluse_a", "content": [{"json": {"frames": FRAMES}}],
                        "status": "success"}}]},
    {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "tooluse_b", "name": "flood", "input": {"frames": FRAMES}}}]},
]}
RESPONSE = {"output": {"message": {"role": "assistant", "content": [
    {"toolUse": {"toolUseId": "tooluse_c", "name": "flood", "input": {}}}]}},
    "stopReason": "tool_use"}


def test_calls_and_their_ids_are_found_and_results_are_not_calls() -> None:
    assert CALL_SHAPES["bedrock"].detected
    assert [(c.shape, c.name, c.call_id, c.pointer) for c in find_calls(REQUEST)] == [
        ("bedrock", "nowcast", "tooluse_a", "/messages/1/content/1"),
        ("bedrock", "flood", "tooluse_b", "/messages/3/content/0")]


def test_results_pair_with_their_calls() -> None:
    report = plancheck.check(REQUEST, plancheck.load_toolset(POOL))
    assert [d.code for d in report.diagnostics] == ["PC306"]  # a path copied into a number
    (flow,) = report.flows
    assert (flow["from"], flow["to"], flow["argument"]) == ("tooluse_a", "tooluse_b", "frames")


def test_a_response_missing_an_argument(tmp_path: Path) -> None:
    path, pool = tmp_path / "response.json", tmp_path / "pool.json"
    path.write_text(json.dumps(RESPONSE), encoding="utf-8")
    pool.write_text(json.dumps(POOL), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "plancheck", "check", "--call-format",
                          "bedrock", "--tools", str(pool), "--format", "json", str(path)],
                         capture_output=True, text=True, check=False, timeout=60)
    assert run.returncode == 1, run.stderr
    assert [d["code"] for d in json.loads(run.stdout)["diagnostics"]] == ["PC203"]


def test_the_guard_records_a_result_by_tool_use_id() -> None:
    guard = plancheck.Guard(POOL)
    verdict = guard.propose({"toolUse": {"toolUseId": "tooluse_a", "name": "nowcast",
                                         "input": {"radar": "r.npy"}}})
    assert verdict.allowed and verdict.call_id == "tooluse_a"
    assert guard.record("tooluse_a", {"frames": FRAMES}) == []
