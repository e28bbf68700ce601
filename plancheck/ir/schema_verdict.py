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
from typing import Any

from plancheck.ir.nodes import ToolSignature
from plancheck.ir.schema_types import json_shown, numeric_string
from plancheck.ir.schema_validation import SchemaError, schema_errors, tool_schema_text, value_at
from plancheck.records import FrozenRecord

__all__ = ["ArgumentProblem", "argument_problems", "place_of"]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_LONGEST = 240  # a library message longer than this is cut (it quotes the whole value)


class ArgumentProblem(FrozenRecord):
    """One way the arguments break the schema. ``message`` starts with the place (``argument
    `edits[0].newText```); ``key`` is the top-level argument it is in."""

    __slots__ = _fields = ("code", "pointer", "message", "key", "actual", "names", "help",
                           "keyword", "warning")

    def __init__(self, code: str, pointer: str, message: str, key: str, actual: Any,
                 names: tuple[str, ...] = (), help: tuple[str, ...] = (),
                 keyword: str = "", warning: bool = False) -> None:
        self.code = code
        self.pointer = pointer
        self.message = message
        self.key = key
        self.actual = actual
        self.names = names
        self.help = help
        self.keyword = keyword
        self.warning = warning  # plancheck's own finding, which the schema does not make


def place_of(pointer: str) -> str:
    """``edits[0].newText`` for ``/edits/0/newText`` (a key that is no identifier is quoted:
    ``["a.b"]``)."""
    text = ""
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
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
    if not tool.open_inputs and isinstance(arguments, dict) and \
            not tool.input_name_set.issuperset(arguments):
        problems.extend(_undeclared(arguments, tool, problems))
    return problems


def _undeclared(arguments: dict[str, Any], tool: ToolSignature,
                problems: list[ArgumentProblem]) -> list[ArgumentProblem]:
    """``PC202`` as a warning for an argument the tool does not declare where its schema does
    not forbid others (``additionalProperties`` absent): often a misspelt name, yet the
    schema accepts it, so it does not block."""
    reported = {p.key for p in problems if p.code == "PC202"}
    return [ArgumentProblem("PC202", f"/{_escape(name)}", f"`{tool.name}` declares no argument "
                            f"`{name}` (its schema admits it, so it may run)", name,
                            arguments[name], (name,), keyword="properties", warning=True)
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
    top = pointer.split("/")[1].replace("~1", "/").replace("~0", "~") if pointer else ""
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
    return [ArgumentProblem("PC302", pointer, f"{place} {_wording(error, actual)}", top, actual,
                            error.names, keyword=error.keyword)]


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


def _cut(error: SchemaError) -> str:
    message = error.message.strip()
    return message if len(message) <= _LONGEST else message[:_LONGEST - 3] + "..."


def _cut_text(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _article(name: str) -> str:
    return ("an " if name[:1] in "aeiou" else "a ") + name


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")
