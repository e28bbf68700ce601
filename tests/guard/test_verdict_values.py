"""Verdicts and policy calls are values: equal by their fields, shown with them (the guard
makes one of each per call, as plain classes rather than records)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import plancheck
from plancheck.policy.semantics import EXPLICIT, FlowIn, PolicyCall

POOL_FILE = Path(__file__).resolve().parents[1] / "data" / "real" / "mcp" / "server-filesystem.json"
POOL: dict[str, Any] = json.loads(POOL_FILE.read_text(encoding="utf-8"))


def _verdict(call_id: str, path: str) -> plancheck.Verdict:
    guard = plancheck.Guard(POOL)
    verdict = guard.propose({"name": "read_text_file", "arguments": {"path": path},
                             "id": call_id})
    assert isinstance(verdict, plancheck.Verdict)
    return verdict


def test_verdicts_of_the_same_call_are_equal_and_others_are_not() -> None:
    first, again = _verdict("c1", "/a"), _verdict("c1", "/a")
    assert first == again
    assert first != _verdict("c1", "/b")
    assert first != _verdict("c2", "/a")
    assert first != object()
    shown = repr(first)
    assert shown.startswith("Verdict(allowed=True, diagnostics=[], feedback=''")
    assert "call_id='c1'" in shown and "arguments={'path': '/a'}" in shown


def test_a_policy_call_is_equal_by_its_fields_and_copied_with_changes() -> None:
    flow = FlowIn(("path",), 0, ("items", 0), EXPLICIT)
    call = PolicyCall(1, "read_text_file", {"path": "/a"}, (), frozenset(), "c1")
    assert call == PolicyCall(1, "read_text_file", {"path": "/a"}, (), frozenset(), "c1")
    assert call != PolicyCall(2, "read_text_file", {"path": "/a"}, (), frozenset(), "c1")
    moved = call.but(index=4, flows=(flow,))
    assert (moved.index, moved.flows, moved.tool, moved.arguments, moved.call_id) == (
        4, (flow,), "read_text_file", {"path": "/a"}, "c1")
    assert call.but(arguments={}).arguments == {}  # (an empty value is a change too)
    assert call.flows == () and call.index == 1  # (the original is unchanged)
    assert repr(call) == ("PolicyCall(index=1, tool='read_text_file', arguments={'path': "
                          "'/a'}, flows=(), unknown=frozenset(), call_id='c1')")
    assert call.label == "c1" and PolicyCall(3, "t", {}).label == "call 3"
