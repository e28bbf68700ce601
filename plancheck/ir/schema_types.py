"""JSON Schema parameters as plancheck types.

Tool pools from other ecosystems (MCP, OpenAI function tools, TaskBench) describe parameters
with JSON Schema, not with plancheck's nominal artifact types. Two things are kept:

* **A type in the lattice.** A parameter that carries ``"x-plancheck-type": "T"`` (every
  parameter plancheck exports does) has type ``T``. Any other schema maps onto one of the
  *value kinds* below, which a foreign toolset declares next to its own types::

      Value                       any JSON value (also: unions of kinds, ``$ref``)
        String  Number  Boolean  List (JSON array)  Object  Null
                  Integer <: Number

  ``enum``/``const`` map to the kind of their values; ``["string", "null"]`` to ``String``.
  (``List`` rather than ``Array``: the built-in pool's ``Array`` is a numeric array file.)

* **The schema itself**, on a :class:`SchemaParam`, so that literal arguments are validated
  against it (kind, ``enum``, bounds, lengths, ``pattern``, items, required properties) and so
  that exporting the toolset again writes the schema it was read from.

A parameter exported by plancheck whose schema says nothing beyond its type (``{"type":
"string", "x-plancheck-type": ...}``) is read back as a plain :class:`Param`: that is what makes
built-in pool -> MCP/OpenAI -> plancheck the identity.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import NO_SPAN, Span, escape_pointer
from plancheck.ir.nodes import Literal, Param, Step, ToolSignature, TypeDecl
from plancheck.ir.schema import json_type_name

TYPE_KEYWORD = "x-plancheck-type"
POLYMORPHIC_KEYWORD = "x-plancheck-polymorphic"

VALUE = "Value"
KIND_DECLS: tuple[TypeDecl, ...] = (
    TypeDecl(VALUE, (), "Any JSON value."),
    TypeDecl("String", (VALUE,), "A JSON string."),
    TypeDecl("Number", (VALUE,), "A JSON number."),
    TypeDecl("Integer", ("Number",), "A JSON integer."),
    TypeDecl("Boolean", (VALUE,), "A JSON boolean."),
    TypeDecl("List", (VALUE,), "A JSON array."),
    TypeDecl("Object", (VALUE,), "A JSON object."),
    TypeDecl("Null", (VALUE,), "The JSON null."),
)
KIND_NAMES = frozenset(d.name for d in KIND_DECLS)
_KIND_DECLS_BY_NAME = {d.name: d for d in KIND_DECLS}

# JSON Schema ``type`` names (and the loose spellings TaskBench and others use) -> kinds.
_KIND_OF_SCHEMA_TYPE = {
    "string": "String", "str": "String",
    "number": "Number", "float": "Number", "double": "Number",
    "integer": "Integer", "int": "Integer",
    "boolean": "Boolean", "bool": "Boolean",
    "array": "List", "list": "List", "tuple": "List",
    "object": "Object", "dict": "Object",
    "null": "Null",
}
SCHEMA_TYPE_OF_KIND = {
    "String": "string", "Number": "number", "Integer": "integer", "Boolean": "boolean",
    "List": "array", "Object": "object", "Null": "null",
}
_KIND_OF_JSON_TYPE = {name: kind for kind, name in SCHEMA_TYPE_OF_KIND.items()}
# Keywords that describe a parameter without constraining its values.
_ANNOTATIONS = frozenset({"description", "title", "examples", "$comment",
                          "deprecated", "readOnly", "writeOnly"})


class SchemaParam(Param):
    """A parameter declared with a JSON Schema. ``schema_text`` is the schema (without its
    description and plancheck keywords) as canonical JSON: a string keeps the node hashable."""

    __slots__ = ()
    schema_text: str

    def __init__(self, name: str, type: str, required: bool = True, doc: str = "",
                 span: Span = NO_SPAN, polymorphic: bool = False, schema_text: str = "{}",
                 type_span: Span = NO_SPAN) -> None:
        super().__init__(name, type, required, doc, span, polymorphic, schema_text, type_span)

    @property
    def schema(self) -> dict[str, Any]:
        loaded = json.loads(self.schema_text)
        return loaded if isinstance(loaded, dict) else {}


def declared_kind(name: str, decls: Mapping[str, TypeDecl]) -> str | None:
    """The JSON Schema type of ``name`` when the pool declares it as the value kind of that
    name (as a DSL export of an MCP or OpenAI pool does), else ``None``: a pool's own type
    that happens to be called ``List`` is not a kind."""
    decl, kind = decls.get(name), _KIND_DECLS_BY_NAME.get(name)
    if decl is None or kind is None or decl.parents != kind.parents:
        return None
    root = decls.get(VALUE)
    if root is None or root.parents:
        return None
    return SCHEMA_TYPE_OF_KIND.get(name)


def json_shown(value: Any) -> str:
    """A literal as a message shows it: its JSON kind and a preview (``array [1, 2]``)."""
    kind = kind_of_value(value)
    if kind in ("Null", "Boolean"):
        return _preview(value)
    return f"{SCHEMA_TYPE_OF_KIND[kind]} {_preview(value)}"


def kind_of_name(name: str) -> str | None:
    """The value kind a loose type name (``"string"``, ``"int"``, ...) stands for."""
    return _KIND_OF_SCHEMA_TYPE.get(name.strip().lower())


def kind_of_value(value: Any) -> str:
    """The value kind of a JSON value: its JSON type (:func:`~plancheck.ir.schema.
    json_type_name`, the one reading of it) as a kind; anything else is an ``Object``."""
    return _KIND_OF_JSON_TYPE.get(json_type_name(value), "Object")


def _join(kinds: list[str]) -> str:
    """The least kind covering all of ``kinds`` (``Integer`` and ``Number`` join to ``Number``)."""
    distinct = set(kinds)
    if len(distinct) == 1:
        return kinds[0]
    if distinct == {"Integer", "Number"}:
        return "Number"
    return VALUE


def schema_kind(schema: Any) -> str:
    """The value kind a JSON Schema describes."""
    if not isinstance(schema, Mapping):
        return VALUE  # ``true`` / ``false`` schemas, or nonsense: anything goes
    if "const" in schema:
        return kind_of_value(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return _join([kind_of_value(v) for v in schema["enum"]])
    declared = schema.get("type")
    if isinstance(declared, str):
        return kind_of_name(declared) or VALUE
    if isinstance(declared, list):
        kinds = [kind_of_name(t) or VALUE for t in declared if isinstance(t, str)]
        kinds = [k for k in kinds if k != "Null"] or kinds  # "nullable X" is an X
        return _join(kinds) if kinds else VALUE
    for combinator in ("anyOf", "oneOf"):
        branches = schema.get(combinator)
        if isinstance(branches, list) and branches:
            kinds = [schema_kind(b) for b in branches]
            kinds = [k for k in kinds if k != "Null"] or kinds
            return _join(kinds)
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        return schema_kind(schema["allOf"][0])
    if "properties" in schema:
        return "Object"
    if "items" in schema:
        return "List"
    return VALUE


def constraints_of(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema without annotations and plancheck keywords: what literals are checked with."""
    return {k: v for k, v in schema.items()
            if k not in _ANNOTATIONS and not k.startswith("x-plancheck")}


def param_from_schema(name: str, schema: Any, *, required: bool, output: bool = False) -> Param:
    """The parameter a property schema declares (see the module docstring for the rules)."""
    schema = schema if isinstance(schema, Mapping) else {}
    doc = schema.get("description")
    doc = doc if isinstance(doc, str) else ""
    carried = schema.get(TYPE_KEYWORD)
    polymorphic = output and schema.get(POLYMORPHIC_KEYWORD) is True
    constraints = constraints_of(schema)
    if isinstance(carried, str) and carried and \
            {k: v for k, v in constraints.items() if k != "default"} in ({}, {"type": "string"}):
        return Param(name, carried, required, doc, polymorphic=polymorphic)
    type_name = carried if isinstance(carried, str) and carried else schema_kind(schema)
    return SchemaParam(name, type_name, required, doc, polymorphic=polymorphic,
                       schema_text=json.dumps(constraints, sort_keys=True, ensure_ascii=False))


def param_to_schema(param: Param, *, extensions: bool = True) -> dict[str, Any]:
    """The property schema that :func:`param_from_schema` reads back as ``param``."""
    if isinstance(param, SchemaParam):
        schema: dict[str, Any] = dict(param.schema)
        carries = param.type != schema_kind(schema)
    else:
        kind = SCHEMA_TYPE_OF_KIND.get(param.type)
        schema = {"type": kind or "string"}
        # An artifact is passed as a path (a string); a kind type is its own schema.
        carries = kind is None
    if param.doc:
        schema["description"] = param.doc
    if extensions and carries:
        schema[TYPE_KEYWORD] = param.type
    if extensions and param.polymorphic:
        schema[POLYMORPHIC_KEYWORD] = True
    return schema


# --------------------------------------------------------------------------- literal values


class _Hole(str):
    """The place of a reference nested in a literal: it satisfies any schema (the reference
    is resolved and checked by itself). A string, so a diagnostic's data still serialises."""

    __slots__ = ()


def with_holes(value: Any, nested: Iterable[tuple[str, object]]) -> Any:
    """A copy of ``value`` with a hole at each JSON pointer of ``nested`` (pointers relative
    to ``value``; what they point at is not looked at)."""
    holes = [pointer for pointer, _ in nested]
    if not holes:
        return value
    return _fill(value, "", set(holes))


def _fill(value: Any, pointer: str, holes: set[str]) -> Any:
    if pointer in holes:
        return _Hole("<reference>")
    if isinstance(value, list):
        return [_fill(item, f"{pointer}/{i}", holes) for i, item in enumerate(value)]
    if isinstance(value, dict):
        return {k: _fill(v, f"{pointer}/{escape_pointer(str(k))}", holes)
                for k, v in value.items()}
    return value


def schema_problem(value: Any, schema: Any, where: str = "") -> str | None:
    """Why ``value`` does not satisfy ``schema`` (``None`` when it does).

    A small validator for the keywords tool schemas use; keywords it does not know are ignored
    (so an unusual schema can only make plancheck say less, never raise a false error).
    """
    if isinstance(value, _Hole):
        return None
    if not isinstance(schema, Mapping):
        return None if schema is not False else f"{where or 'the value'} is not allowed"
    label = where or "the value"
    problem = _type_problem(value, schema, label)
    if problem:
        return problem
    if "const" in schema and not json_equal(value, schema["const"]):
        return f"{label} must be {json.dumps(schema['const'])}"
    options = schema.get("enum")
    if isinstance(options, list) and not any(json_equal(value, o) for o in options):
        listed = ", ".join(json.dumps(o, ensure_ascii=False) for o in options[:8])
        if len(options) > 8:  # a long enum must not read as a complete list of eight
            listed += f", ... ({len(options) - 8:,} more)"
        return f"{label} must be one of {listed}"
    for combinator in ("anyOf", "oneOf"):
        branches = schema.get(combinator)
        if isinstance(branches, list) and branches and all(
            schema_problem(value, b, where) for b in branches
        ):
            return f"{label} matches none of the allowed forms"
    for branch in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        problem = schema_problem(value, branch, where)
        if problem:
            return problem
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        problem = _number_problem(value, schema, label)
    elif isinstance(value, str):
        problem = _string_problem(value, schema, label)
    elif isinstance(value, list):
        problem = _array_problem(value, schema, label)
    elif isinstance(value, dict):
        problem = _object_problem(value, schema, label)
    return problem


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0`` but ``true != 1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return bool(a == b)


def _type_problem(value: Any, schema: Mapping[str, Any], label: str) -> str | None:
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not names:
        return None
    actual = kind_of_value(value)
    for name in names:
        wanted = kind_of_name(name) if isinstance(name, str) else None
        if wanted is None or wanted == actual or (wanted == "Number" and actual == "Integer"):
            return None
        if wanted == "Integer" and actual == "Number" and float(value).is_integer():
            return None
    expected = " or ".join(str(n) for n in names)
    # null and the booleans say their kind themselves ("found null", not "found null null").
    return f"{label} must be {_article(expected)}, found {json_shown(value)}"


def _number_problem(value: float, schema: Mapping[str, Any], label: str) -> str | None:
    # keyword, the sign of (value - bound) that violates it, and how to say the bound
    bounds = (("minimum", (-1,), "at least"), ("maximum", (1,), "at most"),
              ("exclusiveMinimum", (-1, 0), "more than"), ("exclusiveMaximum", (0, 1), "less than"))
    for keyword, violating, words in bounds:
        bound = schema.get(keyword)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool) and \
                (value > bound) - (value < bound) in violating:
            return f"{label} must be {words} {bound}, found {value}"
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0:
        try:
            quotient = value / step
        except OverflowError:  # an integer beyond any float
            return None
        # (An infinite quotient cannot be decided: say nothing rather than guess.)
        if math.isfinite(quotient) and not math.isclose(quotient, round(quotient), abs_tol=1e-9):
            return f"{label} must be a multiple of {step}, found {value}"
    return None


def _string_problem(value: str, schema: Mapping[str, Any], label: str) -> str | None:
    shortest, longest = schema.get("minLength"), schema.get("maxLength")
    if isinstance(shortest, int) and len(value) < shortest:
        return f"{label} must have at least {shortest} characters"
    if isinstance(longest, int) and len(value) > longest:
        return f"{label} must have at most {longest} characters"
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            if re.search(pattern, value) is None:
                return f"{label} must match /{pattern}/, found {_preview(value)}"
        except re.error:
            return None  # a pattern Python cannot read says nothing we can check
    return None


def _array_problem(value: list[Any], schema: Mapping[str, Any], label: str) -> str | None:
    fewest, most = schema.get("minItems"), schema.get("maxItems")
    if isinstance(fewest, int) and len(value) < fewest:
        return f"{label} must have at least {fewest} items, found {len(value)}"
    if isinstance(most, int) and len(value) > most:
        return f"{label} must have at most {most} items, found {len(value)}"
    items = schema.get("items")
    if isinstance(items, Mapping):
        for i, item in enumerate(value):
            problem = schema_problem(item, items, f"{label}[{i}]")
            if problem:
                return problem
    return None


def _object_problem(value: dict[str, Any], schema: Mapping[str, Any], label: str
                    ) -> str | None:
    required = schema.get("required")
    if isinstance(required, list):
        missing = [k for k in required if isinstance(k, str) and k not in value]
        if missing:
            return f"{label} lacks " + ", ".join(f"`{k}`" for k in missing)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for key, item in value.items():
            if key in properties:
                problem = schema_problem(item, properties[key], f"{label}.{key}")
                if problem:
                    return problem
            elif schema.get("additionalProperties") is False:
                return f"{label} has no property `{key}`"
    return None


def _article(text: str) -> str:
    return ("an " if text[:1] in "aeiou" else "a ") + text


def _preview(value: Any, limit: int = 30) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_NUMERIC = re.compile(r"^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$")


def numeric_string(value: Any) -> int | float | None:
    """The number a string spells in decimal (``"38.0"``, ``" 7"``), else ``None``."""
    if not isinstance(value, str) or not _NUMERIC.match(value):
        return None
    text = value.strip()
    try:
        number = float(text)
        if not math.isfinite(number):
            return None
        return int(text) if re.fullmatch(r"[-+]?\d+", text) else number
    except (ValueError, OverflowError):
        return None


def passes_as_default(value: Any, param: Param) -> bool:
    """Whether ``value`` is what leaving the parameter out means: its declared ``default``,
    or ``null`` for an optional parameter (how generated code and BFCL's answers spell
    "not given"). Either is accepted whatever the rest of the schema says."""
    if value is None and not param.required:
        return True
    if not isinstance(param, SchemaParam) or '"default"' not in param.schema_text:
        return False
    schema = param.schema
    return "default" in schema and json_equal(value, schema["default"])


def schema_literal_diagnostic(step: Step, literal: Literal, param: Param, tool: ToolSignature
                              ) -> Diagnostic | None:
    """``PC302`` when a literal argument does not satisfy its parameter's JSON Schema."""
    if not isinstance(param, SchemaParam) or passes_as_default(literal.value, param):
        return None
    problem = schema_problem(literal.value, param.schema, f"`{param.name}`")
    if problem is None:
        return None
    number = numeric_string(literal.value)
    if number is not None and schema_problem(number, param.schema) is None:
        return make(
            "PC305",
            f"step {step.index} `{tool.name}.{param.name}` takes "
            f"{'an integer' if param.type == 'Integer' else 'a number'}, written here as the "
            f"string {_preview(literal.value)}",
            primary=literal.span,
            label="a number in a string",
            help=[f"write it as the number {json.dumps(number)}"],
            data={"step": step.index, "position": step.position, "tool": tool.name,
                  "key": param.name, "expected": param.type, "schema": param.schema,
                  "actual": literal.value},
        )
    return make(
        "PC302",
        f"step {step.index} `{tool.name}`: {problem}",
        primary=literal.span,
        label="does not fit the parameter's schema",
        notes=[f"`{tool.name}.{param.name}` is declared as {_preview(param.schema, 80)}"],
        data={"step": step.index, "position": step.position, "tool": tool.name,
              "key": param.name, "expected": param.type, "schema": param.schema,
              "actual": literal.value},
    )
