"""Each output format is one streaming emitter (a :class:`ReportStream`, in the format's own
module), used two ways:

* ``plancheck check`` writes its report while the plans are being checked: a batch is checked
  one record at a time, each record's diagnostics are written as soon as they are known, and
  the record's source (its text, line index and positions) is then dropped, so memory stays
  flat in the size of the input. ``text``, ``concise``, ``github`` and ``jsonl`` write each
  diagnostic at once and keep only the counts of the summary line; ``sarif`` writes its header
  (the rules) first and each result at once, fixes included (the only part that needs the
  source); ``json`` puts its summary before the diagnostics, so each diagnostic is serialised
  at once into a temporary file and copied out after the summary.
* A whole document (:func:`render_document`, what :func:`~plancheck.render.registry.renderer`
  gives the API and the tests) is the same stream written into a buffer: each format is
  rendered by one piece of code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from plancheck.diagnostics.model import Diagnostic, Severity

if TYPE_CHECKING:
    from plancheck.diagnostics.positions import LineIndex, Positions
    from plancheck.render.registry import RenderContext

Write = Callable[[str], None]


class Tally:
    """What the summary line and the exit code need: counts, not diagnostics."""

    __slots__ = ("_file_count", "_files", "by_severity", "plans", "worst")

    def __init__(self) -> None:
        self.by_severity = dict.fromkeys(Severity, 0)
        self.plans = 0
        self._files: set[str] = set()
        self._file_count: int | None = None  # the files, when counted by the caller
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
        return len(self._files) if self._file_count is None else self._file_count

    @classmethod
    def of(cls, diagnostics: Sequence[Diagnostic], *, plans: int, files: int) -> Tally:
        """The counts of a whole run given at once (a :class:`RenderContext`'s)."""
        tally = cls()
        tally.add(diagnostics)
        tally.plans = plans
        tally._file_count = files
        return tally


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

    def flows(self, file: str, record: str | None, flows: list[dict[str, Any]]) -> None:
        """Every flow into the calls of one checked transcript, explicit and inferred (only
        ``json`` shows them; the diagnostics name the flows they are about)."""

    def finish(self, tally: Tally) -> None:
        """Written after the last report."""

    def plain(self, diagnostic: Diagnostic) -> str:
        raise NotImplementedError

    def line(self, text: str) -> None:
        self.write(text + "\n")


def render_document(stream_class: type[ReportStream], context: RenderContext) -> str:
    """A whole run's output in one format (without the last newline): the format's stream,
    given each diagnostic in the context's order with its source, written into a buffer."""
    pieces: list[str] = []
    stream = stream_class(pieces.append, quiet=context.quiet, colour=context.colour)
    sources = context.sources
    for diagnostic in context.diagnostics:
        if sources.has(diagnostic):
            stream.report([diagnostic], sources.lines(diagnostic.file or ""),
                          sources.positions(diagnostic))
        else:
            stream.loose([diagnostic])
    stream.finish(Tally.of(context.diagnostics, plans=context.plans, files=context.files))
    return "".join(pieces).removesuffix("\n")
