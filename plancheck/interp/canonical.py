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
from functools import lru_cache

from plancheck.dsl.ast import MalformedReference, Plan, Reference, Toolset
from plancheck.interp.engine import Trace, unknown_token
from plancheck.interp.values import InputValue, ResultValue, SymbolicValue, UnknownValue

INLINE_LIMIT = 240
_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


# One encoder each (json.dumps with options builds a new encoder on every call).
_JSON_TEXT = json.JSONEncoder(ensure_ascii=False).encode
_JSON_SORTED = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


@lru_cache(maxsize=4096)
def _name(text: str) -> str:
    return text if _PLAIN_NAME.match(text) else _JSON_TEXT(text)


def _inline(text: str) -> str:
    """A sub-term as written inside another: itself, or the digest of a long one."""
    if len(text) > INLINE_LIMIT:
        # '#' starts no other term: names, JSON literals and '?' unknowns all differ.
        return "#" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return text


def _literal(value: object) -> str:
    return _inline(_JSON_SORTED(value))


class _Terms:
    """Writes values as terms, each value once (values are shared, so memoise by identity)."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[SymbolicValue, str]] = {}

    def term(self, value: SymbolicValue) -> str:
        cached = self._memo.get(id(value))
        if cached is not None:
            return cached[1]
        text = _inline(self._write(value))
        self._memo[id(value)] = (value, text)  # the value is kept so its id stays unique
        return text

    def _write(self, value: SymbolicValue) -> str:
        if isinstance(value, InputValue):
            return _JSON_SORTED(value.value)
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


def trace_form(trace: Trace) -> tuple[str, ...]:
    """The canonical form of the calls a run of the symbolic interpreter made (what
    :func:`canonical_form` computes, from a :class:`~plancheck.interp.engine.Trace` of
    :class:`~plancheck.interp.engine.SymbolicExecutor` values)."""
    terms = _Terms()
    calls = Counter(terms.call(step.tool or "?", arguments) for step, arguments, _ in trace.calls)
    return tuple(sorted(calls.elements()))


def canonical_form(plan: Plan, toolset: Toolset | None = None) -> tuple[str, ...]:
    """The sorted tuple of the plan's call terms (with multiplicity).

    The same terms as running the plan with the symbolic interpreter and writing its calls
    (:func:`trace_form`), written in one pass: each step's call is written as the step runs and
    each output's term kept by (step number, key), so no value objects are built. (Scoring
    needs forms for many predictions; this is several times faster.)
    """
    return form_and_completeness(plan, toolset)[0]


def form_and_completeness(
    plan: Plan, toolset: Toolset | None = None
) -> tuple[tuple[str, ...], bool]:
    """:func:`canonical_form`, and whether every value was known: no reference was left
    unresolved or unreadable (the interpreter's run has no events), so that the plan is
    equivalent to itself."""
    complete = True
    produced: dict[tuple[int, str], str] = {}  # (step number, key) -> the output's term
    calls: list[str] = []
    for step in plan.steps:
        tool = step.tool
        if tool is None:
            continue
        arguments: dict[str, str] = {}  # a dict, as the interpreter's: a repeated name wins
        for argument in step.args:
            value = argument.value
            if isinstance(value, Reference):
                term = produced.get((value.step, value.key))
                if term is None:  # unresolvable: an unknown, equal to nothing
                    term, complete = f"?{unknown_token()}", False
            elif isinstance(value, MalformedReference):
                term, complete = f"?{unknown_token()}", False
            else:
                term = _literal(value.value)
            arguments[argument.name] = term
        written = ",".join(f"{_name(name)}={arguments[name]}" for name in sorted(arguments))
        call = f"{_name(tool)}({written})"
        calls.append(call)
        if step.index is not None:
            # A known tool makes all its outputs whatever the step lists; for an unknown tool
            # the step's own list is all there is (as the interpreter runs it).
            signature = toolset.tool(tool) if toolset else None
            for key in signature.output_names if signature else (step.outputs or ()):
                produced[(step.index, key)] = _inline(f"{call}.{_name(key)}")
    calls.sort()
    return tuple(calls), complete


def equivalent(a: Plan, b: Plan, toolset: Toolset | None = None) -> bool:
    """True exactly when both plans compute the same values from the same inputs."""
    return canonical_form(a, toolset) == canonical_form(b, toolset)
