"""Gemini function declarations: ``{"tools": [{"functionDeclarations": [{name, description,
parameters, response}]}]}`` (a whole ``generateContent`` request body works, and the Python
SDK's ``function_declarations`` spelling), or a bare list of such tool objects.

``parameters`` and ``response`` are Gemini's OpenAPI subset, whose ``type`` is an upper-case
enum (``OBJECT``, ``STRING``, ...); they are read as JSON Schema with the type names in lower
case. ``parametersJsonSchema`` / ``responseJsonSchema`` are JSON Schema already and win when
present. A response that is not an object names no outputs (the tool's outputs stay open)."""

from __future__ import annotations

from typing import Any

from plancheck.corpus.pool_builder import PoolBuilder, add_signature, as_list, tool_items
from plancheck.corpus.pool_format import PoolFormat

__all__ = ["FORMAT"]

_DECLARATIONS = ("functionDeclarations", "function_declarations")


def _declarations_key(item: Any) -> str | None:
    if isinstance(item, dict):
        for key in _DECLARATIONS:
            if isinstance(item.get(key), list):
                return key
    return None


def sniff(data: Any) -> bool:
    return any(_declarations_key(i) is not None for i in tool_items(data) or ())


def read(data: Any, builder: PoolBuilder) -> None:
    base = "/tools" if isinstance(data, dict) else ""
    for i, item in enumerate(tool_items(data) or []):
        key = _declarations_key(item)
        if key is None:
            continue  # another kind of Gemini tool (googleSearch, codeExecution, ...)
        for j, declaration in enumerate(as_list(item[key])):
            pointer = f"{base}/{i}/{key}/{j}"
            if not isinstance(declaration, dict):
                builder.error(f"function declaration {j} is not an object", pointer)
                continue
            inputs_key = _schema_key(declaration, "parameters")
            outputs_key = _schema_key(declaration, "response")
            inputs = _json_schema(declaration.get(inputs_key, {"type": "object"}))
            outputs = _json_schema(declaration.get(outputs_key))
            if isinstance(outputs, dict) and outputs.get("type", "object") != "object":
                outputs = None
            add_signature(builder, declaration.get("name"), pointer,
                          declaration.get("description"), inputs, f"{pointer}/{inputs_key}",
                          outputs, f"{pointer}/{outputs_key}", None)


def _schema_key(declaration: dict[str, Any], field: str) -> str:
    json_schema = f"{field}JsonSchema"
    return json_schema if json_schema in declaration else field


def _json_schema(schema: Any) -> Any:
    """An OpenAPI-subset schema with its ``type`` names in lower case, recursively (a copy)."""
    if isinstance(schema, list):
        return [_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    fixed = {k: _json_schema(v) if k in ("items", "anyOf") else v for k, v in schema.items()}
    if isinstance(fixed.get("type"), str):
        fixed["type"] = fixed["type"].lower()
    if isinstance(fixed.get("properties"), dict):
        fixed["properties"] = {k: _json_schema(v) for k, v in fixed["properties"].items()}
    return fixed


FORMAT = PoolFormat("gemini", "Gemini function declarations", sniff, read,
                    outputs_are_fields=True, order=300)
