"""A canonical form of a workflow, independent of step numbering and of the order of
independent branches: the multiset of the tool calls it makes, each call written as a term
over user inputs. ``equivalent(a, b)`` holds exactly when the two plans make the same calls on
the same values.

Terms are written so that distinct values never share a text: literals are JSON-quoted (a
path containing ``,`` or ``=`` cannot pass for two arguments) and names that are not plain
identifiers are quoted too. A plan's values form a DAG (one result may feed many steps), so a
term written out in full can grow exponentially with the plan's depth; a sub-term longer than
:data:`INLINE_LIMIT` characters is therefore written as a digest of its text, which is still a
function of the value alone, so the form stays canonical and its size linear.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter

from plancheck.dsl.ast import Plan, Toolset
from plancheck.interp.engine import SymbolicExecutor, run
from plancheck.interp.values import InputValue, ResultValue, SymbolicValue, UnknownValue

INLINE_LIMIT = 240
_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def _name(text: str) -> str:
    return text if _PLAIN_NAME.match(text) else json.dumps(text, ensure_ascii=False)


class _Terms:
    """Writes values as terms, each value once (values are shared, so memoise by identity)."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[SymbolicValue, str]] = {}

    def term(self, value: SymbolicValue) -> str:
        cached = self._memo.get(id(value))
        if cached is not None:
            return cached[1]
        text = self._write(value)
        if len(text) > INLINE_LIMIT:
            # '#' starts no other term: names, JSON literals and '?' unknowns all differ.
            text = "#" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        self._memo[id(value)] = (value, text)  # the value is kept so its id stays unique
        return text

    def _write(self, value: SymbolicValue) -> str:
        if isinstance(value, InputValue):
            return json.dumps(value.value, sort_keys=True, ensure_ascii=False)
        if isinstance(value, ResultValue):
            return f"{self.call(value.tool, dict(value.arguments))}.{_name(value.output)}"
        assert isinstance(value, UnknownValue)
        return f"?{value.token}"  # unique: an unknown never equals anything

    def call(self, tool: str, arguments: dict[str, SymbolicValue]) -> str:
        args = ",".join(f"{_name(name)}={self.term(value)}"
                        for name, value in sorted(arguments.items()))
        return f"{_name(tool)}({args})"


def call_term(tool: str, arguments: dict[str, SymbolicValue]) -> str:
    """The term of one call of ``tool`` on ``arguments``."""
    return _Terms().call(tool, arguments)


def canonical_form(plan: Plan, toolset: Toolset | None = None) -> tuple[str, ...]:
    """The sorted tuple of the plan's call terms (with multiplicity)."""
    trace = run(plan, toolset, SymbolicExecutor(toolset))
    terms = _Terms()
    calls = Counter(terms.call(step.tool or "?", arguments) for step, arguments, _ in trace.calls)
    return tuple(sorted(calls.elements()))


def equivalent(a: Plan, b: Plan, toolset: Toolset | None = None) -> bool:
    """True exactly when both plans compute the same values from the same inputs."""
    return canonical_form(a, toolset) == canonical_form(b, toolset)
