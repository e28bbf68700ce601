"""Diagnostics as JSON-ready dictionaries: the one serialisation every output format and the
per-item lines of ``plancheck score`` share (the JSON schema is documented in the README)."""

from __future__ import annotations

import json
from typing import Any

from plancheck.diagnostics.model import Diagnostic
from plancheck.diagnostics.span import Span


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
        "data": jsonable(diagnostic.data),
        "fixes": [
            {
                "message": suggestion.message,
                "applicability": suggestion.applicability,
                "edits": [
                    {"pointer": e.pointer, "value": jsonable(e.value), "delete": e.delete,
                     **({"insert": True} if e.insert else {})}
                    for e in suggestion.edits
                ],
            }
            for suggestion in diagnostic.suggestions
        ],
    }


def jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        if isinstance(value, dict):
            return {str(k): jsonable(v) for k, v in value.items()}
        if isinstance(value, (list, tuple, set, frozenset)):
            return [jsonable(v) for v in value]
        return repr(value)
