"""Plan units: what a frontend hands the driver (one plan to check, with what is needed to
point into its file), and everything read from one input."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from plancheck.diagnostics.model import Diagnostic
from plancheck.diagnostics.positions import LineIndex, Positions
from plancheck.diagnostics.span import Span
from plancheck.ir.nodes import Plan, Toolset
from plancheck.records import Record


class PlanUnit(Record):
    """One plan to check: a JSON ``value`` to lower (when ``has_value``) or an IR ``plan``
    (DSL frontend), with what points into its file, the diagnostics found reading it, and
    the whole record it came from, for batch tools."""

    __slots__ = _fields = ("file", "record", "positions", "value", "has_value", "root", "plan",
                           "diagnostics", "task_id", "record_data")

    def __init__(self, file: str, record: str | None, positions: Positions, value: Any = None,
                 has_value: bool = False, root: Span | None = None, plan: Plan | None = None,
                 diagnostics: list[Diagnostic] | None = None, task_id: Any = None,
                 record_data: dict[str, Any] | None = None) -> None:
        self.file = file
        self.record = record
        self.positions = positions
        self.value = value
        self.has_value = has_value
        self.root = root
        self.plan = plan
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        self.task_id = task_id
        self.record_data = record_data


class SourceFile(Record):
    """Everything read from one input: its plans, toolsets, the diagnostics not tied to one
    plan, and the units still to be read after ``units`` (a JSONL batch read a record at a
    time)."""

    __slots__ = _fields = ("file", "units", "toolsets", "diagnostics", "lines", "stream")

    def __init__(self, file: str, units: list[PlanUnit] | None = None,
                 toolsets: list[Toolset] | None = None,
                 diagnostics: list[Diagnostic] | None = None, lines: LineIndex | None = None,
                 stream: Iterator[PlanUnit] | None = None) -> None:
        self.file = file
        self.units: list[PlanUnit] = [] if units is None else units
        self.toolsets: list[Toolset] = [] if toolsets is None else toolsets
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        self.lines = lines
        self.stream = stream
