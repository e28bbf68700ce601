"""The format tables of ``docs/ecosystem.md`` follow the registries (issue 35: the table was
kept by hand and lacked Gemini): every registered pool format and call shape has a row,
named as the registry names it, and no row names something the registries lack."""

from __future__ import annotations

import re
from pathlib import Path

from plancheck.corpus.pool_registry import POOL_FORMATS
from plancheck.formats.shapes import CALL_SHAPES

PAGE = Path(__file__).resolve().parents[2] / "docs" / "ecosystem.md"


def _rows(header: str) -> set[str]:
    """The names (in backticks, first cell) of the rows of the table under ``header``."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    start = lines.index(header)
    names = set()
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        found = re.match(r"\| `([a-z0-9-]+)`", line)
        assert found, line
        names.add(found[1])
    return names


def test_every_pool_format_has_a_row() -> None:
    assert _rows("| format | shape |") == {f.name for f in POOL_FORMATS}


def test_every_call_shape_has_a_row() -> None:
    assert _rows("| call shape | a call is written | its result |") == set(CALL_SHAPES)
