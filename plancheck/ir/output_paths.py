"""What a reference reads from a tool's result (an output, or a place inside one), and what a
reference nested in an argument's value fills (a place inside an input).

Tool-call syntaxes reach into structured results (``{{steps.0.output.entities[0].name}}``,
``$v.items[0]$``). The reference carries the output's name as its key and the rest as a
path; the path is followed through the output's JSON Schema (``properties``, ``items``) to
the schema of the value it reads, which types the reference. A schema that does not describe
the place leaves it untyped (``Value``); one that describes the object's properties and lacks
the name makes the reference unresolved (``PC208``), as an unknown output does.

A tool whose pool does not say what it returns (:attr:`ToolSignature.open_outputs`) yields an
untyped value for any key.
"""

from __future__ import annotations

import re
from typing import Any

from plancheck.diagnostics.span import pointer_tokens
from plancheck.ir.nodes import Param, ToolSignature
from plancheck.ir.schema_types import VALUE, SchemaParam, param_from_schema

_STEP = re.compile(r"\.([^.\[\]]+)|\[\s*(\d+|\*)?\s*\]")
_HEAD = re.compile(r"^([^.\[\]]+)((?:\.[^.\[\]]+|\[\s*(?:\d+|\*)?\s*\])+)$")


def split_path(key: str) -> tuple[str, str]:
    """``("entities", "[0].name")`` for ``"entities[0].name"``; ``(key, "")`` for a plain
    key or one that is not a path."""
    match = _HEAD.match(key)
    if match is None:
        return key, ""
    return match.group(1), match.group(2)


def output_at(tool: ToolSignature, key: str, path: str = "") -> Param | None:
    """The parameter a reference to output ``key`` (and ``path`` inside it) of ``tool``
    reads, typed by the place it reads; ``None`` when the tool has no such output or its
    schema has no such place."""
    output = tool.output(key)
    if output is None and path and tool.output(key + path) is not None:
        return tool.output(key + path)  # an output whose name contains dots
    if output is None:
        return Param(key + path, VALUE) if tool.open_outputs else None
    if not path:
        return output
    if not isinstance(output, SchemaParam):
        return Param(key + path, VALUE)  # a nominal artifact: its inside is not described
    schema: Any = output.schema
    for match in _STEP.finditer(path):
        schema = _below(schema, match.group(1))
        if schema is None:
            return None
    return param_from_schema(key + path, schema, required=True, output=True)


def input_place(param: Param, pointer: str) -> Param | None:
    """The parameter that a reference nested at ``pointer`` (a JSON pointer into the value of
    input ``param``, as :attr:`Argument.nested` records it) fills, typed by the place the
    input's JSON Schema describes there (through ``properties`` and ``items``), and named by
    its path (``observations[0].contents``). None when the input has no JSON Schema or the
    schema does not describe the place: nothing is known that the reference must fit (a
    place the schema rules out is the literal check's to report)."""
    if not isinstance(param, SchemaParam) or not pointer:
        return None
    schema: Any = param.schema
    path = ""
    for name in pointer_tokens(pointer):
        schema = _below(schema, name)
        if not schema:  # ruled out (None) or not described ({})
            return None
        path += f"[{name}]" if name.isdigit() else f".{name}"
    return param_from_schema(param.name + path, schema, required=True)


def _below(schema: Any, name: str | None) -> Any:
    """The schema of a member (``name``) or an item (``None``) of a value ``schema``
    describes: ``{}`` when the schema does not say, ``None`` when it rules the place out."""
    if not isinstance(schema, dict):
        return {}
    if name is None or (name.isdigit() and "items" in schema):
        items = schema.get("items")
        return items if isinstance(items, dict) else {}
    properties = schema.get("properties")
    if isinstance(properties, dict):
        if name in properties:
            return properties[name]
        extra = schema.get("additionalProperties")
        if extra is False or (extra is None and schema.get("type") == "object"
                              and _closed(schema)):
            return None
        return extra if isinstance(extra, dict) else {}
    return {}


def _closed(schema: dict[str, Any]) -> bool:
    # Properties listed and nothing said about others: tool schemas list every field they
    # return, so a name outside them is far more often a slip than an undeclared field.
    return bool(schema.get("properties"))
