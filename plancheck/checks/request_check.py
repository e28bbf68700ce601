"""The request rules (``PC9xx``): their registry, and the check phase that runs them on a plan
given the request it answers.

A request rule is a :class:`~plancheck.checks.rule.Rule` of the ``request`` phase (option
``request``, no step hooks: it reads the whole plan once, with the request) with a
``check_request`` method; adding one is a module under ``rules/`` and a line in
:data:`REQUEST_RULES`. They are not in the step walk's registry: a plan checked without a
request pays nothing for them.

Where the request comes from, in this order: the text the caller gives (``check(...,
task=)``, ``--task``), the text a task-id table gives for the plan's record (``--tasks``),
or, when asked (``--task-fields``), the record's own field
(:data:`~plancheck.checks.request.REQUEST_FIELDS`). Nothing is read unasked: a gold file
that holds its requests is checked as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

from plancheck.checks.request import Request, read_request, request_of
from plancheck.checks.rules.invented_values import InventedValues
from plancheck.checks.rules.request_steps import RequestSteps
from plancheck.checks.rules.unused_request_inputs import UnusedRequestInputs
from plancheck.checks.rules.value_kinds import ValueKinds
from plancheck.diagnostics.model import Diagnostic
from plancheck.diagnostics.span import Span, escape_pointer
from plancheck.ir.nodes import Argument, Literal, Plan, Step, Toolset

__all__ = ["PER_CALL_CODES", "REQUEST_RULES", "RequestPhase", "RequestRule", "call_findings",
           "check_request"]


class RequestRule(Protocol):
    name: str
    codes: tuple[str, ...]

    def check_request(self, plan: Plan, toolset: Toolset, request: Request,
                      copied: frozenset[tuple[int, str]]) -> list[Diagnostic]: ...


REQUEST_RULES: Final[tuple[RequestRule, ...]] = (
    InventedValues(),
    UnusedRequestInputs(),
    RequestSteps(),
    ValueKinds(),
)


# The codes of the rules that judge one call by itself (a guard asks them call by call); the
# others judge the plan as a whole.
PER_CALL_CODES: Final = frozenset({"PC901", "PC905"})


def check_request(plan: Plan, toolset: Toolset, request: str,
                  copied: frozenset[tuple[int, str]] = frozenset(), *,
                  rules: tuple[RequestRule, ...] = REQUEST_RULES) -> list[Diagnostic]:
    """Every request rule's findings on ``plan`` against ``request`` (the user's text)."""
    read = read_request(request)
    return [found for rule in rules for found in rule.check_request(plan, toolset, read, copied)]


_PER_CALL_RULES: Final = tuple(rule for rule in REQUEST_RULES
                               if PER_CALL_CODES.issuperset(rule.codes))


def call_findings(toolset: Toolset, tool: str, arguments: Mapping[str, Any], request: str,
                  copied: frozenset[str], file: str) -> list[Diagnostic]:
    """What the per-call request rules find in one call of ``tool`` (a guard's: its spans
    point at ``/arguments/NAME`` of ``file``), the arguments named in ``copied`` copying an
    earlier result."""
    root = Span(file, pointer="")
    args = tuple(Argument(name, Literal(value, span), span) for name, value in arguments.items()
                 for span in (Span(file, pointer=f"/arguments/{escape_pointer(name)}"),))
    plan = Plan((Step(0, 0, tool, args, None, root),), root)
    return check_request(plan, toolset, request, frozenset((0, name) for name in copied),
                         rules=_PER_CALL_RULES)


class RequestPhase:
    """A check phase (see ``plancheck.compiler.driver.PlanPhase``) running the request rules:
    with ``task``, against that text; otherwise against the request of the unit's record, by
    its task id in ``tasks`` or (with ``fields``) its own field. The driver binds it to each
    unit it checks (:meth:`for_unit`); unbound, it has only ``task`` to go by."""

    __slots__ = ("fields", "request", "task", "tasks")

    def __init__(self, task: str | None = None, tasks: Mapping[str, str] | None = None,
                 fields: bool = False, request: str | None = None) -> None:
        self.task = task
        self.tasks = tasks
        self.fields = fields
        self.request = request if request is not None else task

    def for_unit(self, unit: Any) -> RequestPhase:
        """This phase for one unit the driver checks (a ``PlanUnit``: its ``task_id``, its
        name ``record`` and the ``record_data`` it was read from)."""
        if self.task is not None or (self.tasks is None and not self.fields):
            return self
        record = unit.record_data if isinstance(unit.record_data, Mapping) else None
        request = None
        if self.tasks is not None:
            request = next((self.tasks[key] for key in _task_keys(unit.task_id, record,
                                                                  unit.record)
                            if key in self.tasks), None)
        if request is None and self.fields:
            request = request_of(record)
        return RequestPhase(self.task, self.tasks, self.fields, request)

    def __call__(self, plan: Plan, toolset: Toolset) -> list[Diagnostic]:
        if self.request is None:
            return []
        return check_request(plan, toolset, self.request)

    def on_trace(self, plan: Plan, toolset: Toolset, trace: Any) -> list[Diagnostic]:
        """With the trace of a transcript holding results: an argument that copies an
        earlier result is not invented."""
        if self.request is None:
            return []
        copied = frozenset((call.index, str(flow.argument[0])) for call, flow in
                           trace.inferred() if flow.argument)
        return check_request(plan, toolset, self.request, copied)


def _task_keys(task_id: Any, record: Mapping[str, Any] | None, name: Any) -> list[str]:
    """The ids a unit may be listed under in a task table, most specific first (its name
    last: a DORA task of a sample is named ``<sample_id>_task<i>``)."""
    found = [task_id, *(record.get(k) for k in ("task_id", "question_id", "id"))] \
        if record is not None else [task_id]
    found.append(name)
    return [str(key) for key in found if key is not None and not isinstance(key, (dict, list))]
