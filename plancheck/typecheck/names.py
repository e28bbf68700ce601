"""Name resolution: step numbers, tools, input and output keys, and references.

Resolving a step's references (:meth:`NameResolver.resolve_references`) gives what the
later rules (dependencies, types, reachability) read instead of resolving names again.
Problems that would otherwise cascade are cut here: a step whose tool is unknown gets one
``PC201`` and no argument errors; a reference that cannot be resolved marks its step as
*broken* so the dependency rule does not report it a second time.

The checks work one step at a time (:class:`NameResolver`) against :class:`PlanFacts` (each
step's number, tool and declared outputs, by position), so that one pass over a plan can run
every rule (:mod:`plancheck.checks`). What they find is reported as
:class:`~plancheck.diagnostics.findings.Findings`: a diagnostic is built only when asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Any

from plancheck.diagnostics.findings import Findings
from plancheck.diagnostics.limits import may_be_close
from plancheck.diagnostics.model import Diagnostic, Edit, Suggestion, make
from plancheck.diagnostics.severity import Severity
from plancheck.diagnostics.span import escape_pointer
from plancheck.ir.nodes import (
    Argument,
    Binding,
    MalformedReference,
    Param,
    Plan,
    Reference,
    Step,
    Toolset,
    ToolSignature,
)
from plancheck.ir.output_paths import output_at
from plancheck.ir.references import format_reference, respell
from plancheck.ir.schema_validation import admits_undeclared


# The classes of this module are plain classes (compiled to native classes by mypyc), not
# dataclasses: see plancheck.records for why start-up avoids dataclasses. They are compared
# by identity only.
class PlanFacts:
    """What checking one step needs to know about the others, by the steps' positions: each
    step's number, its tool's signature (when the pool knows the tool) and its declared
    outputs, and the positions that carry each number.

    Built from a lowered plan (:meth:`of_plan`), or step by step by the fused checker from the
    JSON of steps that lower cleanly (which it never lowers). :meth:`step` gives a step's IR,
    lowering it on first use with ``lower`` when it was not given: building a diagnostic may
    need the spans of other steps; finding one never does.
    """

    __slots__ = ("_lower", "_steps", "by_index", "indices", "memo", "numbered", "order",
                 "outputs", "tools")

    def __init__(self, lower: Callable[[int], Step] | None = None) -> None:
        self.order: list[int] = []  # the positions of the steps, as listed
        self.indices: dict[int, int | None] = {}
        self.outputs: dict[int, Sequence[str] | None] = {}
        self.tools: dict[int, ToolSignature] = {}  # the steps whose tool the pool knows
        self.by_index: dict[int, list[int]] = {}  # step number -> positions, as listed
        self.numbered = 0  # how many steps have a number
        self._steps: dict[int, Step] = {}
        self._lower = lower
        self.memo: dict[str, Any] = {}  # what building diagnostics computes once per plan

    @classmethod
    def of_plan(cls, plan: Plan, toolset: Toolset) -> PlanFacts:
        facts = cls()
        for step in plan.steps:
            tool = step.tool
            facts.add(step.position, step.index, step.outputs,
                      toolset.tool(tool) if tool is not None else None, step)
        return facts

    def add(
        self,
        position: int,
        index: int | None,
        outputs: Sequence[str] | None,
        signature: ToolSignature | None,
        step: Step | None = None,
    ) -> None:
        """Record the next step listed (``step``: its IR, when there is one already)."""
        self.order.append(position)
        self.indices[position] = index
        self.outputs[position] = outputs
        if index is not None:
            self.numbered += 1
            positions = self.by_index.get(index)
            if positions is None:
                self.by_index[index] = [position]
            else:
                positions.append(position)
        if signature is not None:
            self.tools[position] = signature
        if step is not None:
            self._steps[position] = step

    def step(self, position: int) -> Step:
        """The IR of the step at ``position``."""
        found = self._steps.get(position)
        if found is None:
            if self._lower is None:
                raise KeyError(f"no step at position {position}")
            found = self._steps[position] = self._lower(position)
        return found

    def earlier(self, consumer: int, number: int) -> int | None:
        """The position of the last step numbered ``number`` listed before position
        ``consumer``."""
        for position in reversed(self.by_index.get(number, ())):
            if position < consumer:
                return position
        return None


class Link:
    """A reference of one step resolved to the step that produces it (by position)."""

    __slots__ = ("argument", "output", "producer", "reference")

    def __init__(self, argument: Argument, reference: Reference, producer: int,
                 output: Param | None) -> None:
        self.argument = argument
        self.reference = reference
        self.producer = producer
        self.output = output  # None when the producer's tool is unknown


class StepReferences:
    """What resolving the references of one step found."""

    __slots__ = ("broken", "links", "referenced", "unkeyed")

    def __init__(self) -> None:
        # The step numbers its arguments reference (also through references whose key is
        # wrong or that are malformed but name a step).
        self.referenced: set[int] = set()
        self.broken = False  # some reference could not be resolved to an earlier step
        self.unkeyed = False  # some reference's output key could not be resolved
        self.links: list[Link] = []


def outputs_differ(outputs: Sequence[str] | None, tool: ToolSignature) -> bool:
    """Whether a step that calls ``tool`` lists other outputs than the tool's (the same ones
    in another order count; an unreadable list, None, was reported when lowering)."""
    return outputs is not None and tuple(outputs) != tool.output_names


def inputs_pass(names: AbstractSet[str], tool: ToolSignature) -> bool:
    """Whether a step passing the inputs ``names`` to ``tool`` draws nothing from the input
    checks: every input is the tool's, and every required one is passed."""
    return (names <= tool.input_name_set or tool.open_inputs) and \
        tool.required_input_names <= names


def clean_producer(facts: PlanFacts, consumer: int, number: int, key: str,
                   path: str = "") -> int | None:
    """The position of the step a reference from position ``consumer`` to output ``key`` (and
    ``path`` inside it) of step ``number`` reads, when the reference checks find nothing in
    it: an earlier step has that number and its (known) tool makes ``key`` (see
    :func:`output_at`). None when they may find something."""
    producer = facts.earlier(consumer, number)
    if producer is None:
        return None
    tool = facts.tools.get(producer)
    if tool is None or output_at(tool, key, path) is None:
        return None
    return producer


def did_you_mean(name: str, candidates: list[str], cutoff: float = 0.6) -> str | None:
    return _did_you_mean(name, tuple(candidates), cutoff)


# Fuzzy matching is by far the dearest part of checking a plan with a misspelt name, and
# batches misspell the same names again and again: the answers are pure, so they are kept.
@lru_cache(maxsize=4096)
def _did_you_mean(name: str, candidates: tuple[str, ...], cutoff: float) -> str | None:
    lowered = {c.lower(): c for c in candidates}
    if name.lower() in lowered:
        return lowered[name.lower()]
    if not may_be_close(name, candidates, cutoff):
        return None
    # Imported here: a plan without a misspelt name (most) does not pay for it at start-up.
    from difflib import get_close_matches

    close = get_close_matches(name, candidates, n=1, cutoff=cutoff)
    if close:
        return close[0]
    close = get_close_matches(name.lower(), list(lowered), n=1, cutoff=cutoff)
    return lowered[close[0]] if close else None


def check_numbering(facts: PlanFacts, findings: Findings) -> None:
    """``PC110`` for the first step number used twice; else ``PC109`` for the first step
    not numbered by its position (one finding: renumbering fixes all)."""
    if facts.numbered > len(facts.by_index):  # some number is used twice
        for index, positions in facts.by_index.items():
            if len(positions) > 1:
                findings.report("PC110", _number_reused, facts, index, positions)
                return
    for position in facts.order:
        number = facts.indices[position]
        if number is not None and number != position:
            findings.report("PC109", _misnumbered, facts, position)
            return


class NameResolver:
    """The name checks of one plan, a step at a time (each step's own IR and the plan's
    facts); what they find goes to the :class:`Findings` given."""

    __slots__ = ("facts", "toolset")

    def __init__(self, facts: PlanFacts, toolset: Toolset) -> None:
        self.facts = facts
        self.toolset = toolset

    # ---------------------------------------------------------------- numbering

    def check_numbering(self, findings: Findings) -> None:
        check_numbering(self.facts, findings)

    # ---------------------------------------------------------------- tools and keys

    def check_step(self, step: Step, findings: Findings) -> None:
        if step.tool is None:
            return
        tool = self.facts.tools.get(step.position)
        if tool is None:
            findings.report("PC201", _unknown_tool, step, self.toolset)
            return
        if step.inputs_readable:
            self.check_inputs(step, tool, findings)
        if outputs_differ(step.outputs, tool):
            findings.report("PC204", wrong_outputs_diagnostic, step, tool)

    def check_inputs(self, step: Step, tool: ToolSignature, findings: Findings) -> None:
        if inputs_pass({argument.name for argument in step.args}, tool):
            return  # the common case
        given = [a.name for a in step.args]
        unknown = [] if tool.open_inputs else [a for a in step.args
                                               if tool.input(a.name) is None]
        missing = [p for p in tool.inputs if p.required and p.name not in given]
        renamed: dict[str, str] = {}
        for argument in unknown:
            candidates = [p.name for p in missing if p.name not in renamed.values()]
            if not candidates:
                candidates = [p.name for p in tool.inputs if p.name not in given]
            guess = _closest(argument.name, candidates)
            if guess:
                renamed[argument.name] = guess
            findings.report("PC202", _unknown_input, step, tool, argument, guess)
        admitted = admits_undeclared(tool)  # then PC202 is a warning: the call may run
        for param in missing:
            if param.name in renamed.values() and not admitted:
                continue  # reported together with the input it was probably meant as
            findings.report("PC203", _missing_input, step, tool, param)

    # ---------------------------------------------------------------- references

    def resolve_references(self, step: Step, findings: Findings) -> StepReferences:
        found = StepReferences()
        facts = self.facts
        for argument, value in _bindings(step):
            if isinstance(value, MalformedReference):
                findings.report("PC205", _malformed, step, argument, value, facts)
                if value.step is not None and facts.earlier(step.position, value.step) is not None:
                    found.referenced.add(value.step)
                else:
                    found.broken = True
                found.unkeyed = True
            elif isinstance(value, Reference):
                producer = clean_producer(facts, step.position, value.step, value.key,
                                          value.path)
                if producer is not None:  # the common case: nothing to report
                    found.referenced.add(value.step)
                    tool = facts.tools[producer]
                    found.links.append(Link(argument, value, producer,
                                            output_at(tool, value.key, value.path)))
                    continue
                producer = self.find_producer(step, argument, value, findings)
                if producer is None:
                    found.broken = True
                    continue
                found.referenced.add(value.step)
                self.check_key(step, argument, value, producer, found, findings)
        return found

    def find_producer(self, step: Step, argument: Argument, ref: Reference,
                      findings: Findings) -> int | None:
        """The position of the step ``ref`` reads (None, reported, when there is none)."""
        facts = self.facts
        producer = facts.earlier(step.position, ref.step)
        if producer is not None:
            return producer
        candidates = facts.by_index.get(ref.step)
        if candidates and step.index is not None and ref.step < step.index:
            # Numbered earlier but listed later: the interpreter reports it (PC501).
            return None
        if candidates:
            findings.report("PC207", _forward_reference, step, argument, ref, candidates[0],
                            facts)
        else:
            findings.report("PC206", _missing_step, step, argument, ref, facts)
        return None

    def check_key(self, step: Step, argument: Argument, ref: Reference, producer: int,
                  found: StepReferences, findings: Findings) -> None:
        facts = self.facts
        tool = facts.tools.get(producer)
        if tool is not None:
            output = output_at(tool, ref.key, ref.path)
            if output is not None:  # the common case first
                found.links.append(Link(argument, ref, producer, output))
                return
            available = list(tool.output_names)
        else:
            available = list(facts.outputs[producer] or ())
            if not available or ref.key in available:
                # Unknown tool: its declared outputs are all we know; trust what matches.
                found.links.append(Link(argument, ref, producer, None))
                return
        found.unkeyed = True
        findings.report("PC208", _unknown_key, step, argument, ref, producer, tool, available,
                        facts)


def _bindings(step: Step) -> list[tuple[Argument, Binding]]:
    """Each argument's binding, then the references nested in its literal value."""
    found: list[tuple[Argument, Binding]] = []
    for argument in step.args:
        found.append((argument, argument.value))
        found.extend((argument, reference) for _, reference in argument.nested)
    return found


# --------------------------------------------------------------------------- diagnostics


def _number_reused(facts: PlanFacts, index: int, positions: list[int]) -> Diagnostic:
    first, again = facts.step(positions[0]), facts.step(positions[1])
    return make(
        "PC110",
        f"step number {index} is used by the steps at positions "
        + ", ".join(str(p) for p in positions),
        primary=again.index_span or again.span,
        label=f"step {index} again (position {again.position})",
        secondary=[(first.index_span or first.span, "first used here")],
        help=[f"number this step {again.position}"],
        data={"step": index, "positions": list(positions)},
    )


def _misnumbered(facts: PlanFacts, position: int) -> Diagnostic:
    step = facts.step(position)
    renumbered = []
    for other in facts.order:
        index = facts.indices[other]
        if index is not None and index != other:
            index_span = facts.step(other).index_span
            if index_span:
                renumbered.append(Edit(index_span.pointer or "", other))
    return make(
        "PC109",
        f"the step at position {step.position} is numbered {step.index}; "
        f"steps are numbered 0, 1, ... in the order listed",
        primary=step.index_span or step.span,
        label=f"expected {step.position}",
        notes=["a gold plan is aligned with a prediction by these numbers"],
        data={"position": step.position, "expected": step.position, "actual": step.index},
        suggestions=[Suggestion("renumber the steps from 0", tuple(renumbered),
                                "maybe-incorrect")],
    )


def _unknown_tool(step: Step, toolset: Toolset) -> Diagnostic:
    assert step.tool is not None
    names = sorted(toolset.tools)
    guess = did_you_mean(step.tool, names)
    keys = {a.name for a in step.args}
    by_keys = [t.name for t in toolset.tools.values()
               if keys and set(t.input_names) == keys and t.name != guess]
    help_lines = []
    suggestions = []
    if guess:
        help_lines.append(f"did you mean `{guess}`?")
        suggestions.append(Suggestion(f"use `{guess}`",
                                      (Edit(step.tool_span.pointer or "", guess),)
                                      if step.tool_span else (), "maybe-incorrect"))
    if by_keys:
        listed = ", ".join(f"`{n}`" for n in by_keys[:4])
        help_lines.append(f"tools taking exactly these inputs: {listed}")
    return make(
        "PC201",
        f"unknown tool `{step.tool}` in step {_label(step)}",
        primary=step.tool_span or step.span,
        label="not a tool of this pool",
        help=help_lines,
        data={"step": step.index, "position": step.position, "tool": step.tool,
              "suggestion": guess, "allowed": names},
        suggestions=suggestions,
    )


def _missing_input(step: Step, tool: ToolSignature, param: Param) -> Diagnostic:
    return make(
        "PC203",
        f"step {_label(step)} does not pass the required input `{param.name}` "
        f"of `{tool.name}`",
        primary=step.tool_span or step.span,
        label=f"`{param.name}` missing",
        notes=[f"`{param.name}`: {param.doc}"] if param.doc else [],
        data={"step": step.index, "position": step.position, "tool": tool.name,
              "key": param.name, "expected_type": param.type},
    )


def _unknown_input(
    step: Step, tool: ToolSignature, argument: Argument, guess: str | None
) -> Diagnostic:
    allowed = list(tool.input_names)
    help_lines = [f"did you mean `{guess}`?"] if guess else []
    help_lines.append("`" + tool.name + "` takes " + ", ".join(f"`{n}`" for n in allowed))
    suggestions = []
    if guess and argument.span.pointer is not None:
        parent = argument.span.pointer.rsplit("/", 1)[0]
        value = argument.value
        raw = value.value if not isinstance(value, Reference | MalformedReference) else (
            value.raw or format_reference(value.step or 0, getattr(value, "key", ""))
        )
        suggestions.append(
            Suggestion(
                f"rename `{argument.name}` to `{guess}`",
                (Edit(argument.span.pointer, delete=True),
                 Edit(parent + "/" + escape_pointer(guess), raw)),
                "machine-applicable",
            )
        )
    # A name the tool's published schema admits (no ``additionalProperties``) is a warning:
    # the schema decides (docs/guard.md)
    return make(
        "PC202",
        f"`{tool.name}` has no input `{argument.name}` (step {_label(step)})",
        primary=argument.name_span,
        label="unknown input",
        help=help_lines,
        data={"step": step.index, "position": step.position, "tool": tool.name,
              "key": argument.name, "suggestion": guess, "allowed": allowed},
        suggestions=suggestions,
        severity=Severity.WARNING if admits_undeclared(tool) else None,
    )


def wrong_outputs_diagnostic(step: Step, tool: ToolSignature) -> Diagnostic:
    assert step.outputs is not None
    declared, expected = list(step.outputs), list(tool.output_names)
    if sorted(declared) == sorted(expected):
        detail = "list the right keys in the wrong order"
    else:
        missing = [k for k in expected if k not in declared]
        extra = [k for k in declared if k not in expected]
        repeated = list(dict.fromkeys(k for k in declared if declared.count(k) > 1))
        parts = []
        if missing:
            parts.append("lack " + ", ".join(f"`{k}`" for k in missing))
        if extra:
            parts.append("add " + ", ".join(f"`{k}`" for k in extra))
        if repeated:  # (the only difference when every key is there, some more than once)
            parts.append("repeat " + ", ".join(f"`{k}`" for k in repeated))
        detail = " and ".join(parts)
    return make(
        "PC204",
        f"the outputs of step {_label(step)} {detail}",
        primary=step.outputs_span or step.span,
        label="expected [" + ", ".join(expected) + "]",
        data={"step": step.index, "position": step.position, "tool": tool.name,
              "expected": expected, "actual": declared},
        suggestions=[Suggestion(
            f"write the outputs of `{tool.name}`",
            (Edit(step.outputs_span.pointer or "", expected),)
            if step.outputs_span and step.outputs_span.pointer is not None else (),
            "machine-applicable",
        )],
    )


def _forward_reference(step: Step, argument: Argument, ref: Reference, target_position: int,
                       facts: PlanFacts) -> Diagnostic:
    itself = target_position == step.position
    what = "itself" if itself else f"step {ref.step}, which comes later"
    return make(
        "PC207",
        f"step {_label(step)} uses a result of {what}",
        primary=ref.span,
        label="refers forward" if not itself else "refers to itself",
        secondary=[] if itself else [(facts.step(target_position).span, f"step {ref.step}")],
        help=["a step can only use results of the steps before it"],
        data=_reference_data(step, argument, ref),
    )


def _missing_step(step: Step, argument: Argument, ref: Reference,
                  facts: PlanFacts) -> Diagnostic:
    numbers = sorted(facts.by_index)
    return make(
        "PC206",
        f"step {_label(step)} refers to step {ref.step}, which the plan lacks",
        primary=ref.span,
        label=f"no step {ref.step}",
        notes=[f"the plan has steps {', '.join(map(str, numbers))}"] if numbers else [],
        data=_reference_data(step, argument, ref),
    )


def _reference_data(step: Step, argument: Argument, ref: Reference) -> dict[str, object]:
    return {"step": step.index, "position": step.position, "key": argument.name,
            "referenced_step": ref.step}


def _unknown_key(step: Step, argument: Argument, ref: Reference, producer_position: int,
                 tool: ToolSignature | None, available: list[str],
                 facts: PlanFacts) -> Diagnostic:
    producer = facts.step(producer_position)
    guess = _closest(ref.key, available) or (available[0] if len(available) == 1 else None)
    producer_name = tool.name if tool else (producer.tool or "?")
    suggestions = []
    if guess and ref.span.pointer is not None:
        fixed = respell(ref, ref.step, guess)
        suggestions.append(Suggestion(
            f"use `{fixed}`", (Edit(ref.span.pointer, fixed),),
            "machine-applicable" if len(available) == 1 else "maybe-incorrect",
        ))
    if ref.path and tool is not None and tool.output(ref.key) is not None:
        return make(  # the output exists; the place inside it does not
            "PC208",
            f"output `{ref.key}` of step {ref.step} (`{producer_name}`) has no "
            f"`{ref.key}{ref.path}`",
            primary=ref.span,
            label="not in the output's schema",
            secondary=[(producer.tool_span or producer.span,
                        f"step {ref.step} produces `{ref.key}`")],
            data={"step": step.index, "position": step.position, "key": argument.name,
                  "referenced_step": ref.step, "referenced_key": ref.key,
                  "path": ref.path, "tool": producer_name, "allowed": available,
                  "suggestion": None},
        )
    return make(
        "PC208",
        f"step {ref.step} (`{producer_name}`) has no output `{ref.key}`",
        primary=ref.span,
        label="not an output of that step",
        secondary=[(producer.tool_span or producer.span,
                    f"step {ref.step} produces " + ", ".join(f"`{k}`" for k in available))],
        help=[f"did you mean `{guess}`?"] if guess else [],
        data={"step": step.index, "position": step.position, "key": argument.name,
              "referenced_step": ref.step, "referenced_key": ref.key,
              "tool": producer_name, "allowed": available, "suggestion": guess},
        suggestions=suggestions,
    )


def _malformed(step: Step, argument: Argument, value: MalformedReference,
               facts: PlanFacts) -> Diagnostic:
    guess_key: str | None = None
    if value.step is not None:
        producer = facts.earlier(step.position, value.step)
        declared = (step.dependence_content or {}).get(value.step)
        tool = facts.tools.get(producer) if producer is not None else None
        if declared and len(declared) == 1:
            guess_key = declared[0]
        elif tool is not None and len(tool.outputs) == 1:
            guess_key = tool.outputs[0].name
    fixed = format_reference(value.step, guess_key) if guess_key and value.step is not None \
        else None
    suggestions = []
    if fixed and value.span.pointer is not None:
        suggestions.append(Suggestion(f"write `{fixed}`", (Edit(value.span.pointer, fixed),),
                                      "maybe-incorrect"))
    return make(
        "PC205",
        f"input `{argument.name}` of step {_label(step)} is a malformed reference "
        f"`{value.raw}`",
        primary=value.span,
        label="expected `<GENERATED>-k-<output_key>`",
        help=[f"did you mean `{fixed}`?"] if fixed else
        ["write references as `<GENERATED>-k-<output_key>`"],
        data={"step": step.index, "position": step.position, "key": argument.name,
              "actual": value.raw, "suggestion": fixed},
        suggestions=suggestions,
    )


def _label(step: Step) -> str:
    return str(step.index) if step.index is not None else f"at position {step.position}"


def _closest(name: str, candidates: list[str]) -> str | None:
    return _closest_of(name, tuple(candidates))


@lru_cache(maxsize=4096)
def _closest_of(name: str, candidates: tuple[str, ...]) -> str | None:
    if not candidates or not may_be_close(name, candidates, 0.5):
        return None
    from difflib import SequenceMatcher  # as in _did_you_mean: only for a misspelt name

    scored = sorted(
        ((SequenceMatcher(None, name.lower(), c.lower()).ratio(), c) for c in candidates),
        reverse=True,
    )
    best_score, best = scored[0]
    return best if best_score >= 0.5 else None
