"""The JSON renderer: one document with a schema version, a summary and every diagnostic."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from plancheck import __version__
from plancheck.diagnostics.model import Diagnostic, Severity
from plancheck.diagnostics.serialize import diagnostic_to_dict

if TYPE_CHECKING:
    from plancheck.render.registry import RenderContext

SCHEMA_VERSION = 1


class SummaryCounts:
    """The summary's counts, added to one diagnostic at a time (a streamed run keeps these, not
    the diagnostics)."""

    __slots__ = ("by_code", "by_severity", "with_errors")

    def __init__(self) -> None:
        self.by_severity: Counter[str] = Counter()
        self.by_code: Counter[str] = Counter()
        self.with_errors: set[tuple[str | None, str | None]] = set()

    def add(self, diagnostic: Diagnostic) -> None:
        self.by_severity[diagnostic.severity.label] += 1
        self.by_code[diagnostic.code] += 1
        if diagnostic.severity is Severity.ERROR:
            self.with_errors.add((diagnostic.file, diagnostic.record))

    def to_dict(self, *, files: int, plans: int) -> dict[str, Any]:
        return {
            "files": files,
            "plans": plans,
            "errors": self.by_severity.get("error", 0),
            "warnings": self.by_severity.get("warning", 0),
            "infos": self.by_severity.get("info", 0),
            "by_code": dict(sorted(self.by_code.items())),
            "plans_with_errors": len(self.with_errors),
        }


def summarize(diagnostics: Iterable[Diagnostic], *, files: int, plans: int) -> dict[str, Any]:
    counts = SummaryCounts()
    for diagnostic in diagnostics:
        counts.add(diagnostic)
    return counts.to_dict(files=files, plans=plans)


def json_document(summary: dict[str, Any], diagnostics: list[dict[str, Any]]) -> str:
    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "plancheck", "version": __version__},
        "summary": summary,
        "diagnostics": diagnostics,
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


def render_json(diagnostics: list[Diagnostic], *, files: int, plans: int) -> str:
    return json_document(summarize(diagnostics, files=files, plans=plans),
                         [diagnostic_to_dict(d) for d in diagnostics])


def render_json_document(context: RenderContext) -> str:
    """The ``json`` format."""
    return render_json(list(context.diagnostics), files=context.files, plans=context.plans)
