"""Plan units: what a frontend hands the driver (one plan to check, with what is needed to
point into its file), and everything read from one input."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from plancheck.diagnostics.model import Diagnostic
from plancheck.diagnostics.positions import LineIndex, Positions
from plancheck.diagnostics.span import Span
from plancheck.ir.nodes import Plan, Toolset


@dataclass(slots=True)
class PlanUnit:
    file: str
    record: str | None
    positions: Positions
    value: Any = None  # a JSON value to lower, when ``has_value``
    has_value: bool = False
    root: Span | None = None
    plan: Plan | None = None  # an IR plan (DSL frontend)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    task_id: Any = None
    record_data: dict[str, Any] | None = None  # the whole record, for batch tools


@dataclass(slots=True)
class SourceFile:
    """Everything read from one input."""

    file: str
    units: list[PlanUnit] = field(default_factory=list)
    toolsets: list[Toolset] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)  # not tied to one plan
    lines: LineIndex | None = None
    # Units still to be read, after ``units`` (a JSONL batch read a record at a time).
    stream: Iterator[PlanUnit] | None = None
