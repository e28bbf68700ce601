"""The reference syntax of plans: ``<GENERATED>-k-<key>`` names output ``key`` of step ``k``.

Reading an input value classifies it as a reference, a reference that cannot be read, or a
literal; formatting writes the canonical spelling (planners, printers and repairs use it).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from plancheck.diagnostics.span import Span
from plancheck.ir.nodes import Binding, Literal, MalformedReference, Reference, Step

REFERENCE_RE = re.compile(r"^<GENERATED>-(\d+)-<([^<>]+)>$")
_LOOKS_LIKE_REFERENCE = re.compile(r"<\s*GENERATED\s*>|^\s*GENERATED\s*-", re.IGNORECASE)
_STEP_NUMBER_IN_REFERENCE = re.compile(r"GENERATED\s*>?\s*-\s*(\d+)", re.IGNORECASE)


def format_reference(step: int, key: str) -> str:
    return f"<GENERATED>-{step}-<{key}>"


_DIGITS = re.compile(r"\d+")


def respell(model: Reference, step: int, key: str) -> str:
    """A reference to output ``key`` of ``step`` written as ``model`` is written: the same
    syntax and numbering (``{{steps.1.output.x}}`` with steps counted from 1 gives
    ``{{steps.3.output.key}}`` for step 2). Read from the text itself: the output's name and
    the one number outside it are replaced. The common spelling when that cannot be done (no
    text, a syntax that names calls by label, a number that is not alone)."""
    raw = model.raw
    written = model.key + model.path
    at = raw.rfind(written) if raw and model.key else -1
    if at < 0 or "$" in raw or REFERENCE_RE.match(raw):
        return format_reference(step, key)
    before, after = raw[:at], raw[at + len(written):]
    numbers = [(0, m) for m in _DIGITS.finditer(before)] + \
        [(1, m) for m in _DIGITS.finditer(after)]
    if len(numbers) != 1:
        return format_reference(step, key)
    side, number = numbers[0]
    shown = str(step + int(number.group()) - model.step)
    if side == 0:
        before = before[:number.start()] + shown + before[number.end():]
    else:
        after = after[:number.start()] + shown + after[number.end():]
    return before + key + after


@lru_cache(maxsize=2048)
def reference_parts(value: str) -> tuple[int, str] | None:
    """The step number and output key of a reference in the common spelling,
    ``<GENERATED>-k-<key>`` (None: ``value`` is not one). Kept: plans repeat references."""
    match = REFERENCE_RE.match(value)
    return (int(match.group(1)), match.group(2)) if match is not None else None


def mentions_generated(value: str) -> bool:
    """Whether a string may be a reference (well formed or not): any other string is read
    as a literal."""
    return "GENERATED" in value.upper()


def read_binding(value: Any, span: Span) -> Binding:
    """Classify an input value: a reference, a reference that cannot be read, or a literal."""
    if type(value) is str and value.startswith("<GENERATED>-"):
        parts = reference_parts(value)  # the common spelling, without upper-casing first
        if parts is not None:
            return Reference(parts[0], parts[1], span, value)
    if isinstance(value, str) and mentions_generated(value):
        match = REFERENCE_RE.match(value)
        if match:
            return Reference(int(match.group(1)), match.group(2), span, raw=value)
        if _LOOKS_LIKE_REFERENCE.search(value):
            number = _STEP_NUMBER_IN_REFERENCE.search(value)
            return MalformedReference(value, span, int(number.group(1)) if number else None)
    return Literal(value, span)


def derived_content(step: Step) -> dict[str, list[str]] | None:
    """``dependence_content`` as the references imply it (keys in the order inputs use them)."""
    content: dict[str, list[str]] = {}
    for argument in step.args:
        if isinstance(argument.value, Reference):
            keys = content.setdefault(str(argument.value.step), [])
            if argument.value.key not in keys:
                keys.append(argument.value.key)
    return content or None
