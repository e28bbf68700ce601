"""The schema's own verdict on a call's arguments, as plancheck's problems.

The arguments object is validated against the tool's input schema whole
(:func:`~plancheck.ir.schema_validation.schema_errors`: every keyword, its draft, local
``$ref``s and anchors). Each validator error becomes one :class:`ArgumentProblem` with the
JSON pointer of the failing value and wording per keyword:

==========================================  =======  ======================================
the validator says                          code     e.g.
==========================================  =======  ======================================
a top-level required property is missing    PC203    the required argument `path` is missing
a top-level property is not allowed         PC202    `write_file` takes no argument `pth`
a number written as a numeric string        PC305    argument `limit` takes a number, ...
anything else (nested ``required`` too)     PC302    argument `edits[0].newText` is required
==========================================  =======  ======================================

The guard and ``check`` both read a call's schema verdict from here, so they say the same.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from plancheck.diagnostics.severity import Severity
from plancheck.diagnostics.span import pointer_tokens, unescape_token, value_at
from plancheck.ir.nodes import ToolSignature
from plancheck.ir.schema_types import json_equal, json_shown, numeric_string
from plancheck.ir.schema_validation import SchemaError, schema_errors, tool_schema_text
from plancheck.records import FrozenRecord

__all__ = ["ArgumentProblem", "argument_problems", "place_of"]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_LONGEST = 240  # a library message longer than this is cut (it quotes the whole value)


class ArgumentProblem(FrozenRecord):
    """One way the arguments break the schema. ``message`` starts with the place (``argument
    `edits[0].newText```); ``key`` is the top-level argument it is in."""

    _fields = ("code", "pointer", "message", "key", "actual", "names", "help", "keyword",
               "severity")
    __slots__ = _fields

    def __init__(self, code: str, pointer: str, message: str, key: str, actual: Any,
                 names: tuple[str, ...] = (), help: tuple[str, ...] = (),
                 keyword: str = "", severity: Severity | None = None) -> None:
        self.code = code
        self.pointer = pointer
        self.message = message
        self.key = key
        self.actual = actual
        self.names = names
        self.help = help
        self.keyword = keyword
        # None: the code's own; a warning for what the schema admits (an undeclared name), a
        # note for the "not given" spellings it refuses (profiles may raise either)
        self.severity = severity


def place_of(pointer: str) -> str:
    """``edits[0].newText`` for ``/edits/0/newText`` (a key that is no identifier is quoted:
    ``["a.b"]``)."""
    text = ""
    for token in pointer_tokens(pointer):
        if token.isdigit() and text:
            text += f"[{token}]"
        elif _IDENTIFIER.match(token):
            text += f".{token}" if text else token
        else:
            text += f"[{json.dumps(token, ensure_ascii=False)}]"
    return text


def argument_problems(arguments: Any, tool: ToolSignature,
                      skipped: tuple[str, ...] = ()) -> list[ArgumentProblem]:
    """Every way ``arguments`` (JSON data) break ``tool``'s input schema, in the validator's
    order. Errors about a value at or under a pointer of ``skipped`` (a reference not yet
    known), or about a value holding one, are left out. Raises
    :class:`~plancheck.ir.schema_validation.SchemaUndecided` when the validator cannot decide."""
    problems: list[ArgumentProblem] = []
    for error in schema_errors(arguments, tool_schema_text(tool)):
        if skipped and any(_about_hole(error, hole) for hole in skipped):
            continue
        problems.extend(_problems(error, arguments, tool))
    if not tool.open_inputs and isinstance(arguments, dict):
        names = tool.input_name_set
        for name in arguments:  # (compiled, a loop of lookups: no set built per call)
            if name not in names:
                problems.extend(_undeclared(arguments, tool, problems))
                break
    return problems


def _undeclared(arguments: dict[str, Any], tool: ToolSignature,
                problems: list[ArgumentProblem]) -> list[ArgumentProblem]:
    """``PC202`` as a warning for an argument the tool does not declare where its schema does
    not forbid others (``additionalProperties`` absent): often a misspelt name, yet the
    schema accepts it, so it does not block."""
    reported = {p.key for p in problems if p.code == "PC202"}
    return [ArgumentProblem("PC202", f"/{_escape(name)}", f"`{tool.name}` declares no argument "
                            f"`{name}` (its schema admits it, so it may run)", name,
                            arguments[name], (name,), keyword="properties",
                            severity=Severity.WARNING)
            for name in arguments if name not in tool.input_name_set and name not in reported]


# Keywords that read only the value's own shape, not what its members hold: an error of one
# of these about an object holding a reference is not about the reference's text.
_SHALLOW = frozenset({"required", "additionalProperties", "type", "minProperties",
                      "maxProperties", "minItems", "maxItems", "propertyNames",
                      "dependentRequired", "dependencies"})


def _about_hole(error: SchemaError, hole: str) -> bool:
    pointer = error.pointer
    if pointer == hole or pointer.startswith(hole + "/"):
        return True
    return (not pointer or hole.startswith(pointer + "/")) and error.keyword not in _SHALLOW


def _problems(error: SchemaError, arguments: Any, tool: ToolSignature) -> list[ArgumentProblem]:
    pointer = error.pointer
    top = unescape_token(pointer.split("/")[1]) if pointer else ""
    if error.keyword == "required":
        found = []
        for name in error.names:
            if not pointer:
                found.append(ArgumentProblem("PC203", f"/{_escape(name)}",
                                             f"the required argument `{name}` is missing",
                                             name, None, (name,), keyword="required"))
            else:
                member = f"{pointer}/{_escape(name)}"
                found.append(ArgumentProblem(
                    "PC302", member, f"argument `{place_of(member)}` is required and missing",
                    top, None, (name,), keyword="required"))
        return found
    if error.keyword == "additionalProperties" and not pointer:
        return [ArgumentProblem("PC202", f"/{_escape(name)}",
                                f"`{tool.name}` takes no argument `{name}`", name,
                                value_at(arguments, f"/{_escape(name)}"), (name,),
                                keyword="additionalProperties")
                for name in error.names]
    actual = value_at(arguments, pointer)
    place = f"argument `{place_of(pointer)}`" if pointer else "the arguments"
    if error.keyword == "type" and {"number", "integer"} & set(error.expected):
        number = numeric_string(actual)
        whole = "number" not in error.expected  # only an integer will do
        if number is not None and (not whole or isinstance(number, int)):
            wanted = "an integer" if whole else "a number"
            return [ArgumentProblem("PC305", pointer, f"{place} takes {wanted}, written here "
                                    f"as the string {_cut_text(json.dumps(actual))}", top, actual,
                                    help=(f"write it as the number {number}",), keyword="type")]
    words = _wording(error, actual)
    if pointer.count("/") == 1 and _not_given(actual, top, tool):
        # null for an optional argument, or the declared default: how generated code and
        # BFCL's answers spell "not given". The schema refuses it (so the guard profile
        # does); by default it is a note
        return [ArgumentProblem("PC302", pointer, f"{place} {words} (it reads as \"not given\":"
                                f" leave `{top}` out instead)", top, actual, error.names,
                                keyword=error.keyword, severity=Severity.INFO)]
    return [ArgumentProblem("PC302", pointer, f"{place} {words}", top, actual,
                            error.names, keyword=error.keyword)]


def _not_given(value: Any, name: str, tool: ToolSignature) -> bool:
    if value is None:
        return name not in tool.required_input_names and tool.input(name) is not None
    defaults = _defaults(tool.input_schema) if tool.input_schema is not None else {}
    return name in defaults and json_equal(value, defaults[name])


@lru_cache(maxsize=1024)
def _defaults(schema_text: str) -> dict[str, Any]:
    """The ``default`` each top-level property of a schema declares."""
    schema = json.loads(schema_text)
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return {}
    return {name: p["default"] for name, p in properties.items()
            if isinstance(p, dict) and "default" in p}



def _wording(error: SchemaError, actual: Any) -> str:
    """What is wrong with the value, said per keyword (the library's words otherwise)."""
    kind, shown = error.kind, json_shown(actual)
    if kind == "Type":
        wanted = " or ".join(_article(t) for t in error.expected)
        return f"must be {wanted}, found {shown}"
    if kind == "AdditionalProperties":
        names = ", ".join(f"`{n}`" for n in error.names)
        return f"has members its schema does not allow: {names}"
    if kind == "Enum":
        listed = ", ".join(error.expected[:8])
        if len(error.expected) > 8:  # a long enum must not read as a complete list of eight
            listed += f", ... ({len(error.expected) - 8:,} more)"
        return f"must be one of {listed}, found {shown}"
    if kind == "Constant":
        return f"must be {error.expected[0]}, found {shown}"
    bound = error.expected[0] if error.expected else ""
    if kind in _BOUND_WORDS:
        words, what = _BOUND_WORDS[kind]
        count = f", found {len(actual):,}" if what and isinstance(actual, str | list | dict) \
            else f", found {shown}"
        return f"must {words} {bound}{what}{count}"
    if kind == "Pattern":
        return f"must match the pattern /{bound}/, found {shown}"
    if kind == "MultipleOf":
        return f"must be a multiple of {bound}, found {shown}"
    if kind == "UniqueItems":
        return "must not hold the same item twice"
    if kind in ("AnyOf", "OneOfNotValid"):
        return f"matches none of the forms its schema allows (`{error.keyword}`), found {shown}"
    if kind == "OneOfMultipleValid":
        return f"matches more than one of the forms `oneOf` allows, found {shown}"
    if kind == "Not":
        return f"matches the schema under `not`, which it must not, found {shown}"
    if kind == "FalseSchema":
        return "is not allowed here (its schema is `false`)"
    if kind == "UnevaluatedProperties":
        return f"has members its schema does not allow (`unevaluatedProperties`): {_cut(error)}"
    return f"breaks `{error.keyword}`: {_cut(error)}"


# What a bound says, and what it counts (nothing: the value itself).
_BOUND_WORDS = {"Minimum": ("be at least", ""), "Maximum": ("be at most", ""),
                "ExclusiveMinimum": ("be more than", ""), "ExclusiveMaximum": ("be less than", ""),
                "MinLength": ("have at least", " characters"),
                "MaxLength": ("have at most", " characters"),
                "MinItems": ("have at least", " items"), "MaxItems": ("have at most", " items"),
                "MinProperties": ("have at least", " members"),
                "MaxProperties": ("have at most", " members")}


def _cut(error: SchemaError) -> str:
    message = error.message.strip()
    return message if len(message) <= _LONGEST else message[:_LONGEST - 3] + "..."


def _cut_text(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _article(name: str) -> str:
    return ("an " if name[:1] in "aeiou" else "a ") + name


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")
