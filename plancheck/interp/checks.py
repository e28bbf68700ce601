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

from collections.abc import Mapping

from plancheck.compiler.diagnostics import Diagnostic, make
from plancheck.dsl.ast import Plan, Reference, Toolset
from plancheck.interp.engine import SymbolicExecutor, run
from plancheck.typecheck.names import Resolution


def interpretation_diagnostics(plan: Plan, resolution: Resolution, toolset: Toolset
                               ) -> list[Diagnostic]:
    trace = run(plan, toolset, SymbolicExecutor(toolset))
    diagnostics: list[Diagnostic] = []
    for event in trace.events:
        reference = event.reference
        if event.kind != "use-before-definition" or not isinstance(reference, Reference):
            continue
        if event.step.index is None or reference.step >= event.step.index:
            continue  # a reference to the same or a later number: name resolution's PC207
        producer = next((s for s in plan.steps if s.index == reference.step), None)
        diagnostics.append(
            make(
                "PC501",
                f"step {event.step.index} uses `{reference.key}` of step {reference.step} before "
                f"step {reference.step} runs",
                primary=reference.span,
                label="not computed yet",
                secondary=[(producer.span, f"step {reference.step} is listed after step "
                            f"{event.step.index}")] if producer else [],
                help=["list the steps in the order they run"],
                data={"step": event.step.index, "position": event.step.position,
                      "key": event.argument, "referenced_step": reference.step},
            )
        )
    diagnostics.extend(_unused_outputs(plan, resolution, trace.consumed))
    diagnostics.extend(_unreachable(plan, resolution))
    return diagnostics


def _unused_outputs(plan: Plan, resolution: Resolution,
                    consumed: Mapping[tuple[int, str], object]
                    ) -> list[Diagnostic]:
    found = []
    for step in plan.steps:
        tool = resolution.tools.get(step.position)
        if tool is None or step.index is None:
            continue
        used = [k for k in tool.output_names if (step.index, k) in consumed]
        unused = [k for k in tool.output_names if (step.index, k) not in consumed]
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
    feeds: dict[int, set[int]] = {}  # producer position -> consumer positions
    for resolved in resolution.references:
        feeds.setdefault(resolved.producer.position, set()).add(resolved.consumer.position)
    last = plan.steps[-1].position
    reaches = {last}
    changed = True
    while changed:
        changed = False
        for producer, consumers in feeds.items():
            if producer not in reaches and consumers & reaches:
                reaches.add(producer)
                changed = True
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
