"""Stage 4: comparing a shaped plan with the gold plan (quirks 10-17): exact match, tool,
parameter and dependency accuracy, and the first point of failure."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import compress
from operator import eq
from typing import Any

from plancheck.compiler.extraction.sentinels import NO_ANSWER
from plancheck.scoring.reference.prepared import GoldPlan, GoldStep, dependence_as_list
from plancheck.scoring.reference.verdict import (
    CRASH_ERROR_TYPE,
    NOT_A_LIST,
    ReferenceVerdict,
    make_verdict,
)


def reference_equal(left: Any, right: Any) -> bool:
    """The reference's type-exact deep equality (quirks 10-11); iterates ``left``'s keys in
    order, which decides whether an unsortable ``dependence`` raises before a difference is
    found."""
    kind = type(left)
    if kind is not type(right):
        return False
    if kind is dict:
        if left.keys() != right.keys():
            return False
        for key, value in left.items():
            if key == "dependence":
                if sorted(dependence_as_list(value)) != sorted(dependence_as_list(right[key])):
                    return False
            elif not reference_equal(value, right[key]):
                return False
        return True
    if kind is list:
        if len(left) != len(right):
            return False
        return all(reference_equal(a, b) for a, b in zip(left, right, strict=True))
    return bool(left == right)


def _sorted_gold_dependence(gold: GoldStep) -> list[Any]:
    if gold.dependence_sorted is None:
        return sorted(dependence_as_list(gold.dependence))  # raises, as the reference does
    return gold.dependence_sorted


def _all_ints(values: list[Any]) -> bool:
    # A plain loop: on the one- or two-member lists of the hot path it is about three times
    # faster than all() over a generator.
    for value in values:  # noqa: SIM110
        if type(value) is not int:
            return False
    return True


def _dependence_matches(dependence: Any, gold: GoldStep) -> bool:
    """Quirk 14 (type-exact, after sorting); may raise TypeError like the reference."""
    ints = gold.dependence_ints
    if ints is not None and type(dependence) is list and dependence == ints:
        # Every member equals an int, so it is a number and sorting cannot fail; the sorted
        # lists agree in value, and type-exactly iff every member really is an int.
        return _all_ints(dependence)
    ordered = sorted(dependence_as_list(dependence))
    return reference_equal(ordered, _sorted_gold_dependence(gold))


def _dependence_loosely_matches(dependence: Any, gold: GoldStep) -> bool:
    """Quirk 11, as EM applies it to the step's own ``dependence`` key."""
    ints = gold.dependence_ints
    if ints is not None and type(dependence) is list and dependence == ints:
        return True
    ordered = sorted(dependence_as_list(dependence))
    return bool(ordered == _sorted_gold_dependence(gold))


def _exactly(value: Any, gold_value: Any, plain: bool) -> bool:
    return bool(value == gold_value) if plain else reference_equal(value, gold_value)


def _steps_exactly_equal(step: dict[str, Any], gold: GoldStep) -> bool:
    """The reference's deep equality of a canonical step with a gold step (EM)."""
    return (
        gold.has_exact_keys
        and _exactly(step["step"], gold.step, gold.step_plain)
        and _exactly(step["agent"], gold.agent, gold.agent_plain)
        and _exactly(step["inputs"], gold.inputs, gold.inputs_plain)
        and _exactly(step["outputs"], gold.outputs, gold.outputs_plain)
        and _dependence_loosely_matches(step["dependence"], gold)
        and _exactly(step["dependence_content"], gold.dependence_content, gold.content_plain)
    )


def _exact_match(plan: list[dict[str, Any]], gold: GoldPlan) -> bool:
    golds = gold.em_steps
    if golds is None or len(plan) != len(golds):
        return False
    return all(_steps_exactly_equal(s, g) for s, g in zip(plan, golds, strict=True))


def _tools_match(plan: list[dict[str, Any]], gold: GoldPlan) -> bool:
    golds = gold.steps
    if golds is None or len(plan) != len(golds) or len(gold.tool_pairs) != len(plan):
        return False
    return all(
        s["step"] == step and s["agent"] == agent
        for s, (step, agent) in zip(plan, gold.tool_pairs, strict=True)
    )


def _parameters_match(plan: list[dict[str, Any]], gold: GoldPlan) -> bool:
    golds = gold.steps
    if golds is None or len(plan) != len(golds):
        return False
    for s, g in zip(plan, golds, strict=True):
        if not g.is_object or s["step"] != g.step or s["agent"] != g.agent:
            return False
        if not _exactly(s["inputs"], g.inputs, g.inputs_plain):
            return False
        if not _exactly(s["outputs"], g.outputs, g.outputs_plain):
            return False
    return True


def _dependencies_match(plan: list[dict[str, Any]], gold: GoldPlan) -> bool:
    golds = gold.steps
    if golds is None or len(plan) != len(golds):
        return False
    for s, g in zip(plan, golds, strict=True):
        if not g.is_object or s["step"] != g.step or s["agent"] != g.agent:
            return False
        if not _dependence_matches(s["dependence"], g):
            return False
        # The reference's null checks followed by deep equality amount to deep equality.
        if not _exactly(s["dependence_content"], g.dependence_content, g.content_plain):
            return False
    return True


def _first_point_of_failure(plan: list[dict[str, Any]], gold: GoldPlan) -> tuple[str | None, Any]:
    """Quirk 16."""
    golds = gold.steps
    if golds is None:
        return "format_error", 0
    for index, (s, g) in enumerate(zip(plan, golds, strict=False)):
        if not g.is_object:
            return "format_error", index + 1
        if s["step"] != g.step:
            return "parameter_error", g.error_step
        if s["agent"] != g.agent:
            return "agent_mismatch", g.error_step
        if not _exactly(s["inputs"], g.inputs, g.inputs_plain):
            return "parameter_error", g.error_step
        if not _exactly(s["outputs"], g.outputs, g.outputs_plain):
            return "parameter_error", g.error_step
        if not _dependence_matches(s["dependence"], g):
            return "dependency_error", g.error_step
        if not _exactly(s["dependence_content"], g.dependence_content, g.content_plain):
            return "dependency_content_error", g.error_step
    if len(plan) < len(golds):
        return "early_stop", min(len(plan), len(golds)) + 1
    if len(plan) > len(golds):
        return "hallucinated_extra_steps", len(golds) + 1
    return None, None


def compare_simple(
    plan: list[dict[str, Any]], gold: GoldPlan, same: list[bool] | None = None
) -> tuple[bool, bool, bool, bool, str | None, Any]:
    """All five checks in one pass, for a gold plan whose steps are all ``is_simple``.

    Same results as the five separate checks: each flag follows its own check's early exits,
    and a model ``dependence`` is only sorted when some still-running check would sort it in
    the reference, so a TypeError is raised exactly when the reference raises one. (With a
    simple gold, sorting the model's dependence is the only operation that can raise.)
    ``same`` holds ``step == gold item`` for each position both have, when the caller already
    compared them (deep equality of equal steps is the costliest comparison here).
    """
    golds: tuple[GoldStep, ...] = gold.steps  # type: ignore[assignment]
    if same is None:
        same = list(map(eq, plan, gold.items))  # type: ignore[arg-type]
    if len(plan) == len(golds) and all(same):
        # Every step is == its gold step: only an int step or dependence member that is
        # really a float or bool can still make a difference (see the per-step case below).
        return _compare_equal_plan(plan, golds)
    em = tools = params = deps = len(plan) == len(golds)
    kind: str | None = None
    where: Any = None
    # Usually the steps equal to their gold step are also typed like it, and then they can
    # change no flag below: skip them.
    equal_steps_typed = _typed_like_gold(compress(plan, same))
    for s, g, equal in zip(plan, golds, same, strict=False):
        if equal:
            if equal_steps_typed:
                continue
            # Everything is ==, and the gold has only strings/nulls/containers besides the int
            # step and int dependence: only those two can still differ in type.
            if em and type(s["step"]) is not int:
                em = False
            for member in s["dependence"]:
                if type(member) is not int:
                    deps = False
                    if kind is None:
                        kind, where = "dependency_error", g.error_step
                    break
            continue
        step = s["step"]
        if step != g.step or s["agent"] != g.agent:
            if kind is None:
                kind = "parameter_error" if step != g.step else "agent_mismatch"
                where = g.error_step
            return False, False, False, False, kind, where
        if em and type(step) is not int:
            em = False
        if s["inputs"] != g.inputs or s["outputs"] != g.outputs:
            em = params = False
            if kind is None:
                kind, where = "parameter_error", g.error_step
        if not (deps or em or kind is None):
            if not tools:
                break
            continue
        dependence = s["dependence"]
        if type(dependence) is list and dependence == g.dependence_ints:
            exact = _all_ints(dependence)
            loose = True
        else:
            ordered = sorted(dependence_as_list(dependence))  # may raise, like the reference
            exact = reference_equal(ordered, g.dependence_sorted)
            loose = ordered == g.dependence_sorted
        content = s["dependence_content"] == g.dependence_content
        if not (exact and content):
            deps = False
        if not (loose and content):
            em = False
        if kind is None and not (exact and content):
            kind = "dependency_error" if not exact else "dependency_content_error"
            where = g.error_step
        if not (em or params or deps or tools) and kind is not None:
            break
    if kind is None:
        if len(plan) < len(golds):
            kind, where = "early_stop", len(plan) + 1
        elif len(plan) > len(golds):
            kind, where = "hallucinated_extra_steps", len(golds) + 1
    return em, tools, params, deps, kind, where


def _compare_equal_plan(
    plan: list[dict[str, Any]], golds: tuple[GoldStep, ...]
) -> tuple[bool, bool, bool, bool, str | None, Any]:
    if _typed_like_gold(plan):
        return True, True, True, True, None, None
    em = deps = True
    kind: str | None = None
    where: Any = None
    for s, g in zip(plan, golds, strict=True):
        if em and type(s["step"]) is not int:
            em = False
        if deps and not _all_ints(s["dependence"]):
            deps = False
            kind, where = "dependency_error", g.error_step
    return em, True, True, deps, kind, where


def _typed_like_gold(steps: Iterable[dict[str, Any]]) -> bool:
    """For steps each == its step of a simple gold plan (so ``dependence`` is a list): whether
    every ``step`` and every ``dependence`` member really is an int, not an equal float or
    bool - then the type-exact comparisons agree with ``==`` on them."""
    for step in steps:
        if type(step["step"]) is not int:
            return False
        for member in step["dependence"]:
            if type(member) is not int:
                return False
    return True


def judge(answer: Any, gold: GoldPlan, notes: list[str]) -> ReferenceVerdict:
    if answer is NO_ANSWER:
        return failed_verdict("empty_output", None, notes, "no answer could be extracted")
    if answer is NOT_A_LIST:
        return failed_verdict("format_error", None, notes, "the answer is not a JSON array")
    plan: list[dict[str, Any]] = answer
    try:
        if gold.simple:
            em, tools, parameters, dependencies, kind, step = compare_simple(plan, gold)
        else:
            em = _exact_match(plan, gold)
            tools = _tools_match(plan, gold)
            parameters = _parameters_match(plan, gold)
            dependencies = _dependencies_match(plan, gold)
            kind, step = _first_point_of_failure(plan, gold)
    except Exception as error:  # the reference raises on exactly these inputs (quirk 15)
        return crashed(error, plan, notes)
    repairs = tuple(dict.fromkeys(notes)) if notes else ()
    return make_verdict((em, tools, parameters, dependencies, kind, step, plan, repairs, None))


def equal_plan_verdict(
    plan: list[dict[str, Any]], gold: GoldPlan, notes: list[str]
) -> ReferenceVerdict:
    steps: tuple[GoldStep, ...] = gold.steps  # type: ignore[assignment]
    em, tools, params, deps, kind, where = _compare_equal_plan(plan, steps)
    repairs = tuple(dict.fromkeys(notes)) if notes else ()
    return make_verdict((em, tools, params, deps, kind, where, plan, repairs, None))


def failed_verdict(
    kind: str, prediction: list[Any] | None, notes: list[str], problem: str
) -> ReferenceVerdict:
    return ReferenceVerdict(
        em=False,
        tool_acc=False,
        param_acc=False,
        dep_acc=False,
        fpof_type=kind,
        fpof_step=0,
        prediction=prediction,
        repairs=tuple(dict.fromkeys(notes)),
        problem=problem,
    )


def crashed(
    error: BaseException, prediction: list[Any] | None, notes: list[str]
) -> ReferenceVerdict:
    problem = f"the reference evaluator raises {type(error).__name__}: {error}"
    return failed_verdict(CRASH_ERROR_TYPE, prediction, notes, problem)
