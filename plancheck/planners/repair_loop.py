"""The checker in the loop: check a proposed plan, and while it has errors, hand the model
compact feedback and ask for the whole corrected plan, up to a number of rounds.

The same loop serves plancheck's planners (``plancheck plan --check``) and anyone else's agent:

    import plancheck

    def generate(feedback: str) -> str:        # any callable: feedback text -> new completion
        messages.append({"role": "user", "content": feedback})
        return my_model(messages)

    result = plancheck.repair(generate, first_completion, toolset=None, max_rounds=3)
    result.ok, result.completion, result.plan, result.attempts

Every attempt is kept with its diagnostics. What ``generate`` raises propagates unchanged: a
failure to reach the model is never turned into plan feedback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plancheck.compiler.driver import CheckOptions, Report
from plancheck.ir.nodes import Plan, Toolset

__all__ = ["Attempt", "RepairResult", "check_completion", "feedback_message", "repair"]

DEFAULT_REPAIR_PROMPT = (
    "plancheck checked your plan against the tool list and found problems:\n"
    "{feedback}\n\n"
    "Write the whole corrected plan: one line that starts with \"The structured task plan is:\" "
    "followed by the complete JSON array (every step, not only the changed ones), and nothing "
    "after it.\n"
)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One plan the model proposed and what the checker said about it."""

    round: int  # 0 for the first proposal, then one per repair round
    completion: str
    report: Report
    feedback: str | None = None  # the feedback sent back for this attempt, if any

    @property
    def ok(self) -> bool:
        return self.report.ok

    @property
    def errors(self) -> int:
        return len(self.report.errors)

    def to_record(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "completion": self.completion,
            "ok": self.ok,
            "errors": self.errors,
            "diagnostics": [_diagnostic_record(d) for d in self.report.diagnostics
                            if d.severity.name in ("ERROR", "WARNING")],
            "feedback": self.feedback,
        }


def _diagnostic_record(diagnostic: Any) -> dict[str, Any]:
    span = diagnostic.span
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity.name.lower(),
        "message": diagnostic.message,
        "path": span.pointer if span is not None else None,
    }


@dataclass(slots=True)
class RepairResult:
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def final(self) -> Attempt:
        """The attempt to keep: the last clean one, else one that holds a plan with the fewest
        errors (the latest among equals), so a worse answer in a late round never replaces a
        better one."""
        clean = [a for a in self.attempts if a.ok]
        if clean:
            return clean[-1]
        return min(reversed(self.attempts), key=lambda a: (a.report.plan is None, a.errors))

    @property
    def ok(self) -> bool:
        return self.final.ok

    @property
    def completion(self) -> str:
        return self.final.completion

    @property
    def report(self) -> Report:
        return self.final.report

    @property
    def plan(self) -> Plan | None:
        return self.final.report.plan

    @property
    def rounds(self) -> int:
        """How many times the model was asked to repair."""
        return len(self.attempts) - 1

    def to_records(self) -> list[dict[str, Any]]:
        return [a.to_record() for a in self.attempts]


def check_completion(completion: Any, toolset: Toolset, *, name: str = "<completion>") -> Report:
    """Check a raw completion (text, searched for a plan), a JSON value or a :class:`Plan`."""
    if not isinstance(completion, str):
        import plancheck

        return plancheck.check(completion, toolset, name=name)
    from plancheck.compiler.driver import check_source
    from plancheck.compiler.frontends import parse_source

    source = parse_source(completion, name, kind="text")
    reports = list(check_source(source, toolset, CheckOptions()))
    if len(reports) == 1:
        return reports[0]
    merged = Report(name, None, next((r.plan for r in reports if r.plan is not None), None))
    for report in reports:
        merged.diagnostics.extend(report.diagnostics)
    return merged


def feedback_message(report: Report, template: str = DEFAULT_REPAIR_PROMPT) -> str:
    """The message that asks the model to repair: the diagnostics, rendered compactly, in
    ``template`` (a ``{feedback}`` field)."""
    from plancheck.planners.prompts import fill

    return fill(template, feedback=report.to_feedback())


def _as_text(plan: Any) -> str:
    if isinstance(plan, str):
        return plan
    if isinstance(plan, Plan):
        from plancheck.dsl.printer import dump_json, plan_to_json

        return dump_json(plan_to_json(plan))
    import json

    return json.dumps(plan, ensure_ascii=False)


def repair(
    generate: Callable[[str], str],
    plan: Any,
    toolset: Toolset | str | Path | None = None,
    max_rounds: int = 3,
    *,
    template: str = DEFAULT_REPAIR_PROMPT,
    on_attempt: Callable[[Attempt], None] | None = None,
) -> RepairResult:
    """Check ``plan``; while it has errors and rounds remain, call ``generate(feedback)`` for a
    new completion and check that. ``plan`` is a completion text, a JSON value or a Plan. The
    loop also stops when the model answers exactly what it answered the round before.

    ``on_attempt`` sees each attempt as soon as it is checked (the planners use it to keep the
    attempts made before a transport failure).
    """
    if max_rounds < 0:
        raise ValueError("max_rounds must be >= 0")
    tools = toolset if isinstance(toolset, Toolset) else _load(toolset)
    result = RepairResult()
    completion = _as_text(plan)
    for round_ in range(max_rounds + 1):
        report = check_completion(plan if round_ == 0 else completion, tools)
        # A model that repeats its last answer word for word is stuck: the same feedback would
        # only get the same answer again.
        repeated = round_ > 0 and completion == result.attempts[-1].completion
        feedback = None
        if not report.ok and round_ < max_rounds and not repeated:
            feedback = feedback_message(report, template)
        attempt = Attempt(round_, completion, report, feedback)
        result.attempts.append(attempt)
        if on_attempt is not None:
            on_attempt(attempt)
        if feedback is None:
            break
        completion = generate(feedback)
    return result


def _load(spec: str | Path | None) -> Toolset:
    import plancheck

    return plancheck.load_toolset(spec)
