"""The problems of an unusable configuration file, printed as diagnostics with excerpts.

Its own module: the command dispatcher (``plancheck.cli``) prints them before any command
runs, and everything else in ``cli/`` imports the dispatcher."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plancheck.config import ConfigError


def print_config_error(error: ConfigError, outcome: str) -> None:
    """The problems of an unusable configuration file, with excerpts of it, and ``outcome``
    (what was therefore not done)."""
    from plancheck.diagnostics.positions import LineIndex
    from plancheck.render.text import TextRenderer, use_colour

    source = LineIndex(error.text)
    text = TextRenderer(colour=use_colour(sys.stderr), lines_for=lambda _file: source)
    for diagnostic in error.diagnostics:
        print(text.render(diagnostic), file=sys.stderr)
    print(f"plancheck: the configuration is invalid; {outcome}", file=sys.stderr)
