"""The Python API: check plans and trajectories, score predictions, load toolsets.

    import plancheck
    report = plancheck.check(plan_json)          # a list, a JSON/DSL/completion string or a Path
    if not report.ok:
        print(report.to_feedback())              # compact text for a model to repair from

Checking never raises on bad plans: problems come back as diagnostics in the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plancheck.compiler.driver import (
    CheckOptions,
    PlanPhase,
    Report,
    check_in_memory,
    check_source,
    check_unit,
    one_report,
)
from plancheck.compiler.frontends import parse_source, value_units
from plancheck.compiler.units import PlanUnit
from plancheck.corpus.pool_values import load_toolset
from plancheck.diagnostics.positions import LineIndex, Positions
from plancheck.diagnostics.span import Span
from plancheck.fileio import read_text_limited
from plancheck.formats.sniff import file_kind
from plancheck.ir.json_data import MAX_DEPTH, json_data_problem
from plancheck.ir.nodes import Plan, Toolset

__all__ = ["check", "check_trajectory", "load_toolset", "score"]


def _toolset(toolset: Any) -> Toolset:
    return toolset if isinstance(toolset, Toolset) else load_toolset(toolset)


def check(
    plan: Any,
    toolset: Toolset | str | Path | None = None,
    *,
    strict: bool = False,
    types: bool = True,
    interpret: bool = True,
    name: str = "<plan>",
    policies: Any = None,
    prefix: bool = False,
    profile: str = "default",
    options: CheckOptions | None = None,
    provenance: bool = True,
    task: str | None = None,
) -> Report:
    """Check one plan.

    ``plan`` may be a JSON value (the list of steps, or a wrapper object), a string (JSON, a raw
    model completion, or DSL source), a :class:`pathlib.Path`, or a :class:`Plan`.
    ``policies`` (a policy file's path, DSL text with ``policy NAME { ... }`` blocks, or a
    loaded :class:`~plancheck.policy.loader.PolicySet`) are decided on the plan as well (with
    ``prefix``, a ``require A`` still to be met is not a violation); a policy that cannot be
    used raises :class:`~plancheck.policy.loader.PolicyError`, whose ``diagnostics`` say why.
    ``profile`` decides which codes block (:mod:`plancheck.compiler.profiles`: ``default``,
    ``guard`` where every schema violation is an error, ``strict``; an unknown name raises
    ``ValueError``); ``options`` (a :class:`CheckOptions`) replaces ``strict``, ``types``,
    ``interpret`` and ``provenance``, and its severity overrides win over the profile's.
    For tool calls whose results the input holds (an OpenAI or Anthropic transcript), an
    argument that copies an earlier result is a flow from it (``report.flows``; policies follow
    it; ``PC306`` when its type is wrong), unless ``provenance`` is False.
    ``task`` is the user's request the plan answers: the request rules (``PC9xx``,
    docs/task-checks.md) check the plan against it.
    """
    tools = _toolset(toolset)
    if options is None:
        options = CheckOptions(strict_json=strict, types=types, interpret=interpret,
                               provenance=provenance)
    options = _with_profile(options, profile)
    phases = _policy_phases(policies, tools, prefix) + _request_phases(task)
    own_pool = toolset is None  # DORA's trajectories against DORA's tools, as the CLI does
    if isinstance(plan, Path):
        from plancheck.compiler.sources import load_source

        source = load_source(str(plan), strict=strict)
        return one_report(list(check_source(source, tools, options, phases,
                                         own_pool=own_pool)), str(plan))
    if isinstance(plan, str):
        kind = file_kind(name, plan)
        source = parse_source(plan, name, strict=strict, kind=kind)
        return one_report(list(check_source(source, tools, options, phases,
                                         own_pool=own_pool)), name)
    if not isinstance(plan, Plan):
        refused = _not_json_data(plan, name, "plan")
        if refused is not None:  # what JSON cannot hold, lowering need not expect
            return refused
    return check_in_memory(plan, tools, options, name=name, extra_phases=phases,
                           own_pool=own_pool)


def _with_profile(options: CheckOptions, profile: str) -> CheckOptions:
    """``options`` with ``profile``'s severity overrides after its own (its own win)."""
    from plancheck.compiler.profiles import profile_overrides

    overrides = profile_overrides(profile)  # (raises ValueError for an unknown name)
    if not overrides:
        return options
    from plancheck.records import replace

    return replace(options, severity_overrides=(*options.severity_overrides, *overrides))


def _policy_phases(policies: Any, toolset: Toolset, prefix: bool) -> list[PlanPhase]:
    """The check phase deciding ``policies`` (none without them). Loading them never needs z3;
    deciding them on a whole plan does (:mod:`plancheck.smt.policy_check`)."""
    if policies is None:
        return []
    from plancheck.smt.policy_check import policy_phase
    from plancheck.smt.policy_lint import usable_policies

    return [policy_phase(usable_policies(policies, toolset), complete=not prefix)]


def _request_phases(task: str | None) -> list[PlanPhase]:
    """The phase checking a plan against the request ``task`` (none without one)."""
    if task is None:
        return []
    if not isinstance(task, str):
        raise TypeError(f"task must be the request's text, not {type(task).__name__}")
    from plancheck.checks.request_check import RequestPhase

    return [RequestPhase(task)]


def _not_json_data(value: Any, name: str, what: str, max_depth: int | None = None
                   ) -> Report | None:
    """The ``PC100`` report of a value JSON cannot hold (a key that is not a string, a value
    inside itself, a shared part repeated past any size a walk can finish), or None."""
    problem = json_data_problem(value, max_depth=max_depth)
    if problem is None:
        return None
    from plancheck.diagnostics.model import make

    return Report(name, None, None, [make(
        "PC100", f"the {what} is not JSON data: {problem}",
        primary=Span(name, pointer="")).with_context(file=name, record=None)])


def score(
    prediction: Any,
    gold: Any,
    toolset: Toolset | str | Path | None = None,
    *,
    strict: bool = False,
) -> dict[str, Any]:
    """Score one prediction against one gold plan, as ``plancheck score`` does.

    ``prediction`` is a raw completion (a string) or a plan value; ``gold`` the gold plan (a
    list of steps). Returns the per-item record: ``em``, ``tool_acc``, ``param_acc``,
    ``dep_acc`` (the reference evaluator's verdicts, exactly), ``exec_equiv``, ``fpof_type``
    (``None`` when correct), ``fpof_step``, ``fpof_category`` and ``diagnostics``. A
    prediction JSON cannot hold (inside itself, ...) is a format error; such a gold plan
    raises ``ValueError``.
    """
    import json

    from plancheck.scoring.batch import ItemScorer, RawRecord, ScoreOptions
    from plancheck.scoring.gold import GoldIndex

    problem = json_data_problem(gold)
    if problem is not None:
        raise ValueError(f"the gold plan is not JSON data: {problem}")
    if not isinstance(prediction, str) and json_data_problem(prediction) is not None:
        prediction = {"not JSON data": json_data_problem(prediction)}  # scored as no plan
    index = GoldIndex.parse(json.dumps(gold), "<gold>")
    scorer = ItemScorer(index, _toolset(toolset), ScoreOptions(strict=strict, extended=False))
    key = "completion" if isinstance(prediction, str) or prediction is None else "plan"
    item = scorer.score(RawRecord("<prediction>", 1, value={"id": "prediction", key: prediction}))
    assert item.line is not None
    record: dict[str, Any] = json.loads(item.line)
    record.pop("id", None)
    record.pop("task_id", None)
    return record


def check_trajectory(trajectory: Any, toolset: Toolset | str | Path | None = None, *,
                     name: str = "<trajectory>", options: CheckOptions | None = None,
                     policies: Any = None, prefix: bool = False,
                     provenance: bool | None = None, profile: str = "default",
                     task: str | None = None) -> Report:
    """Check one trajectory against a toolset and return the report; never raises on bad input.

    ``trajectory`` is a JSON value, JSON text or a :class:`~pathlib.Path`; ``toolset`` a
    :class:`~plancheck.ir.nodes.Toolset`, a toolset path (an MCP or OpenAI pool, ...), or
    ``None`` for the built-in pool. The value is read as a trajectory even when it would not
    be recognised as one in a file. ``policies``, ``prefix``, ``profile`` and ``provenance``
    as for :func:`check` (``provenance`` None: as ``options`` say, by default on); ``task``
    the user's request, as for :func:`check`.
    """
    import json

    from plancheck.compiler.trajectories import lower_trajectory

    toolset = _toolset(toolset)
    options = _with_profile(options or CheckOptions(), profile)
    if provenance is not None and provenance != options.provenance:
        from plancheck.records import replace

        options = replace(options, provenance=provenance)
    phases = _policy_phases(policies, toolset, prefix) + _request_phases(task)
    text = None
    if isinstance(trajectory, Path):
        name, text = str(trajectory), read_text_limited(trajectory, "utf-8-sig")
    elif isinstance(trajectory, str):
        text = trajectory
    if text is not None:
        try:
            trajectory = json.loads(text)
        except (ValueError, RecursionError):  # ValueError: also an integer of 4,301+ digits
            units = parse_source(text, name, kind="json").units  # reports the JSON error
            return check_unit(units[0], toolset, options, phases)
    refused = _not_json_data(trajectory, name, "trajectory", max_depth=MAX_DEPTH)
    if refused is not None:
        return refused
    lines = LineIndex(text or "")
    from plancheck.compiler.dora_native import lower_dora
    from plancheck.dora.formats import find_trajectories

    # First the one reading every entry point shares: tool calls in any shape plancheck knows
    # (a message, a message list, a transcript, ...), a DORA document, a trajectory.
    read = parse_source(text, name, kind="json").units if text is not None else \
        value_units(trajectory, name, strict=options.strict_json)
    if len(read) == 1 and read[0].plan is not None:
        return check_unit(read[0], toolset, options, phases)
    found = find_trajectories(trajectory)
    plan: Plan | None
    if found is not None and len(found) == 1:  # DORA's own formats (call/args/obs)
        plan, diagnostics = lower_dora(found[0].value, Span(name, pointer=found[0].pointer),
                                       name=found[0].name)
    else:
        plan, diagnostics = lower_trajectory(trajectory, Span(name, pointer=""))
    region = (0, len(text)) if text else None
    unit = PlanUnit(name, None, Positions(name, lines, json_region=region), plan=plan,
                    diagnostics=diagnostics, value=trajectory)  # its results: provenance
    return check_unit(unit, toolset, options, phases)
