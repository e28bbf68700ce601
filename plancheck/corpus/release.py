"""Read the official DisasterBench release: tool manifest, workflow graph and benchmark tasks.

The release is never copied into the project; these functions read it from any directory
(``plancheck.corpus.paths.release_dir()`` by default).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span, escape_pointer
from plancheck.fileio import read_text_limited
from plancheck.ir.nodes import Flow, Param, Toolset, ToolSignature

MANIFEST = "tools_manifest.json"
GRAPH = "graph_desc.json"
BENCHMARK = "benchmark.jsonl"
LINK_GROUPS = ("links_type1", "links_type2", "links_type3", "links_type4")


@dataclass(frozen=True, slots=True)
class Task:
    task_id: int
    task_desc: str
    structured_plan: list[Any]
    source: str = ""

    @property
    def depth(self) -> int:
        return len(self.structured_plan)


def read_tasks(path: Path) -> Iterator[Task]:
    """The benchmark tasks of a ``benchmark.jsonl`` (or of a release directory)."""
    from plancheck.fileio import is_dir

    if is_dir(path):
        path = path / BENCHMARK
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                yield Task(record["task_id"], record.get("task_desc", ""),
                           record.get("structured_plan", []), record.get("source", ""))


def read_manifest(path: Path) -> dict[str, Any]:
    data = json.loads(read_text_limited(path))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a tool manifest is an object of tools")
    return data


def manifest_toolset(
    manifest: dict[str, Any], *, name: str, file: str, typed_from: Toolset | None = None
) -> tuple[Toolset, list[Diagnostic]]:
    """A toolset from a manifest ``{tool: {desc, input: {key: text}, output: {key: text}}}``.

    The manifest carries no types: a key the ``typed_from`` toolset types for the same tool
    keeps that type, every other key is an ``Artifact``.
    """
    diagnostics: list[Diagnostic] = []
    toolset = Toolset(name=name, span=Span(file, pointer=""), max_predecessors=1)
    if typed_from is not None:
        toolset.types = dict(typed_from.types)
        toolset.families = dict(typed_from.families)
        toolset.aliases = dict(typed_from.aliases)
    else:
        from plancheck.ir.nodes import TypeDecl

        toolset.types = {"Artifact": TypeDecl("Artifact", (), "Any file a tool reads or writes.")}
    for tool_name, spec in manifest.items():
        span = Span(file, pointer="/" + escape_pointer(tool_name))
        if not isinstance(spec, dict) or not isinstance(spec.get("input"), dict) \
                or not isinstance(spec.get("output"), dict):
            diagnostics.append(make("PC706", f"tool `{tool_name}` is not an object with "
                                    "`input` and `output` objects", primary=span))
            continue
        known = typed_from.tool(tool_name) if typed_from is not None else None

        toolset.tools[tool_name] = ToolSignature(
            tool_name,
            tuple(_typed(k, d, known, span, outputs=False) for k, d in spec["input"].items()),
            tuple(_typed(k, d, known, span, outputs=True) for k, d in spec["output"].items()),
            known.category if known else "",
            known.family if known else "",
            str(spec.get("desc", "")),
            span,
        )
    return toolset, diagnostics


def _typed(key: str, doc: Any, known: ToolSignature | None, span: Span, *, outputs: bool
           ) -> Param:
    match = None
    if known is not None:
        match = known.output(key) if outputs else known.input(key)
    if match is None:
        return Param(key, "Artifact", True, str(doc), span)
    return Param(key, match.type, match.required, str(doc), span, match.polymorphic)


def graph_flows(
    graph: dict[str, Any], tools: set[str], aliases: dict[str, str], file: str
) -> tuple[list[Flow], list[Diagnostic]]:
    """Tool -> data -> tool links of the official graph, collapsed to tool pairs per family."""
    diagnostics: list[Diagnostic] = []
    flows: list[Flow] = []
    reported: set[str] = set()

    def tool_name(node: str) -> str | None:
        if node in tools:
            return node
        if node in aliases and aliases[node] in tools:
            if node not in reported:
                reported.add(node)
                diagnostics.append(make(
                    "PC705",
                    f"the workflow graph calls `{aliases[node]}` `{node}`; mapped to "
                    f"`{aliases[node]}`",
                    primary=Span(file, pointer=""),
                    data={"graph_name": node, "tool": aliases[node]},
                ))
            return aliases[node]
        return None

    for group in LINK_GROUPS:
        produced: dict[str, set[str]] = {}
        consumed: dict[str, set[str]] = {}
        for link in graph.get(group, []):
            sources = link["source"] if isinstance(link["source"], list) else [link["source"]]
            targets = link["target"] if isinstance(link["target"], list) else [link["target"]]
            if link.get("type") == "model_to_data":
                for target in targets:
                    produced.setdefault(target, set()).update(sources)
            else:
                for source in sources:
                    consumed.setdefault(source, set()).update(targets)
        for data_node, producers in produced.items():
            for producer in sorted(producers):
                for consumer in sorted(consumed.get(data_node, ())):
                    a, b = tool_name(producer), tool_name(consumer)
                    if a and b:
                        flows.append(Flow(a, b, Span(file, pointer="/" + group)))
    return flows, diagnostics


def release_toolset(directory: Path, *, typed_from: Toolset | None = None
                    ) -> tuple[Toolset, list[Diagnostic]]:
    """The toolset of an official release directory (manifest + graph)."""
    manifest_path = directory / MANIFEST
    toolset, diagnostics = manifest_toolset(
        read_manifest(manifest_path), name=directory.name or "release",
        file=str(manifest_path), typed_from=typed_from,
    )
    graph_path = directory / GRAPH
    from plancheck.fileio import path_exists

    if path_exists(graph_path):
        graph = json.loads(read_text_limited(graph_path))
        flows, flow_diagnostics = graph_flows(graph, set(toolset.tools), toolset.aliases,
                                              str(graph_path))
        diagnostics.extend(flow_diagnostics)
        toolset.flow_decls = flows
        toolset.flows = {(f.source, f.target) for f in flows}
    return toolset, diagnostics
