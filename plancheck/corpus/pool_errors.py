"""The error a tool pool that cannot be loaded raises, apart from the loaders, so that every
loader (DSL, release directory, foreign formats) can raise it without importing the entry
point that dispatches to them."""

from __future__ import annotations

from plancheck.diagnostics.model import Diagnostic

__all__ = ["ToolsetError"]


class ToolsetError(Exception):
    """The toolset could not be loaded at all; carries the diagnostics that say why."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics
