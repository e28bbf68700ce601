"""The policy suite: 46 rules over real pools (the GitHub, filesystem, memory and fetch MCP
captures, DORA's 108 tools, the built-in DisasterBench pool), tried on allowed and violating
trajectories, and the equivalence of the two checks: every rule decided online (per call,
state per rule) and statically (Z3 on the whole trace) on every prefix of every trajectory gives
the same verdicts."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancheck.api import load_toolset
from plancheck.ir.nodes import Toolset
from plancheck.policy.loader import PolicySet, load_policies
from plancheck.policy.monitor import PolicyMonitor
from plancheck.policy.semantics import EXPLICIT, FlowIn, PolicyCall, Violation
from plancheck.smt.policy_check import check_policies
from plancheck.smt.policy_lint import contradictions
from tests.policy.traces import SUITE

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).with_name("corpus")


@cache
def _pool(spec: str | None) -> Toolset:
    return load_toolset(None if spec is None else spec if spec == "dora" else ROOT / spec)


@cache
def _policies(name: str, pool: str | None) -> PolicySet:
    return load_policies(CORPUS / name, _pool(pool))


def _online(policies: PolicySet, calls: list[Any]) -> tuple[list[PolicyCall], list[Violation]]:
    """Every call proposed, accepted and recorded in turn (provenance on): the calls as the
    monitor saw them, with their inferred flows, and every violation it reported."""
    monitor = PolicyMonitor(policies)
    seen: list[PolicyCall] = []
    found: list[Violation] = []
    for tool, arguments, result, *refs in calls:
        flows = tuple(FlowIn((name,), source, tuple(path), EXPLICIT)
                      for name, (source, path) in (refs[0] if refs else {}).items())
        call = monitor.call(tool, arguments, call_id=f"call_{monitor.next_index}", flows=flows)
        found.extend(monitor.propose(call))
        monitor.accept(call)
        monitor.record(call.index, result)
        seen.append(call)
    return seen, found + monitor.finish()


def _verdicts(violations: list[Violation]) -> list[tuple[int, str, str]]:
    return sorted((v.index, v.code, v.rule.body()) for v in violations)


def test_the_corpus_has_forty_rules_or_more_and_no_contradiction() -> None:
    rules = 0
    for name, pool in {(name, pool) for name, pool, *_ in SUITE}:
        policies = _policies(name, pool)
        assert not contradictions(policies)
        rules += len(policies.rules)
    assert rules >= 40


def test_every_rule_of_the_corpus_is_broken_by_some_trace() -> None:
    broken: set[tuple[str, str]] = set()
    for name, pool, _, calls, _ in SUITE:
        _, found = _online(_policies(name, pool), calls)
        broken.update((name, v.rule.body()) for v in found)
    every = {(name, rule.body()) for name, pool, *_ in SUITE
             for rule in _policies(name, pool).rules}
    assert every - broken == set()


@pytest.mark.parametrize(("name", "pool", "trace", "calls", "expected"), SUITE,
                         ids=[f"{s[0]}-{s[2]}" for s in SUITE])
def test_a_trace_draws_exactly_its_violations(name: str, pool: str | None, trace: str,
                                              calls: list[Any],
                                              expected: list[tuple[int, str]]) -> None:
    _, found = _online(_policies(name, pool), calls)
    assert sorted((v.index, v.code) for v in found) == sorted(expected), \
        [v.message for v in found]


@pytest.mark.parametrize(("name", "pool", "trace", "calls", "expected"), SUITE,
                         ids=[f"{s[0]}-{s[2]}" for s in SUITE])
def test_online_and_static_agree_on_every_prefix(name: str, pool: str | None, trace: str,
                                                 calls: list[Any],
                                                 expected: list[tuple[int, str]]) -> None:
    policies = _policies(name, pool)
    seen, _ = _online(policies, calls)
    for end in range(len(seen) + 1):
        online, _ = _online(policies, calls[:end])
        monitor = PolicyMonitor(policies, provenance=False)
        per_call: list[Violation] = []
        for call in online:  # the same calls, flows included, decided a call at a time
            per_call.extend(monitor.propose(call))
            monitor.accept(call)
        complete = end == len(seen)
        if complete:
            per_call.extend(monitor.finish())
        static = check_policies(online, policies, complete=complete, timeout_ms=60_000)
        assert not static.timed_out
        assert _verdicts([e.violation for e in static.explained]) == _verdicts(per_call), end


# --------------------------------------------------------------------------- random traces

_GITHUB = "tests/data/real/mcp/server-github.json"
_TOOLS = ["get_file_contents", "create_or_update_file", "create_issue", "create_branch",
          "list_issues", "merge_pull_request", "get_pull_request_status", "fork_repository",
          "create_pull_request_review", "search_code", "add_issue_comment", "push_files",
          "get_issue"]
_VALUES = st.one_of(st.integers(-5, 120), st.sampled_from(
    ["main", "dev", "Title", "lower", "", "squash", "merge", "rebase"]))
_ARGUMENTS = st.dictionaries(st.sampled_from(
    ["title", "body", "branch", "per_page", "merge_method", "message"]), _VALUES, max_size=3)


@st.composite
def _traces(draw: st.DrawFn) -> list[PolicyCall]:
    calls: list[PolicyCall] = []
    for index in range(draw(st.integers(0, 9))):
        flows: tuple[FlowIn, ...] = ()
        if index and draw(st.booleans()):
            source = draw(st.integers(0, index - 1))
            argument = draw(st.sampled_from(["body", "title"]))
            path = draw(st.sampled_from([(), ("content",), ("other",)]))
            flows = (FlowIn((argument,), source, path, draw(st.sampled_from(
                [EXPLICIT, "exact", "contained"]))),)
        calls.append(PolicyCall(index, draw(st.sampled_from(_TOOLS)), draw(_ARGUMENTS), flows,
                                frozenset(draw(st.sets(st.sampled_from(["title", "branch"]),
                                                       max_size=1)))))
    return calls


@settings(max_examples=40, deadline=None)
@given(trace=_traces(), complete=st.booleans())
def test_online_and_static_agree_on_random_traces(trace: list[PolicyCall],
                                                  complete: bool) -> None:
    policies = _policies("github.wf", _GITHUB)
    monitor = PolicyMonitor(policies, provenance=False)
    online: list[Violation] = []
    for call in trace:
        online.extend(monitor.propose(call))
        monitor.accept(call)
    if complete:
        online.extend(monitor.finish())
    static = check_policies(trace, policies, complete=complete, timeout_ms=60_000)
    assert _verdicts([e.violation for e in static.explained]) == _verdicts(online)
