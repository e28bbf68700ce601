"""The official JSON Schema Test Suite through the guard (issue 31, item 5).

Each required case of drafts 7 and 2020-12 whose instance is a JSON object becomes a call:
its arguments are that object and its tool's ``inputSchema`` is the case's schema
(``tests/data/json-schema-test-suite/PROVENANCE.md``). The guard must allow exactly the calls
the suite calls valid, wherever ``jsonschema-rs`` (the validator the guard uses) agrees with
the suite. Before issue 31 the guard agreed on 424 of 712 such cases.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

import plancheck
from plancheck.corpus.pool_errors import ToolsetError

SUITE = Path(__file__).resolve().parents[1] / "data" / "json-schema-test-suite"
DRAFTS = {"draft7": "http://json-schema.org/draft-07/schema#",
          "draft2020-12": "https://json-schema.org/draft/2020-12/schema"}


def _cases(draft: str) -> list[tuple[str, Any, Any, bool]]:
    cases = []
    for path in sorted((SUITE / draft).glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            schema = group["schema"]
            if isinstance(schema, dict) and "$schema" not in schema:
                schema = {"$schema": DRAFTS[draft], **schema}
            for test in group["tests"]:
                if isinstance(test["data"], dict):
                    name = f"{path.stem}: {group['description']}: {test['description']}"
                    cases.append((name, schema, test["data"], test["valid"]))
    return cases


def _library(schema: Any, data: Any) -> bool | None:
    """jsonschema-rs's own verdict, as the guard configures it (None: it cannot decide)."""
    try:
        return bool(jsonschema_rs.validator_for(schema, validate_formats=False, offline=True)
                    .is_valid(data))
    except (ValueError, jsonschema_rs.ValidationError):
        return None


@pytest.mark.parametrize("draft", sorted(DRAFTS))
def test_the_guard_agrees_with_the_suite_wherever_its_validator_does(draft: str) -> None:
    cases = _cases(draft)
    checked, disagreements = 0, []
    for name, schema, data, valid in cases:
        if _library(schema, data) is not valid:
            continue  # the validator's own disagreement (or a schema it cannot compile)
        checked += 1
        try:
            guard = plancheck.Guard({"tools": [{"name": "t", "inputSchema": schema}]},
                                    provenance=False)
        except ToolsetError as error:
            # a tool whose schema admits no object at all (``{"type": "integer"}``) makes the
            # pool unusable (PC706): no call to it runs, which agrees only with "invalid"
            if valid or any(d.code != "PC706" for d in error.diagnostics):
                disagreements.append((name, "pool refused", str(error)[:200]))
            continue
        verdict = guard.propose({"name": "t", "arguments": data, "id": "c"})
        if verdict.allowed is not valid:
            disagreements.append((name, valid, verdict.feedback[:300]))
    assert disagreements == [], f"{len(disagreements)} of {checked}: {disagreements[:10]}"
    assert checked >= 0.9 * len(cases), (checked, len(cases))
