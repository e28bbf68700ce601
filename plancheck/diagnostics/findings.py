"""Findings: what a checking phase reports, built into diagnostics only when asked.

Finding a problem is cheap; describing it (a message, labels with spans, data, suggestions,
"did you mean" guesses) costs several times more. The batch scorer needs only the codes of
what was found (static validity and per-code lint rates), so the phases report each finding
as its code and how to build its :class:`Diagnostic` (a function and its arguments), and the
diagnostic is built when someone asks for it (:meth:`Findings.diagnostics`). The public
phase functions still return built diagnostics, in the order they were found.

A builder must depend only on its arguments and on what does not change once the plan is
lowered (the IR, the toolset), so that building it later gives what building it at once
would have.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plancheck.diagnostics.model import Diagnostic

__all__ = ["Builder", "Findings", "given"]

Builder = Callable[..., Diagnostic]


def given(diagnostic: Diagnostic) -> Diagnostic:
    """The builder of a diagnostic that was built already (lowering reports built ones)."""
    return diagnostic


class Findings:
    """Findings in the order the pipeline reports them.

    A pass that runs several phases a step at a time (the fused checker) sets :attr:`phase`
    before each phase's checks; findings come out ordered by phase, and in the order they
    were reported within a phase, which is the order of the phases run one after the other.
    """

    __slots__ = ("_items", "phase")

    def __init__(self) -> None:
        self._items: list[tuple[int, str, Builder, tuple[Any, ...]]] = []
        self.phase = 0

    def report(self, code: str, build: Builder, *args: Any) -> None:
        """Record a finding of ``code``; ``build(*args)`` makes its diagnostic."""
        self._items.append((self.phase, code, build, args))

    def add(self, diagnostic: Diagnostic) -> None:
        """Record a diagnostic that is built already."""
        self._items.append((self.phase, diagnostic.code, given, (diagnostic,)))

    def extend(self, other: Findings) -> None:
        """Add another's findings (they keep their phases)."""
        self._items.extend(other._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def _ordered(self) -> list[tuple[int, str, Builder, tuple[Any, ...]]]:
        items = self._items
        if len(items) > 1:
            items.sort(key=_phase)  # stable: the order within a phase is kept
        return items

    def ordered(self) -> list[tuple[int, str, Builder, tuple[Any, ...]]]:
        """The findings in order, as recorded: ``(phase, code, build, args)``; the caller
        builds (and checks the code of) what it needs."""
        return self._ordered()

    def codes(self) -> list[str]:
        """The codes found, in order (repeats kept)."""
        return [code for _, code, _, _ in self._ordered()]

    def diagnostics(self) -> list[Diagnostic]:
        """Build every finding's diagnostic, in order."""
        built = []
        for _, code, build, args in self._ordered():
            diagnostic = build(*args)
            if diagnostic.code != code:  # a builder that disagrees with its finding is a bug
                raise AssertionError(f"{build.__name__} built {diagnostic.code}, not {code}")
            built.append(diagnostic)
        return built


def _phase(item: tuple[int, str, Builder, tuple[Any, ...]]) -> int:
    return item[0]
