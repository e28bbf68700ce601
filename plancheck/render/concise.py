"""The concise renderer: one line per diagnostic, then the summary line.

    plans/flood.json:22:14: error[PC201] unknown tool `Depth_Speed_Model` in step 2

The ``file:line:col:`` prefix is the one editors and ``grep``-style tools jump to.
"""

from __future__ import annotations

from plancheck.diagnostics.model import Diagnostic, Severity
from plancheck.render.registry import RenderContext


def concise_line(diagnostic: Diagnostic) -> str:
    where = diagnostic.file or "<input>"
    span = diagnostic.span
    if span is not None and span.resolved:
        where += f":{span.start_line}:{span.start_col}"
    record = f" (record {diagnostic.record})" if diagnostic.record else ""
    from plancheck.render.text import printable

    return printable(f"{where}: {diagnostic.severity.label}[{diagnostic.code}] "
                     f"{diagnostic.message}{record}")


def render_concise(context: RenderContext) -> str:
    from plancheck.render.text import summary_line

    out = [] if context.quiet else [concise_line(d) for d in context.diagnostics]
    counts = {s: sum(1 for d in context.diagnostics if d.severity is s) for s in Severity}
    out.append(summary_line(counts[Severity.ERROR], counts[Severity.WARNING],
                            counts[Severity.INFO], context.plans, context.files))
    return "\n".join(out)
