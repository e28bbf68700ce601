"""Turn the JSON pointers of unresolved spans into lines and columns, lazily.

The fast path parses a plan with ``json.loads`` and records no positions. Only when a diagnostic
is about to be shown does the driver ask a :class:`Positions` object for the span of a pointer;
the first such request computes a source map of the JSON text (json-source-map) and every later
one is a dictionary lookup.
"""

from __future__ import annotations

import bisect
from typing import Any

from plancheck.diagnostics.span import Span


class LineIndex:
    """Offset <-> (line, column) for one text; both 1-based.

    ``first_line`` is the line number of the text's first line in its file: a record of a JSONL
    batch read on its own (so that the batch's text need not be held) still reports the
    batch's line numbers. Offsets stay relative to ``text``."""

    __slots__ = ("_first", "_starts", "text")

    def __init__(self, text: str, first_line: int = 1) -> None:
        self.text = text
        self._first = first_line - 1
        starts = [0]
        index = text.find("\n")
        while index != -1:
            starts.append(index + 1)
            index = text.find("\n", index + 1)
        self._starts = starts

    def position(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._starts, offset) - 1
        return line + 1 + self._first, offset - self._starts[line] + 1

    def line_text(self, line: int) -> str:
        start, end = self.line_bounds(line)
        return self.text[start:end]

    def line_bounds(self, line: int) -> tuple[int, int]:
        """Where a line starts and ends (without its line break), in constant time: a renderer
        shows a window of a long line (a JSONL record) without copying all of it."""
        line -= self._first
        if line < 1 or line > len(self._starts):
            return 0, 0
        start = self._starts[line - 1]
        end = self._starts[line] - 1 if line < len(self._starts) else len(self.text)
        while end > start and self.text[end - 1] == "\r":
            end -= 1
        return start, end

    @property
    def line_count(self) -> int:
        return len(self._starts)


class Positions:
    """Resolves the spans of one plan against the file it came from.

    * ``json_region``: where, in the file, the JSON text that was parsed *verbatim* lies; the
      plan's pointers are relative to that JSON document, below ``prefix``.
    * ``text_offset``: where the text handed to the raw-completion extractor starts in the file
      (``None`` when that text is not a verbatim part of the file, e.g. a JSON-escaped string),
      so that the extractor's offset-only spans can be placed.
    * ``fallback``: the file region every other span resolves to.
    """

    def __init__(
        self,
        file: str,
        lines: LineIndex,
        *,
        json_region: tuple[int, int] | None = None,
        prefix: str = "",
        text_offset: int | None = 0,
        fallback: tuple[int, int] | None = None,
    ) -> None:
        self.file = file
        self.lines = lines
        self.json_region = json_region
        self.prefix = prefix
        self.text_offset = text_offset
        self.fallback = fallback or json_region or (0, len(lines.text))
        self._map: dict[str, Any] | None = None
        self._lookups = 0

    def _source_map(self) -> dict[str, Any]:
        if self._map is None:
            self._map = {}
            if self.json_region is not None:
                from plancheck.diagnostics.source_map import source_map

                start, end = self.json_region
                text = self.lines.text[start:end]
                try:
                    # json-source-map's map, five times faster (tests compare the two).
                    self._map = source_map(text)
                except ValueError:
                    self._map = _library_map(text)
        return self._map

    def _looked_up(self, relative: str) -> tuple[int, int, int | None, int | None] | None:
        """The offsets of one pointer in a large document, found without its whole map (which
        costs seconds and gigabytes there) while few are asked for; None: ask the map."""
        assert self.json_region is not None
        start, end = self.json_region
        if end - start < _LARGE or self._lookups >= _FEW:
            return None
        self._lookups += 1
        text = self.lines.text[start:end]
        if not relative:  # the whole value: no walk at all
            first = len(text) - len(text.lstrip(_JSON_SPACE))
            return first, max(first, len(text.rstrip(_JSON_SPACE))), None, None
        from plancheck.diagnostics.source_map import lookup

        return lookup(text, relative)

    def _entry(self, relative: str) -> tuple[int, int, int | None, int | None] | None:
        """The offsets (in the region) of the value at ``relative``, keyed as the map is."""
        entry = self._looked_up(relative) if self._map is None else None
        return entry if entry is not None else self._source_map().get(relative)

    def value_offsets(self, pointer: str) -> tuple[int, int] | None:
        """Where in the file the value at ``pointer`` lies, exactly: None when the text holds
        no value there (no walk up to a parent)."""
        if self.json_region is None or not pointer.startswith(self.prefix):
            return None
        entry = self._entry(_map_key(pointer[len(self.prefix):]))
        if entry is None:
            return None
        base = self.json_region[0]
        return base + entry[0], base + entry[1]

    def pointer_offsets(self, pointer: str, on_key: bool = False) -> tuple[int, int] | None:
        if self.json_region is None or not pointer.startswith(self.prefix):
            return None
        relative = _map_key(pointer[len(self.prefix):])
        entry = self._entry(relative)
        # Walk up to the nearest pointer that exists (a deleted or missing member).
        while entry is None and relative:
            relative = relative.rsplit("/", 1)[0]
            on_key = False
            entry = self._entry(relative)
        if entry is None:
            return None
        value_start, value_end, key_start, key_end = entry
        if on_key and key_start is not None and key_end is not None:
            begin, finish = key_start, key_end
        else:
            begin, finish = value_start, value_end
        base = self.json_region[0]
        return base + begin, base + finish

    def resolve(self, span: Span) -> Span:
        if span.resolved:
            return span
        found: tuple[int, int] | None = None
        if span.pointer is not None:
            found = self.pointer_offsets(span.pointer, span.on_key)
        elif span.start_offset >= 0 and self.text_offset is not None:
            found = (self.text_offset + span.start_offset, self.text_offset + span.end_offset)
        begin, finish = found if found is not None else self.fallback
        start_line, start_col = self.lines.position(begin)
        end_line, end_col = self.lines.position(finish)
        return span._replace(
            file=self.file,
            start_line=start_line,
            start_col=start_col,
            end_line=end_line,
            end_col=end_col,
            start_offset=begin,
            end_offset=finish,
        )


_JSON_SPACE = " \t\n\r"


def _map_key(relative: str) -> str:
    """A pointer (below the prefix) as the source map keys it: json-source-map joins the raw
    member names with "/", unescaped."""
    return relative.replace("~1", "/").replace("~0", "~")


# A document this large is mapped whole only when more than a few of its pointers are asked for.
_LARGE = 1 << 20
_FEW = 8


def _library_map(text: str) -> dict[str, Any]:
    """json-source-map's map as offsets, for a text the fast scanner refused."""
    import json_source_map

    try:
        entries = json_source_map.calculate(text)
    except Exception:  # any failure only costs precision
        return {}
    return {pointer: (e.value_start.position, e.value_end.position,
                      e.key_start.position if e.key_start is not None else None,
                      e.key_end.position if e.key_end is not None else None)
            for pointer, e in entries.items()}
