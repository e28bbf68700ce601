"""Resolves each step's references to the steps and outputs they name: what the dependency,
type and reachability rules read (``view.refs`` of a lowered step, ``view.producers`` of a
settled one). A step stays settled when every reference reads an output its earlier, known
producer makes; any other is lowered and resolved on its IR."""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.rule import Rule
from plancheck.checks.view import StepView
from plancheck.typecheck.names import clean_producer


class References(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("references", "references", ("PC205", "PC206", "PC207", "PC208"),
                         hooks=("clean", "lowered"))

    def clean(self, views: list[StepView], context: CheckContext) -> None:
        """Keeps those whose every reference reads an output its (earlier, known) producer
        makes (and notes the producers)."""
        facts = context.facts
        for view in views:
            reads = view.reads
            if not reads or not view.settled:
                continue
            position = view.position
            producers: list[int] = []
            for _, (number, key) in reads:
                producer = clean_producer(facts, position, number, key)
                if producer is None:
                    view.settled = False
                    break
                producers.append(producer)
            else:
                view.producers = producers

    def lowered(self, view: StepView, context: CheckContext) -> None:
        step = view.ir
        assert step is not None, "a step that is not settled has its IR"
        view.refs = context.resolver.resolve_references(step, context.findings)
