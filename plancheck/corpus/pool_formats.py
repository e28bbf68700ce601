"""What a JSON value is as a tool pool (in words, for messages), JSONL pools, and the pool a
record carries for itself. The dialects are normalised first (:mod:`.pool_normalise`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plancheck.corpus.foreign import foreign_format, foreign_toolset, read_foreign
from plancheck.corpus.pool_errors import ToolsetError
from plancheck.corpus.pool_normalise import normalise_pool
from plancheck.corpus.pool_registry import pool_format_of
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span
from plancheck.formats.records import RECORD_TOOL_KEYS
from plancheck.ir.nodes import Toolset

RECORD_POOL_KEYS = RECORD_TOOL_KEYS  # (a record's tools: one list for the recogniser and here)


def pool_kind(value: Any) -> str | None:
    """What kind of tool pool a JSON value is, in words (None: it is none that
    ``--tools`` reads)."""
    found = pool_format_of(normalise_pool(value))
    return found.words if found is not None else None


def pool_file(value: Any, file: str) -> tuple[str, list[str]] | None:
    """What a JSON document that is no plan holds instead, when it is part of a tool pool,
    and where it goes (a message's ``holds ...`` and its help); None when it is none."""
    if isinstance(value, dict) and {"model_nodes", "data_nodes"} <= value.keys():
        return ("DisasterBench's workflow graph, not a plan",
                ["`--tools DIR` reads it with the tool manifest beside it (a release "
                 "directory)"])
    kind = pool_kind(value)
    if kind is None:
        return None
    return (f"{kind} (a tool pool), not a plan",
            [f"lint the pool with `plancheck toolset lint {file}`; check plans against it "
             f"with `plancheck check --tools {file} PLAN`"])


def read_jsonl_pool(text: str, path: Path) -> tuple[Toolset, list[Diagnostic]]:
    """A pool written one tool definition a line (Seal-Tools ``tool.jsonl``, ...)."""
    items = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except (ValueError, RecursionError) as error:  # also an integer of 4,301+ digits
            message = getattr(error, "msg", None) or (
                "nested too deeply" if isinstance(error, RecursionError) else str(error))
            raise ToolsetError([make("PC706", f"{path}:{number} is not valid JSON: {message}",
                                     primary=Span(str(path), number, 1, number, 2),
                                     data={"path": str(path), "line": number})]) from None
    return foreign_toolset(items, path)


def record_pool(record: dict[str, Any], file: str) -> tuple[Toolset, list[Diagnostic]] | None:
    """The pool a record carries for itself (``None``: it carries none)."""
    for key in RECORD_POOL_KEYS:
        tools = record.get(key)
        if isinstance(tools, list) and tools and all(isinstance(t, dict) for t in tools):
            data = normalise_pool(tools)
            if foreign_format(data) in ("mcp", "openai"):
                name = str(record.get("id", "record"))
                return read_foreign(data, name=f"{name} {key}", file=file)
    return None
