"""TaskBench tool graphs: ``tool_desc.json`` or ``graph_desc.json`` (``{"nodes": [...],
"links": [...]}``), with typed unnamed inputs (``input-type``/``output-type``) or named
``parameters``."""

from __future__ import annotations

from typing import Any

from plancheck.corpus.pool_builder import PoolBuilder, as_list, as_text
from plancheck.corpus.pool_format import PoolFormat
from plancheck.ir.nodes import Param, ToolSignature, TypeDecl
from plancheck.ir.schema_types import KIND_DECLS, VALUE, kind_of_name

__all__ = ["FORMAT"]


def sniff(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("nodes"), list) and all(
        isinstance(n, dict) and "id" in n for n in data["nodes"])


def read(data: dict[str, Any], builder: PoolBuilder) -> None:
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
                                       description=as_text(node.get("desc")),
                                       span=builder.span(pointer)), pointer)
    for i, link in enumerate(as_list(data.get("links"))):
        if isinstance(link, dict) and isinstance(link.get("source"), str) and \
                isinstance(link.get("target"), str):
            builder.pending_flows.append((link["source"], link["target"], f"/links/{i}"))
        else:
            builder.error(f"link {i} must have string `source` and `target`", f"/links/{i}")


def _taskbench_type(name: str, builder: PoolBuilder) -> str:
    kind = kind_of_name(name)
    if kind is not None:
        return kind
    builder.declare(KIND_DECLS[0])  # Value, the root of TaskBench's own types
    builder.declare(TypeDecl(name, (VALUE,), f"A TaskBench `{name}` value."))
    return name


def _taskbench_typed(types: Any, pointer: str, builder: PoolBuilder) -> tuple[Param, ...]:
    names = [t for t in as_list(types) if isinstance(t, str) and t]
    if len(names) != len(as_list(types)) or (types is not None and not isinstance(types, list)):
        builder.error("a TaskBench type list must be a list of type names", pointer)
    params = []
    for j, type_name in enumerate(names):
        repeats = names.count(type_name) > 1
        key = f"{type_name}_{names[:j + 1].count(type_name)}" if repeats else type_name
        params.append(Param(key, _taskbench_type(type_name, builder), True, "",
                            builder.span(f"{pointer}/{j}")))
    return tuple(params)


def _taskbench_named(parameter: Any, pointer: str, builder: PoolBuilder) -> Param | None:
    if not isinstance(parameter, dict) or not isinstance(parameter.get("name"), str):
        builder.error("a TaskBench parameter must be an object with a string `name`", pointer)
        return None
    type_name = parameter.get("type") if isinstance(parameter.get("type"), str) else "string"
    return Param(parameter["name"], _taskbench_type(type_name or "string", builder), True,
                 as_text(parameter.get("desc") or parameter.get("description")),
                 builder.span(pointer))


FORMAT = PoolFormat("taskbench", "a TaskBench tool graph", sniff, read, order=400)
