"""The JSON renderer: one document with a schema version, a summary and every diagnostic."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from plancheck import __version__
from plancheck.compiler.diagnostics import Diagnostic, Severity
from plancheck.dsl.ast import Span

SCHEMA_VERSION = 1


def span_to_dict(span: Span | None) -> dict[str, Any] | None:
    if span is None:
        return None
    return {
        "start_line": span.start_line,
        "start_col": span.start_col,
        "end_line": span.end_line,
        "end_col": span.end_col,
        "pointer": span.pointer,
    }


def diagnostic_to_dict(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity.label,
        "message": diagnostic.message,
        "file": diagnostic.file,
        "record": diagnostic.record,
        "span": span_to_dict(diagnostic.span),
        "labels": [
            {"span": span_to_dict(label.span), "message": label.message,
             "primary": label.primary}
            for label in diagnostic.labels
        ],
        "notes": list(diagnostic.notes),
        "help": list(diagnostic.help),
        "data": _jsonable(diagnostic.data),
        "fixes": [
            {
                "message": suggestion.message,
                "applicability": suggestion.applicability,
                "edits": [
                    {"pointer": e.pointer, "value": _jsonable(e.value), "delete": e.delete,
                     **({"insert": True} if e.insert else {})}
                    for e in suggestion.edits
                ],
            }
            for suggestion in diagnostic.suggestions
        ],
    }


def summarize(diagnostics: Iterable[Diagnostic], *, files: int, plans: int) -> dict[str, Any]:
    items = list(diagnostics)
    by_severity = Counter(d.severity.label for d in items)
    return {
        "files": files,
        "plans": plans,
        "errors": by_severity.get("error", 0),
        "warnings": by_severity.get("warning", 0),
        "infos": by_severity.get("info", 0),
        "by_code": dict(sorted(Counter(d.code for d in items).items())),
        "plans_with_errors": len({(d.file, d.record) for d in items
                                  if d.severity is Severity.ERROR}),
    }


def render_json(diagnostics: list[Diagnostic], *, files: int, plans: int) -> str:
    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "plancheck", "version": __version__},
        "summary": summarize(diagnostics, files=files, plans=plans),
        "diagnostics": [diagnostic_to_dict(d) for d in diagnostics],
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        if isinstance(value, dict):
            return {str(k): _jsonable(v) for k, v in value.items()}
        if isinstance(value, (list, tuple, set, frozenset)):
            return [_jsonable(v) for v in value]
        return repr(value)
