"""Diagnostics found by executing a plan symbolically.

* ``PC501`` use before definition: in the order the steps are listed, an input reads a result
  that no step has produced yet although the numbers say it comes earlier (the listing says
  later). A reference to the same or a higher number is a forward reference, which name
  resolution reports (``PC207``); it is not reported twice.
* ``PC502`` an output produced and never consumed, reported for steps whose other outputs feed
  later steps (a final step's outputs are the plan's results).
* ``PC503`` (info) a step whose results do not reach the plan's last step.
"""

from __future__ import annotations

from collections.abc import Container

from plancheck.compiler.diagnostics import Diagnostic, make
from plancheck.dsl.ast import Plan, Reference, Step, Toolset
from plancheck.typecheck.names import Resolution


def interpretation_diagnostics(plan: Plan, resolution: Resolution, toolset: Toolset,
                               *, unreachable: bool = True) -> list[Diagnostic]:
    """PC501 and PC502, and PC503 unless ``unreachable`` is false (it is off by default, and
    checking a plan need not build diagnostics that will be dropped)."""
    early, consumed = _data_flow(plan, toolset)
    diagnostics: list[Diagnostic] = []
    for step, argument, reference in early:
        if step.index is None or reference.step >= step.index:
            continue  # a reference to the same or a later number: name resolution's PC207
        producer = next((s for s in plan.steps if s.index == reference.step), None)
        diagnostics.append(
            make(
                "PC501",
                f"step {step.index} uses `{reference.key}` of step {reference.step} before "
                f"step {reference.step} runs",
                primary=reference.span,
                label="not computed yet",
                secondary=[(producer.span, f"step {reference.step} is listed after step "
                            f"{step.index}")] if producer else [],
                help=["list the steps in the order they run"],
                data={"step": step.index, "position": step.position,
                      "key": argument, "referenced_step": reference.step},
            )
        )
    diagnostics.extend(_unused_outputs(plan, resolution, consumed))
    if unreachable:
        diagnostics.extend(_unreachable(plan, resolution))
    return diagnostics


def _data_flow(
    plan: Plan, toolset: Toolset
) -> tuple[list[tuple[Step, str, Reference]], set[tuple[int, str]]]:
    """What running the plan (:func:`plancheck.interp.engine.run`) would notice, without
    computing any value: the references read before their step runs (``use-before-definition``
    events, in order) and the (step number, output key) slots some later step consumes.
    Follows ``run`` step for step; checking needs only this, and values cost allocations."""
    listed = {s.index for s in plan.steps if s.index is not None}
    executed: set[int] = set()
    produced: set[tuple[int, str]] = set()
    consumed: set[tuple[int, str]] = set()
    early: list[tuple[Step, str, Reference]] = []
    for step in plan.steps:
        index = step.index
        if index is not None:
            # Recorded before the step runs so that a reference to itself is not "later".
            executed.add(index)
        if step.tool is None:
            continue
        for argument in step.args:
            value = argument.value
            if isinstance(value, Reference):
                slot = (value.step, value.key)
                if slot in produced:
                    consumed.add(slot)
                elif value.step in listed and value.step not in executed:
                    early.append((step, argument.name, value))
        if index is not None:
            signature = toolset.tool(step.tool)
            outputs = signature.output_names if signature else (step.outputs or ())
            for key in outputs:
                produced.add((index, key))
    return early, consumed


def _unused_outputs(plan: Plan, resolution: Resolution,
                    consumed: Container[tuple[int, str]]
                    ) -> list[Diagnostic]:
    found = []
    for step in plan.steps:
        tool = resolution.tools.get(step.position)
        if tool is None or step.index is None:
            continue
        names = tool.output_names
        if len(names) < 2:
            continue  # a lone output is either used or the step's result: nothing to say
        used = [k for k in names if (step.index, k) in consumed]
        unused = [k for k in names if (step.index, k) not in consumed]
        if not used or not unused:
            continue
        listed = ", ".join(f"`{k}`" for k in unused)
        found.append(
            make(
                "PC502",
                f"step {step.index} (`{tool.name}`) produces {listed}, which no step uses",
                primary=step.outputs_span or step.tool_span or step.span,
                label="never consumed",
                notes=["its other outputs feed later steps; was a consumer meant to use "
                       + ("these" if len(unused) > 1 else "this") + "?"],
                data={"step": step.index, "position": step.position, "tool": tool.name,
                      "unused": unused, "used": used},
            )
        )
    return found


def _unreachable(plan: Plan, resolution: Resolution) -> list[Diagnostic]:
    if len(plan.steps) < 2:
        return []
    fed_by: dict[int, list[int]] = {}  # consumer position -> producer positions
    for resolved in resolution.references:
        fed_by.setdefault(resolved.consumer.position, []).append(resolved.producer.position)
    # The steps whose results flow into the last step: a walk back along the references.
    last = plan.steps[-1].position
    reaches = {last}
    pending = [last]
    while pending:
        for producer in fed_by.get(pending.pop(), ()):
            if producer not in reaches:
                reaches.add(producer)
                pending.append(producer)
    found = []
    for step in plan.steps:
        if step.position in reaches or step.position not in resolution.tools:
            continue
        found.append(
            make(
                "PC503",
                f"the results of step {step.index} (`{step.tool}`) do not reach the last step",
                primary=step.tool_span or step.span,
                label="a separate result",
                data={"step": step.index, "position": step.position, "tool": step.tool},
            )
        )
    return found
