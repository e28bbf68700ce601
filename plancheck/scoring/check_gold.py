"""``plancheck check PRED --gold GOLD``: each checked prediction compared with its gold plan,
the first point of failure added to its report as diagnostics that point into the checked plan."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span
from plancheck.scoring.fpof import Locator, fpof_diagnostics
from plancheck.scoring.gold import GoldIndex
from plancheck.scoring.reference import ReferenceVerdict

if TYPE_CHECKING:
    from plancheck.compiler.driver import CheckOptions, Report

__all__ = ["add_gold_diagnostics", "prediction_answer"]


def prediction_answer(report: Report) -> tuple[str, Any] | None:
    """What the reference would score for a checked plan: ``("completion", text)`` for a raw
    completion, ``("plan", value)`` for a parsed plan, or None when the input holds nothing to
    compare (a file that could not be read, a record that is not JSON)."""
    from plancheck.formats.records import RECORD_PLAN_FIELDS
    from plancheck.formats.sniff import file_kind

    record = report.record_data
    if isinstance(record, dict):
        for key in RECORD_PLAN_FIELDS:
            if key in record:
                held = record[key]
                return ("completion", held) if isinstance(held, str) else ("plan", held)
        return None
    if report.value is None and report.plan is not None:  # a DSL plan
        from plancheck.corpus.builtin import builtin_toolset
        from plancheck.dsl.printer import plan_to_json

        # The DSL does not write outputs; they are the tools' (DisasterBench gold lists them).
        return "plan", plan_to_json(report.plan, builtin_toolset())
    if report.record is not None:  # an element of a JSON array of plans
        return ("plan", report.value) if report.value is not None else None
    text = report.lines.text if report.lines is not None else None
    if text is None or report.file is None:
        return None
    kind = file_kind(report.file, text)
    if kind == "json":
        try:
            return "plan", json.loads(text)
        except (ValueError, RecursionError):
            pass  # damaged JSON: the reference reads it as a completion
    elif kind != "text":
        return None  # a batch or DSL file's own diagnostics: its plans have their reports
    return "completion", text


def _report_locator(report: Report) -> Locator:
    steps = {step.position: step for step in report.plan.steps} if report.plan else {}
    root = report.plan.span if report.plan is not None else None

    def locate(position: int | None, path: str | None) -> Span | None:
        if position is None:
            return root
        step = steps.get(position)
        if step is None:
            return root
        if not path:
            return step.span
        head, _, rest = path.partition("/")
        if head == "inputs" and rest:
            argument = step.arg(rest)
            return argument.span if argument is not None else step.field_span("inputs")
        return step.field_span(head)

    return locate


def _locator_agrees(report: Report, verdict: ReferenceVerdict) -> bool:
    """Whether the checked IR lists the same steps the reference compared (so that pointers
    into the IR point at the steps the diagnostics talk about)."""
    plan, prediction = report.plan, verdict.prediction
    if plan is None or prediction is None:
        return plan is not None
    by_position = {step.position: step for step in plan.steps}
    for i, item in enumerate(prediction):
        step = by_position.get(i)
        if step is None or step.tool != item.get("agent"):
            return False
    return True


def add_gold_diagnostics(
    report: Report, gold: GoldIndex, options: CheckOptions | None = None
) -> None:
    """Compare a checked prediction (a :class:`plancheck.compiler.driver.Report`) with its gold
    plan and add the gold-comparison diagnostics to the report."""
    from plancheck.scoring.reference import score_completion, score_plan

    answer = prediction_answer(report)
    if answer is None:
        return
    task = gold.get(report.task_id)
    if task is None:
        report.add([_gold_not_found(report, gold)], options)
        return
    strict = bool(getattr(options, "strict_json", False))
    kind, payload = answer
    verdict = (
        score_completion(payload, task.prepared, strict=strict)
        if kind == "completion"
        else score_plan(payload, task.prepared, strict=strict)
    )
    locate = _report_locator(report) if _locator_agrees(report, verdict) else None
    if locate is None and report.plan is not None:
        root = report.plan.span

        def locate(_position: int | None, _path: str | None) -> Span | None:
            return root

    report.add(fpof_diagnostics(verdict, task, locate), options)


def _gold_not_found(report: Report, gold: GoldIndex) -> Diagnostic:
    if report.task_id is None:
        message = "the prediction names no task id, so no gold plan can be matched to it"
    else:
        message = f"the gold file {gold.file} has no task {report.task_id!r}"
    root = report.plan.span if report.plan is not None else None
    return make(
        "PC004",
        message,
        primary=root,
        label="no gold plan for this prediction",
        data={"task_id": report.task_id, "gold": gold.file},
    )
