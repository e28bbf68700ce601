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

from collections.abc import Container, Iterable, Mapping

from plancheck.diagnostics.findings import Findings
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.ir.nodes import Reference, Step, Toolset, ToolSignature
from plancheck.typecheck.names import PlanFacts


class DataFlow:
    """What running the plan (:func:`plancheck.interp.engine.run`) would notice, without
    computing any value, a step at a time: the references read before their step runs
    (``use-before-definition`` events, reported as ``PC501`` when the numbers say the step
    comes earlier) and the (step number, output key) slots some later step consumes. Follows
    ``run`` step for step; checking needs only this, and values cost allocations."""

    __slots__ = ("consumed", "executed", "facts", "listed", "produced")

    def __init__(self, facts: PlanFacts) -> None:
        self.facts = facts
        self.listed = facts.by_index.keys()  # the step numbers of the plan
        self.executed: set[int] = set()
        self.produced: set[tuple[int, str]] = set()
        self.consumed: set[tuple[int, str]] = set()

    def run_step(self, step: Step, toolset: Toolset, findings: Findings) -> None:
        index = step.index
        if index is not None:
            self.start(index)
        if step.tool is None:
            return
        for argument in step.args:
            for value in argument.references():
                if not self.read(value.step, value.key) and (
                    value.step in self.listed
                    and value.step not in self.executed
                    # A reference to the same or a later number is name resolution's PC207.
                    and index is not None
                    and value.step < index
                ):
                    findings.report("PC501", _used_early, step, argument.name, value,
                                    self.facts)
        if index is not None:
            signature = toolset.tool(step.tool)
            self.finish(index, signature.output_names if signature else (step.outputs or ()))

    # A step runs in three moves: it starts (recorded before it reads anything, so that a
    # reference to itself is not "later"), reads its references, and makes its outputs.

    def start(self, index: int) -> None:
        self.executed.add(index)

    def read(self, number: int, key: str) -> bool:
        """Read output ``key`` of step ``number``: False when it has not been made yet."""
        slot = (number, key)
        if slot in self.produced:
            self.consumed.add(slot)
            return True
        return False

    def finish(self, index: int, outputs: Iterable[str]) -> None:
        produced = self.produced
        for key in outputs:
            produced.add((index, key))

    def run_reads(self, index: int, reads: Iterable[tuple[str, tuple[int, str]]],
                  outputs: Iterable[str]) -> None:
        """Run a step numbered ``index`` whose inputs read the slots of ``reads`` ((input,
        (step number, output key)) pairs), each made already (so none is read early), and
        that makes ``outputs``: :meth:`start`, :meth:`read` of each, :meth:`finish`."""
        self.executed.add(index)
        produced = self.produced
        consumed = self.consumed
        for _, slot in reads:
            if slot in produced:
                consumed.add(slot)
        for key in outputs:
            produced.add((index, key))


def _used_early(step: Step, argument: str, reference: Reference,
                facts: PlanFacts) -> Diagnostic:
    positions = facts.by_index.get(reference.step)
    producer = facts.step(positions[0]) if positions else None
    return make(
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


def unused_outputs(facts: PlanFacts, consumed: Container[tuple[int, str]],
                   findings: Findings, *, fields_of_one_response: bool = False) -> None:
    """``PC502`` for each step of a known tool some of whose outputs feed later steps and
    others none (``consumed``: the slots read, once the whole plan has run); nothing when the
    pool's outputs are ``fields_of_one_response`` (:attr:`Toolset.outputs_are_fields`)."""
    if fields_of_one_response:
        return  # reading some fields of a response and not others is what API calls do
    for position in facts.order:
        tool = facts.tools.get(position)
        index = facts.indices[position]
        if tool is None or index is None:
            continue
        names = tool.output_names
        if len(names) < 2:
            continue  # a lone output is either used or the step's result: nothing to say
        used = [k for k in names if (index, k) in consumed]
        unused = [k for k in names if (index, k) not in consumed]
        if not used or not unused:
            continue
        findings.report("PC502", _unused, position, tool, unused, used, facts)


def _unused(position: int, tool: ToolSignature, unused: list[str], used: list[str],
            facts: PlanFacts) -> Diagnostic:
    step = facts.step(position)
    listed = ", ".join(f"`{k}`" for k in unused)
    return make(
        "PC502",
        f"step {step.index} (`{tool.name}`) produces {listed}, which no step uses",
        primary=step.outputs_span or step.tool_span or step.span,
        label="never consumed",
        notes=["its other outputs feed later steps; was a consumer meant to use "
               + ("these" if len(unused) > 1 else "this") + "?"],
        data={"step": step.index, "position": step.position, "tool": tool.name,
              "unused": unused, "used": used},
    )


def unreachable_steps(facts: PlanFacts, fed_by: Mapping[int, list[int]],
                      findings: Findings) -> None:
    """``PC503`` for each step of a known tool whose results do not reach the plan's last
    step along the references (``fed_by``: the positions of the steps each step's references
    read, by its position)."""
    order = facts.order
    if len(order) < 2:
        return
    # The steps whose results flow into the last step: a walk back along the references.
    last = order[-1]
    reaches = {last}
    pending = [last]
    while pending:
        for producer in fed_by.get(pending.pop(), ()):
            if producer not in reaches:
                reaches.add(producer)
                pending.append(producer)
    tools = facts.tools
    for position in order:
        if position in reaches or position not in tools:
            continue
        findings.report("PC503", _unreachable_step, facts, position)


def _unreachable_step(facts: PlanFacts, position: int) -> Diagnostic:
    step = facts.step(position)
    return make(
        "PC503",
        f"the results of step {step.index} (`{step.tool}`) do not reach the last step",
        primary=step.tool_span or step.span,
        label="a separate result",
        data={"step": step.index, "position": step.position, "tool": step.tool},
    )
