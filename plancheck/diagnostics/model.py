"""The one diagnostic model every phase reports through and every renderer reads.

Modelled on rustc/Elm (a primary label, secondary labels, notes, help) and ruff (one model,
many renderers). Diagnostics carry structured ``data`` (step, tool, key, expected, actual) so
that programs consuming them never parse message text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from plancheck.diagnostics.codes import CODES, CodeInfo
from plancheck.diagnostics.severity import Severity
from plancheck.diagnostics.span import Span

__all__ = [
    "Diagnostic",
    "Edit",
    "Label",
    "Severity",
    "Suggestion",
    "make",
]


@dataclass(frozen=True, slots=True)
class Label:
    span: Span
    message: str = ""
    primary: bool = False


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the value at a JSON pointer of the plan (``None`` pointer value = delete it).

    With ``insert``, ``value`` is inserted into the array *before* the element the pointer
    names (pointers still index the original array), as JSON Patch's ``add`` does.
    """

    pointer: str
    value: Any = None  # a JSON value
    delete: bool = False
    insert: bool = False


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A suggested fix. Machine-applicable suggestions may be applied without review."""

    message: str
    edits: tuple[Edit, ...] = ()
    applicability: str = "maybe-incorrect"  # or "machine-applicable"

    @property
    def machine_applicable(self) -> bool:
        return self.applicability == "machine-applicable"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    severity: Severity
    labels: tuple[Label, ...] = ()
    notes: tuple[str, ...] = ()
    help: tuple[str, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)
    suggestions: tuple[Suggestion, ...] = ()
    file: str | None = None
    record: str | None = None

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
