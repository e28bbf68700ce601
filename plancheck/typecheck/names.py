"""Name resolution: step numbers, tools, input and output keys, and references.

Produces a :class:`Resolution` that later phases (dependencies, types, interpretation) read
instead of resolving names again. Problems that would otherwise cascade are cut here: a step
whose tool is unknown gets one ``PC201`` and no argument errors; a reference that cannot be
resolved marks its step as *broken* so the dependency phase does not report it a second time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher, get_close_matches
from functools import lru_cache

from plancheck.compiler.diagnostics import Diagnostic, Edit, Suggestion, make
from plancheck.compiler.lowering import format_reference
from plancheck.dsl.ast import (
    Argument,
    MalformedReference,
    Param,
    Plan,
    Reference,
    Step,
    Toolset,
    ToolSignature,
)


@dataclass(frozen=True, slots=True)
class ResolvedReference:
    consumer: Step
    argument: Argument
    reference: Reference
    producer: Step
    output: Param | None  # None when the producer's tool is unknown


@dataclass(slots=True)
class Resolution:
    plan: Plan
    tools: dict[int, ToolSignature] = field(default_factory=dict)  # by step position
    references: list[ResolvedReference] = field(default_factory=list)
    # Per consumer position: the step numbers its arguments reference (also through
    # references whose key is wrong or that are malformed but name a step).
    referenced_steps: dict[int, set[int]] = field(default_factory=dict)
    # Consumers whose references could not all be resolved to an earlier step.
    broken: set[int] = field(default_factory=set)
    # Consumers with a reference whose output key could not be resolved.
    unkeyed: set[int] = field(default_factory=set)

    def producer_of(self, consumer: Step, argument: Argument) -> ResolvedReference | None:
        for resolved in self.references:
            if resolved.consumer is consumer and resolved.argument is argument:
                return resolved
        return None


def did_you_mean(name: str, candidates: list[str], cutoff: float = 0.6) -> str | None:
    return _did_you_mean(name, tuple(candidates), cutoff)


# Fuzzy matching is by far the dearest part of checking a plan with a misspelt name, and
# batches misspell the same names again and again: the answers are pure, so they are kept.
@lru_cache(maxsize=4096)
def _did_you_mean(name: str, candidates: tuple[str, ...], cutoff: float) -> str | None:
    lowered = {c.lower(): c for c in candidates}
    if name.lower() in lowered:
        return lowered[name.lower()]
    close = get_close_matches(name, candidates, n=1, cutoff=cutoff)
    if close:
        return close[0]
    close = get_close_matches(name.lower(), list(lowered), n=1, cutoff=cutoff)
    return lowered[close[0]] if close else None


def resolve_names(plan: Plan, toolset: Toolset) -> tuple[Resolution, list[Diagnostic]]:
    resolver = _Resolver(plan, toolset)
    resolver.check_numbering()
    for step in plan.steps:
        resolver.check_step(step)
    for step in plan.steps:
        resolver.resolve_references(step)
    return resolver.resolution, resolver.diagnostics


class _Resolver:
    def __init__(self, plan: Plan, toolset: Toolset) -> None:
        self.plan = plan
        self.toolset = toolset
        self.resolution = Resolution(plan)
        self.diagnostics: list[Diagnostic] = []
        self.by_index: dict[int, list[Step]] = {}
        for step in plan.steps:
            if step.index is not None:
                self.by_index.setdefault(step.index, []).append(step)

    # ---------------------------------------------------------------- numbering

    def check_numbering(self) -> None:
        for index, steps in self.by_index.items():
            if len(steps) > 1:
                first, again = steps[0], steps[1]
                self.diagnostics.append(
                    make(
                        "PC110",
                        f"step number {index} is used by the steps at positions "
                        + ", ".join(str(s.position) for s in steps),
                        primary=again.index_span or again.span,
                        label=f"step {index} again (position {again.position})",
                        secondary=[(first.index_span or first.span, "first used here")],
                        help=[f"number this step {again.position}"],
                        data={"step": index, "positions": [s.position for s in steps]},
                    )
                )
                return
        for step in self.plan.steps:
            if step.index is not None and step.index != step.position:
                renumbered = [
                    Edit(s.index_span.pointer or "", s.position)
                    for s in self.plan.steps
                    if s.index is not None and s.index != s.position and s.index_span
                ]
                self.diagnostics.append(
                    make(
                        "PC109",
                        f"the step at position {step.position} is numbered {step.index}; "
                        f"steps are numbered 0, 1, ... in the order listed",
                        primary=step.index_span or step.span,
                        label=f"expected {step.position}",
                        notes=["a gold plan is aligned with a prediction by these numbers"],
                        data={"position": step.position, "expected": step.position,
                              "actual": step.index},
                        suggestions=[Suggestion("renumber the steps from 0",
                                                tuple(renumbered), "maybe-incorrect")],
                    )
                )
                return

    # ---------------------------------------------------------------- tools and keys

    def check_step(self, step: Step) -> None:
        if step.tool is None:
            return
        tool = self.toolset.tool(step.tool)
        if tool is None:
            self.unknown_tool(step)
            return
        self.resolution.tools[step.position] = tool
        if step.inputs_readable:
            self.check_inputs(step, tool)
        if step.outputs is not None and step.outputs != tool.output_names:
            self.wrong_outputs(step, tool)

    def unknown_tool(self, step: Step) -> None:
        assert step.tool is not None
        names = sorted(self.toolset.tools)
        guess = did_you_mean(step.tool, names)
        keys = {a.name for a in step.args}
        by_keys = [t.name for t in self.toolset.tools.values()
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
        self.diagnostics.append(
            make(
                "PC201",
                f"unknown tool `{step.tool}` in step {_label(step)}",
                primary=step.tool_span or step.span,
                label="not a tool of this pool",
                help=help_lines,
                data={"step": step.index, "position": step.position, "tool": step.tool,
                      "suggestion": guess, "allowed": names},
                suggestions=suggestions,
            )
        )

    def check_inputs(self, step: Step, tool: ToolSignature) -> None:
        passed: set[str] = set()
        for argument in step.args:
            if tool.input(argument.name) is None:
                break
            passed.add(argument.name)
        else:
            if tool.required_input_names <= passed:
                return  # every input known and every required one passed: the common case
        given = [a.name for a in step.args]
        unknown = [a for a in step.args if tool.input(a.name) is None]
        missing = [p for p in tool.inputs if p.required and p.name not in given]
        renamed: dict[str, str] = {}
        for argument in unknown:
            candidates = [p.name for p in missing if p.name not in renamed.values()]
            if not candidates:
                candidates = [p.name for p in tool.inputs if p.name not in given]
            guess = _closest(argument.name, candidates)
            if guess:
                renamed[argument.name] = guess
            self.diagnostics.append(self.unknown_input(step, tool, argument, guess))
        for param in missing:
            if param.name in renamed.values():
                continue  # reported together with the input it was probably meant as
            self.diagnostics.append(
                make(
                    "PC203",
                    f"step {_label(step)} does not pass the required input `{param.name}` "
                    f"of `{tool.name}`",
                    primary=step.tool_span or step.span,
                    label=f"`{param.name}` missing",
                    notes=[f"`{param.name}`: {param.doc}"] if param.doc else [],
                    data={"step": step.index, "position": step.position, "tool": tool.name,
                          "key": param.name, "expected_type": param.type},
                )
            )

    def unknown_input(
        self, step: Step, tool: ToolSignature, argument: Argument, guess: str | None
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
                     Edit(parent + "/" + guess.replace("~", "~0").replace("/", "~1"), raw)),
                    "machine-applicable",
                )
            )
        return make(
            "PC202",
            f"`{tool.name}` has no input `{argument.name}` (step {_label(step)})",
            primary=argument.name_span,
            label="unknown input",
            help=help_lines,
            data={"step": step.index, "position": step.position, "tool": tool.name,
                  "key": argument.name, "suggestion": guess, "allowed": allowed},
            suggestions=suggestions,
        )

    def wrong_outputs(self, step: Step, tool: ToolSignature) -> None:
        assert step.outputs is not None
        declared, expected = list(step.outputs), list(tool.output_names)
        if sorted(declared) == sorted(expected):
            detail = "lists the right keys in the wrong order"
        else:
            missing = [k for k in expected if k not in declared]
            extra = [k for k in declared if k not in expected]
            parts = []
            if missing:
                parts.append("lacks " + ", ".join(f"`{k}`" for k in missing))
            if extra:
                parts.append("adds " + ", ".join(f"`{k}`" for k in extra))
            detail = " and ".join(parts)
        self.diagnostics.append(
            make(
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
        )

    # ---------------------------------------------------------------- references

    def resolve_references(self, step: Step) -> None:
        referenced = self.resolution.referenced_steps.setdefault(step.position, set())
        for argument in step.args:
            value = argument.value
            if isinstance(value, MalformedReference):
                self.malformed(step, argument, value)
                if value.step is not None and self._earlier(step, value.step):
                    referenced.add(value.step)
                else:
                    self.resolution.broken.add(step.position)
                self.resolution.unkeyed.add(step.position)
            elif isinstance(value, Reference):
                producer = self.find_producer(step, argument, value)
                if producer is None:
                    self.resolution.broken.add(step.position)
                    continue
                referenced.add(value.step)
                self.check_key(step, argument, value, producer)

    def _earlier(self, consumer: Step, number: int) -> Step | None:
        """The last step numbered ``number`` listed before ``consumer``."""
        for step in reversed(self.by_index.get(number, ())):
            if step.position < consumer.position:
                return step
        return None

    def find_producer(self, step: Step, argument: Argument, ref: Reference) -> Step | None:
        producer = self._earlier(step, ref.step)
        if producer is not None:
            return producer
        candidates = self.by_index.get(ref.step, [])
        data = {"step": step.index, "position": step.position, "key": argument.name,
                "referenced_step": ref.step}
        if candidates and step.index is not None and ref.step < step.index:
            # Numbered earlier but listed later: the interpreter reports it (PC501).
            return None
        if candidates:
            target = candidates[0]
            what = "itself" if target is step else f"step {ref.step}, which comes later"
            self.diagnostics.append(
                make(
                    "PC207",
                    f"step {_label(step)} uses a result of {what}",
                    primary=ref.span,
                    label="refers forward" if target is not step else "refers to itself",
                    secondary=[] if target is step else [(target.span, f"step {ref.step}")],
                    help=["a step can only use results of the steps before it"],
                    data=data,
                )
            )
        else:
            numbers = sorted(self.by_index)
            self.diagnostics.append(
                make(
                    "PC206",
                    f"step {_label(step)} refers to step {ref.step}, which the plan lacks",
                    primary=ref.span,
                    label=f"no step {ref.step}",
                    notes=[f"the plan has steps {', '.join(map(str, numbers))}"] if numbers else [],
                    data=data,
                )
            )
        return None

    def check_key(self, step: Step, argument: Argument, ref: Reference, producer: Step) -> None:
        tool = self.resolution.tools.get(producer.position)
        if tool is not None:
            output = tool.output(ref.key)
            if output is not None:  # the common case first
                self.resolution.references.append(
                    ResolvedReference(step, argument, ref, producer, output))
                return
            available = list(tool.output_names)
        else:
            output = None
            available = list(producer.outputs or ())
            if not available or ref.key in available:
                # Unknown tool: its declared outputs are all we know; trust what matches.
                self.resolution.references.append(
                    ResolvedReference(step, argument, ref, producer, None))
                return
        if output is not None:
            self.resolution.references.append(
                ResolvedReference(step, argument, ref, producer, output))
            return
        self.resolution.unkeyed.add(step.position)
        guess = _closest(ref.key, available) or (available[0] if len(available) == 1 else None)
        producer_name = tool.name if tool else (producer.tool or "?")
        suggestions = []
        if guess and ref.span.pointer is not None:
            suggestions.append(Suggestion(
                f"use `{format_reference(ref.step, guess)}`",
                (Edit(ref.span.pointer, format_reference(ref.step, guess)),),
                "machine-applicable" if len(available) == 1 else "maybe-incorrect",
            ))
        self.diagnostics.append(
            make(
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
        )

    def malformed(self, step: Step, argument: Argument, value: MalformedReference) -> None:
        guess_key: str | None = None
        if value.step is not None:
            producer = self._earlier(step, value.step)
            declared = (step.dependence_content or {}).get(value.step)
            tool = self.resolution.tools.get(producer.position) if producer else None
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
        self.diagnostics.append(
            make(
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
        )


def _label(step: Step) -> str:
    return str(step.index) if step.index is not None else f"at position {step.position}"


def _closest(name: str, candidates: list[str]) -> str | None:
    return _closest_of(name, tuple(candidates))


@lru_cache(maxsize=4096)
def _closest_of(name: str, candidates: tuple[str, ...]) -> str | None:
    if not candidates:
        return None
    scored = sorted(
        ((SequenceMatcher(None, name.lower(), c.lower()).ratio(), c) for c in candidates),
        reverse=True,
    )
    best_score, best = scored[0]
    return best if best_score >= 0.5 else None
