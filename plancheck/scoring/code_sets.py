"""The codes that are off by default, and the error codes: what the scorer keeps of a static
check and what makes a prediction statically invalid, read from the registry as it is when
asked. The sets are rebuilt when a code was registered since (a rule module's own, a
plugin's), so that what scoring keeps never depends on which modules were imported first."""

from __future__ import annotations

from typing import Final

from plancheck.diagnostics.codes import CODES
from plancheck.diagnostics.severity import Severity

__all__ = ["CODE_SETS", "CodeSets"]


class CodeSets:
    """:attr:`off` (off by default) and :attr:`errors`, as of the last :meth:`now`."""

    __slots__ = ("errors", "off", "seen")

    def __init__(self) -> None:
        self.seen = -1
        self.off: frozenset[str] = frozenset()
        self.errors: frozenset[str] = frozenset()

    def now(self) -> CodeSets:
        if self.seen != len(CODES):  # the registry only grows
            self.off = frozenset(c for c, info in CODES.items() if not info.default_enabled)
            self.errors = frozenset(c for c, info in CODES.items()
                                    if info.severity is Severity.ERROR)
            self.seen = len(CODES)
        return self


CODE_SETS: Final = CodeSets()
