"""``--statistics``: how many diagnostics of each code, most frequent first (as ruff does).

    3  PC201  error    unknown-tool       [*]
    1  PC401  error    dependence-mismatch [*]

``[*]`` marks codes with at least one machine-applicable fix. JSON formats get a JSON array of
``{code, name, severity, count, fixable}`` (one object per line for ``jsonl``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from plancheck.diagnostics.model import Diagnostic


class Statistics:
    """The rows, added to one diagnostic at a time (a streamed run keeps these, not the
    diagnostics)."""

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: dict[str, dict[str, Any]] = {}

    def add(self, diagnostics: Iterable[Diagnostic]) -> None:
        for diagnostic in diagnostics:
            row = self._rows.setdefault(diagnostic.code, {
                "code": diagnostic.code, "name": diagnostic.name,
                "severity": diagnostic.severity, "count": 0, "fixable": False,
            })
            row["count"] += 1
            row["severity"] = max(row["severity"], diagnostic.severity)
            row["fixable"] |= any(s.machine_applicable for s in diagnostic.suggestions)

    def rows(self) -> list[dict[str, Any]]:
        ordered = sorted(self._rows.values(), key=lambda row: (-row["count"], row["code"]))
        return [{**row, "severity": row["severity"].label} for row in ordered]


def statistics(diagnostics: Sequence[Diagnostic]) -> list[dict[str, Any]]:
    counted = Statistics()
    counted.add(diagnostics)
    return counted.rows()


def render_statistics(diagnostics: Sequence[Diagnostic] | Statistics, format_name: str) -> str:
    rows = diagnostics.rows() if isinstance(diagnostics, Statistics) else statistics(diagnostics)
    if format_name == "json":
        return json.dumps(rows, indent=2)
    if format_name == "jsonl":
        return "\n".join(json.dumps(row) for row in rows)
    if not rows:
        return "No diagnostics."
    count_width = max(len(str(row["count"])) for row in rows)
    name_width = max(len(row["name"]) for row in rows)
    return "\n".join(
        f"{row['count']:>{count_width}}  {row['code']}  {row['severity']:<7}  "
        f"{row['name']:<{name_width}}{'  [*]' if row['fixable'] else ''}".rstrip()
        for row in rows
    )
