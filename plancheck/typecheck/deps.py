"""Dependency checks: ``dependence`` and ``dependence_content`` against the references made.

A JSON plan writes its dependencies twice: once in the references its inputs make and once in
``dependence``/``dependence_content``. plancheck derives the second from the first and reports
any disagreement (with the derived value as a machine-applicable fix); it never rewrites the
plan silently. Steps whose references could not be resolved were already reported by name
resolution and are skipped here.
"""

from __future__ import annotations

from plancheck.compiler.diagnostics import Diagnostic, Edit, Suggestion, make
from plancheck.dsl.ast import Plan, Reference, Span, Step, Toolset
from plancheck.typecheck.names import Resolution


def derived_dependence(referenced: set[int]) -> list[int]:
    return sorted(referenced) or [-1]


def derived_content(step: Step) -> dict[str, list[str]] | None:
    """``dependence_content`` as the references imply it (keys in the order inputs use them)."""
    content: dict[str, list[str]] = {}
    for argument in step.args:
        if isinstance(argument.value, Reference):
            keys = content.setdefault(str(argument.value.step), [])
            if argument.value.key not in keys:
                keys.append(argument.value.key)
    return content or None


def check_dependencies(plan: Plan, resolution: Resolution, toolset: Toolset) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    limit = toolset.max_predecessors
    for step in plan.steps:
        referenced = resolution.referenced_steps.get(step.position, set())
        if limit is not None and len(referenced) > limit:
            diagnostics.append(_too_many(step, referenced, limit))
        if not step.declares_dependence or step.position in resolution.broken:
            continue
        mismatch = _dependence_mismatch(step, referenced)
        if mismatch is not None:
            diagnostics.append(mismatch)
            continue  # the content follows from the dependence; one report per step
        if step.position not in resolution.unkeyed:
            content = _content_mismatch(step)
            if content is not None:
                diagnostics.append(content)
    return diagnostics


def _reference_labels(step: Step) -> list[tuple[Span, str]]:
    return [
        (a.value.span, f"uses step {a.value.step}")
        for a in step.args
        if isinstance(a.value, Reference)
    ]


def _dependence_mismatch(step: Step, referenced: set[int]) -> Diagnostic | None:
    assert step.dependence is not None
    declared = set(step.dependence)
    expected = derived_dependence(referenced)
    if declared == set(expected):
        return None
    if referenced:
        why = "its inputs use results of step" + ("s " if len(referenced) > 1 else " ") + \
            ", ".join(map(str, sorted(referenced)))
    else:
        why = "none of its inputs uses an earlier result"
    span = step.dependence_span or step.span
    edits: list[Edit] = []
    if span.pointer is not None:
        edits.append(Edit(span.pointer, expected))
        content_span = step.dependence_content_span or span
        if content_span.pointer is not None and content_span is not span:
            edits.append(Edit(content_span.pointer, derived_content(step)))
    return make(
        "PC401",
        f"step {step.index} declares dependence {sorted(declared)}, but {why}",
        primary=span,
        label=f"expected {expected}",
        secondary=_reference_labels(step),
        data={"step": step.index, "position": step.position, "expected": expected,
              "actual": sorted(declared)},
        suggestions=[
            Suggestion(f"write dependence {expected}", tuple(edits), "machine-applicable")
        ],
    )


def _content_mismatch(step: Step) -> Diagnostic | None:
    expected = derived_content(step)
    declared = step.dependence_content
    declared_sets = None if declared is None else {k: set(v) for k, v in declared.items()}
    expected_sets = None if expected is None else {int(k): set(v) for k, v in expected.items()}
    if declared_sets == expected_sets:
        return None
    span = step.dependence_content_span or step.span
    actual_json = None if declared is None else {str(k): list(v) for k, v in declared.items()}
    return make(
        "PC402",
        f"step {step.index} declares dependence_content {_show(actual_json)}, but its inputs "
        f"consume {_show(expected)}",
        primary=span,
        label=f"expected {_show(expected)}",
        secondary=_reference_labels(step),
        data={"step": step.index, "position": step.position, "expected": expected,
              "actual": actual_json},
        suggestions=[Suggestion(
            "write the consumed keys",
            (Edit(span.pointer, expected),) if span.pointer is not None else (),
            "machine-applicable",
        )],
    )


def _too_many(step: Step, referenced: set[int], limit: int) -> Diagnostic:
    labels = _reference_labels(step)
    return make(
        "PC403",
        f"step {step.index} consumes results of {len(referenced)} steps "
        f"({', '.join(map(str, sorted(referenced)))}); this pool allows {limit}",
        primary=step.dependence_span or step.span,
        label=f"at most {limit} predecessor" + ("s" if limit != 1 else ""),
        secondary=labels,
        help=["split the step, or route the results through one earlier step"],
        data={"step": step.index, "position": step.position, "limit": limit,
              "actual": sorted(referenced)},
    )


def _show(value: object) -> str:
    import json

    return json.dumps(value)
