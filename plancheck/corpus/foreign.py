"""Tool pools written in other ecosystems' formats, sniffed from their JSON shape.

``--tools X.json`` accepts:

* a DisasterBench tool manifest ``{tool: {desc, input: {...}, output: {...}}}``;
* an MCP ``tools/list`` result ``{"tools": [{name, description, inputSchema, outputSchema}]}``,
  the JSON-RPC response holding one, or a bare list of MCP tools;
* OpenAI function tools, as a bare ``tools`` array or wrapped as ``{"tools": [...]}`` (a whole
  request body works), in the chat-completions shape ``{"type": "function", "function":
  {name, description, parameters}}`` or the Responses-API shape ``{"type": "function", name,
  description, parameters}``; other tool types (web search, ...) are skipped;
* a TaskBench ``tool_desc.json`` or ``graph_desc.json`` (``{"nodes": [...], "links": [...]}``),
  with typed unnamed inputs (``input-type``/``output-type``) or named ``parameters``.

Parameters map onto plancheck types as :mod:`plancheck.ir.schema_types` describes. What
JSON Schema cannot say travels in plancheck's extension fields, which :mod:`.export` writes:
``x-plancheck-type`` / ``x-plancheck-polymorphic`` on a property schema, and under the MCP
``_meta`` key ``dev.plancheck/toolset`` (on the result; on an OpenAI wrapper object too) the
type lattice, families, flows, aliases and the predecessor limit; per tool, its category and
family (``_meta["dev.plancheck/tool"]`` on an MCP tool; ``_meta["dev.plancheck/tools"][name]``
on an OpenAI wrapper, which also holds the tool's ``outputSchema``, since OpenAI tools have
no outputs). A file without these fields is a plain foreign pool typed by value kinds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from plancheck.corpus.pool_errors import ToolsetError
from plancheck.corpus.pool_normalise import normalise_pool
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span, escape_pointer
from plancheck.ir.nodes import Family, Flow, Param, Toolset, ToolSignature, TypeDecl
from plancheck.ir.schema_types import KIND_DECLS, VALUE, kind_of_name, param_from_schema
from plancheck.records import replace

META_TOOLSET = "dev.plancheck/toolset"
META_TOOL = "dev.plancheck/tool"
META_TOOLS = "dev.plancheck/tools"

FORMATS = ("disasterbench-manifest", "mcp", "openai", "taskbench")


def foreign_toolset(data: Any, path: Path, *, typed_from: Toolset | None = None
                    ) -> tuple[Toolset, list[Diagnostic]]:
    """The toolset a JSON document describes (the entry point of ``--tools X.json``).

    Returns the toolset and its warnings; raises ``ToolsetError`` when it has errors (as a DSL
    toolset does). ``typed_from`` types the keys of an untyped DisasterBench manifest.
    """
    data = normalise_pool(data)  # BFCL, Seal-Tools, per-tool outputs
    kind = foreign_format(data)
    if kind == "disasterbench-manifest":
        from plancheck.corpus.release import manifest_toolset

        return manifest_toolset(data, name=path.stem, file=str(path), typed_from=typed_from)
    if kind is None:
        raise ToolsetError([make(
            "PC706",
            f"{path} is not a tool pool this version reads",
            primary=Span(str(path), pointer=""),
            help=["expected a DisasterBench tool manifest, an MCP tools/list result, an OpenAI "
                  "tools array or a TaskBench tool_desc.json/graph_desc.json"],
            data={"path": str(path)},
        )])
    toolset, diagnostics = read_foreign(data, name=path.stem, file=str(path))
    if any(d.severity.name == "ERROR" for d in diagnostics):
        raise ToolsetError(diagnostics)
    return toolset, diagnostics


def foreign_format(data: Any) -> str | None:
    """Which of :data:`FORMATS` a JSON value is written in (``None``: none of them)."""
    if isinstance(data, dict) and isinstance(data.get("result"), dict) and \
            "tools" in data["result"]:
        return "mcp"  # a JSON-RPC response to tools/list
    items = _tool_items(data)
    if items is not None and items:
        if any(isinstance(i, dict) and ("inputSchema" in i or "input_schema" in i)
               for i in items):
            return "mcp"
        if any(isinstance(i, dict) and (i.get("type") == "function" or "parameters" in i)
               for i in items):
            return "openai"
    if isinstance(data, dict) and isinstance(data.get("nodes"), list) and all(
        isinstance(n, dict) and "id" in n for n in data["nodes"]
    ):
        return "taskbench"
    if isinstance(data, dict) and data and all(
        isinstance(v, dict) and "input" in v and "output" in v for v in data.values()
    ):
        return "disasterbench-manifest"
    return None


def read_foreign(data: Any, *, name: str = "foreign", file: str = "<json>"
                 ) -> tuple[Toolset, list[Diagnostic]]:
    """The toolset of an MCP, OpenAI or TaskBench document, with all its diagnostics (errors
    included; the caller decides whether they are fatal)."""
    readers: dict[str, Callable[[Any, _Builder], None]] = {
        "mcp": _read_mcp, "openai": _read_openai, "taskbench": _read_taskbench,
    }
    kind = foreign_format(data)
    builder = _Builder(name, file)
    if kind not in readers:
        builder.error(f"{file} is not an MCP, OpenAI or TaskBench tool pool", "")
        return builder.toolset, builder.diagnostics
    readers[kind](data, builder)
    # An MCP or OpenAI tool returns one JSON result whose fields its outputs name; plancheck's
    # own exports (which carry its toolset metadata) keep separate results.
    builder.toolset.outputs_are_fields = kind in ("mcp", "openai") and not builder.has_meta
    return builder.finish()


def _tool_items(data: Any) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("tools", "functions"):
            if isinstance(data.get(key), list):
                return list(data[key])
    return None


# --------------------------------------------------------------------------- building


class _Builder:
    """Collects tools, types and flows, and the diagnostics reading them raises."""

    def __init__(self, name: str, file: str) -> None:
        self.file = file
        self.toolset = Toolset(name=name, span=Span(file, pointer=""))
        self.diagnostics: list[Diagnostic] = []
        self.pending_flows: list[tuple[str, str, str]] = []  # source, target, pointer
        self.has_meta = False  # the file carries plancheck's toolset metadata

    def span(self, pointer: str) -> Span:
        return Span(self.file, pointer=pointer)

    def error(self, message: str, pointer: str, **data: Any) -> None:
        self.diagnostics.append(make("PC706", message, primary=self.span(pointer), data=data))

    def add_tool(self, tool: ToolSignature, pointer: str) -> None:
        first = self.toolset.tools.get(tool.name)
        if first is not None and _same_definition(first, tool):
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
        for i, family in enumerate(_list(meta.get("families"))):
            if isinstance(family, dict) and isinstance(family.get("name"), str):
                toolset.families[family["name"]] = Family(
                    family["name"], str(family.get("doc", "")),
                    self.span(f"{pointer}/families/{i}"))
            else:
                self.error("a family must be an object with a `name`", f"{pointer}/families/{i}")
        for i, decl in enumerate(_list(meta.get("types"))):
            self._type(decl, f"{pointer}/types/{i}")
        for i, flow in enumerate(_list(meta.get("flows"))):
            if isinstance(flow, list) and len(flow) == 2 and all(isinstance(t, str) for t in flow):
                self.pending_flows.append((flow[0], flow[1], f"{pointer}/flows/{i}"))
            else:
                self.error("a flow must be a pair of tool names", f"{pointer}/flows/{i}")
        aliases = meta.get("aliases")
        if isinstance(aliases, dict):
            toolset.aliases.update({str(k): str(v) for k, v in aliases.items()})

    def _type(self, decl: Any, pointer: str) -> None:
        def names(key: str) -> tuple[str, ...]:
            return tuple(str(n) for n in _list(decl.get(key)))

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


def _same_definition(a: ToolSignature, b: ToolSignature) -> bool:
    def params(tool: ToolSignature) -> list[tuple[Any, ...]]:
        return [(p.name, p.type, p.required, p.doc, p.polymorphic, p.schema_text)
                for p in (*tool.inputs, *tool.outputs)]

    return (a.description, a.category, a.family, len(a.inputs), params(a)) == \
        (b.description, b.category, b.family, len(b.inputs), params(b))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _object_params(schema: Any, pointer: str, builder: _Builder, *, output: bool,
                   what: str) -> tuple[Param, ...] | None:
    """The parameters an object schema declares (``None`` when it is not an object schema)."""
    if schema is None:
        return ()
    if not isinstance(schema, dict) or schema.get("type", "object") != "object" or \
            not isinstance(schema.get("properties", {}), dict):
        builder.error(f"{what} must be a JSON Schema of type object", pointer)
        return None
    properties: dict[str, Any] = schema.get("properties", {})
    required = {k for k in _list(schema.get("required")) if isinstance(k, str)}
    params = []
    for key, property_schema in properties.items():
        param = param_from_schema(key, property_schema, required=output or key in required,
                                  output=output)
        span = builder.span(f"{pointer}/properties/{escape_pointer(key)}")
        params.append(_with_span(param, span))
    for key in sorted(required - set(properties)):
        # Required but undescribed: any value will do.
        params.append(_with_span(param_from_schema(key, {}, required=True, output=output),
                                 builder.span(f"{pointer}/required")))
    return tuple(params)


def _with_span(param: Param, span: Span) -> Param:
    return replace(param, span=span)


def _signature(builder: _Builder, name: Any, pointer: str, description: Any,
               inputs_schema: Any, inputs_pointer: str, outputs_schema: Any,
               outputs_pointer: str, meta: Any) -> None:
    if not isinstance(name, str) or not name:
        builder.error("a tool must have a non-empty string `name`", pointer)
        return
    inputs = _object_params(inputs_schema, inputs_pointer, builder, output=False,
                            what=f"the input schema of `{name}`")
    outputs = _object_params(outputs_schema, outputs_pointer, builder, output=True,
                             what=f"the output schema of `{name}`")
    if inputs is None or outputs is None:
        return
    meta = meta if isinstance(meta, dict) else {}
    builder.add_tool(ToolSignature(name, inputs, outputs, _text(meta.get("category")),
                                   _text(meta.get("family")), _text(description),
                                   builder.span(pointer), open_outputs=outputs_schema is None,
                                   open_inputs=_admits_other_keys(inputs_schema)),
                     pointer)


# Keywords under which an object schema may admit keys its `properties` do not list.
_OTHER_KEYS = ("$ref", "$dynamicRef", "anyOf", "oneOf", "allOf", "if", "patternProperties",
               "dependentSchemas", "unevaluatedProperties")


def _admits_other_keys(schema: Any) -> bool:
    """Whether an input schema may accept keys it does not list: then an unlisted input is
    not reported (an unusual schema can only make plancheck say less)."""
    if not isinstance(schema, dict):
        return False
    extra = schema.get("additionalProperties")
    return extra is True or isinstance(extra, dict) or any(k in schema for k in _OTHER_KEYS)


# --------------------------------------------------------------------------- MCP


def _read_mcp(data: Any, builder: _Builder) -> None:
    container, base = data, ""
    if isinstance(data, dict) and isinstance(data.get("result"), dict):
        container, base = data["result"], "/result"  # a JSON-RPC response
    if isinstance(container, dict):
        meta = container.get("_meta")
        builder.apply_meta(meta.get(META_TOOLSET) if isinstance(meta, dict) else None,
                           f"{base}/_meta/{escape_pointer(META_TOOLSET)}")
        items, base = _list(container.get("tools")), f"{base}/tools"
    else:
        items = _list(container)
    for i, item in enumerate(items):
        pointer = f"{base}/{i}"
        if not isinstance(item, dict):
            builder.error(f"tool {i} is not an object", pointer)
            continue
        input_key = "inputSchema" if "inputSchema" in item else "input_schema"
        output_key = "outputSchema" if "outputSchema" in item else "output_schema"
        meta = item.get("_meta")
        _signature(builder, item.get("name"), pointer, item.get("description"),
                   item.get(input_key, {"type": "object"}), f"{pointer}/{input_key}",
                   item.get(output_key), f"{pointer}/{output_key}",
                   meta.get(META_TOOL) if isinstance(meta, dict) else None)


# --------------------------------------------------------------------------- OpenAI


def _read_openai(data: Any, builder: _Builder) -> None:
    base = ""
    per_tool: dict[str, Any] = {}
    if isinstance(data, dict):
        meta: dict[str, Any] = data["_meta"] if isinstance(data.get("_meta"), dict) else {}
        builder.apply_meta(meta.get(META_TOOLSET), f"/_meta/{escape_pointer(META_TOOLSET)}")
        if isinstance(meta.get(META_TOOLS), dict):
            per_tool = meta[META_TOOLS]
        base = "/tools" if isinstance(data.get("tools"), list) else "/functions"
    for i, item in enumerate(_tool_items(data) or []):
        pointer = f"{base}/{i}"
        if not isinstance(item, dict):
            builder.error(f"tool {i} is not an object", pointer)
            continue
        if item.get("type", "function") != "function":
            continue  # a built-in tool (web search, code interpreter, ...): not a function
        function, function_pointer = item, pointer
        if isinstance(item.get("function"), dict):  # the chat-completions shape
            function, function_pointer = item["function"], f"{pointer}/function"
        name = function.get("name")
        extra = per_tool.get(name) if isinstance(name, str) else None
        extra = extra if isinstance(extra, dict) else {}
        outputs_pointer = (
            f"/_meta/{escape_pointer(META_TOOLS)}/{escape_pointer(str(name))}/outputSchema"
        )
        _signature(builder, name, function_pointer, function.get("description"),
                   function.get("parameters", {"type": "object"}),
                   f"{function_pointer}/parameters", extra.get("outputSchema"),
                   outputs_pointer, extra)


# --------------------------------------------------------------------------- TaskBench


def _read_taskbench(data: dict[str, Any], builder: _Builder) -> None:
    """TaskBench nodes: ``input-type``/``output-type`` lists of type names (the parameters are
    unnamed: each is named after its type, numbered when a type repeats), or ``parameters``
    ``[{name, type, desc}]`` (no outputs). Every parameter is required; ``links`` are flows."""
    for i, node in enumerate(data["nodes"]):
        pointer = f"/nodes/{i}"
        name = node.get("id")
        if not isinstance(name, str) or not name:
            builder.error(f"node {i} has no string `id`", pointer)
            continue
        outputs: tuple[Param, ...] = ()
        if isinstance(node.get("parameters"), list):
            named = [_taskbench_named(p, f"{pointer}/parameters/{j}", builder)
                     for j, p in enumerate(node["parameters"])]
            inputs = tuple(p for p in named if p is not None)
            if len(inputs) != len(named):
                continue
        else:
            inputs = _taskbench_typed(node.get("input-type"), f"{pointer}/input-type", builder)
            outputs = _taskbench_typed(node.get("output-type"), f"{pointer}/output-type",
                                       builder)
        builder.add_tool(ToolSignature(name, inputs, outputs,
                                       description=_text(node.get("desc")),
                                       span=builder.span(pointer)), pointer)
    for i, link in enumerate(_list(data.get("links"))):
        if isinstance(link, dict) and isinstance(link.get("source"), str) and \
                isinstance(link.get("target"), str):
            builder.pending_flows.append((link["source"], link["target"], f"/links/{i}"))
        else:
            builder.error(f"link {i} must have string `source` and `target`", f"/links/{i}")


def _taskbench_type(name: str, builder: _Builder) -> str:
    kind = kind_of_name(name)
    if kind is not None:
        return kind
    builder.declare(KIND_DECLS[0])  # Value, the root of TaskBench's own types
    builder.declare(TypeDecl(name, (VALUE,), f"A TaskBench `{name}` value."))
    return name


def _taskbench_typed(types: Any, pointer: str, builder: _Builder) -> tuple[Param, ...]:
    names = [t for t in _list(types) if isinstance(t, str) and t]
    if len(names) != len(_list(types)) or (types is not None and not isinstance(types, list)):
        builder.error("a TaskBench type list must be a list of type names", pointer)
    params = []
    for j, type_name in enumerate(names):
        repeats = names.count(type_name) > 1
        key = f"{type_name}_{names[:j + 1].count(type_name)}" if repeats else type_name
        params.append(Param(key, _taskbench_type(type_name, builder), True, "",
                            builder.span(f"{pointer}/{j}")))
    return tuple(params)


def _taskbench_named(parameter: Any, pointer: str, builder: _Builder) -> Param | None:
    if not isinstance(parameter, dict) or not isinstance(parameter.get("name"), str):
        builder.error("a TaskBench parameter must be an object with a string `name`", pointer)
        return None
    type_name = parameter.get("type") if isinstance(parameter.get("type"), str) else "string"
    return Param(parameter["name"], _taskbench_type(type_name or "string", builder), True,
                 _text(parameter.get("desc") or parameter.get("description")),
                 builder.span(pointer))

