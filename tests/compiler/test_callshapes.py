"""The general tool-call frontend: every call shape and container lowers to the one plan IR.

Checked through the command line and ``plancheck.check`` against the real MCP memory server
pool (``tests/data/real/mcp/server-memory.json``), so each shape is held to the same checks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.cli import main

POOL = Path(__file__).parents[1] / "data" / "real" / "mcp" / "server-memory.json"
GOOD = ("open_nodes", {"names": ["Acme_Corp"]})
BAD = ("open_node", {"names": ["Acme_Corp"]})  # look-alike of open_nodes


def run(path: Path, capsys: pytest.CaptureFixture[str], *extra: str
        ) -> tuple[int, list[dict[str, Any]]]:
    code = main(["check", "--tools", str(POOL), str(path), "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)["diagnostics"]


def span_text(path: Path, diagnostic: dict[str, Any]) -> str:
    span = diagnostic["labels"][0]["span"]
    line = path.read_text(encoding="utf-8").splitlines()[span["start_line"] - 1]
    return str(line[span["start_col"] - 1:])


CONTAINERS: dict[str, Any] = {
    "chat completion response": lambda calls: {"id": "chatcmpl-1", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": n, "arguments": json.dumps(a)}}
                for i, (n, a) in enumerate(calls)]}}]},
    "chat transcript": lambda calls: {"messages": [
        {"role": "user", "content": "Look up Acme."},
        *[message for i, (n, a) in enumerate(calls) for message in (
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": n, "arguments": json.dumps(a)}}]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": "{}"})]]},
    "legacy function_call": lambda calls: [
        {"role": "assistant", "content": None,
         "function_call": {"name": n, "arguments": json.dumps(a)}} for n, a in calls],
    "responses output": lambda calls: {"object": "response", "output": [
        {"type": "reasoning", "summary": []},
        *({"type": "function_call", "call_id": f"fc_{i}", "name": n,
           "arguments": json.dumps(a)} for i, (n, a) in enumerate(calls))]},
    "anthropic messages": lambda calls: [
        {"role": "user", "content": "Look up Acme."},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Looking."},
            *({"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": a}
              for i, (n, a) in enumerate(calls))]}],
    "generic calls": lambda calls: {"calls": [{"tool": n, "args": a} for n, a in calls]},
    "seal-tools calling": lambda calls: {"id": "x", "calling": [
        {"api": n, "parameters": a, "responses": [f"API_call_{i}"]}
        for i, (n, a) in enumerate(calls)]},
}


@pytest.mark.parametrize("container", CONTAINERS)
def test_every_container_lowers_its_calls(container: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "calls.json"
    path.write_text(json.dumps(CONTAINERS[container]([GOOD, GOOD]), indent=1), "utf-8")
    assert run(path, capsys) == (0, [])
    path.write_text(json.dumps(CONTAINERS[container]([GOOD, BAD]), indent=1), "utf-8")
    code, diagnostics = run(path, capsys)
    assert code == 1 and [d["code"] for d in diagnostics] == ["PC201"]
    assert diagnostics[0]["message"] == "unknown tool `open_node` in step 1"
    assert span_text(path, diagnostics[0]).startswith('"open_node"')


def test_a_jsonl_batch_of_transcripts(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    lines = [json.dumps({"id": f"run-{i}", "messages": CONTAINERS["anthropic messages"](calls)})
             for i, calls in enumerate(([GOOD], [GOOD, BAD], [BAD]))]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, diagnostics = run(path, capsys)
    assert code == 1
    assert [(d["record"], d["code"]) for d in diagnostics] == [("run-1", "PC201"),
                                                               ("run-2", "PC201")]
    # A .json file holding one document a line (as BFCL's and TaskBench's data files do).
    json_path = tmp_path / "runs.json"
    json_path.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    assert run(json_path, capsys)[1] == [dict(d, file=str(json_path)) for d in diagnostics]


@pytest.mark.parametrize("completion", [
    "Sure.\n```json\n[{\"name\": \"open_nodes\", \"arguments\": {\"names\": [\"A\"]}},\n"
    " {\"name\": \"open_node\", \"arguments\": {\"names\": [\"A\"]}}]\n```\nDone.",
    "Calling: [{'name': 'open_nodes', 'arguments': {'names': ['A']}}, "
    "{'name': 'open_node', 'arguments': {'names': None}}]",
    "```\n[{\"name\": \"open_nodes\", \"arguments\": {\"names\": [\"A\"],}},\n"
    " {\"name\": \"open_node\", \"arguments\": {\"names\": [\"A\"]}}\n```",
])
def test_tool_calls_in_raw_completions(completion: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "completion.txt"
    path.write_text(completion, encoding="utf-8")
    code, diagnostics = run(path, capsys)
    assert code == 1
    assert [d["code"] for d in diagnostics if d["severity"] != "info"] == ["PC201"]
    repaired = [d for d in diagnostics if d["code"] == "PC102"]
    assert bool(repaired) == ("'" in completion or ",}" in completion)
    assert main(["check", "--tools", str(POOL), str(path), "--strict-json"]) == 1
    capsys.readouterr()


def test_forced_call_format_and_name_keyed_calls(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "calls.json"
    path.write_text(json.dumps([{"open_nodes": {"names": ["A"]}}, {"open_node": {}}]), "utf-8")
    for forced in ("auto", "name-keyed"):  # BFCL's decoded model output: detected too
        code, diagnostics = run(path, capsys, "--call-format", forced)
        assert code == 1 and [d["code"] for d in diagnostics] == ["PC201"]
    code, diagnostics = run(path, capsys, "--call-format", "anthropic")
    assert code == 1 and [d["message"] for d in diagnostics] == [
        "no `anthropic` tool calls were found"]


def test_arguments_that_are_not_arguments(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    calls = [{"type": "function", "function": {"name": "open_nodes", "arguments": "{not json"}},
             {"type": "function", "function": {"name": 7, "arguments": "{}"}}]
    path = tmp_path / "calls.json"
    path.write_text(json.dumps({"tool_calls": calls}), encoding="utf-8")
    code, diagnostics = run(path, capsys)
    assert code == 1
    assert [d["code"] for d in diagnostics if d["severity"] == "error"] == ["PC108", "PC108"]


def test_the_python_api_reads_tool_calls() -> None:
    nodes = {"task_nodes": [{"task": "search_nodes", "arguments": ["Acme"]},
                            {"task": "open_nodes", "arguments": ["<node-0>"]}]}
    report = plancheck.check(nodes, POOL)
    # search_nodes makes two outputs, so "the result of node 0" names neither.
    assert [d.code for d in report.errors] == ["PC208"]
    assert report.plan is not None and [s.tool for s in report.plan.steps] == [
        "search_nodes", "open_nodes"]
    assert [a.name for a in report.plan.steps[0].args] == ["query"]  # bound in input order


def test_completions_of_tool_calls_in_a_jsonl_batch(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    completions = [
        "Sure.\n```json\n" + json.dumps([{"name": "open_nodes", "arguments": {"names": ["A"]}},
                                         {"name": "open_node", "arguments": {}}]) + "\n```",
        "Calling: [{'name': 'open_nodes', 'arguments': {'names': ['A']}}]",
    ]
    path = tmp_path / "completions.jsonl"
    path.write_text("".join(json.dumps({"id": f"r{i}", "completion": c}) + "\n"
                            for i, c in enumerate(completions)), encoding="utf-8")
    code, diagnostics = run(path, capsys)
    assert code == 1 and [(d["record"], d["code"]) for d in diagnostics] == [("r0", "PC201")]


def test_each_call_is_reported_in_document_order() -> None:
    """A call's tool is read before its arguments, and a call before the next one (the API
    keeps the order the checks report in; the renderers sort by place)."""
    calls = [{"name": 7, "arguments": {"names": "the output of step 1"}},
             {"name": "open_nodes", "arguments": {"names": "the result of step 0"}}]
    report = plancheck.check(calls, POOL)
    assert [(d.code, d.span.pointer if d.span else None) for d in report.diagnostics
            if d.code in ("PC108", "PC209")] == [
        ("PC108", "/0/name"), ("PC209", "/0/arguments/names"), ("PC209", "/1/arguments/names")]
