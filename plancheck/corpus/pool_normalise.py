"""Tool-pool dialects rewritten into shapes :mod:`plancheck.corpus.foreign` reads.

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

from typing import Any

__all__ = ["OUTPUT_KEYS", "normalise_pool"]

OUTPUT_KEYS = ("responses", "results", "output_parameters", "returns")


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
