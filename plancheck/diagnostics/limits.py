"""How many steps, arguments and tools one input may hold, and the ``PC006`` past them.

``--max-size`` bounds the bytes of a file; these bound what the bytes describe. Within 16M a
plan can hold a million tiny steps (``[{"tool": "a"}, ...]``), one step a million arguments,
a pool a million tools: each costs the checker kilobytes of IR and diagnostics, so such an
input would take gigabytes and minutes where a real plan (tens of steps) takes milliseconds.
Past a limit the input is refused before it is lowered, as an input over the size limit is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span

# Real plans and trajectories hold tens of calls and tools tens of parameters; these are two
# orders of magnitude above the largest real input seen, and low enough that the largest
# accepted input is checked in seconds and a few hundred megabytes.
MAX_STEPS = 10_000
MAX_FIELDS = 200_000
MAX_TOOLS = 10_000
MAX_PARAMETERS = 200_000
# Real policies hold tens of rules; each costs the parser about 2.5 KB and the checks more
# (300,000 rules in 15.6 MB took 3.5 GB and 72 s; 10,000 take 50 MB and under a second).
MAX_RULES = 10_000


def may_be_close(name: str, candidates: Iterable[str], cutoff: float = 0.6) -> bool:
    """Whether ``difflib`` could find a candidate within ``cutoff`` of ``name`` (its ratio is
    at most ``2 * min(len) / sum(len)``). A name far longer than every candidate cannot be
    close, and difflib would index all of it before finding so: a 15 MB tool name took 700 MB
    and 7 s of "did you mean" (issue 33)."""
    longest = max((len(c) for c in candidates), default=0)
    return len(name) <= longest or 2 * longest >= cutoff * (len(name) + longest)


class TooManyFields(Exception):
    """Raised by a lowering that decodes arguments from JSON strings (which :func:`plan_limit`
    sees as one string each) once their fields pass :data:`MAX_FIELDS`."""

    def __init__(self, fields: int) -> None:
        super().__init__(fields)
        self.fields = fields

    def diagnostic(self, span: Span | None) -> Diagnostic:
        return too_many("fields in its calls", self.fields, MAX_FIELDS, span)


def too_many(what: str, count: int, limit: int, span: Span | None) -> Diagnostic:
    """The ``PC006`` of an input holding ``count`` ``what`` (steps, tools, ...) past ``limit``
    (``count`` may stop short of the whole: a reader stops counting past the limit)."""
    return make(
        "PC006",
        f"the input holds more than {limit:,} {what}; nothing in it was checked",
        primary=span, label="too large to check",
        notes=[f"plancheck checks at most {MAX_STEPS:,} steps or calls and {MAX_FIELDS:,} "
               f"fields in one plan, {MAX_TOOLS:,} tools with {MAX_PARAMETERS:,} "
               f"parameters in one pool, and {MAX_RULES:,} policy rules"],
        data={"count": count, "limit": limit, "what": what},
    )


def step_fields(steps: list[Any]) -> int:
    """The fields of the steps and of the objects and arrays directly in them (the step's
    arguments, its dependencies): what lowering makes a node of, counted without a walk."""
    total = 0
    for step in steps:
        if type(step) is dict:
            total += len(step)
            for value in step.values():
                if type(value) is dict or type(value) is list:
                    total += len(value)
    return total


def plan_limit(steps: list[Any], span: Span | None, *, what: str = "steps") -> Diagnostic | None:
    """The ``PC006`` of a list of steps or calls past :data:`MAX_STEPS` or :data:`MAX_FIELDS`,
    or None."""
    if len(steps) > MAX_STEPS:
        return too_many(what, len(steps), MAX_STEPS, span)
    return fields_limit(step_fields(steps), span, what)


def fields_limit(fields: int, span: Span | None, what: str) -> Diagnostic | None:
    """The ``PC006`` of ``fields`` past :data:`MAX_FIELDS` in the ``what`` of one plan."""
    if fields > MAX_FIELDS:
        return too_many(f"fields in its {what}", fields, MAX_FIELDS, span)
    return None


def pool_limit(tools: list[Any], span: Span | None) -> Diagnostic | None:
    """The ``PC006`` of a list of tool definitions past :data:`MAX_TOOLS` or past
    :data:`MAX_PARAMETERS` (counted as the members of the objects in each definition, four
    levels down: a parameter's schema sits two or three levels below its tool)."""
    if len(tools) > MAX_TOOLS:
        return too_many("tools", len(tools), MAX_TOOLS, span)
    members = sum(_members(tool, 4) for tool in tools)
    if members > MAX_PARAMETERS:
        return too_many("parameters in its tools", members, MAX_PARAMETERS, span)
    return None


def _members(value: Any, depth: int) -> int:
    if type(value) is dict:
        count = len(value)
        if depth:
            for inner in value.values():
                if type(inner) is dict or type(inner) is list:
                    count += _members(inner, depth - 1)
        return count
    if type(value) is list and depth:  # an enum's values are one parameter's, not many
        return sum(_members(inner, depth - 1) for inner in value
                   if type(inner) is dict or type(inner) is list)
    return 0
