"""Write a toolset in other ecosystems' formats: MCP, OpenAI function tools, and the DSL.

Every format is read back by :mod:`plancheck.corpus.foreign` (or the DSL parser) into a toolset
under which plans get the same diagnostics: what the target format cannot say is written in
plancheck's extension fields (described in :mod:`plancheck.corpus.foreign`). With
``extensions=False`` the output is the plain format, fit to hand to an API, and a round trip
keeps only names, descriptions, parameter kinds and required flags.
"""

from __future__ import annotations

import json
from typing import Any

from plancheck.corpus.pool_builder import META_TOOL, META_TOOLS, META_TOOLSET
from plancheck.diagnostics.model import Diagnostic
from plancheck.ir.nodes import Param, Toolset, ToolSignature
from plancheck.ir.schema_types import param_to_schema

TARGETS = ("mcp", "openai", "openai-responses", "dsl")


class ExportError(Exception):
    """The toolset cannot be written in the requested format."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


def export_toolset(toolset: Toolset, target: str, *, extensions: bool = True) -> str:
    """The toolset as the text of a file in ``target`` format (one of :data:`TARGETS`)."""
    if target == "dsl":
        return to_dsl(toolset)
    if target == "mcp":
        value: Any = to_mcp(toolset, extensions=extensions)
    elif target in ("openai", "openai-responses"):
        api = "responses" if target == "openai-responses" else "chat"
        value = to_openai(toolset, api=api, extensions=extensions)
    else:
        raise ValueError(f"unknown export target {target!r}; expected one of {TARGETS}")
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- shared parts


def toolset_meta(toolset: Toolset) -> dict[str, Any]:
    """The ``dev.plancheck/toolset`` payload: the lattice, families, flows and limits."""
    return {
        "name": toolset.name,
        "description": toolset.description,
        "max_predecessors": toolset.max_predecessors,
        "families": [{"name": f.name, "doc": f.doc} for f in toolset.families.values()],
        "types": [
            {"name": d.name, "parents": list(d.parents), "converts_to": list(d.converts_to),
             "formats": list(d.formats), "doc": d.doc}
            for d in toolset.types.values()
        ],
        "flows": [list(pair) for pair in sorted(toolset.flows)],
        "aliases": dict(toolset.aliases),
    }


def object_schema(params: tuple[Param, ...], *, extensions: bool, outputs: bool = False,
                  open_keys: bool = False
                  ) -> dict[str, Any]:
    """An object schema with one property per parameter."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {p.name: param_to_schema(p, extensions=extensions) for p in params},
    }
    required = [p.name for p in params if outputs or p.required]
    if required:
        schema["required"] = required
    if not outputs:
        # An unknown input is an error (PC202), unless the pool read said other keys may come.
        schema["additionalProperties"] = open_keys
    return schema


def _tool_meta(tool: ToolSignature) -> dict[str, Any]:
    return {key: value for key, value in
            (("category", tool.category), ("family", tool.family)) if value}


# --------------------------------------------------------------------------- MCP


def to_mcp(toolset: Toolset, *, extensions: bool = True) -> dict[str, Any]:
    """An MCP ``tools/list`` result: ``{"tools": [...], "_meta": {...}}``."""
    tools = []
    for tool in toolset.tools.values():
        entry: dict[str, Any] = {"name": tool.name}
        if tool.description:
            entry["description"] = tool.description
        entry["inputSchema"] = object_schema(tool.inputs, extensions=extensions,
                                            open_keys=tool.open_inputs)
        if tool.outputs:
            entry["outputSchema"] = object_schema(tool.outputs, extensions=extensions,
                                                  outputs=True)
        meta = _tool_meta(tool)
        if extensions and meta:
            entry["_meta"] = {META_TOOL: meta}
        tools.append(entry)
    result: dict[str, Any] = {"tools": tools}
    if extensions:
        result["_meta"] = {META_TOOLSET: toolset_meta(toolset)}
    return result


# --------------------------------------------------------------------------- OpenAI


def to_openai(toolset: Toolset, *, api: str = "chat", extensions: bool = True
              ) -> dict[str, Any] | list[dict[str, Any]]:
    """OpenAI function tools, in the chat-completions (``api="chat"``) or Responses-API
    (``api="responses"``) shape.

    Plain (``extensions=False``): the ``tools`` array itself. With extensions: ``{"tools":
    [...], "_meta": {...}}``, whose ``tools`` array is still the one to pass to the API; the
    outputs, which OpenAI tools cannot declare, are in ``_meta``.
    """
    if api not in ("chat", "responses"):
        raise ValueError(f"unknown OpenAI API shape {api!r}; expected 'chat' or 'responses'")
    tools: list[dict[str, Any]] = []
    per_tool: dict[str, Any] = {}
    for tool in toolset.tools.values():
        function: dict[str, Any] = {"name": tool.name}
        if tool.description:
            function["description"] = tool.description
        function["parameters"] = object_schema(tool.inputs, extensions=extensions,
                                               open_keys=tool.open_inputs)
        tools.append({"type": "function", "function": function} if api == "chat"
                     else {"type": "function", **function})
        extra = _tool_meta(tool)
        if tool.outputs:
            extra["outputSchema"] = object_schema(tool.outputs, extensions=extensions,
                                                  outputs=True)
        if extra:
            per_tool[tool.name] = extra
    if not extensions:
        return tools
    return {"tools": tools,
            "_meta": {META_TOOLSET: toolset_meta(toolset), META_TOOLS: per_tool}}


# --------------------------------------------------------------------------- DSL


def to_dsl(toolset: Toolset) -> str:
    """The toolset as workflow DSL; a name that is not an identifier (``seg.flood``, the
    keyword ``tool``) is written as a JSON string, which the DSL reads back."""
    from plancheck.dsl.printer import toolset_to_dsl

    return toolset_to_dsl(toolset)
