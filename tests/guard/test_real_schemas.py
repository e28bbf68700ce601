"""The guard validates the arguments of real tools whose schemas use loose type names.

BFCL's function docs write ``"float"``, ``"dict"``, ``"tuple"`` and ``"any"``; Seal-Tools
writes ``"str"`` and ``"int"`` (``tests/data/real/PROVENANCE.md``). The JSON Schema validator
refuses such a schema, and a guard that cannot compile a tool's schema lets every call to it
through, so these names are read as the JSON Schema types they mean. Checked on every
function of the BFCL records and the Seal-Tools pool here: each schema compiles (no
``PC711`` from ``toolset lint``), the records' own gold answers are all allowed, and a wrong
argument to a ``float`` parameter is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.cli import main

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
BFCL = REAL / "bfcl"
CATEGORIES = ("BFCL_v4_live_parallel", "BFCL_v4_live_simple", "BFCL_v4_multiple",
              "BFCL_v4_parallel_multiple")


def _records(category: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each record of a category with its possible answer."""
    def lines(path: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
    answers = {a["id"]: a for a in lines(BFCL / f"{category}.possible_answer.json")}
    return [(record, answers[record["id"]]) for record in lines(BFCL / f"{category}.json")]


def _first_alternatives(arguments: dict[str, Any]) -> dict[str, Any]:
    """A gold call's arguments: each argument's first alternative, leaving out those that
    may be left out (an alternative ``""``), as BFCL's checker reads possible answers."""
    chosen: dict[str, Any] = {}
    for name, alternatives in arguments.items():
        if "" in alternatives:
            continue
        first = alternatives[0]
        if isinstance(first, dict) and all(isinstance(v, list) for v in first.values()):
            first = _first_alternatives(first)
        chosen[name] = first
    return chosen


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_bfcl_function_schema_compiles(category: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    for record, _ in _records(category):
        pool = tmp_path / f"{record['id']}.json"
        pool.write_text(json.dumps(record["function"]), encoding="utf-8")
        main(["toolset", "lint", str(pool), "--format", "json"])
        codes = [d["code"] for d in json.loads(capsys.readouterr().out)["diagnostics"]]
        assert "PC711" not in codes, (record["id"], codes)


def test_the_seal_tools_pool_schemas_compile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["toolset", "lint", str(REAL / "sealtools" / "tool.jsonl"),
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["diagnostics"] == []


@pytest.mark.parametrize("category", CATEGORIES)
def test_the_gold_answers_of_bfcl_records_are_allowed(category: str) -> None:
    for record, answer in _records(category):
        guard = plancheck.Guard(record["function"], provenance=False)
        for position, call in enumerate(answer["ground_truth"]):
            ((name, arguments),) = call.items()
            verdict = guard.propose({"type": "tool_use", "id": f"c{position}", "name": name,
                                     "input": _first_alternatives(arguments)})
            assert verdict.allowed, (record["id"], name, verdict.feedback)


def test_a_wrong_argument_to_a_float_parameter_is_refused() -> None:
    [(record, answer)] = [pair for pair in _records("BFCL_v4_multiple")
                          if pair[0]["id"] == "multiple_6"]
    ((name, arguments),) = answer["ground_truth"][0].items()
    [function] = [f for f in record["function"] if f["name"] == name]
    assert function["parameters"]["properties"]["K"]["type"] == "float"  # as BFCL writes it
    call = dict(_first_alternatives(arguments), K="high")
    verdict = plancheck.Guard(record["function"], provenance=False).propose(
        {"type": "tool_use", "id": "c", "name": name, "input": call})
    assert not verdict.allowed
    assert [d.code for d in verdict.errors] == ["PC302"] and "`K`" in verdict.feedback
