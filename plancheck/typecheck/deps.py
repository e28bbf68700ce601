"""Dependency checks: ``dependence`` and ``dependence_content`` against the references made.

A JSON plan writes its dependencies twice: once in the references its inputs make and once in
``dependence``/``dependence_content``. plancheck derives the second from the first and reports
any disagreement (with the derived value as a machine-applicable fix); it never rewrites the
plan silently. Steps whose references could not be resolved were already reported by name
resolution and are skipped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Final

from plancheck.diagnostics.findings import Findings
from plancheck.diagnostics.model import Diagnostic, Edit, Suggestion, make
from plancheck.diagnostics.span import Span
from plancheck.ir.nodes import Reference, Step
from plancheck.ir.references import derived_content


def derived_dependence(referenced: set[int]) -> list[int]:
    return sorted(referenced) or [-1]


def check_step_dependencies(
    step: Step,
    referenced: set[int],
    broken: bool,
    unkeyed: bool,
    limit: int | None,
    findings: Findings,
) -> None:
    """The dependency checks of one step, given what resolving its references found (the
    step numbers they name; whether some could not be resolved to a step, or to a key)."""
    declared = step.dependence if step.declares_dependence else None
    checked = declared is not None and not broken and not unkeyed
    for code in dependence_codes(declared, step.dependence_content, referenced,
                                 consumed_keys(step) if checked else None, broken, limit):
        findings.report(code, dependence_diagnostic, code, step, referenced, limit)


def dependence_diagnostic(code: str, step: Step, referenced: set[int], limit: int | None
                          ) -> Diagnostic:
    """The diagnostic of a dependency finding (a code of :func:`dependence_codes`)."""
    if code == "PC403":
        assert limit is not None
        return _too_many(step, referenced, limit)
    if code == "PC401":
        return _dependence_mismatch(step, referenced)
    return _content_mismatch(step)


def consumed_keys(step: Step) -> dict[int, set[str]]:
    """The output keys the step's references read, by step number."""
    consumed: dict[int, set[str]] = {}
    for argument in step.args:
        value = argument.value
        if isinstance(value, Reference):
            keys = consumed.get(value.step)
            if keys is None:
                consumed[value.step] = {value.key}
            else:
                keys.add(value.key)
    return consumed


def dependence_codes(
    declared: Sequence[int] | None,
    content: Mapping[int, Sequence[str]] | None,
    referenced: AbstractSet[int],
    consumed: Mapping[int, AbstractSet[str]] | None,
    broken: bool,
    limit: int | None,
) -> tuple[str, ...]:
    """The dependency codes of one step that references the step numbers ``referenced``:
    ``PC403`` when they are more than the pool's ``limit``; and, unless the step declares no
    readable dependence (``declared`` None) or some reference names no earlier step
    (``broken``), ``PC401`` when ``declared`` is not the steps referenced (``[-1]`` for
    none), else ``PC402`` when ``content`` is not the keys ``consumed`` of each (not checked
    when ``consumed`` is None: some reference's key is unresolved). One of those per step:
    the content follows from the dependence."""
    over = limit is not None and len(referenced) > limit
    if declared is None or broken:
        return _OVER if over else ()
    if set(declared) != (referenced or _NONE):
        found = "PC401"
    elif consumed is not None and _content_differs(content, consumed):
        found = "PC402"
    else:
        return _OVER if over else ()
    return ("PC403", found) if over else (found,)


def _content_differs(
    content: Mapping[int, Sequence[str]] | None, consumed: Mapping[int, AbstractSet[str]]
) -> bool:
    """Whether the declared ``content`` (None, or step number -> keys) is not what the
    references consume (step number -> keys; none: ``content`` must be null), as sets."""
    if not consumed:
        return content is not None
    if content is None or len(content) != len(consumed):
        return True
    for number, keys in consumed.items():
        declared = content.get(number)
        if declared is None or set(declared) != keys:
            return True
    return False


_OVER: Final = ("PC403",)
_NONE: Final = frozenset({-1})  # derived_dependence of no reference


def _reference_labels(step: Step) -> list[tuple[Span, str]]:
    return [
        (a.value.span, f"uses step {a.value.step}")
        for a in step.args
        if isinstance(a.value, Reference)
    ]


def _dependence_mismatch(step: Step, referenced: set[int]) -> Diagnostic:
    assert step.dependence is not None
    declared = set(step.dependence)
    expected = derived_dependence(referenced)
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


def _content_mismatch(step: Step) -> Diagnostic:
    expected = derived_content(step)
    declared = step.dependence_content
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
