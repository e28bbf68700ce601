"""One step as the rules see it: its number, tool and signature, and either its IR or, for a
step object that lowers cleanly, its JSON fields read once.

A step comes in one of two ways. From a lowered plan it has its IR (:attr:`StepView.ir`).
From a JSON plan, a step object with exactly the schema's fields, each well typed, and a tool
the pool knows (a *candidate*) keeps its JSON: its inputs are read once here
(:meth:`StepView.read_inputs`: which are references, to which step and output, and which are
literals), and every rule works from that reading. When no rule's check would find anything it
cannot report from the JSON (each rule's :meth:`~plancheck.checks.rule.Rule.clean`), the step
is *settled*: it is never lowered, unless a diagnostic or a rule asks for its IR
(:meth:`StepView.step`). Otherwise its IR is made before the rules run their checks on it.
"""

from __future__ import annotations

import json
from typing import Any, Final, TypeAlias

from plancheck.checks.tables import ToolEntry
from plancheck.ir.nodes import Literal, MalformedReference, Reference, Step, ToolSignature
from plancheck.ir.references import mentions_generated, reference_parts
from plancheck.typecheck.names import PlanFacts, StepReferences

__all__ = ["CallKey", "JsonFields", "JsonLiteral", "JsonRead", "StepView", "reference_in"]

# A clean step object's fields, as written: tool, number, dependence, dependence content (as
# lowering reads it), inputs and outputs (what ``compiler.lowering.clean_fields`` returns).
JsonFields: TypeAlias = tuple[
    str, int, list[int], dict[int, tuple[str, ...]] | None, dict[str, Any], list[str]
]
# The inputs of a candidate step as read: a literal (the input's name and its string), or a
# reference in the common spelling (the input's name, and (step number, output key)).
JsonLiteral: TypeAlias = tuple[str, str]
JsonRead: TypeAlias = tuple[str, tuple[int, str]]
# What a step calls: its tool and each input's binding, by input name (see call_key).
CallKey: TypeAlias = tuple[str, tuple[tuple[str, tuple[object, ...]], ...]]

_PREFIX: Final = "<GENERATED>-"
# (Lists, not sequences: the compiled build walks a list without an iterator object.)
_NO_LITERALS: Final[list[JsonLiteral]] = []  # shared, never changed: a view's own are new
_NO_READS: Final[list[JsonRead]] = []
_NO_PRODUCERS: Final[list[int]] = []


def reference_in(value: str) -> tuple[int, str] | None:
    """(step number, output key) when ``value`` is a reference in the common spelling (what
    :meth:`StepView.read_inputs` reads as one), else None."""
    return reference_parts(value) if value.startswith(_PREFIX) else None


class StepView:
    """One step of the plan being checked (see the module's docstring)."""

    __slots__ = ("_facts", "entry", "fields", "index", "ir", "literals", "position",
                 "producers", "reads", "refs", "settled", "signature", "tool")

    def __init__(self, facts: PlanFacts, position: int, index: int | None, tool: str | None,
                 signature: ToolSignature | None, step: Step | None = None,
                 fields: JsonFields | None = None, entry: ToolEntry | None = None) -> None:
        self._facts = facts
        # The IR: given for a lowered step, made before the step hooks run for a candidate
        # that is not settled; a settled step has none until step() makes it.
        self.ir = step
        self.position = position
        self.index = index
        self.tool = tool
        self.signature = signature  # None when the pool does not know the tool
        self.fields = fields  # a candidate's JSON fields
        self.entry = entry  # a candidate's tool, as the fast path looks it up
        # A candidate's inputs, once read; the positions its references read, once resolved
        # (lists made then: most steps of a lowered plan are no candidates).
        self.literals = _NO_LITERALS  # its literal inputs, once read
        self.reads = _NO_READS  # its references, in input order
        # the positions its references read, in the order of reads (once resolved)
        self.producers = _NO_PRODUCERS
        self.refs: StepReferences | None = None  # what resolving its IR references found
        self.settled = False

    @classmethod
    def of_step(cls, facts: PlanFacts, step: Step) -> StepView:
        """The view of a lowered step."""
        return cls(facts, step.position, step.index, step.tool, facts.tools.get(step.position),
                   step)

    def step(self) -> Step:
        """The step's IR (a candidate's is made on first use)."""
        step = self.ir
        if step is None:
            step = self.ir = self._facts.step(self.position)
        return step

    def read_inputs(self, literals: dict[str, bool]) -> bool:
        """Read a candidate's inputs into :attr:`literals` and :attr:`reads`: False when some
        input is not one the fast path reads (not a string, or a string the lowering reads as
        a reference that is not in the common spelling). ``literals``: what is known of
        strings met before (whether the lowering reads each as a literal)."""
        fields = self.fields
        if fields is None:
            return False
        found: list[JsonLiteral] = []
        reads: list[JsonRead] = []
        self.literals = found
        self.reads = reads
        for name, value in fields[4].items():
            if type(value) is not str:
                return False
            parts = reference_in(value)
            if parts is not None:
                reads.append((name, parts))
                continue
            literal = literals.get(value)
            if literal is None:
                if len(literals) >= 4096:
                    literals.clear()
                literal = literals[value] = not mentions_generated(value)
            if not literal:
                return False
            found.append((name, value))
        return True

    def call_key(self) -> CallKey | None:
        """What the step calls: its tool and its inputs' bindings, the same whether read
        from the JSON or from the IR (None: no tool, no input, or inputs that could not be
        read)."""
        tool = self.tool
        if tool is None:
            return None
        keyed: list[tuple[str, tuple[object, ...]]]
        if self.settled:
            keyed = [(name, ("s", value)) for name, value in self.literals]
            keyed += [(name, ("@", number, key, "")) for name, (number, key) in self.reads]
        else:
            step = self.step()
            if not step.inputs_readable:
                return None
            keyed = [(argument.name, _binding_key(argument.value)) for argument in step.args]
        if not keyed:
            return None
        keyed.sort()  # by input name (the names differ)
        return (tool, tuple(keyed))


def _binding_key(value: Literal | Reference | MalformedReference) -> tuple[object, ...]:
    if isinstance(value, Reference):
        return ("@", value.step, value.key, value.path)
    if isinstance(value, MalformedReference):
        return ("?", value.raw)
    literal = value.value
    if type(literal) is str:
        return ("s", literal)
    return ("j", json.dumps(literal, sort_keys=True))
