"""The output formats: a registry from format name to renderer, and what renderers are given.

A renderer is ``render(context) -> str``: the whole output, ready to print or write to a file.
The registry names modules rather than importing them, so that ``plancheck --help`` and a clean
run of the text format never import the SARIF or JSON code.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plancheck.compiler.driver import Report
    from plancheck.diagnostics.model import Diagnostic

# name -> ("module:function", one-line description)
FORMATS: dict[str, tuple[str, str]] = {
    "text": ("plancheck.render.registry:render_text",
             "rustc-style text with source excerpts (colour only on a terminal)"),
    "concise": ("plancheck.render.concise:render_concise",
                "one line per diagnostic: file:line:col: severity[CODE] message"),
    "json": ("plancheck.render.registry:render_json_document",
             "one JSON document with a summary and every diagnostic"),
    "jsonl": ("plancheck.render.jsonl:render_jsonl",
              "one JSON object per diagnostic, one per line"),
    "sarif": ("plancheck.render.sarif:render_sarif",
              "SARIF 2.1.0 (GitHub code scanning and other SARIF viewers)"),
    "github": ("plancheck.render.github:render_github",
               "GitHub Actions workflow commands (annotations on the pull request)"),
}


class RenderContext:
    """Everything a renderer may need about one run of ``plancheck check``.

    (A plain class rather than a dataclass: building a dataclass costs start-up time on every
    run, and this is built on every run.)
    """

    __slots__ = ("_report_of", "colour", "diagnostics", "files", "plans", "quiet", "reports")

    def __init__(self, diagnostics: Sequence[Diagnostic], reports: Sequence[Report] = (), *,
                 files: int = 0, plans: int = 0, colour: bool = False,
                 quiet: bool = False) -> None:
        self.diagnostics = diagnostics  # everything to report, in output order
        self.reports = reports  # where the diagnostics came from (source text, positions)
        self.files = files
        self.plans = plans
        self.colour = colour
        self.quiet = quiet
        self._report_of: dict[int, Report] | None = None

    def report_of(self, diagnostic: Diagnostic) -> Report | None:
        """The report a diagnostic belongs to (None for toolset and configuration problems)."""
        if self._report_of is None:
            self._report_of = {id(item): report for report in self.reports
                               for item in report.diagnostics}
        return self._report_of.get(id(diagnostic))


Renderer = Callable[[RenderContext], str]


def renderer(name: str) -> Renderer:
    """The renderer of a format; KeyError for an unknown name."""
    module_name, function = FORMATS[name][0].split(":")
    found: Renderer = getattr(importlib.import_module(module_name), function)
    return found


# --------------------------------------------------------------------------- the first two
# (adapters over the renderers that predate this registry)


def render_text(context: RenderContext) -> str:
    from plancheck.diagnostics.severity import Severity
    from plancheck.render.text import TextRenderer, summary_line

    lines = {r.file: r.lines for r in context.reports if r.lines is not None}
    text = TextRenderer(colour=context.colour, lines_for=lines.get)
    out: list[str] = []
    if not context.quiet:
        for diagnostic in context.diagnostics:
            out.append(text.render(diagnostic) if context.report_of(diagnostic) is not None
                       else plain_line(diagnostic))
            if context.report_of(diagnostic) is not None:
                out.append("")
    counts = {s: sum(1 for d in context.diagnostics if d.severity is s) for s in Severity}
    out.append(summary_line(counts[Severity.ERROR], counts[Severity.WARNING],
                            counts[Severity.INFO], context.plans, context.files))
    return "\n".join(out)


def render_json_document(context: RenderContext) -> str:
    from plancheck.render.json_report import render_json

    return render_json(list(context.diagnostics), files=context.files, plans=context.plans)


def plain_line(diagnostic: Diagnostic) -> str:
    """A diagnostic that has no source excerpt (a toolset or configuration problem)."""
    where = f"{diagnostic.file}: " if diagnostic.file else ""
    return f"{where}{diagnostic.severity.label}[{diagnostic.code}]: {diagnostic.message}"
