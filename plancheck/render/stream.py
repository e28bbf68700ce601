"""Write ``plancheck check``'s report while the plans are being checked.

A batch is checked one record at a time, and each record's diagnostics are written as soon as
they are known; the record's source (its text, line index and positions) is then dropped. So
memory stays flat in the size of the input, whatever the format:

* ``text``, ``concise``, ``github`` and ``jsonl`` write each diagnostic at once and keep only
  the counts of the summary line;
* ``sarif`` writes its header (the rules) first and each result at once, fixes included (the
  only part that needs the source);
* ``json`` puts its summary before the diagnostics, so each diagnostic is serialised at once
  into a temporary file and copied out after the summary; only the summary's counts (and the
  set of records with errors) stay in memory.

The output is the same, byte for byte, as that of the renderers of :mod:`~plancheck.render.
registry` over the whole run (``tests/cli/test_check_streaming.py`` compares them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING

from plancheck.diagnostics.model import Diagnostic, Severity
from plancheck.diagnostics.serialize import diagnostic_to_dict

if TYPE_CHECKING:
    from plancheck.diagnostics.positions import LineIndex, Positions

Write = Callable[[str], None]


class Tally:
    """What the summary line and the exit code need: counts, not diagnostics."""

    __slots__ = ("_files", "by_severity", "plans", "worst")

    def __init__(self) -> None:
        self.by_severity = dict.fromkeys(Severity, 0)
        self.plans = 0
        self._files: set[str] = set()
        self.worst: Severity | None = None

    def add(self, diagnostics: Sequence[Diagnostic]) -> None:
        for diagnostic in diagnostics:
            self.by_severity[diagnostic.severity] += 1
            if self.worst is None or diagnostic.severity > self.worst:
                self.worst = diagnostic.severity

    def add_plan(self, file: str, has_plan: bool) -> None:
        self._files.add(file)
        self.plans += has_plan

    @property
    def files(self) -> int:
        return len(self._files)

    def summary(self) -> str:
        from plancheck.render.text import summary_line

        return summary_line(self.by_severity[Severity.ERROR], self.by_severity[Severity.WARNING],
                            self.by_severity[Severity.INFO], self.plans, self.files)


class ReportStream:
    """One format's writer: diagnostics without a source first (``loose``), then each checked
    plan's (``report``), then ``finish``."""

    def __init__(self, write: Write, *, quiet: bool = False, colour: bool = False) -> None:
        self.write = write
        self.quiet = quiet
        self.colour = colour

    def loose(self, diagnostics: Sequence[Diagnostic]) -> None:
        """Diagnostics tied to no checked plan (the toolset's): no excerpt."""
        for diagnostic in diagnostics:
            self.line(self.plain(diagnostic))

    def report(self, diagnostics: Sequence[Diagnostic], lines: LineIndex | None,
               positions: Positions | None) -> None:
        for diagnostic in diagnostics:
            self.line(self.plain(diagnostic))

    def finish(self, tally: Tally) -> None:
        """Written after the last report."""

    def plain(self, diagnostic: Diagnostic) -> str:
        raise NotImplementedError

    def line(self, text: str) -> None:
        self.write(text + "\n")


class TextStream(ReportStream):
    def loose(self, diagnostics: Sequence[Diagnostic]) -> None:
        if not self.quiet:
            super().loose(diagnostics)

    def plain(self, diagnostic: Diagnostic) -> str:
        from plancheck.render.text import plain_line

        return plain_line(diagnostic)

    def report(self, diagnostics: Sequence[Diagnostic], lines: LineIndex | None,
               positions: Positions | None) -> None:
        if self.quiet or not diagnostics:
            return
        from plancheck.render.text import TextRenderer

        text = TextRenderer(colour=self.colour, lines_for=lambda _file: lines)
        for diagnostic in diagnostics:
            self.line(text.render(diagnostic))
            self.line("")

    def finish(self, tally: Tally) -> None:
        self.line(tally.summary())


class ConciseStream(ReportStream):
    def loose(self, diagnostics: Sequence[Diagnostic]) -> None:
        if not self.quiet:
            super().loose(diagnostics)

    def report(self, diagnostics: Sequence[Diagnostic], lines: LineIndex | None,
               positions: Positions | None) -> None:
        if not self.quiet:
            super().report(diagnostics, lines, positions)

    def plain(self, diagnostic: Diagnostic) -> str:
        from plancheck.render.concise import concise_line

        return concise_line(diagnostic)

    def finish(self, tally: Tally) -> None:
        self.line(tally.summary())


class GithubStream(ReportStream):
    def plain(self, diagnostic: Diagnostic) -> str:
        from plancheck.render.github import github_command

        return github_command(diagnostic)


class JsonlStream(ReportStream):
    def plain(self, diagnostic: Diagnostic) -> str:
        return json.dumps(diagnostic_to_dict(diagnostic), ensure_ascii=False)


_ITEM_INDENT = "    "  # a diagnostic's depth in the json document: 2 levels of indent=2


class JsonStream(ReportStream):
    """The ``json`` document: its diagnostics spooled to a temporary file until the summary
    (which comes first in the document) is known."""

    def __init__(self, write: Write, *, quiet: bool = False, colour: bool = False) -> None:
        import tempfile

        from plancheck.render.json_report import SummaryCounts

        super().__init__(write, quiet=quiet, colour=colour)
        self.counts = SummaryCounts()
        # Closed by finish (and by the interpreter if the run is interrupted).
        self._spool: IO[str] = tempfile.TemporaryFile(  # noqa: SIM115
            "w+", encoding="utf-8", errors="surrogatepass")
        self._items = 0

    def report(self, diagnostics: Sequence[Diagnostic], lines: LineIndex | None,
               positions: Positions | None) -> None:
        for diagnostic in diagnostics:
            self.counts.add(diagnostic)
            item = json.dumps(diagnostic_to_dict(diagnostic), indent=2, ensure_ascii=False)
            self._spool.write((",\n" if self._items else "") + _ITEM_INDENT
                              + item.replace("\n", "\n" + _ITEM_INDENT))
            self._items += 1

    def loose(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.report(diagnostics, None, None)

    def finish(self, tally: Tally) -> None:
        from plancheck.render.json_report import json_document

        document = json_document(self.counts.to_dict(files=tally.files, plans=tally.plans), [])
        if not self._items:
            self.line(document)
            return
        head, tail = document.rsplit("[]", 1)  # the diagnostics are the document's last member
        self.write(head + "[\n")
        self._spool.seek(0)
        while chunk := self._spool.read(1 << 20):
            self.write(chunk)
        self._spool.close()
        self.line("\n  ]" + tail)


class SarifStream(ReportStream):
    """The SARIF log: the results are the last member of its one run, so everything before
    them is written first and each result as soon as it is known."""

    _INDENT = " " * 8  # a result's depth: log > runs > run > results

    def __init__(self, write: Write, *, quiet: bool = False, colour: bool = False) -> None:
        from pathlib import Path

        from plancheck.diagnostics.codes import CODES
        from plancheck.render.sarif import sarif_document

        super().__init__(write, quiet=quiet, colour=colour)
        self.root = Path.cwd().resolve()
        self.rule_index = {code: index for index, code in enumerate(CODES)}
        self._head, self._tail = sarif_document(self.root, []).rsplit('"results": []', 1)
        self._items = 0

    def report(self, diagnostics: Sequence[Diagnostic], lines: LineIndex | None,
               positions: Positions | None) -> None:
        from plancheck.render.registry import RenderContext, Sources
        from plancheck.render.sarif import sarif_result

        sources = Sources()  # this plan's alone: what its fixes map onto
        for diagnostic in diagnostics:
            if diagnostic.file is not None:
                sources.add(diagnostic.file, diagnostic.record, lines, positions)
        context = RenderContext(diagnostics, sources)
        for diagnostic in diagnostics:
            result = json.dumps(sarif_result(diagnostic, context, self.rule_index[diagnostic.code],
                                             self.root), indent=2, ensure_ascii=False)
            self.write((",\n" if self._items else self._head + '"results": [\n')
                       + self._INDENT + result.replace("\n", "\n" + self._INDENT))
            self._items += 1

    def loose(self, diagnostics: Sequence[Diagnostic]) -> None:
        # Diagnostics without a source get no fixes: an empty source for each.
        for diagnostic in diagnostics:
            self.report([diagnostic], None, None)

    def finish(self, tally: Tally) -> None:
        if self._items:
            self.line("\n      ]" + self._tail)
        else:
            self.line(self._head + '"results": []' + self._tail)


STREAMS: dict[str, type[ReportStream]] = {
    "text": TextStream,
    "concise": ConciseStream,
    "json": JsonStream,
    "jsonl": JsonlStream,
    "sarif": SarifStream,
    "github": GithubStream,
}
