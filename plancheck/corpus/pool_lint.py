"""Suspicious, not wrong: what ``plancheck toolset lint`` warns about in a loadable pool.

* ``PC708``: two types, or two tools, whose names differ only in case. TaskBench's multimedia
  pool has ``Image Search`` produce ``Image`` while every image tool takes ``image``: nothing
  consumes ``Image``, so each plan that feeds a search result on fails with ``PC301``.
* ``PC709``: a declared type that no parameter uses, directly or as a supertype or conversion
  target of a used type.
* ``PC711``: a tool whose input schema the JSON Schema validator refuses (``{"type":
  "nope"}``, ``"minimum": "ten"``): the guard validates no argument of such a tool, so every
  call to it passes unchecked.

(Identical duplicate definitions, ``PC710``, are reported while the pool is read.)
"""

from __future__ import annotations

import json

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span
from plancheck.ir.nodes import Toolset, ToolSignature
from plancheck.ir.schema_types import KIND_NAMES, param_to_schema
from plancheck.ir.schema_validation import schema_problem, tool_schema_text


def lint_pool(toolset: Toolset) -> list[Diagnostic]:
    return [*_case_variants(toolset), *_unused_types(toolset), *_invalid_schemas(toolset)]


def _invalid_schemas(toolset: Toolset) -> list[Diagnostic]:
    found = []
    for tool in toolset.tools.values():
        problem = schema_problem(tool_schema_text(tool))
        if problem is not None:
            found.append(_invalid_schema(tool, problem))
    return found


def _invalid_schema(tool: ToolSignature, problem: str) -> Diagnostic:
    """``PC711`` at the first input whose own schema the validator refuses (else the tool)."""
    for param in tool.inputs:
        own = schema_problem(json.dumps(param_to_schema(param, extensions=False),
                                        sort_keys=True, ensure_ascii=False))
        if own is not None:
            where, what, problem = param.span, f"input `{param.name}` of tool `{tool.name}`", own
            break
    else:
        where, what = tool.span, f"tool `{tool.name}`"
    return make(
        "PC711", f"the JSON Schema of {what} is not valid", primary=where,
        label="not a valid JSON Schema",
        notes=[f"the validator (jsonschema-rs) says: {problem}",
               f"plancheck's guard validates no argument of `{tool.name}` (names, types, "
               "required inputs): every call to it passes unchecked"],
        help=["fix the schema so that a JSON Schema validator accepts it"],
        data={"tool": tool.name, "problem": problem})


def _consumed(toolset: Toolset) -> set[str]:
    return {p.type for t in toolset.tools.values() for p in t.inputs}


def _case_variants(toolset: Toolset) -> list[Diagnostic]:
    found = []
    consumed = _consumed(toolset)
    for what, names in (("type", list(toolset.types)), ("tool", list(toolset.tools))):
        first: dict[str, str] = {}
        for name in names:
            seen = first.setdefault(name.casefold(), name)
            if seen == name:
                continue
            notes = []
            if what == "type":
                unconsumed = [n for n in (seen, name) if n not in consumed]
                if unconsumed:
                    notes.append(", ".join(f"`{n}`" for n in unconsumed)
                                 + " is taken by no tool: binding an output of that type to "
                                 "any input is a type mismatch")
            decl = _type_span(toolset, name) if what == "type" else toolset.tools[name].span
            earlier = _type_span(toolset, seen) if what == "type" else toolset.tools[seen].span
            found.append(make(
                "PC708", f"{what} `{name}` differs from {what} `{seen}` only in case",
                primary=decl, secondary=[(earlier, f"`{seen}` declared here")], notes=notes,
                help=[f"if they are the same {what}, spell both `{seen}`"],
                data={"kind": what, "name": name, "variant_of": seen}))
    return found


def _type_span(toolset: Toolset, name: str) -> Span:
    """Where a type is declared, or else first used (pools such as TaskBench's declare their
    types only by using them)."""
    span = toolset.types[name].span
    if span.pointer is not None or span.start_line > 0:
        return span
    for tool in toolset.tools.values():
        for param in (*tool.inputs, *tool.outputs):
            if param.type == name and (param.span.pointer is not None or param.span.resolved):
                return param.span
    return span


def _unused_types(toolset: Toolset) -> list[Diagnostic]:
    used = {p.type for t in toolset.tools.values() for p in (*t.inputs, *t.outputs)}
    reached, pending = set(), list(used)
    while pending:  # a used type keeps its supertypes and conversion targets in use
        name = pending.pop()
        if name in reached:
            continue
        reached.add(name)
        decl = toolset.types.get(name)
        if decl is not None:
            pending.extend((*decl.parents, *decl.converts_to))
    return [
        make("PC709", f"type `{name}` is declared but no tool uses it", primary=decl.span,
             label="unused", data={"name": name})
        for name, decl in toolset.types.items()
        if name not in reached and name not in KIND_NAMES
    ]
