"""Check a plan in one pass over its steps, and a JSON plan straight from its JSON where it can.

The rules (:mod:`plancheck.checks`: names, references, dependencies, types, symbolic
execution, each a registered object with its phase) work a step at a time against facts
about the other steps (:class:`~plancheck.typecheck.names.PlanFacts`), so
:func:`check_plan_steps` runs them all in one pass over a lowered plan (what
:func:`~plancheck.compiler.driver.check_plan` does), looping over the registry.

:func:`check_json_plan` goes further for the batch scorer. Most steps it sees are clean, and
for a clean step each rule's check comes down to a few lookups: its tool is known, its input
keys are the tool's, each reference names an output of an earlier step's known tool, each
literal is a plain path of a fitting kind. Such a step keeps its JSON (a
:class:`~plancheck.checks.view.StepView` that reads its inputs once); when every rule finds it
clean (:meth:`~plancheck.checks.rule.Rule.clean`), the rules report what they find from the
JSON and the step is never lowered. Every other step is lowered and each rule runs its check
on the IR. So every finding comes from the one implementation of each check.

Findings keep the phases' order, and their diagnostics are built only when asked for (a
batch scorer needs only the codes). The result is what ``lower_plan`` followed by
``check_plan`` reports, diagnostic for diagnostic, and with ``form=True`` the plan's
canonical form (:func:`~plancheck.interp.canonical.form_and_completeness`);
``tests/compiler/test_checker.py`` checks both against the rules run a phase at a time
(``tests/support/phased.py``), on generated plans, mutated plans and random edits of their
JSON.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Final

from plancheck.checks.registry import rule_set
from plancheck.checks.run import OnePass
from plancheck.checks.tables import tables_for
from plancheck.checks.view import StepView, reference_in
from plancheck.compiler.lowering import (
    CleanFields,
    clean_fields,
    clean_step,
    empty_plan,
    lower_step,
    step_span,
)
from plancheck.diagnostics.findings import Findings
from plancheck.diagnostics.limits import MAX_FIELDS, MAX_STEPS, plan_limit
from plancheck.diagnostics.model import Diagnostic
from plancheck.diagnostics.span import Span
from plancheck.interp.canonical import FormWriter, literal_term
from plancheck.ir.nodes import Plan, Step, Toolset
from plancheck.typecheck.names import PlanFacts

__all__ = ["Checked", "check_json_plan", "check_plan_steps"]

_ROOT: Final = Span("<prediction>", pointer="")
_JSON_RULES: Final = rule_set()  # what check_json_plan runs: all but PC503


class Checked:
    """What checking a plan found (in the order the pipeline reports it) and, when asked for,
    its canonical form and whether all its values were known."""

    __slots__ = ("complete", "findings", "form")

    def __init__(self, findings: Findings, form: tuple[str, ...] | None, complete: bool) -> None:
        self.findings = findings
        self.form = form
        self.complete = complete

    def codes(self) -> list[str]:
        return self.findings.codes()

    def diagnostics(self) -> list[Diagnostic]:
        return self.findings.diagnostics()


def check_json_plan(
    value: list[Any], toolset: Toolset, root: Span = _ROOT, *, form: bool = False
) -> Checked:
    """Check the plan ``value`` (a JSON array of steps) as ``lower_plan(value, root)`` and
    ``check_plan(plan, toolset)`` would, and write its canonical form when ``form``."""
    tables = tables_for(toolset)
    findings = Findings()
    if len(value) > MAX_STEPS:
        return _too_large(value, root)
    if not value:
        findings.report("PC112", empty_plan, root)
    clean: dict[int, CleanFields] = {}
    facts = PlanFacts(partial(_lower_clean, clean, root))
    views: list[StepView] = []
    add = facts.add
    tool_entry = tables.tool
    # The fields plan_limit counts: a clean step's are counted here (its JSON is read no
    # further before the loop ends); before the first step that is not clean is lowered,
    # the whole plan's are counted.
    counted: int | None = 0
    for position, item in enumerate(value):
        fields = clean_fields(item) if type(item) is dict else None
        if fields is not None:
            if counted is not None:
                counted += 6 + len(fields[2]) + len(fields[4]) + len(fields[5]) + (
                    0 if fields[3] is None else len(item["dependence_content"]))
            entry = tool_entry(fields[0])
            clean[position] = fields
            if entry is not None:
                add(position, fields[1], fields[5], entry.signature)
                views.append(StepView(facts, position, fields[1], fields[0], entry.signature,
                                      None, fields, entry))
            else:
                add(position, fields[1], fields[5], None)
                views.append(StepView(facts, position, fields[1], fields[0], None))
            continue
        if counted is not None:
            if plan_limit(value, root) is not None:
                return _too_large(value, root)
            counted = None
        step, reported = lower_step(item, position, root, unclean=True)
        if reported:
            findings.extend(reported)
        if step is not None:
            tool = step.tool
            add(position, step.index, step.outputs,
                toolset.tool(tool) if tool is not None else None, step)
            views.append(StepView.of_step(facts, step))

    if counted is not None and counted > MAX_FIELDS:
        return _too_large(value, root)
    OnePass(facts, toolset, findings, tables, _JSON_RULES).run_views(views)
    if not form:
        return Checked(findings, None, True)
    writer = FormWriter(toolset)  # the steps run again, now that each is settled or not
    for view in views:
        _write(writer, view)
    written, complete = writer.form()
    return Checked(findings, written, complete)


def _too_large(value: list[Any], root: Span) -> Checked:
    """What checking a plan past the work limits finds: its ``PC006`` alone."""
    too_large = plan_limit(value, root)
    assert too_large is not None
    findings = Findings()
    findings.add(too_large)
    return Checked(findings, None, False)


def _write(writer: FormWriter, view: StepView) -> None:
    """Add the step to the canonical form (a settled step from its inputs as read)."""
    if not view.settled:
        writer.run_step(view.step())
        return
    fields = view.fields
    assert fields is not None and view.index is not None
    terms = {}
    for name, value in fields[4].items():  # as read_inputs read them, in input order
        parts = reference_in(value)
        terms[name] = writer.read(*parts) if parts is not None else literal_term(value)
    writer.call(fields[0], view.index, terms, fields[5])


def check_plan_steps(
    plan: Plan,
    toolset: Toolset,
    *,
    types: bool = True,
    interpret: bool = True,
    unreachable: bool = False,
    kept: frozenset[str] = frozenset(),
) -> Findings:
    """Check a lowered plan as the rules do a phase at a time (names, dependencies,
    types unless ``types`` is false, symbolic execution unless ``interpret`` is false, with
    ``PC503`` when ``unreachable``, the rules of off-by-default codes when one is ``kept``), in
    one pass over its steps: the same findings, in the same order."""
    facts = PlanFacts.of_plan(plan, toolset)
    findings = Findings()
    OnePass(facts, toolset, findings, None,  # (no step is read from JSON)
            rule_set(types=types, interpret=interpret, unreachable=unreachable, kept=kept)
            ).run_steps(plan.steps)
    return findings


def _lower_clean(clean: dict[int, CleanFields], root: Span, position: int) -> Step:
    """The IR of a step that lowered cleanly (built when a check or a diagnostic needs it)."""
    return clean_step(clean[position], position, step_span(root, position))
