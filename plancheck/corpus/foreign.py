"""Tool pools written in other ecosystems' formats, sniffed from their JSON shape.

``--tools X.json`` accepts:

* a DisasterBench tool manifest ``{tool: {desc, input: {...}, output: {...}}}``;
* an MCP ``tools/list`` result ``{"tools": [{name, description, inputSchema, outputSchema}]}``,
  the JSON-RPC response holding one, or a bare list of MCP tools;
* OpenAI function tools, as a bare ``tools`` array or wrapped as ``{"tools": [...]}`` (a whole
  request body works), in the chat-completions shape ``{"type": "function", "function":
  {name, description, parameters}}`` or the Responses-API shape ``{"type": "function", name,
  description, parameters}``; other tool types (web search, ...) are skipped;
* Gemini function declarations ``{"tools": [{"functionDeclarations": [...]}]}`` (a whole
  ``generateContent`` request works);
* a TaskBench ``tool_desc.json`` or ``graph_desc.json`` (``{"nodes": [...], "links": [...]}``),
  with typed unnamed inputs (``input-type``/``output-type``) or named ``parameters``.

Each format is a module of :mod:`plancheck.corpus.pools`, listed in
:mod:`plancheck.corpus.pool_registry`. Parameters map onto plancheck types as
:mod:`plancheck.ir.schema_types` describes. What JSON Schema cannot say travels in
plancheck's extension fields, which :mod:`.export` writes:
``x-plancheck-type`` / ``x-plancheck-polymorphic`` on a property schema, and under the MCP
``_meta`` key ``dev.plancheck/toolset`` (on the result; on an OpenAI wrapper object too) the
type lattice, families, flows, aliases and the predecessor limit; per tool, its category and
family (``_meta["dev.plancheck/tool"]`` on an MCP tool; ``_meta["dev.plancheck/tools"][name]``
on an OpenAI wrapper, which also holds the tool's ``outputSchema``, since OpenAI tools have
no outputs). A file without these fields is a plain foreign pool typed by value kinds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plancheck.corpus.pool_builder import PoolBuilder, tool_items
from plancheck.corpus.pool_errors import ToolsetError
from plancheck.corpus.pool_format import PoolFormat, SpanResolver
from plancheck.corpus.pool_normalise import normalise_pool
from plancheck.corpus.pool_registry import POOL_FORMATS, pool_format_of
from plancheck.diagnostics.limits import pool_limit
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span
from plancheck.ir.nodes import Toolset

__all__ = ["FORMATS", "foreign_format", "foreign_toolset", "read_foreign"]

FORMATS = tuple(sorted(f.name for f in POOL_FORMATS))


def foreign_toolset(data: Any, path: Path, *, typed_from: Toolset | None = None,
                    pool_format: PoolFormat | None = None, spans: SpanResolver | None = None
                    ) -> tuple[Toolset, list[Diagnostic]]:
    """The toolset a JSON document describes (the entry point of ``--tools X.json``), or a
    value ``pool_format`` parsed from a file in its own language (then ``spans`` says where
    each pointer is written in it).

    Returns the toolset and its warnings; raises ``ToolsetError`` when it has errors (as a DSL
    toolset does). ``typed_from`` types the keys of an untyped DisasterBench manifest.
    """
    if pool_format is None:
        data = normalise_pool(data)  # BFCL, Seal-Tools, per-tool outputs
    kind = foreign_format(data) if pool_format is None else pool_format.name
    if kind == "disasterbench-manifest":
        from plancheck.corpus.release import manifest_toolset

        return manifest_toolset(data, name=path.stem, file=str(path), typed_from=typed_from)
    if kind is None:
        raise ToolsetError([make(
            "PC706",
            f"{path} is not a tool pool this version reads",
            primary=Span(str(path), pointer=""),
            help=["expected " + _one_of([f.words for f in POOL_FORMATS])],
            data={"path": str(path)},
        )])
    toolset, diagnostics = read_foreign(data, name=path.stem, file=str(path),
                                        pool_format=pool_format, spans=spans)
    if any(d.severity.name == "ERROR" for d in diagnostics):
        raise ToolsetError(diagnostics)
    return toolset, diagnostics



def _one_of(words: list[str]) -> str:
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]


def foreign_format(data: Any) -> str | None:
    """Which of :data:`FORMATS` a JSON value is written in (``None``: none of them)."""
    found = pool_format_of(data)
    return found.name if found is not None else None


def read_foreign(data: Any, *, name: str = "foreign", file: str = "<json>",
                 pool_format: PoolFormat | None = None, spans: SpanResolver | None = None
                 ) -> tuple[Toolset, list[Diagnostic]]:
    """The toolset of an MCP, OpenAI or TaskBench document (or of a value ``pool_format``
    parsed), with all its diagnostics (errors included; the caller decides whether they are
    fatal)."""
    found = pool_format_of(data) if pool_format is None else pool_format
    builder = PoolBuilder(name, file, spans)
    if found is None or found.read is None:
        readable = [f.words for f in POOL_FORMATS if f.read is not None]
        builder.error(f"{file} holds none of {_one_of(readable)}", "")
        return builder.toolset, builder.diagnostics
    too_large = pool_limit(tool_items(data) or [], builder.span(""))
    if too_large is not None:
        builder.diagnostics.append(too_large)
        return builder.toolset, builder.diagnostics
    found.read(data, builder)
    # An MCP or OpenAI tool returns one JSON result whose fields its outputs name; plancheck's
    # own exports (which carry its toolset metadata) keep separate results.
    builder.toolset.outputs_are_fields = found.outputs_are_fields and not builder.has_meta
    return builder.finish()
