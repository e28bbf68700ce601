"""A tool's schema with its local ``$ref``s written out in place.

Schemas that pydantic and most MCP SDKs generate name their nested models once, under the
tool's ``$defs`` (or draft-4 ``definitions``), and point at them: ``{"$ref":
"#/$defs/Item"}``. plancheck reads each parameter's schema on its own (its type, the guard's
validator), where such a pointer leads nowhere: the parameter would read as any value and the
validator would refuse the tool's schema, leaving every call to it unchecked. So a tool's
schema is read with each local reference replaced by what it names (its other keywords kept
beside). A reference to a definition it is already inside (a recursive model) is left as no
constraint at all, and one that cannot be followed (another document, a bad pointer) is kept
as written.
"""

from __future__ import annotations

from typing import Any

from plancheck.diagnostics.span import value_at

__all__ = ["inline_local_refs"]


def inline_local_refs(schema: Any) -> Any:
    """``schema`` with its local ``$ref``s inlined (``schema`` itself when it has none, or
    when it is itself a reference: a tool schema that is only a pointer is read as one that
    may admit any input, as before)."""
    if not isinstance(schema, dict) or "$ref" in schema or not _has_ref(schema):
        return schema
    return _inline(schema, schema, ())


def _has_ref(value: Any) -> bool:
    if isinstance(value, dict):
        return "$ref" in value or any(_has_ref(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_ref(item) for item in value)
    return False


def _inline(value: Any, root: dict[str, Any], inside: tuple[str, ...]) -> Any:
    if isinstance(value, list):
        return [_inline(item, root, inside) for item in value]
    if not isinstance(value, dict):
        return value
    ref = value.get("$ref")
    if isinstance(ref, str) and ref.startswith("#"):
        if ref in inside:
            return {}  # a recursive model: what it holds further down is not checked
        target = value_at(root, ref[1:])
        if isinstance(target, dict):
            siblings = {k: v for k, v in value.items() if k != "$ref"}
            return {**_inline(target, root, (*inside, ref)), **_inline(siblings, root, inside)}
    return {key: (item if key in ("$defs", "definitions", "enum", "const", "default",
                                  "examples")
                  else _inline(item, root, inside))
            for key, item in value.items()}
