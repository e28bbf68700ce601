"""Policies in an agent loop (``plancheck.policy.online``), driven by a scripted loop the way a
guard drives them: a blocked call never joins the trace, results feed provenance, diagnostics
name the call ids, the rule and the earlier call, and list every flow with its kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plancheck.api import load_toolset
from plancheck.diagnostics.serialize import diagnostic_to_dict
from plancheck.diagnostics.severity import Severity
from plancheck.policy.online import GuardPolicies

FILESYSTEM = load_toolset(Path(__file__).resolve().parents[1] / "data" / "real" / "mcp"
                          / "server-filesystem.json")
POLICY = """policy fs {
  require list_allowed_directories before write_file
  forbid flow from read_file to write_file.content
  warn at most 1 move_file per 3 calls
}
"""


def _loop(policies: GuardPolicies, calls: list[tuple[str, dict[str, Any], Any]]
          ) -> list[list[dict[str, Any]]]:
    """Propose each call; run (record) the ones allowed; the diagnostics of each, as JSON."""
    said = []
    for n, (tool, arguments, result) in enumerate(calls):
        call, found = policies.check(f"toolu_{n}", tool, arguments)
        if not any(d.severity is Severity.ERROR for d in found):
            policies.accept(call)
            policies.record(f"toolu_{n}", result)
        said.append([diagnostic_to_dict(d) for d in found])
    return said


def test_a_blocked_call_never_joins_the_trace_and_feedback_names_the_earlier_call() -> None:
    policies = GuardPolicies(POLICY, FILESYSTEM)
    secret = {"content": [{"type": "text", "text": "db_password=correct-horse-battery"}]}
    said = _loop(policies, [
        ("write_file", {"path": "/w/a", "content": "x"}, "ok"),         # blocked: order
        ("list_allowed_directories", {}, {"content": [{"type": "text", "text": "/w"}]}),
        ("read_file", {"path": "/w/.env"}, secret),
        ("write_file", {"path": "/w/b", "content": "correct-horse-battery"}, "ok"),  # flow
        ("move_file", {"source": "/w/a", "destination": "/w/b"}, "ok"),
        ("move_file", {"source": "/w/b", "destination": "/w/c"}, "ok"),  # warning only
    ])
    assert [d["code"] for d in said[0]] == ["PC801"]
    assert said[0][0]["data"]["call_id"] == "toolu_0" and said[0][0]["data"]["line"] == 2
    (flow,) = said[3]
    assert flow["code"] == "PC805" and flow["severity"] == "error"
    assert "`content` holds text returned by toolu_2 `read_file`" in flow["message"]
    assert flow["data"]["flows"] == [{"argument": "content", "from": "toolu_2",
                                      "tool": "read_file", "path": "content.0.text",
                                      "kind": "contained"}]
    assert flow["data"]["earlier"] == ["toolu_2"]
    (count,) = said[5]
    assert count["code"] == "PC803" and count["severity"] == "warning"
    assert count["data"]["earlier"] == ["toolu_4"]
    # Rejected calls are not counted: toolu_0 and toolu_3 never ran.
    assert [c.call_id for c in policies.monitor.history] == [
        "toolu_1", "toolu_2", "toolu_4", "toolu_5"]


def test_an_explicit_reference_is_a_flow_and_wins_over_inference() -> None:
    policies = GuardPolicies(POLICY, FILESYSTEM)
    for n, (tool, arguments) in enumerate([("list_allowed_directories", {}),
                                           ("read_file", {"path": "/w/x"})]):
        call, found = policies.check(f"c{n}", tool, arguments)
        assert not found
        policies.accept(call)
        policies.record(f"c{n}", {"content": [{"type": "text", "text": "some long text here"}]})
    call, found = policies.check("c2", "write_file", {"path": "/w/y", "content": "{{ref}}"},
                                 references={"content": ("c1", ("content",))},
                                 unknown=frozenset({"content"}))
    (diagnostic,) = found
    data = diagnostic_to_dict(diagnostic)["data"]
    assert data["flows"] == [{"argument": "content", "from": "c1", "tool": "read_file",
                              "path": "content", "kind": "explicit"}]
    assert "holds a value returned by c1 `read_file`" in diagnostic.message


def test_provenance_can_be_switched_off() -> None:
    policies = GuardPolicies(POLICY, FILESYSTEM, provenance=False)
    said = _loop(policies, [
        ("list_allowed_directories", {}, "ok"),
        ("read_file", {"path": "/w/.env"}, {"content": [{"type": "text", "text": "abcdefghijk"}]}),
        ("write_file", {"path": "/w/b", "content": "abcdefghijk"}, "ok"),
    ])
    assert said == [[], [], []]


def test_a_complete_trace_is_judged_as_a_whole() -> None:
    policies = GuardPolicies("policy p {\n  require directory_tree\n}\n", FILESYSTEM)
    _loop(policies, [("list_allowed_directories", {}, "ok")])
    (missing,) = policies.finish()
    assert missing.code == "PC806" and "call_id" not in missing.data
    assert json.dumps(diagnostic_to_dict(missing))  # serialisable as it is
