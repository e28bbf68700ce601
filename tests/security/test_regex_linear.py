"""Policy regular expressions run in time linear in the value (issue 33): Python's ``re``
backtracks, and ``matches "(a+)+$"`` against 40 ``a`` and a ``!`` ran past 120 s under a
2,000 ms ``--timeout-ms`` (in the guard, 27 characters took 2.5 s, four times longer for every
two more). Patterns are matched by RE2; one that needs backtracking is refused (PC810).
Each run is a child under a CPU cap, so the old code fails here instead of hanging."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plancheck
from plancheck.policy.loader import PolicyError
from plancheck.policy.regex import RegexError, compile_regex
from tests.security.capped import ROOT, last_json, run_capped

# CPU seconds of a verdict: measured with no other test running.
pytestmark = [pytest.mark.alone, pytest.mark.slow]

EVIL = "(a+)+$"
TOOL, PARAM = "Flood_depth_prediction", "region_topography_path"
POLICY = f'policy p {{ require {TOOL}.{PARAM} matches "{EVIL}" }}'


def test_a_guard_verdict_on_a_backtracking_pattern_is_prompt() -> None:
    code = (
        "import json, time, plancheck\n"
        f"guard = plancheck.Guard(policies={POLICY!r})\n"
        "start = time.process_time()\n"
        f"v = guard.propose({{'name': {TOOL!r}, 'arguments': {{{PARAM!r}: 'a' * 40 + '!',"
        " 'precipitation_data_path': 'p.npy'}})\n"
        "print(json.dumps([v.allowed, [d.code for d in v.diagnostics],"
        " time.process_time() - start]))\n")
    done = run_capped(code, cpu_seconds=20, timeout=60)
    allowed, codes, seconds = last_json(done)
    assert not allowed and "PC804" in codes  # 'a' * 40 + '!' does not match: the rule fires
    assert seconds < 1.0


def test_check_policy_on_a_backtracking_pattern_keeps_its_time_budget(tmp_path: Path) -> None:
    plan = json.loads((ROOT / "examples" / "policy_plan.json").read_text(encoding="utf-8"))
    for step in plan:
        if step["agent"] == TOOL:
            step["inputs"][PARAM] = "a" * 40 + "!"
    (tmp_path / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    (tmp_path / "p.wf").write_text(POLICY, encoding="utf-8")
    code = ("import sys\nfrom plancheck.cli import main\n"
            "sys.exit(main(['check', 'plan.json', '--policy', 'p.wf', '--timeout-ms', '2000',"
            " '--format', 'json']))\n")
    start = time.monotonic()
    done = run_capped(code, cpu_seconds=30, timeout=90, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "PC804" in done.output
    assert time.monotonic() - start < 30


@pytest.mark.parametrize(("pattern", "why"), [
    ("(a)\\1", "backreference"), ("(?=a)a", "lookaround"), ("(?<!x)a", "lookaround"),
    ("a{1001}", "repetition"), ("(", "missing"),
])
def test_a_pattern_needing_backtracking_is_refused(pattern: str, why: str) -> None:
    policy = f"policy p {{ require {TOOL}.{PARAM} matches {json.dumps(pattern)} }}"
    with pytest.raises(PolicyError) as refused:
        plancheck.Guard(policies=policy)
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "PC810" and why in diagnostic.message


def test_a_lone_surrogate_is_matched_not_raised() -> None:
    assert compile_regex(".*").fullmatch("a\ud800b")
    assert not compile_regex("[a-z]*").fullmatch("a\ud800b")
    with pytest.raises(RegexError):
        compile_regex("\ud800")


# Patterns over a small alphabet that both engines read alike (ASCII, no backtracking
# constructs): RE2 and Python's re agree on every value.
_ATOMS = st.sampled_from(["a", "b", ".", "[ab]", "[^a]", "\\.", "(a|b)", "(?:ab)"])
_PATTERNS = st.recursive(_ATOMS, lambda inner: st.one_of(
    st.tuples(inner, st.sampled_from(["*", "+", "?", "{1,3}", "*?"])).map(
        lambda p: f"(?:{p[0]}){p[1]}"),
    st.lists(inner, min_size=2, max_size=3).map("".join),
    st.tuples(inner, inner).map(lambda p: f"(?:{p[0]}|{p[1]})"),
    inner.map(lambda p: f"({p})+")), max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(_PATTERNS, st.text(alphabet="ab.!", max_size=12))
def test_re2_means_what_re_means_on_ascii(pattern: str, value: str) -> None:
    assert compile_regex(pattern).fullmatch(value) == (re.fullmatch(pattern, value) is not None)
