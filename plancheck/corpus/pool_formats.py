"""Tool-pool dialects that :mod:`plancheck.corpus.foreign` reads once they are normalised.

* **BFCL function docs** (``berkeley-function-call-leaderboard``): OpenAI-style functions whose
  ``parameters`` schema says ``"type": "dict"`` (and ``float``, ``tuple``, ``any`` below it);
  the top-level ``dict`` is read as ``object`` (the nested names are already understood).
* **Seal-Tools** ``tool.jsonl``: one tool a line, ``{api_name, api_description, parameters:
  {name: {type, description}}, required, responses: {name: {type, description}}}``.
* **Per-tool outputs** written next to the inputs: ``responses``, ``results``,
  ``output_parameters`` or ``returns`` (a map of named output schemas, or an object schema)
  become the tool's outputs.
* **A JSONL pool**: one tool definition a line, in any of the shapes above or MCP/OpenAI.
* **A pool per record**: a JSONL record that carries its own ``function``/``functions``/
  ``tools`` list (BFCL, per-sample toolsets) is checked against that list.

Normalising only renames members inside each tool and never reorders tools, so a diagnostic's
JSON pointer still names the tool it is about.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span
from plancheck.ir.nodes import Toolset

OUTPUT_KEYS = ("responses", "results", "output_parameters", "returns")
RECORD_POOL_KEYS = ("function", "functions", "tools")


def normalise_pool(data: Any) -> Any:
    """``data`` rewritten into a shape :func:`plancheck.corpus.foreign.foreign_format` knows
    (unchanged when it already is one, or when it is no pool at all)."""
    if isinstance(data, list) and data and all(isinstance(i, dict) for i in data):
        if any(_needs_normalising(i) for i in data):
            return {"tools": [_tool(i) for i in data]}
        return data
    if isinstance(data, dict) and isinstance(data.get("tools"), list) and \
            any(isinstance(i, dict) and _needs_normalising(i) for i in data["tools"]):
        return dict(data, tools=[_tool(i) if isinstance(i, dict) else i for i in data["tools"]])
    return data


# A pool format, in words (for "FILE holds ..., not a plan").
_POOL_WORDS = {
    "mcp": "MCP tool definitions",
    "openai": "OpenAI tool definitions",
    "taskbench": "a TaskBench tool graph",
    "disasterbench-manifest": "a DisasterBench tool manifest",
}


def pool_kind(value: Any) -> str | None:
    """What kind of tool pool a JSON value is, in words (None: it is none that
    ``--tools`` reads)."""
    from plancheck.corpus.foreign import foreign_format

    found = foreign_format(normalise_pool(value))
    return _POOL_WORDS.get(found) if found is not None else None


def pool_file(value: Any, file: str) -> tuple[str, list[str]] | None:
    """What a JSON document that is no plan holds instead, when it is part of a tool pool,
    and where it goes (a message's ``holds ...`` and its help); None when it is none."""
    if isinstance(value, dict) and {"model_nodes", "data_nodes"} <= value.keys():
        return ("DisasterBench's workflow graph, not a plan",
                ["`--tools DIR` reads it with the tool manifest beside it (a release "
                 "directory)"])
    kind = pool_kind(value)
    if kind is None:
        return None
    return (f"{kind} (a tool pool), not a plan",
            [f"lint the pool with `plancheck toolset lint {file}`; check plans against it "
             f"with `plancheck check --tools {file} PLAN`"])


def _needs_normalising(item: dict[str, Any]) -> bool:
    inner = item.get("function")
    function: dict[str, Any] = inner if isinstance(inner, dict) else item
    parameters = function.get("parameters")
    return "api_name" in item or any(k in function for k in OUTPUT_KEYS) or (
        isinstance(parameters, dict) and parameters.get("type") == "dict")


def _tool(item: dict[str, Any]) -> dict[str, Any]:
    """One tool definition as an MCP tool."""
    function = item["function"] if isinstance(item.get("function"), dict) else item
    if "api_name" in function:  # Seal-Tools
        inputs = _object_schema(function.get("parameters"), function.get("required"),
                                bare=True)
        tool: dict[str, Any] = {"name": function["api_name"],
                                "description": function.get("api_description", ""),
                                "inputSchema": inputs}
    else:
        parameters = function.get("parameters", function.get("inputSchema",
                                                              function.get("input_schema")))
        tool = {"name": function.get("name"), "description": function.get("description", ""),
                "inputSchema": _object_schema(parameters, None)}
    for key in OUTPUT_KEYS:
        if key in function and "outputSchema" not in function:
            tool["outputSchema"] = _object_schema(function[key], None, output=True,
                                                  bare="api_name" in function)
            break
    if "outputSchema" in function:
        tool["outputSchema"] = function["outputSchema"]
    return tool


def _object_schema(schema: Any, required: Any, *, output: bool = False, bare: bool = False
                   ) -> Any:
    """An object schema from an object schema (BFCL ``dict`` read as ``object``) or from a
    bare map of property schemas (always so in Seal-Tools, where a parameter may well be
    called ``properties``)."""
    if schema is None:
        return {"type": "object", "properties": {}}
    if not isinstance(schema, dict):
        return schema  # foreign.py reports what is wrong with it
    if not bare and (schema.get("type") in ("object", "dict") or "properties" in schema):
        fixed = dict(schema)
        if fixed.get("type") == "dict":
            fixed["type"] = "object"
        return fixed
    # A bare map {name: {type, description}}: every value a property schema.
    if all(isinstance(v, dict) for v in schema.values()):
        names = [k for k in required if isinstance(k, str)] if isinstance(required, list) \
            else list(schema)
        return {"type": "object", "properties": schema,
                "required": list(schema) if output else names}
    return schema


def read_jsonl_pool(text: str, path: Path) -> tuple[Toolset, list[Diagnostic]]:
    """A pool written one tool definition a line (Seal-Tools ``tool.jsonl``, ...)."""
    from plancheck.corpus.foreign import foreign_toolset
    from plancheck.corpus.toolsets import ToolsetError

    items = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except (ValueError, RecursionError) as error:  # also an integer of 4,301+ digits
            message = getattr(error, "msg", None) or (
                "nested too deeply" if isinstance(error, RecursionError) else str(error))
            raise ToolsetError([make("PC706", f"{path}:{number} is not valid JSON: {message}",
                                     primary=Span(str(path), number, 1, number, 2),
                                     data={"path": str(path), "line": number})]) from None
    return foreign_toolset(items, path)


def record_pool(record: dict[str, Any], file: str) -> tuple[Toolset, list[Diagnostic]] | None:
    """The pool a record carries for itself (``None``: it carries none)."""
    from plancheck.corpus.foreign import foreign_format, read_foreign

    for key in RECORD_POOL_KEYS:
        tools = record.get(key)
        if isinstance(tools, list) and tools and all(isinstance(t, dict) for t in tools):
            data = normalise_pool(tools)
            if foreign_format(data) in ("mcp", "openai"):
                name = str(record.get("id", "record"))
                return read_foreign(data, name=f"{name} {key}", file=file)
    return None
