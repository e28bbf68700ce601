"""Tool-pool dialects: BFCL function docs, JSONL pools, per-tool outputs, per-record pools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import plancheck
from plancheck.cli import main

BFCL_FUNCTION = {"name": "circle.area", "description": "Area of a circle.", "parameters": {
    "type": "dict", "required": ["radius"],
    "properties": {"radius": {"type": "float", "description": "The radius."},
                   "unit": {"type": "string", "enum": ["cm", "m"], "default": "cm"}}}}


def write_jsonl(path: Path, items: list[Any]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return path


def test_bfcl_function_docs_load(tmp_path: Path) -> None:
    pool = tmp_path / "functions.json"
    pool.write_text(json.dumps([BFCL_FUNCTION]), encoding="utf-8")
    tool = plancheck.load_toolset(pool).tools["circle.area"]
    radius, unit = tool.input("radius"), tool.input("unit")
    assert radius is not None and radius.type == "Number" and radius.required
    assert unit is not None and not unit.required


def test_outputs_declared_next_to_the_inputs(tmp_path: Path) -> None:
    tools = [
        {"type": "function", "function": dict(BFCL_FUNCTION, name="a", output_parameters={
            "type": "object", "properties": {"area": {"type": "number"}}})},
        {"name": "b", "parameters": {"type": "object", "properties": {}},
         "results": {"rows": {"type": "array"}, "count": {"type": "integer"}}},
    ]
    pool = tmp_path / "tools.json"
    pool.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    toolset = plancheck.load_toolset(pool)
    assert toolset.tools["a"].output_names == ("area",)
    assert toolset.tools["b"].output_names == ("rows", "count")
    output = toolset.tools["b"].output("count")
    assert output is not None and output.type == "Integer"


def test_a_jsonl_pool_and_its_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seal = {"api_name": "getArea", "api_description": "Area.", "parameters": {
        "radius": {"type": "float", "description": "r"}}, "required": ["radius"],
        "responses": {"area": {"type": "float", "description": "the area"}}}
    pool = write_jsonl(tmp_path / "tool.jsonl", [seal, BFCL_FUNCTION])
    toolset = plancheck.load_toolset(pool)
    assert set(toolset.tools) == {"getArea", "circle.area"}
    assert toolset.tools["getArea"].output_names == ("area",)
    pool.write_text(pool.read_text() + "{not json\n", encoding="utf-8")
    assert main(["toolset", "lint", str(pool)]) == 1  # a finding about the pool file
    out = capsys.readouterr().out
    assert "tool.jsonl:3 is not valid JSON" in out and "Traceback" not in out


def test_a_record_that_carries_its_own_pool(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    batch = write_jsonl(tmp_path / "batch.jsonl", [
        {"id": "ok", "function": [BFCL_FUNCTION],
         "ground_truth": [{"circle.area": {"radius": [2.0], "unit": ["", "cm"]}}]},
        {"id": "wrong", "function": [BFCL_FUNCTION],
         "ground_truth": [{"circle.area": {"radius": ["two"]}}]},
        {"id": "bad pool", "function": [{"name": "x", "parameters": {"type": "string"}}],
         "ground_truth": [{"x": {}}]},
    ])
    assert main(["check", str(batch), "--format", "json"]) == 1
    found = [(d["record"], d["code"]) for d in json.loads(capsys.readouterr().out)["diagnostics"]]
    # A literal of the wrong kind is a warning; a record whose own pool is malformed says so
    # (and is then checked against the default pool, which lacks its tool).
    assert found == [("wrong", "PC302"), ("bad pool", "PC706"), ("bad pool", "PC201")]


_schemas = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5),
              st.sampled_from(["dict", "float", "str", "object", "array", "tuple", "any"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(
        st.sampled_from(["type", "properties", "required", "items", "default", "x", "enum"]),
        inner, max_size=4)), max_leaves=10)
_tool_definitions = st.fixed_dictionaries({}, optional={
    "name": st.one_of(st.sampled_from(["a", "b", "A"]), _schemas),
    "api_name": st.one_of(st.sampled_from(["a", "b"]), _schemas),
    "parameters": _schemas, "required": _schemas, "responses": _schemas, "results": _schemas,
    "inputSchema": _schemas, "type": st.sampled_from(["function", "dict"]),
    "function": _schemas,
})


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tools=st.lists(_tool_definitions, max_size=4),
       suffix=st.sampled_from([".json", ".jsonl"]))
def test_pools_in_these_formats_never_crash(tools: list[dict[str, Any]], suffix: str,
                                            tmp_path_factory: pytest.TempPathFactory,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path_factory.mktemp("pool") / f"tools{suffix}"
    if suffix == ".jsonl":
        write_jsonl(path, tools)
    else:
        path.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    code = main(["toolset", "lint", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    assert code in (0, 1, 2) and "Traceback" not in out + err
    if code != 2:
        assert not any(d["code"] == "PC002" for d in json.loads(out)["diagnostics"])
