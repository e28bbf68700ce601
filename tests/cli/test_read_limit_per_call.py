"""``--max-size`` holds for the command it is given to, not for what the same process does
after it (an embedding program, a test run): the API and a later ``main()`` read with the
default limit again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import plancheck
from plancheck.cli import main
from tests.support.samples import FOG_CHAIN


def test_a_limit_given_to_one_command_does_not_hold_after_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(FOG_CHAIN, indent=2), encoding="utf-8")
    assert plan.stat().st_size > 100
    assert main(["check", "--max-size", "100", str(plan)]) != 0
    assert "PC006" in capsys.readouterr().out
    assert "PC006" not in plancheck.check(plan).codes
    assert main(["fmt", str(plan), "--to", "dsl"]) == 0
