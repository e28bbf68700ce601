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

import json
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from plancheck.interp.engine import Trace, unknown_token
from plancheck.interp.values import InputValue, ResultValue, SymbolicValue, UnknownValue
from plancheck.ir.nodes import MalformedReference, Plan, Reference, Step, Toolset

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
        import hashlib  # rare (long sub-terms only): not worth its import at every start-up

        return "#" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return text


def _literal(value: object) -> str:
    if type(value) is str:
        return _string_term(value)
    return _inline(_JSON_SORTED(value))


@lru_cache(maxsize=2048)
def _string_term(value: str) -> str:
    return _inline(_JSON_SORTED(value))


@lru_cache(maxsize=4096)
def _call_layout(tool: str, names: tuple[str, ...]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """How a call of ``tool`` with arguments ``names`` is written: the text up to the first
    argument's term, then each argument (in name order) with the text that follows its
    term."""
    order = sorted(names)
    if not order:
        return f"{_name(tool)}()", ()
    head = f"{_name(tool)}({_name(order[0])}="
    after = [f",{_name(name)}=" for name in order[1:]] + [")"]
    return head, tuple(zip(order, after, strict=True))


@lru_cache(maxsize=4096)
def _output_suffixes(keys: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Each output key, and what follows a call's term in the term of that output."""
    return tuple((key, f".{_name(key)}") for key in keys)


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
    writer = FormWriter(toolset)
    for step in plan.steps:
        writer.run_step(step)
    return writer.form()


class FormWriter:
    """Writes a plan's canonical form a step at a time, in the order the steps are listed:
    each step's call is written as the step runs and each output's term kept by (step
    number, key), so no value objects are built."""

    __slots__ = ("calls", "complete", "produced", "toolset")

    def __init__(self, toolset: Toolset | None) -> None:
        self.toolset = toolset
        self.complete = True
        self.produced: dict[tuple[int, str], str] = {}  # (step number, key) -> the term
        self.calls: list[str] = []

    def run_step(self, step: Step) -> None:
        tool = step.tool
        if tool is None:
            return
        arguments: dict[str, str] = {}  # a dict, as the interpreter's: a repeated name wins
        for argument in step.args:
            value = argument.value
            if isinstance(value, Reference):
                term = self.read(value.step, value.key)
            elif isinstance(value, MalformedReference):
                term = self.unknown()
            else:
                term = _literal(value.value)
            arguments[argument.name] = term
        self.call(tool, step.index, arguments, step.outputs)

    def read(self, number: int, key: str) -> str:
        """The term of output ``key`` of step ``number``: an unknown when no step listed
        earlier produced it (equal to nothing)."""
        term = self.produced.get((number, key))
        return term if term is not None else self.unknown()

    def unknown(self) -> str:
        self.complete = False
        return f"?{unknown_token()}"

    def call(self, tool: str, index: int | None, arguments: dict[str, str],
             outputs: Sequence[str] | None) -> None:
        """A call of ``tool`` on arguments written as terms, by a step numbered ``index``
        that lists ``outputs``."""
        # f"{tool}({name}={term},...)", names sorted, laid out once per tool and names.
        call, layout = _call_layout(tool, tuple(arguments))
        for name, after in layout:
            call += arguments[name] + after
        self.calls.append(call)
        if index is not None:
            # A known tool makes all its outputs whatever the step lists; for an unknown tool
            # the step's own list is all there is (as the interpreter runs it).
            signature = self.toolset.tool(tool) if self.toolset else None
            keys = signature.output_names if signature else tuple(outputs or ())
            produced = self.produced
            for key, suffix in _output_suffixes(keys):
                produced[(index, key)] = _inline(call + suffix)

    def form(self) -> tuple[tuple[str, ...], bool]:
        """The form so far (the sorted calls) and whether every value was known."""
        return tuple(sorted(self.calls)), self.complete


def literal_term(value: object) -> str:
    """The term of a literal argument."""
    return _literal(value)


def equivalent(a: Plan, b: Plan, toolset: Toolset | None = None) -> bool:
    """True exactly when both plans compute the same values from the same inputs."""
    return canonical_form(a, toolset) == canonical_form(b, toolset)
