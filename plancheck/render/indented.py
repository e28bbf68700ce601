"""JSON indented by two spaces, the text ``json.dumps(value, indent=2, ensure_ascii=False)``
writes, at C speed for a long report.

json indents in pure Python (its C encoder writes compact text only): 150 us for one of the
10,000 diagnostics of a 10,000-step plan, 1.5 s of its ``--format json`` report. A long
report's items are written compact by json's C encoder and indented by msgspec's C formatter,
which moves whitespace only and copies every string and number as written, so the text is the
same. What msgspec cannot format (a lone surrogate, NaN) is indented by json as before. A
short report never imports msgspec (30-50 ms, more than it would save).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["MANY", "dumps_indented"]

MANY = 200  # items of a report after which msgspec indents the rest

_formatters: list[tuple[Callable[..., str], tuple[type[Exception], ...]]] = []


def dumps_indented(value: Any, *, many: bool = False) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``; ``many``: the report is long
    enough to pay for msgspec's import."""
    if not many:
        return json.dumps(value, indent=2, ensure_ascii=False)
    if not _formatters:
        import msgspec

        _formatters.append((msgspec.json.format, (msgspec.DecodeError, UnicodeError)))
    format_json, refused = _formatters[0]
    compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        return format_json(compact, indent=2)
    except refused:  # (NaN, Infinity or a lone surrogate: json's own indenting writes them)
        return json.dumps(value, indent=2, ensure_ascii=False)
