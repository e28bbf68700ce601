"""The guard against ``jsonschema`` on real pools (issue 31, item 5).

For every tool of the official MCP reference servers' ``tools/list``, the BFCL records'
functions, the Seal-Tools pool, DORA and the built-in pool: calls built from the tool's
published schema (one with its required arguments, the servers' own example inputs) and
mutations of them (a required argument dropped, a value of the wrong kind, ``null``, a number
written as a string, an undeclared argument, a nested value broken, text that reads like a
reference in some syntax, large numbers). Each is proposed to a guard (``guard`` profile) and
validated by ``jsonschema`` honouring the schema's ``$schema`` draft (``format`` as an
annotation, as the guard reads it). They must agree, but for the categories ``docs/guard.md``
documents:

* ``declared-reference``: in a pool that declares a reference syntax (the built-in pool's
  ``<GENERATED>-k-<key>``, DORA's ``<key> from trajectory[k].obs``), a string in it is a
  reference, resolved before the schema sees a value; one that cannot resolve is refused.
* ``path-kind``: plancheck's own check that a path written for a typed input of the built-in
  pool or DORA has an extension of that type (PC302).

The schemas BFCL and Seal-Tools write with loose type names (``"dict"``, ``"float"``,
``"str"``) are compared as the pool reads them: with each loose name written as the JSON type
it names (without that, ``jsonschema`` refuses the schema itself).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import plancheck
from plancheck.ir.nodes import Toolset
from plancheck.ir.schema_validation import tool_schema_text

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
TEXTS = ("$HOME$", "API_call_0", "<output of step 2> shows up in logs",
         "{{steps.0.output.dir}}", "mask from trajectory[0].obs", "$var_1.result$",
         "<GENERATED>-0-<x>", "<node-0>.text")


def _pools() -> dict[str, Any]:
    pools: dict[str, Any] = {}
    for path in sorted((REAL / "mcp").glob("*.json")):
        if not path.stem.endswith("-examples"):
            pools[f"mcp/{path.stem}"] = path
    for path in sorted((REAL / "bfcl").glob("BFCL_*.json")):
        if "possible_answer" in path.name:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            pools[f"bfcl/{record['id']}"] = record["function"]
    pools["sealtools"] = REAL / "sealtools" / "tool.jsonl"
    pools["dora"] = "dora"
    pools["builtin"] = None
    return pools


def _examples() -> dict[str, list[Any]]:
    """The example inputs the MCP servers' own documentation gives, by tool."""
    found: dict[str, list[Any]] = {}
    for path in sorted((REAL / "mcp").glob("*-examples.json")):
        for name, entry in json.loads(path.read_text(encoding="utf-8"))["tools"].items():
            if isinstance(entry, dict) and isinstance(entry.get("example_input"), dict):
                found.setdefault(name, []).append(entry["example_input"])
    return found


def _resolve(schema: Any, root: Any) -> Any:
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 8:
        ref, seen = schema["$ref"], seen + 1
        if not ref.startswith("#"):
            return {}
        target: Any = root
        for token in ref[1:].split("/")[1:]:
            target = target.get(token.replace("~1", "/").replace("~0", "~"), {}) \
                if isinstance(target, dict) else {}
        schema = target
    return schema


def _value(schema: Any, root: Any, depth: int = 0) -> Any:
    """A value meant to fit ``schema`` (not always one: the comparison decides)."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict) or depth > 6:
        return "notes"
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _value(schema[key][0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        return {name: _value(properties.get(name, {}), root, depth + 1)
                for name in required if isinstance(name, str)}
    if kind == "array":
        items = schema.get("items", {})
        count = max(1, schema.get("minItems", 1) if isinstance(schema.get("minItems"), int)
                    else 1)
        return [_value(items if isinstance(items, dict) else {}, root, depth + 1)] * count
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        low = low if isinstance(low, int | float) and not isinstance(low, bool) else 0
        return int(low) + 1 if kind == "integer" else float(low) + 1.5
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    length = schema.get("minLength", 0)
    return "notes" + "x" * max(0, (length if isinstance(length, int) else 0) - 5)


def _calls(schema: Any, examples: list[Any]) -> list[Any]:
    base = _value(schema, schema)
    if not isinstance(base, dict):
        base = {}
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    properties = properties if isinstance(properties, dict) else {}
    calls: list[Any] = [base, *examples, {**base, "colour": "red"}]
    for name in list(base)[:3]:
        calls.append({k: v for k, v in base.items() if k != name})
    for name in list(properties)[:5]:
        value = base.get(name, _value(properties[name], schema))
        calls.append({**base, name: 7 if isinstance(value, str) else "seven"})
        calls.append({**base, name: None})
        calls.append({**base, name: "12"})
        calls.append({**base, name: 10**30})
        if isinstance(value, str):
            calls.extend({**base, name: text} for text in TEXTS)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            broken = dict(value[0])
            if broken:
                broken.pop(next(iter(broken)))
            calls.append({**base, name: [broken]})
            calls.append({**base, name: [{**value[0], "extra": 1}]})
            calls.append({**base, name: [5]})
        if isinstance(value, dict):
            calls.append({**base, name: {**value, "extra": 1}})
            calls.append({**base, name: []})
    return calls


def _jsonschema_valid(schema: Any, instance: Any) -> bool:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return bool(cls(schema).is_valid(instance))


def _category(verdict: Any) -> str | None:
    """The documented category a disagreement falls in (None: none)."""
    codes = {d.code for d in verdict.errors}
    if codes and codes <= {"PC206", "PC207", "PC208", "PC209", "PC301"}:
        return "declared-reference"
    if codes == {"PC302"} and all("file" in d.message for d in verdict.errors):
        return "path-kind"
    return None


def test_the_guard_agrees_with_jsonschema_on_real_pools() -> None:
    examples = _examples()
    total, categories, disagreements = 0, Counter[str](), []
    for pool_name, spec in _pools().items():
        toolset: Toolset = plancheck.load_toolset(spec)
        guard = plancheck.Guard(toolset, provenance=False)
        assert guard.pool_diagnostics == [], pool_name
        for tool in toolset.tools.values():
            schema = json.loads(tool_schema_text(tool))
            for position, arguments in enumerate(_calls(schema, examples.get(tool.name, []))):
                total += 1
                expected = _jsonschema_valid(schema, arguments)
                verdict = guard.propose({"name": tool.name, "arguments": arguments,
                                         "id": f"{tool.name}-{position}-{total}"})
                if verdict.allowed is expected:
                    continue
                category = None if expected is False else _category(verdict)
                if category is not None and pool_name in ("dora", "builtin"):
                    categories[category] += 1
                else:
                    disagreements.append((pool_name, tool.name, arguments, expected,
                                          verdict.feedback[:300]))
    assert total >= 5000, total
    assert disagreements == [], f"{len(disagreements)} of {total}: {disagreements[:6]}"
    # (the documented categories do occur, and only where a pool declares them)
    assert set(categories) <= {"declared-reference", "path-kind"}, categories


@pytest.mark.parametrize("text", TEXTS)
def test_text_that_reads_like_a_reference_is_text_in_every_foreign_pool(text: str) -> None:
    pool = json.loads((REAL / "mcp" / "server-memory.json").read_text(encoding="utf-8"))
    guard = plancheck.Guard(pool)
    verdict = guard.propose({"name": "search_nodes", "arguments": {"query": text}})
    assert verdict.allowed and verdict.diagnostics == [] and \
        verdict.arguments == {"query": text}
