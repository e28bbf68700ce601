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


def render_json_document(context: RenderContext) -> str:
    """The ``json`` format."""
    return render_json(list(context.diagnostics), files=context.files, plans=context.plans)
