"""The JSON Schema validators plancheck could use for tool arguments, side by side.

    python bench/bench_schema_validators.py

For every tool of the MCP filesystem and GitHub servers' real ``tools/list`` captures: valid
arguments (each required property filled) and invalid ones (a required property missing, a
wrong type), validated by ``jsonschema-rs`` (``validator_for``), ``fastjsonschema``
(``compile``) and ``jsonschema`` (``Draft202012Validator``), each validator built once per
tool; the build time too. CPU time, medians over rounds that alternate the libraries. What
plancheck needs of the winner: full drafts 4-2020-12, every error with its path (the Guard
maps each to a diagnostic), building a validator cheaply (pools are loaded at start-up).
Then correctness: how many of the official JSON Schema Test Suite's required cases (drafts 7
and 2020-12, vendored under ``tests/data/json-schema-test-suite``) each library decides as the
suite does (``format`` as an annotation, as the guard reads it; a case a library cannot
build counts as a miss).
"""

from __future__ import annotations

import contextlib
import json
import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
POOLS = [ROOT / "tests" / "data" / "real" / "mcp" / f"server-{name}.json"
         for name in ("filesystem", "github")]
SAMPLES = {"string": "a", "integer": 1, "number": 1.5, "boolean": True, "array": [],
           "object": {}}


def cases() -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """(schema, valid arguments, invalid arguments) per tool with a required property."""
    found = []
    for path in POOLS:
        data = json.loads(path.read_text(encoding="utf-8"))
        for tool in data.get("tools") or data["result"]["tools"]:
            schema = tool["inputSchema"]
            required = schema.get("required") or []
            if not required:
                continue
            valid: dict[str, Any] = {}
            for name in required:
                kind = schema.get("properties", {}).get(name, {}).get("type", "string")
                valid[name] = SAMPLES.get(kind[0] if isinstance(kind, list) else kind, "a")
            invalid = {k: v for k, v in valid.items() if k != required[0]}
            invalid["__extra__"] = 1
            found.append((schema, valid, invalid))
    return found


def main() -> int:
    import fastjsonschema
    import jsonschema
    import jsonschema_rs

    tools = cases()
    builders = {
        "jsonschema-rs": lambda s: jsonschema_rs.validator_for(
            s, validate_formats=False, offline=True).iter_errors,
        "fastjsonschema": fastjsonschema.compile,
        "jsonschema": lambda s: jsonschema.Draft202012Validator(s).iter_errors,
    }
    built: dict[str, list[Any]] = {}
    for name, build in builders.items():
        start = time.process_time()
        built[name] = [build(schema) for schema, _, _ in tools]
        print(f"{name:<15} build {len(tools)} validators: "
              f"{(time.process_time() - start) * 1e3:6.2f} ms")

    def run(name: str, validators: list[Any], arguments: list[dict[str, Any]]) -> None:
        for validate, value in zip(validators, arguments, strict=True):
            if name == "fastjsonschema":  # (raises its first error; the others list all)
                with contextlib.suppress(fastjsonschema.JsonSchemaException):
                    validate(value)
            else:
                list(validate(value))

    for label, index in (("valid", 1), ("invalid", 2)):
        arguments = [case[index] for case in tools]
        samples: dict[str, list[float]] = {name: [] for name in builders}
        for round_ in range(30):
            order = list(builders) if round_ % 2 == 0 else list(builders)[::-1]
            for name in order:
                start = time.process_time()
                for _ in range(20):
                    run(name, built[name], arguments)
                samples[name].append((time.process_time() - start) / (20 * len(tools)) * 1e6)
        line = ", ".join(f"{name} {statistics.median(values):.2f} µs"
                         for name, values in samples.items())
        print(f"{label:<8} arguments, per validation: {line}")
    suite_agreement()
    return 0


def suite_agreement() -> None:
    import fastjsonschema
    import jsonschema
    import jsonschema_rs

    suite = ROOT / "tests" / "data" / "json-schema-test-suite"
    drafts = {"draft7": "http://json-schema.org/draft-07/schema#",
              "draft2020-12": "https://json-schema.org/draft/2020-12/schema"}
    deciders = {
        "jsonschema-rs": lambda s: jsonschema_rs.validator_for(
            s, validate_formats=False, offline=True).is_valid,
        "fastjsonschema": lambda s: _fast(fastjsonschema.compile(s, use_formats=False)),
        "jsonschema": lambda s: jsonschema.validators.validator_for(
            s, default=jsonschema.Draft202012Validator)(s).is_valid,
    }
    for draft, uri in drafts.items():
        agreed = dict.fromkeys(deciders, 0)
        total = 0
        for path in sorted((suite / draft).glob("*.json")):
            for group in json.loads(path.read_text(encoding="utf-8")):
                schema = group["schema"]
                if isinstance(schema, dict) and "$schema" not in schema:
                    schema = {"$schema": uri, **schema}
                for name, build in deciders.items():
                    try:
                        decide = build(schema)
                    except Exception:  # a schema the library cannot build: every case missed
                        continue
                    for test in group["tests"]:
                        with contextlib.suppress(Exception):  # (a miss)
                            agreed[name] += decide(test["data"]) is test["valid"]
                total += len(group["tests"])
        line = ", ".join(f"{name} {count} of {total}" for name, count in agreed.items())
        print(f"JSON Schema Test Suite {draft:<12} agrees: {line}")


def _fast(validate: Any) -> Any:
    import fastjsonschema

    def decide(value: Any) -> bool:
        try:
            validate(value)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return decide


if __name__ == "__main__":
    raise SystemExit(main())
