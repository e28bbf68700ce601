"""``Guard(keep_arguments=False)``, what ``plancheck mcp-proxy`` builds: the arguments of
accepted calls are let go of, and every verdict is the one a guard that keeps them gives
(policies, provenance and references read earlier calls' tools, ids and results, never their
arguments). Real pool: the MCP filesystem server's ``tools/list``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plancheck

POOL_FILE = Path(__file__).resolve().parents[1] / "data" / "real" / "mcp" / "server-filesystem.json"
POOL: dict[str, Any] = json.loads(POOL_FILE.read_text(encoding="utf-8"))
POLICY = """policy p "the rules a proxy's session meets" {
  at most 3 write_file
  forbid move_file after read_text_file
  forbid flow from read_text_file to write_file.path
  forbid write_file.path matches ".*\\\\.env"
}
"""
PATHS = st.sampled_from(["/tmp/a", "/tmp/b.env", "secret.txt", "{{steps.0.output.content}}"])
CALLS = st.lists(st.tuples(st.sampled_from(["read_text_file", "write_file", "move_file"]),
                           PATHS, st.sampled_from(["x", "secret.txt", "hello"])), max_size=8)


def _arguments(tool: str, path: str, text: str) -> dict[str, Any]:
    if tool == "write_file":
        return {"path": path, "content": text}
    if tool == "move_file":
        return {"source": path, "destination": text}
    return {"path": path}


@settings(max_examples=60, deadline=None)
@given(CALLS)
def test_every_verdict_is_the_one_of_a_guard_that_keeps_the_arguments(
        calls: list[tuple[str, str, str]]) -> None:
    keeping = plancheck.Guard(POOL, policies=POLICY, references="template")
    letting_go = plancheck.Guard(POOL, policies=POLICY, references="template",
                                 keep_arguments=False)
    for index, (tool, path, text) in enumerate(calls):
        call = {"id": f"c{index}", "name": tool, "arguments": _arguments(tool, path, text)}
        kept, let_go = keeping.propose(call), letting_go.propose(call)
        assert (kept.allowed, kept.feedback, kept.arguments) == \
            (let_go.allowed, let_go.feedback, let_go.arguments)
        if kept.allowed:
            result = {"content": [{"type": "text", "text": "secret.txt"}],
                      "structuredContent": {"content": "secret.txt"}}
            assert keeping.record(kept.call_id, result) == letting_go.record(let_go.call_id,
                                                                             result)


@pytest.mark.parametrize("keep", [True, False])
def test_no_argument_of_an_accepted_call_is_held(keep: bool) -> None:
    guard = plancheck.Guard(POOL, policies=POLICY, keep_arguments=keep)
    text = "".join(["x"] * 1000)  # a string of its own, counted
    before = sys.getrefcount(text)
    assert guard.propose({"id": "a", "name": "write_file",
                          "arguments": {"path": "/tmp/a", "content": text}}).allowed
    assert (sys.getrefcount(text) > before) is keep
    if keep:
        assert guard.trajectory()[0]["arguments"]["content"] is text
        return
    with pytest.raises(ValueError, match="keep_arguments=False"):
        guard.trajectory()
    with pytest.raises(ValueError, match="keep_arguments"):
        plancheck.Guard(POOL, task="write a note", keep_arguments=False)


@pytest.mark.parametrize(("provenance", "references", "held"), [
    (False, None, False),  # what mcp-proxy builds without a policy: nothing reads a result
    (False, "template", True),  # a later call may refer to it
    (True, None, True),  # provenance finds copies of it in later calls
])
def test_a_result_is_held_only_where_something_reads_it(
        provenance: bool, references: str | None, held: bool) -> None:
    """A proxy's session of large results held every one of them (50 results of 1 MB: 50 MB
    after the calls had run), though no reference, policy or trajectory could read them."""
    guard = plancheck.Guard(POOL, provenance=provenance, references=references,
                            keep_arguments=False)
    text = "".join(["y"] * 1000)  # a string of its own, counted
    before = sys.getrefcount(text)
    verdict = guard.propose({"id": "a", "name": "read_text_file",
                             "arguments": {"path": "/tmp/a"}})
    assert guard.record(verdict.call_id, {"content": [{"type": "text", "text": text}]}) == []
    assert (sys.getrefcount(text) > before) is held
    if references:  # (and what it is held for still works: a reference to it resolves)
        later = guard.propose({"id": "b", "name": "write_file", "arguments": {
            "path": "/tmp/b", "content": "{{steps.0.output}}"}})
        assert later.allowed and later.arguments["content"] is text
