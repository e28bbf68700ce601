"""The files and URLs the request gives as inputs, looked for among the plan's arguments (a
path matches by its last segments too)."""

from __future__ import annotations

from plancheck.checks.request import Request
from plancheck.checks.request_values import text_literals
from plancheck.checks.rule import Rule
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.ir.nodes import Plan, Toolset


class UnusedRequestInputs(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("unused request inputs", "request", ("PC902",), hooks=(),
                         option="request")

    def check_request(self, plan: Plan, toolset: Toolset, request: Request,
                      copied: frozenset[tuple[int, str]]) -> list[Diagnostic]:
        inputs = request.inputs
        if not inputs or not plan.steps:
            return []
        passed = [literal.value.lower() for literal in text_literals(plan, toolset)]
        found: list[Diagnostic] = []
        for mention in inputs:
            text = mention.text.lower()
            # Passed as written, inside a longer value, or by its file name alone.
            if any(text in value or (value and value in text and _is_tail(value, text))
                   for value in passed):
                continue
            found.append(make(
                "PC902", f"the request gives `{mention.text}`, which no call uses",
                primary=plan.span, label="no call passes it",
                help=("a step that reads it may be missing, or another value passed where "
                      "it belongs",),
                data={"input": mention.text}))
        return found


def _is_tail(value: str, text: str) -> bool:
    """Whether ``value`` names the same file as ``text`` by its last path segments."""
    return text.endswith(value) and (len(value) == len(text) or text[-len(value) - 1] in "/\\")
