"""Step numbers held against positions, once, before the first step: every step's number is
known from the facts of the plan by then. One finding a plan (renumbering fixes every step),
a number used twice before a step out of place."""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.rule import Rule
from plancheck.typecheck.names import check_numbering


class Numbering(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("numbering", "numbering", ("PC109", "PC110"), hooks=("start",))

    def start(self, context: CheckContext) -> None:
        check_numbering(context.facts, context.findings)
