"""The concise renderer: one line per diagnostic, then the summary line.

    plans/flood.json:22:14: error[PC201] unknown tool `Depth_Speed_Model` in step 2

The ``file:line:col:`` prefix is the one editors and ``grep``-style tools jump to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from plancheck.diagnostics.model import Diagnostic
from plancheck.render.stream import ReportStream, Tally
from plancheck.render.text import tally_line

if TYPE_CHECKING:
    from plancheck.diagnostics.positions import LineIndex, Positions


def concise_line(diagnostic: Diagnostic) -> str:
    where = diagnostic.file or "<input>"
    span = diagnostic.span
    if span is not None and span.resolved:
        where += f":{span.start_line}:{span.start_col}"
    record = f" (record {diagnostic.record})" if diagnostic.record else ""
    from plancheck.render.text import printable

    return printable(f"{where}: {diagnostic.severity.label}[{diagnostic.code}] "
                     f"{diagnostic.message}{record}")


class ConciseStream(ReportStream):
    def loose(self, diagnostics: Sequence[Diagnostic]) -> None:
        if not self.quiet:
            super().loose(diagnostics)

    def report(self, diagnostics: Sequence[Diagnostic], lines: LineIndex | None,
               positions: Positions | None) -> None:
        if not self.quiet:
            super().report(diagnostics, lines, positions)

    def plain(self, diagnostic: Diagnostic) -> str:
        return concise_line(diagnostic)

    def finish(self, tally: Tally) -> None:
        self.line(tally_line(tally))
