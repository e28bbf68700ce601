"""The JSON renderer: one document with a schema version, a summary and every diagnostic."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from plancheck import __version__
from plancheck.diagnostics.model import Diagnostic, Severity
from plancheck.diagnostics.serialize import diagnostic_to_dict
from plancheck.render.indented import MANY, dumps_indented
from plancheck.render.registry import RenderContext
from plancheck.render.stream import ReportStream, Tally, Write, render_document

if TYPE_CHECKING:
    from plancheck.diagnostics.positions import LineIndex, Positions

SCHEMA_VERSION = 1


class SummaryCounts:
    """The summary's counts, added to one diagnostic at a time (a streamed run keeps these, not
    the diagnostics)."""

    __slots__ = ("by_code", "by_severity", "with_errors")

    def __init__(self) -> None:
        self.by_severity: Counter[str] = Counter()
        self.by_code: Counter[str] = Counter()
        self.with_errors: set[tuple[str | None, str | None]] = set()

    def add(self, diagnostic: Diagnostic) -> None:
        self.by_severity[diagnostic.severity.label] += 1
        self.by_code[diagnostic.code] += 1
        if diagnostic.severity is Severity.ERROR:
            self.with_errors.add((diagnostic.file, diagnostic.record))

    def to_dict(self, *, files: int, plans: int) -> dict[str, Any]:
        return {
            "files": files,
            "plans": plans,
            "errors": self.by_severity.get("error", 0),
            "warnings": self.by_severity.get("warning", 0),
            "infos": self.by_severity.get("info", 0),
            "by_code": dict(sorted(self.by_code.items())),
            "plans_with_errors": len(self.with_errors),
        }


def json_document(summary: dict[str, Any], diagnostics: list[dict[str, Any]],
                  plans: list[dict[str, Any]] | None = None) -> str:
    """The document; ``plans``, when a transcript with tool results was checked: per plan,
    every flow into its calls (``{"file", "record", "flows": [...]}``)."""
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "plancheck", "version": __version__},
        "summary": summary,
    }
    if plans:
        document["plans"] = plans
    document["diagnostics"] = diagnostics  # the last member: JsonStream relies on it
    return json.dumps(document, indent=2, ensure_ascii=False)


def render_json(diagnostics: list[Diagnostic], *, files: int, plans: int) -> str:
    """The ``json`` document of diagnostics that have no source to show (a toolset's)."""
    return render_document(JsonStream, RenderContext(diagnostics, files=files, plans=plans))


_ITEM_INDENT = "    "  # a diagnostic's depth in the json document: 2 levels of indent=2


class JsonStream(ReportStream):
    """The ``json`` document: its diagnostics spooled to a temporary file until the summary
    (which comes first in the document) is known."""

    def __init__(self, write: Write, *, quiet: bool = False, colour: bool = False) -> None:
        import tempfile

        super().__init__(write, quiet=quiet, colour=colour)
        self.counts = SummaryCounts()
        # Closed by finish (and by the interpreter if the run is interrupted).
        self._spool: IO[str] = tempfile.TemporaryFile(  # noqa: SIM115
            "w+", encoding="utf-8", errors="surrogatepass")
        self._items = 0
        self._plans: list[dict[str, Any]] = []

    def flows(self, file: str, record: str | None, flows: list[dict[str, Any]]) -> None:
        self._plans.append({"file": file, "record": record, "flows": flows})

    def report(self, diagnostics: Sequence[Diagnostic], lines: LineIndex | None,
               positions: Positions | None) -> None:
        for diagnostic in diagnostics:
            self.counts.add(diagnostic)
            item = dumps_indented(diagnostic_to_dict(diagnostic), many=self._items >= MANY)
            self._spool.write((",\n" if self._items else "") + _ITEM_INDENT
                              + item.replace("\n", "\n" + _ITEM_INDENT))
            self._items += 1

    def loose(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.report(diagnostics, None, None)

    def finish(self, tally: Tally) -> None:
        document = json_document(self.counts.to_dict(files=tally.files, plans=tally.plans), [],
                                 self._plans)
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
