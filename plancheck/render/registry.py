"""The output formats: a registry from format name to its one streaming emitter (a
:class:`~plancheck.render.stream.ReportStream`), and what renderers are given.

A renderer is ``render(context) -> str``: the whole output, ready to print or write to a file,
which is the format's stream written into a buffer. The registry names modules rather than
importing them, so that ``plancheck --help`` and a clean run of the text format never import the
SARIF or JSON code.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plancheck.diagnostics.model import Diagnostic
    from plancheck.diagnostics.positions import LineIndex, Positions
    from plancheck.formats.plugins import Choices
    from plancheck.render.stream import ReportStream

# name -> ("module:ReportStream subclass", one-line description)
FORMATS: dict[str, tuple[str, str]] = {
    "text": ("plancheck.render.text:TextStream",
             "rustc-style text with source excerpts (colour only on a terminal)"),
    "concise": ("plancheck.render.concise:ConciseStream",
                "one line per diagnostic: file:line:col: severity[CODE] message"),
    "json": ("plancheck.render.json_report:JsonStream",
             "one JSON document with a summary and every diagnostic"),
    "jsonl": ("plancheck.render.jsonl:JsonlStream",
              "one JSON object per diagnostic, one per line"),
    "sarif": ("plancheck.render.sarif:SarifStream",
              "SARIF 2.1.0 (GitHub code scanning and other SARIF viewers)"),
    "github": ("plancheck.render.github:GithubStream",
               "GitHub Actions workflow commands (annotations on the pull request)"),
}


class Sources:
    """Where diagnostics point: the text and positions of each checked plan, by file and
    record (the renderers' only view of the checked inputs, as ruff's renderers take a file
    resolver). A diagnostic with no source here (a toolset or configuration problem, say) is
    rendered without an excerpt."""

    __slots__ = ("_lines", "_positions")

    def __init__(self) -> None:
        self._lines: dict[str, LineIndex] = {}
        self._positions: dict[tuple[str | None, str | None], Positions | None] = {}

    def add(self, file: str, record: str | None, lines: LineIndex | None,
            positions: Positions | None) -> None:
        if lines is not None:
            self._lines.setdefault(file, lines)
        self._positions[(file, record)] = positions

    def lines(self, file: str) -> LineIndex | None:
        return self._lines.get(file)

    def has(self, diagnostic: Diagnostic) -> bool:
        """Whether the diagnostic belongs to a checked plan."""
        return (diagnostic.file, diagnostic.record) in self._positions

    def positions(self, diagnostic: Diagnostic) -> Positions | None:
        return self._positions.get((diagnostic.file, diagnostic.record))


class RenderContext:
    """Everything a renderer may need about one run of ``plancheck check``.

    (A plain class rather than a dataclass: building a dataclass costs start-up time on every
    run, and this is built on every run.)
    """

    __slots__ = ("colour", "diagnostics", "files", "plans", "quiet", "sources")

    def __init__(self, diagnostics: Sequence[Diagnostic], sources: Sources | None = None, *,
                 files: int = 0, plans: int = 0, colour: bool = False,
                 quiet: bool = False) -> None:
        self.diagnostics = diagnostics  # everything to report, in output order
        self.sources = sources or Sources()
        self.files = files
        self.plans = plans
        self.colour = colour
        self.quiet = quiet


Renderer = Callable[[RenderContext], str]


def plugin_formats() -> dict[str, type[ReportStream]]:
    """The plugins' output formats (entry-point group ``plancheck.output_formats``: each a
    :class:`~plancheck.render.stream.ReportStream` subclass, named by its entry point), loaded
    on first use; a built-in name is not taken."""
    from plancheck.formats.plugins import PluginError, load
    from plancheck.render.stream import ReportStream

    found = {}
    for name, stream in load("plancheck.output_formats", type):
        if not issubclass(stream, ReportStream):
            raise PluginError(f"plugin `{name}` of plancheck.output_formats is no ReportStream")
        if name not in FORMATS:
            found[name] = stream
    return found


def format_choices() -> Choices:
    """The names ``--format`` takes: the registry's, then the plugins' (looked up only when a
    name is not built in)."""
    from plancheck.formats.plugins import Choices

    return Choices(FORMATS, plugin_formats)


def stream_class(name: str) -> type[ReportStream]:
    """The streaming emitter of a format; KeyError for an unknown name."""
    if name not in FORMATS:
        return plugin_formats()[name]
    module_name, class_name = FORMATS[name][0].split(":")
    found: type[ReportStream] = getattr(importlib.import_module(module_name), class_name)
    return found


def renderer(name: str) -> Renderer:
    """The whole-document renderer of a format (its stream into a buffer); KeyError for an
    unknown name."""
    from plancheck.render.stream import render_document

    stream = stream_class(name)
    return lambda context: render_document(stream, context)
