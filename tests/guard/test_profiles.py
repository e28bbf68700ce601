"""Profiles decide which codes block, in ``plancheck.check`` as in the Guard (issue 22 item
2): under ``default`` a literal that breaks its parameter's JSON Schema is a warning (a
linter's view), under ``guard`` an error (the call would fail when it runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import plancheck
from plancheck import CheckOptions, Severity

POOL_FILE = Path(__file__).resolve().parents[1] / "data" / "real" / "mcp" / "server-filesystem.json"
# `head` is an integer in the filesystem server's schema.
CALLS = [{"name": "read_text_file", "arguments": {"path": "/tmp/a", "head": "ten"}}]


@pytest.fixture(scope="module")
def pool() -> plancheck.Toolset:
    return plancheck.load_toolset(str(POOL_FILE))


def test_a_schema_violation_blocks_only_under_the_guard_profile(pool: plancheck.Toolset
                                                                 ) -> None:
    lenient = plancheck.check(CALLS, pool)
    assert lenient.ok and [d.code for d in lenient.diagnostics] == ["PC302"]
    assert lenient.to_feedback() == "The plan passed all checks."
    assert "`head` must be a number" in lenient.to_feedback(include_warnings=True)
    strict = plancheck.check(CALLS, pool, profile="guard")
    assert not strict.ok and strict.diagnostics[0].severity is Severity.ERROR


def test_the_callers_overrides_win_over_the_profile(pool: plancheck.Toolset) -> None:
    options = CheckOptions(severity_overrides=(("PC302", Severity.INFO),))
    report = plancheck.check(json.dumps(CALLS), pool, profile="guard", options=options)
    assert report.ok and report.diagnostics[0].severity is Severity.INFO


def test_an_unknown_profile_names_the_profiles(pool: plancheck.Toolset) -> None:
    with pytest.raises(ValueError, match="default, guard, strict"):
        plancheck.check(CALLS, pool, profile="paranoid")
