"""What every pool format's reader builds with: a :class:`PoolBuilder` that collects tools,
types and flows and the diagnostics reading them raises, the JSON Schema reading shared by the
formats whose tools carry schemas (MCP, OpenAI), and plancheck's own extension fields (written
by :mod:`plancheck.corpus.export`; see :mod:`plancheck.corpus.foreign`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span, escape_pointer
from plancheck.ir.nodes import Family, Flow, Param, Toolset, ToolSignature, TypeDecl
from plancheck.ir.schema_refs import inline_local_refs
from plancheck.ir.schema_types import KIND_DECLS, param_from_schema
from plancheck.ir.schema_validation import published_schema
from plancheck.records import replace

__all__ = [
    "META_TOOL", "META_TOOLS", "META_TOOLSET", "PoolBuilder", "add_signature",
    "admits_other_keys", "as_list", "as_text", "tool_items",
]

META_TOOLSET = "dev.plancheck/toolset"
META_TOOL = "dev.plancheck/tool"
META_TOOLS = "dev.plancheck/tools"


def tool_items(data: Any) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("tools", "functions"):
            if isinstance(data.get(key), list):
                return list(data[key])
    return None


class PoolBuilder:
    """Collects tools, types and flows, and the diagnostics reading them raises."""

    def __init__(self, name: str, file: str,
                 spans: Callable[[str], Span] | None = None) -> None:
        self.file = file
        self.spans = spans  # where a pointer is in a source that is not the value's JSON
        self.toolset = Toolset(name=name, span=self.span(""))
        self.diagnostics: list[Diagnostic] = []
        self.pending_flows: list[tuple[str, str, str]] = []  # source, target, pointer
        self.has_meta = False  # the file carries plancheck's toolset metadata

    def span(self, pointer: str) -> Span:
        return Span(self.file, pointer=pointer) if self.spans is None else self.spans(pointer)

    def error(self, message: str, pointer: str, **data: Any) -> None:
        self.diagnostics.append(make("PC706", message, primary=self.span(pointer), data=data))

    def add_tool(self, tool: ToolSignature, pointer: str) -> None:
        first = self.toolset.tools.get(tool.name)
        if first is not None and same_definition(first, tool):
            self.diagnostics.append(make(
                "PC710", f"tool `{tool.name}` is defined again, identically; the copy is "
                "ignored", primary=self.span(pointer),
                secondary=[(first.span, "first defined here")], data={"name": tool.name}))
            return
        if tool.name in self.toolset.tools:
            self.diagnostics.append(make(
                "PC702", f"tool `{tool.name}` is defined twice", primary=self.span(pointer),
                secondary=[(self.toolset.tools[tool.name].span, "first defined here")],
                data={"name": tool.name},
            ))
            return
        self.toolset.tools[tool.name] = tool

    def declare(self, decl: TypeDecl) -> None:
        self.toolset.types.setdefault(decl.name, decl)

    # ------------------------------------------------------------ plancheck's own fields

    def apply_meta(self, meta: Any, pointer: str) -> None:
        """Read the ``dev.plancheck/toolset`` payload that :mod:`.export` writes."""
        if meta is None:
            return
        self.has_meta = True
        if not isinstance(meta, dict):
            self.error("`dev.plancheck/toolset` must be an object", pointer)
            return
        toolset = self.toolset
        if isinstance(meta.get("name"), str) and meta["name"]:
            toolset.name = meta["name"]
        if isinstance(meta.get("description"), str):
            toolset.description = meta["description"]
        limit = meta.get("max_predecessors")
        if isinstance(limit, int) and not isinstance(limit, bool):
            toolset.max_predecessors = limit
        for i, family in enumerate(as_list(meta.get("families"))):
            if isinstance(family, dict) and isinstance(family.get("name"), str):
                toolset.families[family["name"]] = Family(
                    family["name"], str(family.get("doc", "")),
                    self.span(f"{pointer}/families/{i}"))
            else:
                self.error("a family must be an object with a `name`", f"{pointer}/families/{i}")
        for i, decl in enumerate(as_list(meta.get("types"))):
            self._type(decl, f"{pointer}/types/{i}")
        for i, flow in enumerate(as_list(meta.get("flows"))):
            if isinstance(flow, list) and len(flow) == 2 and all(isinstance(t, str) for t in flow):
                self.pending_flows.append((flow[0], flow[1], f"{pointer}/flows/{i}"))
            else:
                self.error("a flow must be a pair of tool names", f"{pointer}/flows/{i}")
        aliases = meta.get("aliases")
        if isinstance(aliases, dict):
            toolset.aliases.update({str(k): str(v) for k, v in aliases.items()})

    def _type(self, decl: Any, pointer: str) -> None:
        def names(key: str) -> tuple[str, ...]:
            return tuple(str(n) for n in as_list(decl.get(key)))

        if not isinstance(decl, dict) or not isinstance(decl.get("name"), str):
            self.error("a type must be an object with a `name`", pointer)
            return
        if decl["name"] in self.toolset.types:
            self.diagnostics.append(make("PC702", f"type `{decl['name']}` is defined twice",
                                         primary=self.span(pointer), data={"name": decl["name"]}))
            return
        self.toolset.types[decl["name"]] = TypeDecl(
            decl["name"], names("parents"), str(decl.get("doc", "")), self.span(pointer),
            names("converts_to"), names("formats"))

    # ------------------------------------------------------------ finishing

    def finish(self) -> tuple[Toolset, list[Diagnostic]]:
        toolset = self.toolset
        used = {p.type for t in toolset.tools.values() for p in (*t.inputs, *t.outputs)}
        kinds = {d.name: d for d in KIND_DECLS}
        if used & set(kinds):
            # The value kinds, declared only when a parameter needs them (and never over a
            # type of the same name that the file itself declares).
            for decl in KIND_DECLS:
                self.declare(decl)
        for source, target, pointer in self.pending_flows:
            toolset.flow_decls.append(Flow(source, target, self.span(pointer)))
            if source in toolset.tools and target in toolset.tools:
                toolset.flows.add((source, target))
        self.diagnostics.extend(toolset.problems())
        return toolset, self.diagnostics


def same_definition(a: ToolSignature, b: ToolSignature) -> bool:
    def params(tool: ToolSignature) -> list[tuple[Any, ...]]:
        return [(p.name, p.type, p.required, p.doc, p.polymorphic, p.schema_text)
                for p in (*tool.inputs, *tool.outputs)]

    return (a.description, a.category, a.family, len(a.inputs), params(a), a.input_schema) == \
        (b.description, b.category, b.family, len(b.inputs), params(b), b.input_schema)


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def object_params(schema: Any, pointer: str, builder: PoolBuilder, *, output: bool,
                  what: str) -> tuple[Param, ...] | None:
    """The parameters an object schema declares (``None`` when it is not an object schema)."""
    if schema is None:
        return ()
    if not isinstance(schema, dict) or schema.get("type", "object") != "object" or \
            not isinstance(schema.get("properties", {}), dict):
        builder.error(f"{what} must be a JSON Schema of type object", pointer)
        return None
    properties: dict[str, Any] = schema.get("properties", {})
    required = {k for k in as_list(schema.get("required")) if isinstance(k, str)}
    params = []
    for key, property_schema in properties.items():
        param = param_from_schema(key, property_schema, required=output or key in required,
                                  output=output)
        span = builder.span(f"{pointer}/properties/{escape_pointer(key)}")
        params.append(with_span(param, span))
    for key in sorted(required - set(properties)):
        # Required but undescribed: any value will do.
        params.append(with_span(param_from_schema(key, {}, required=True, output=output),
                                 builder.span(f"{pointer}/required")))
    return tuple(params)


def with_span(param: Param, span: Span) -> Param:
    return replace(param, span=span)


def add_signature(builder: PoolBuilder, name: Any, pointer: str, description: Any,
                  inputs_schema: Any, inputs_pointer: str, outputs_schema: Any,
                  outputs_pointer: str, meta: Any) -> None:
    if not isinstance(name, str) or not name:
        builder.error("a tool must have a non-empty string `name`", pointer)
        return
    published = published_schema(inputs_schema)  # the guard validates against it, whole
    inputs_schema, outputs_schema = inline_local_refs(inputs_schema), \
        inline_local_refs(outputs_schema)
    if published is not None and not _plain_object_schema(inputs_schema):
        inputs_schema = _listed_inputs(inputs_schema)
    inputs = object_params(inputs_schema, inputs_pointer, builder, output=False,
                           what=f"the input schema of `{name}`")
    outputs = object_params(outputs_schema, outputs_pointer, builder, output=True,
                            what=f"the output schema of `{name}`")
    if inputs is None or outputs is None:
        return
    meta = meta if isinstance(meta, dict) else {}
    builder.add_tool(ToolSignature(name, inputs, outputs, as_text(meta.get("category")),
                                   as_text(meta.get("family")), as_text(description),
                                   builder.span(pointer), open_outputs=outputs_schema is None,
                                   open_inputs=admits_other_keys(inputs_schema),
                                   input_schema=published),
                     pointer)


def _plain_object_schema(schema: Any) -> bool:
    """Whether ``schema`` is plainly an object schema, or one that admits no object at all
    (``{"type": "array"}``: the pool is wrong, as before)."""
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type", "object")
    if isinstance(kind, list) and "object" in kind:
        return False
    return kind != "object" or isinstance(schema.get("properties", {}), dict)


def _listed_inputs(schema: Any) -> dict[str, Any]:
    """An input schema that is a schema, but not plainly one of an object (``true``, a list of
    types with ``object``, ``properties`` that is no map): read as the parameters it lists
    and open to others; its own verdict on each call is the validator's
    (``ToolSignature.input_schema``)."""
    listed: dict[str, Any] = {"type": "object", "additionalProperties": True}
    if isinstance(schema, dict):
        properties = schema.get("properties")
        listed["properties"] = {k: v for k, v in properties.items() if isinstance(v, dict)} \
            if isinstance(properties, dict) else {}
        listed["required"] = schema.get("required", [])
    return listed


# Keywords under which an object schema may admit keys its `properties` do not list.
_OTHER_KEYS = ("$ref", "$dynamicRef", "anyOf", "oneOf", "allOf", "if", "patternProperties",
               "dependentSchemas", "unevaluatedProperties")


def admits_other_keys(schema: Any) -> bool:
    """Whether an input schema may accept keys it does not list: then an unlisted input is
    not reported (an unusual schema can only make plancheck say less)."""
    if not isinstance(schema, dict):
        return False
    extra = schema.get("additionalProperties")
    return extra is True or isinstance(extra, dict) or any(k in schema for k in _OTHER_KEYS)
