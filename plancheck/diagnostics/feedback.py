"""Compact feedback for a language model: what is wrong, where, and what is allowed instead.

Used by the checker-in-the-loop planners and by ``Report.to_feedback()``. One line per problem,
with the JSON path, the expected and actual values, a did-you-mean and the allowed tools or keys,
so that a model can repair the whole plan in one round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from plancheck.diagnostics.model import Diagnostic, Severity

_MAX_ALLOWED = 30


class Findings(Protocol):
    """What feedback reads of a check's report (``compiler.driver.Report`` is one): its
    findings. Named here so the bottom layer need not know the checker that sits above it."""

    @property
    def diagnostics(self) -> Sequence[Diagnostic]: ...


def _path(diagnostic: Diagnostic) -> str:
    span = diagnostic.span
    if span is not None and span.pointer:
        return span.pointer
    return ""


def _fmt(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def feedback_line(diagnostic: Diagnostic, shown: set[tuple[str, ...]] | None = None) -> str:
    """One problem on one line. ``shown`` collects the allowed-value lists already printed, so
    that a list repeated by several problems (all 26 tools, say) is spelt out only once."""
    data = diagnostic.data
    parts = [f"[{diagnostic.code} {diagnostic.name}]"]
    path = _path(diagnostic)
    if path:
        parts.append(f"at {path}:")
    parts.append(diagnostic.message)
    extra = []
    if "expected" in data and "actual" in data:
        extra.append(f"expected {_fmt(data['expected'])}, got {_fmt(data['actual'])}")
    if data.get("suggestion"):
        extra.append(f"did you mean {_fmt(data['suggestion'])}?")
    allowed = data.get("allowed")
    if isinstance(allowed, list) and allowed:
        key = tuple(str(a) for a in allowed)
        if shown is not None and key in shown:
            extra.append("allowed: as above")
        else:
            listed = ", ".join(key[:_MAX_ALLOWED])
            more = f" (+{len(key) - _MAX_ALLOWED} more)" if len(key) > _MAX_ALLOWED else ""
            extra.append(f"allowed: {listed}{more}")
            if shown is not None:
                shown.add(key)
    for help_line in diagnostic.help:
        if help_line not in extra and not help_line.startswith("did you mean"):
            extra.append(help_line)
    if extra:
        parts.append("(" + "; ".join(extra) + ")")
    return "- " + " ".join(parts)


def render_feedback(report: Findings, *, max_items: int = 12, include_warnings: bool = False
                    ) -> str:
    wanted = [d for d in report.diagnostics
              if d.severity is Severity.ERROR or (include_warnings
                                                  and d.severity is Severity.WARNING)]
    if not wanted:
        return "The plan passed all checks."
    lines = [f"The plan has {len(wanted)} problem{'s' if len(wanted) != 1 else ''}:"]
    shown: set[tuple[str, ...]] = set()
    lines.extend(feedback_line(d, shown) for d in wanted[:max_items])
    if len(wanted) > max_items:
        lines.append(f"- ... and {len(wanted) - max_items} more")
    return "\n".join(lines)
