"""Arguments validated against a tool's JSON Schema with a maintained validator (jsonschema-rs).

``jsonschema-rs`` implements drafts 4 to 2020-12 in full and was the fastest of the three
libraries measured (``bench/bench_schema_validators.py``). A validator is built once per
distinct schema, on first use, and kept: a schema is keyed by its canonical JSON text, so the
same schema in two pools (or two tools) is compiled once. The library is imported only when
a first validator is built, so ``import plancheck`` does not pay for it.

Each error comes back as a :class:`SchemaError`: the JSON pointer of the offending value
(relative to the validated instance), the keyword that failed, the library's message and,
for ``required`` and ``additionalProperties``, the argument names involved.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from plancheck.diagnostics.span import escape_pointer
from plancheck.ir.nodes import ToolSignature
from plancheck.ir.schema_types import SCHEMA_TYPE_OF_KIND, kind_of_name, param_to_schema
from plancheck.records import FrozenRecord

# Validators by canonical schema text; ``None`` records a schema the library refuses (an
# unresolvable ``$ref``, an invalid keyword value): a guard refuses every call to such a tool.
_VALIDATORS: dict[str, Any] = {}
_PROBLEMS: dict[str, str] = {}  # what the library said of each schema it refused
# The object schema of each tool signature (signatures are immutable once loaded).
_TOOL_SCHEMAS: dict[int, tuple[ToolSignature, str]] = {}


class SchemaError(FrozenRecord):
    _fields = ("pointer", "keyword", "message", "names", "expected", "kind")
    __slots__ = _fields

    def __init__(self, pointer: str, keyword: str, message: str, names: tuple[str, ...] = (),
                 expected: tuple[str, ...] = (), kind: str = "") -> None:
        self.pointer = pointer  # below the validated value ("" is the value itself)
        self.keyword = keyword  # "type", "enum", "required", "additionalProperties", ...
        self.message = message
        self.names = names  # the missing or unexpected property names
        self.expected = expected  # for "type": the JSON types the schema allows
        self.kind = kind  # the library's name of the failure (``AnyOf``, ``Maximum``, ...)


def tool_schema_text(tool: ToolSignature) -> str:
    """The JSON Schema of ``tool``'s arguments object, as canonical JSON: the schema its pool
    publishes (:func:`published_schema`), else (a DSL tool) one built from its parameters."""
    if tool.input_schema is not None:
        return tool.input_schema
    cached = _TOOL_SCHEMAS.get(id(tool))
    if cached is not None and cached[0] is tool:
        return cached[1]
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {p.name: json_schema_types(param_to_schema(p, extensions=False))
                       for p in tool.inputs},
    }
    for properties in schema["properties"].values():
        properties.pop("description", None)
    required = sorted(p.name for p in tool.inputs if p.required)
    if required:
        schema["required"] = required
    if not tool.open_inputs:
        schema["additionalProperties"] = False
    text = json.dumps(schema, sort_keys=True, ensure_ascii=False)
    _TOOL_SCHEMAS[id(tool)] = (tool, text)
    return text


def admits_undeclared(tool: ToolSignature) -> bool:
    """Whether the schema ``tool``'s pool publishes lets an argument it does not list through
    (``additionalProperties`` absent): then naming one is plancheck's warning, not an error."""
    return tool.input_schema is not None and _admits_undeclared(tool.input_schema)


@lru_cache(maxsize=1024)
def _admits_undeclared(schema_text: str) -> bool:
    schema = json.loads(schema_text)
    return not isinstance(schema, dict) or (schema.get("additionalProperties") is not False
                                            and schema.get("unevaluatedProperties") is not False)


def published_schema(schema: Any) -> str | None:
    """The input schema a pool publishes for a tool, as canonical JSON, whole: its ``$schema``
    (so its draft), ``$defs``, anchors and every keyword kept; only loose type names (BFCL's
    ``"dict"``, Seal-Tools' ``"str"``) are written as the JSON type they name. ``None`` when
    ``schema`` is not a schema at all (then the parameters' own schemas are used)."""
    if not isinstance(schema, dict | bool):
        return None
    try:
        return json.dumps(json_schema_types(schema), sort_keys=True, ensure_ascii=False,
                          allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None


# Keywords whose value is a schema, a list of schemas, or a map of names to schemas.
_SUBSCHEMA = frozenset({"additionalProperties", "items", "contains", "not", "if", "then",
                        "else", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
                        "additionalItems"})
_SUBSCHEMAS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                          "dependentSchemas"})


def _json_type(name: Any) -> Any:
    """The JSON Schema type a loose type name stands for (BFCL's "float", "tuple", "dict";
    Seal-Tools' "str", "int": as plancheck's own types read them), else ``name``."""
    kind = kind_of_name(name) if isinstance(name, str) else None
    return SCHEMA_TYPE_OF_KIND[kind] if kind is not None else name


def json_schema_types(schema: Any) -> Any:
    """``schema`` with each loose ``type`` name written as the JSON Schema type it means
    (``"any"``: no type), in it and every schema below it; other schemas unchanged. Without
    this the validator refuses a BFCL or Seal-Tools schema, and its tool goes unvalidated."""
    if not isinstance(schema, dict):
        return schema
    fixed: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            if value == "any":
                continue
            value = [_json_type(t) for t in value] if isinstance(value, list) \
                else _json_type(value)
        elif key in _SUBSCHEMA:
            value = [json_schema_types(v) for v in value] if isinstance(value, list) \
                else json_schema_types(value)
        elif key in _SUBSCHEMAS and isinstance(value, list):
            value = [json_schema_types(v) for v in value]
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            value = {name: json_schema_types(v) for name, v in value.items()}
        fixed[key] = value
    return fixed


def validator(schema_text: str) -> Any:
    """The compiled validator of a schema (``None`` when the library cannot compile it)."""
    try:
        return _VALIDATORS[schema_text]
    except KeyError:
        pass
    import jsonschema_rs

    built: Any
    try:
        # ``format`` is an annotation, as in ``jsonschema`` and draft 2020-12; a ``$ref`` to
        # another document is never fetched (a tool schema must not make the guard open a URL):
        # such a schema cannot be compiled (docs/guard.md)
        built = jsonschema_rs.validator_for(json.loads(schema_text), validate_formats=False,
                                            offline=True)
    except (ValueError, TypeError, RecursionError, jsonschema_rs.ValidationError,
            jsonschema_rs.ReferencingError) as error:
        built = None
        _PROBLEMS[schema_text] = str(error).strip().split("\n")[0] or "the validator refuses it"
    _VALIDATORS[schema_text] = built
    return built


def schema_problem(schema_text: str) -> str | None:
    """Why the library refuses to compile a schema (the first line of its message), or
    ``None`` when it compiles it."""
    return None if validator(schema_text) is not None else _PROBLEMS[schema_text]


class SchemaUndecided(Exception):
    """The validator cannot decide a value against a schema: the schema is not valid, or the
    validator failed. A guard refuses such a call (it fails closed)."""

    def __init__(self, reason: str, invalid_schema: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.invalid_schema = invalid_schema


def schema_errors(value: Any, schema_text: str) -> list[SchemaError]:
    """Every way ``value`` breaks the schema, in the library's order (``[]``: it is valid).
    Raises :class:`SchemaUndecided` when the library cannot decide. ``value`` must be JSON
    data (:func:`plancheck.ir.schema_values.json_problem` says whether it is)."""
    compiled = validator(schema_text)
    if compiled is None:
        raise SchemaUndecided(f"its JSON Schema is not valid ({_PROBLEMS[schema_text]})",
                              invalid_schema=True)
    try:
        if compiled.is_valid(value):
            return []
        return [_mapped(error) for error in compiled.iter_errors(value)]
    except Exception as error:  # the library's failure must not let a call through
        raise SchemaUndecided(f"the JSON Schema validator failed on it ({type(error).__name__}: "
                              f"{str(error)[:200]})") from error


def _mapped(error: Any) -> SchemaError:
    pointer = "".join("/" + escape_pointer(str(token)) for token in error.instance_path)
    kind = error.kind
    keyword = str(error.schema_path[-1]) if len(error.schema_path) else type(kind).__name__
    names: tuple[str, ...] = ()
    expected: tuple[str, ...] = ()
    kind_name = type(kind).__name__
    if kind_name == "Required":
        names = (str(kind.property),)
        keyword = "required"
    elif kind_name == "AdditionalProperties":
        names = tuple(str(n) for n in kind.unexpected)
        keyword = "additionalProperties"
    elif kind_name in _BOUNDED:
        details = kind.as_dict()
        bound = details.get("limit", details.get("multiple_of", details.get("pattern")))
        expected = (_shown(bound) if kind_name != "Pattern" else str(bound),)
    elif kind_name == "Enum":
        expected = tuple(_shown(o) for o in kind.options)
    elif kind_name == "Constant":
        expected = (_shown(kind.expected_value),)
    elif kind_name == "Type":
        types = kind.types
        expected = tuple(str(t) for t in (types if isinstance(types, (list, tuple)) else [types]))
        keyword = "type"
    return SchemaError(pointer, keyword, str(error.message), names, expected, kind_name)


# The failures whose bound (a limit, a divisor, a pattern) the wording names.
_BOUNDED = frozenset({"Minimum", "Maximum", "ExclusiveMinimum", "ExclusiveMaximum", "MinLength",
                      "MaxLength", "MinItems", "MaxItems", "MinProperties", "MaxProperties",
                      "MultipleOf", "Pattern"})


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def expects_number(errors: list[SchemaError], pointer: str) -> bool:
    """Whether a ``type`` error at ``pointer`` asks for a number (or an integer)."""
    return any(e.pointer == pointer and e.keyword == "type"
               and {"number", "integer"} & set(e.expected) for e in errors)
