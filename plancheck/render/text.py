"""The human renderer: rustc-style text with source excerpts, carets and labels.

Colour is used only on a terminal, and never when ``NO_COLOR`` is set.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING

from plancheck.diagnostics.model import Diagnostic, Label, Severity
from plancheck.diagnostics.positions import LineIndex
from plancheck.render.stream import ReportStream, Tally

if TYPE_CHECKING:
    from plancheck.diagnostics.positions import Positions

_COLOURS = {
    Severity.ERROR: "\033[1;31m",
    Severity.WARNING: "\033[1;33m",
    Severity.INFO: "\033[1;36m",
}
_BOLD, _BLUE, _RESET = "\033[1m", "\033[1;34m", "\033[0m"
_MAX_EXCERPT_COLUMNS = 160
_CONTEXT_COLUMNS = 40  # shown before a label that lies beyond the first window


def use_colour(stream: IO[str]) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class TextRenderer:
    def __init__(self, colour: bool = False,
                 lines_for: Callable[[str], LineIndex | None] | None = None) -> None:
        self.colour = colour
        self.lines_for = lines_for or (lambda _file: None)

    def paint(self, text: str, style: str) -> str:
        return f"{style}{text}{_RESET}" if self.colour else text

    def render(self, diagnostic: Diagnostic) -> str:
        severity = diagnostic.severity
        head = self.paint(f"{severity.label}[{diagnostic.code}]", _COLOURS[severity])
        out = [f"{head}{self.paint(': ' + printable(diagnostic.message), _BOLD)}"]
        primary = diagnostic.primary
        location = printable(diagnostic.file or "<input>")
        if primary is not None and primary.span.resolved:
            location += f":{primary.span.start_line}:{primary.span.start_col}"
        if diagnostic.record:
            location += f" (record {diagnostic.record})"
        gutter_width = self._gutter_width(diagnostic)
        pad = " " * gutter_width
        out.append(f"{pad}{self.paint('-->', _BLUE)} {location}")
        excerpt = self._excerpt(diagnostic, gutter_width)
        if excerpt:
            out.append(f"{pad} {self.paint('|', _BLUE)}")
            out.extend(excerpt)
        footer = [("note", note) for note in diagnostic.notes]
        footer += [("help", line) for line in diagnostic.help]
        footer += [("fix", s.message) for s in diagnostic.suggestions
                   if s.machine_applicable and s.message not in diagnostic.help]
        if footer:
            out.append(f"{pad} {self.paint('|', _BLUE)}")
        for kind, text in footer:
            out.append(f"{pad} {self.paint('=', _BLUE)} {self.paint(kind, _BOLD)}: "
                       f"{printable(text)}")
        return "\n".join(out)

    def _gutter_width(self, diagnostic: Diagnostic) -> int:
        lines = [label.span.end_line for label in diagnostic.labels if label.span.resolved]
        return len(str(max(lines))) if lines else 1

    def _excerpt(self, diagnostic: Diagnostic, width: int) -> list[str]:
        index = self.lines_for(diagnostic.file or "")
        if index is None:
            return []
        labels = sorted(
            (label for label in diagnostic.labels
             if label.span.resolved and (label.span.file == diagnostic.file
                                         or not label.span.file)),
            key=lambda label: (label.span.start_line, not label.primary),
        )
        out: list[str] = []
        previous_line = None
        offset = 0
        display = ""
        for label in labels:
            line_no = label.span.start_line
            start, end = index.line_bounds(line_no)
            length = end - start
            if previous_line is not None and line_no > previous_line + 1:
                out.append(self.paint("...", _BLUE))
            if line_no != previous_line:
                # The first label of a line is its primary one, if any: the window follows it.
                offset = _window_start(length, max(label.span.start_col - 1, 0))
                shown = index.text[start + offset:min(end, start + offset + _MAX_EXCERPT_COLUMNS)]
                display = _clip(shown, offset, length)
                number = str(line_no).rjust(width)
                out.append(f"{self.paint(number + ' |', _BLUE)} "
                           f"{display.replace(chr(9), ' ' * _TAB_WIDTH).translate(_PICTURES)}")
            previous_line = line_no
            out.append(self._underline(label, length, width, diagnostic.severity, offset,
                                       display))
        return out

    def _underline(self, label: Label, length: int, width: int, severity: Severity,
                   offset: int = 0, display: str = "") -> str:
        span = label.span
        start = max(span.start_col - 1, 0)
        end = span.end_col - 1 if span.end_line == span.start_line else length
        end = max(end, start + 1)
        lead = 1 if offset else 0  # the "…" that stands for the columns scrolled away
        start, end = max(start - offset, 0) + lead, max(end - offset, 1) + lead
        last = _MAX_EXCERPT_COLUMNS + lead
        start, end = min(start, last), min(end, last + 1)
        end = max(end, start + 1)
        # Characters to terminal columns: a tab is shown as four spaces, a wide character
        # (CJK, most emoji) takes two columns and a combining mark none, so that the marks
        # stand under what they label, as the line above shows it.
        before = _columns(display[:start])
        under = _columns(display[start:end]) + max(0, end - max(start, len(display)))
        mark = ("^" if label.primary else "-") * max(under, 1)
        style = _COLOURS[severity] if label.primary else _BLUE
        message = f" {printable(label.message)}" if label.message else ""
        return (f"{' ' * width} {self.paint('|', _BLUE)} {' ' * before}"
                f"{self.paint(mark + message, style)}")


_TAB_WIDTH = 4
_CONTROLS = [*range(0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]  # not tab, newline
_ESCAPES = {code: f"\\x{code:02x}" for code in _CONTROLS}
# In an excerpt a control character keeps its one column (carets stand under what they mark):
# the Unicode "control picture" of it (␛ for ESC), or a replacement character.
_PICTURES = {code: chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"
             for code in _CONTROLS}


def printable(text: str) -> str:
    """``text`` with control characters escaped (ESC as ``\\x1b``): a name read from an input
    must not drive the terminal it is shown on."""
    return text.translate(_ESCAPES)


def _columns(text: str) -> int:
    """The terminal columns ``text`` takes as the excerpt shows it."""
    if text.isascii() and "\t" not in text:
        return len(text)  # (the common case)
    import unicodedata

    total = 0
    for character in text:
        if character == "\t":
            total += _TAB_WIDTH
        elif unicodedata.combining(character) or unicodedata.category(character) in (
                "Mn", "Me", "Cf"):
            continue
        elif unicodedata.east_asian_width(character) in ("W", "F"):
            total += 2
        else:
            total += 1
    return total


def _window_start(length: int, column: int) -> int:
    """The first column shown of a line of ``length`` columns, so that ``column`` (0-based) is
    in view with some context before it (a JSONL record is one long line; its error may be far
    to the right)."""
    if length <= _MAX_EXCERPT_COLUMNS or column < _MAX_EXCERPT_COLUMNS - _CONTEXT_COLUMNS:
        return 0
    return max(0, min(column - _CONTEXT_COLUMNS, length - _MAX_EXCERPT_COLUMNS))


def _clip(shown: str, offset: int, length: int) -> str:
    """The shown window of a line, with "…" where columns are left out."""
    return ("…" if offset else "") + shown + ("…" if offset + _MAX_EXCERPT_COLUMNS < length
                                              else "")


def counted(n: int, word: str) -> str:
    """``1 plan``, ``2 plans``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(errors: int, warnings: int, infos: int, plans: int, files: int,
                 *, checked: str | None = None) -> str:
    """The last line of a report; ``checked`` says what was checked when it was not plans in
    files (``1 toolset``)."""
    count = counted
    found = [count(errors, "error"), count(warnings, "warning")]
    if infos:
        found.append(count(infos, "note"))
    checked = checked or f"{count(plans, 'plan')} in {count(files, 'file')}"
    if not errors and not warnings and not infos:
        return f"All checks passed ({checked})."
    return f"Found {', '.join(found[:-1])} and {found[-1]} ({checked} checked)."


def plain_line(diagnostic: Diagnostic) -> str:
    """A diagnostic that has no source excerpt (a toolset or configuration problem)."""
    where = f"{diagnostic.file}: " if diagnostic.file else ""
    return printable(f"{where}{diagnostic.severity.label}[{diagnostic.code}]: "
                     f"{diagnostic.message}")


def tally_line(tally: Tally) -> str:
    """The summary line of a run's counts."""
    by_severity = tally.by_severity
    return summary_line(by_severity[Severity.ERROR], by_severity[Severity.WARNING],
                        by_severity[Severity.INFO], tally.plans, tally.files)


class TextStream(ReportStream):
    def loose(self, diagnostics: Sequence[Diagnostic]) -> None:
        if not self.quiet:
            super().loose(diagnostics)

    def plain(self, diagnostic: Diagnostic) -> str:
        return plain_line(diagnostic)

    def report(self, diagnostics: Sequence[Diagnostic], lines: LineIndex | None,
               positions: Positions | None) -> None:
        if self.quiet or not diagnostics:
            return
        text = TextRenderer(colour=self.colour, lines_for=lambda _file: lines)
        for diagnostic in diagnostics:
            self.line(text.render(diagnostic))
            self.line("")

    def finish(self, tally: Tally) -> None:
        self.line(tally_line(tally))
