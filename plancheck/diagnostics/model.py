"""The one diagnostic model every phase reports through and every renderer reads.

Modelled on rustc/Elm (a primary label, secondary labels, notes, help) and ruff (one model,
many renderers). Diagnostics carry structured ``data`` (step, tool, key, expected, actual) so
that programs consuming them never parse message text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from plancheck.diagnostics.codes import CODES, CodeInfo
from plancheck.diagnostics.severity import Severity
from plancheck.diagnostics.span import Span
from plancheck.records import FrozenRecord, replace

__all__ = [
    "Diagnostic",
    "Edit",
    "Label",
    "Severity",
    "Suggestion",
    "make",
]


class Label(FrozenRecord):
    """A span a diagnostic points at, with its text; the primary label is the main one."""

    __slots__ = _fields = ("span", "message", "primary")

    def __init__(self, span: Span, message: str = "", primary: bool = False) -> None:
        self.span = span
        self.message = message
        self.primary = primary


class Edit(FrozenRecord):
    """Replace the value at a JSON pointer of the plan (``None`` pointer value = delete it).

    With ``insert``, ``value`` is inserted into the array *before* the element the pointer
    names (pointers still index the original array), as JSON Patch's ``add`` does.
    """

    __slots__ = _fields = ("pointer", "value", "delete", "insert")

    def __init__(self, pointer: str, value: Any = None, delete: bool = False,
                 insert: bool = False) -> None:
        self.pointer = pointer
        self.value = value  # a JSON value
        self.delete = delete
        self.insert = insert


class Suggestion(FrozenRecord):
    """A suggested fix. Machine-applicable suggestions may be applied without review;
    ``applicability`` is ``maybe-incorrect`` or ``machine-applicable``."""

    __slots__ = _fields = ("message", "edits", "applicability")

    def __init__(self, message: str, edits: tuple[Edit, ...] = (),
                 applicability: str = "maybe-incorrect") -> None:
        self.message = message
        self.edits = edits
        self.applicability = applicability

    @property
    def machine_applicable(self) -> bool:
        return self.applicability == "machine-applicable"


class Diagnostic(FrozenRecord):
    """One finding: a registered code, its message and severity, labels, notes, help,
    structured ``data`` and suggested fixes, and the file and record it is about."""

    __slots__ = _fields = ("code", "message", "severity", "labels", "notes", "help", "data",
                           "suggestions", "file", "record")

    def __init__(self, code: str, message: str, severity: Severity,
                 labels: tuple[Label, ...] = (), notes: tuple[str, ...] = (),
                 help: tuple[str, ...] = (), data: dict[str, Any] | None = None,
                 suggestions: tuple[Suggestion, ...] = (), file: str | None = None,
                 record: str | None = None) -> None:
        self.code = code
        self.message = message
        self.severity = severity
        self.labels = labels
        self.notes = notes
        self.help = help
        self.data: dict[str, Any] = {} if data is None else data
        self.suggestions = suggestions
        self.file = file
        self.record = record

    @property
    def info(self) -> CodeInfo:
        return CODES[self.code]

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def primary(self) -> Label | None:
        for label in self.labels:
            if label.primary:
                return label
        return self.labels[0] if self.labels else None

    @property
    def span(self) -> Span | None:
        label = self.primary
        return label.span if label else None

    def with_context(self, *, file: str | None, record: str | None) -> Diagnostic:
        return replace(self, file=file, record=record)

    def sort_key(self) -> tuple[str, str, int, int, str]:
        span = self.span
        return (
            self.file or "",
            self.record or "",
            span.start_line if span else 0,
            span.start_col if span else 0,
            self.code,
        )


def make(
    code: str,
    message: str,
    *,
    primary: Span | None = None,
    label: str = "",
    secondary: Iterable[tuple[Span, str]] = (),
    notes: Iterable[str] = (),
    help: Iterable[str] = (),
    data: dict[str, Any] | None = None,
    suggestions: Iterable[Suggestion] = (),
    severity: Severity | None = None,
) -> Diagnostic:
    """Build a diagnostic for a registered code (its default severity unless overridden)."""
    info = CODES[code]  # KeyError here is a programming error: every code is registered
    labels: list[Label] = []
    if primary is not None:
        labels.append(Label(primary, label, primary=True))
    labels.extend(Label(span, text) for span, text in secondary)
    return Diagnostic(
        code=code,
        message=message,
        severity=severity if severity is not None else info.severity,
        labels=tuple(labels),
        notes=tuple(notes),
        help=tuple(help),
        data=dict(data or {}),
        suggestions=tuple(suggestions),
    )
