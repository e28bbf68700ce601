"""Lower a parsed JSON plan (Appendix H.3 schema) into the plan IR.

This is where shape problems are reported (``PC105``-``PC113``): a value that is not a list, a
step that is not an object, a missing or ill-typed field. A field that cannot be read becomes
``None`` in the IR so that later phases skip it rather than report it again.

Spans are created *unresolved* (a JSON pointer only); the driver resolves the few that end up in
diagnostics.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final, TypeAlias

from plancheck.diagnostics.findings import Findings
from plancheck.diagnostics.limits import plan_limit
from plancheck.diagnostics.model import Diagnostic, Edit, Suggestion, make
from plancheck.diagnostics.span import Span, escape_pointer
from plancheck.formats.records import PLAN_WRAPPER_KEYS as WRAPPER_KEYS
from plancheck.ir.nodes import Argument, Plan, Step
from plancheck.ir.references import read_binding
from plancheck.ir.schema import FIELD_ALIASES, STEP_FIELDS, is_int, json_type_name


def unwrap_plan(value: Any, span: Span) -> tuple[Any, Span, list[Diagnostic]]:
    """Take the plan out of a wrapper object such as ``{"structured_plan": [...]}``."""
    if isinstance(value, dict):
        for key in WRAPPER_KEYS:
            inner = value.get(key)
            if isinstance(inner, list):
                note = make(
                    "PC103",
                    f"the plan was taken from the `{key}` field of a wrapper object",
                    primary=span.child(key),
                    label="plan read from here",
                    data={"wrapper_key": key},
                )
                return inner, span.child(key), [note]
    elif isinstance(value, list) and value and not all(isinstance(x, dict) for x in value):
        # An array of plans (RAP writes its rollouts so): the reference evaluator scores the
        # first item that is an array of step objects, each with `agent` and `step`.
        for position, item in enumerate(value):
            if _is_step_array(item):
                note = make(
                    "PC103",
                    f"the plan was taken from item {position} of an outer array",
                    primary=span.child(position),
                    label="plan read from here",
                    data={"outer_index": position},
                )
                return item, span.child(position), [note]
    return value, span, []


def _is_step_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(x, dict) and "agent" in x and "step" in x for x in value)


def lower_plan(
    value: Any, root: Span, *, strict: bool = False, name: str | None = None
) -> tuple[Plan | None, list[Diagnostic]]:
    """Lower a JSON value into a plan; ``None`` when the value is not a list at all."""
    value, root, diagnostics = unwrap_plan(value, root)
    if not isinstance(value, list):
        diagnostics.append(
            make(
                "PC105",
                f"expected a plan (a JSON array of steps), found {json_type_name(value)}",
                primary=root,
                label="not an array of steps",
                data={"actual": json_type_name(value)},
            )
        )
        return None, diagnostics
    too_large = plan_limit(value, root)
    if too_large is not None:
        return None, [*diagnostics, too_large]
    if not value:
        diagnostics.append(empty_plan(root))
    steps: list[Step] = []
    for position, item in enumerate(value):
        step, findings = lower_step(item, position, root, strict=strict)
        if step is not None:
            steps.append(step)
        if findings:
            diagnostics.extend(findings.diagnostics())
    return Plan(tuple(steps), root, name=name), diagnostics


def empty_plan(root: Span) -> Diagnostic:
    return make("PC112", "the plan has no steps", primary=root, label="empty")


class _StepReader:
    """Reads one step object, reporting what it finds to ``findings``."""

    def __init__(self, raw: Mapping[str, Any], position: int, span: Span, strict: bool,
                 findings: Findings) -> None:
        self.raw = raw
        self.position = position
        self.span = span
        self.strict = strict
        self.findings = findings
        self.fields: dict[str, Any] = {}
        self.keys: dict[str, str] = {}  # canonical field -> the alias it was read from
        self._collect_fields()

    def field_span(self, field: str) -> Span:
        key = self.keys.get(field, field) if self.keys else field
        if "~" in key or "/" in key:
            return self.span.child(key)
        return _new_span((self.span.file, 0, 0, 0, 0, f"{self.span.pointer or ''}/{key}", -1,
                          -1, False))

    def _collect_fields(self) -> None:
        extra: list[str] = []
        raw = self.raw
        if len(raw) == 6 and raw.keys() == _STEP_FIELD_SET:
            self.fields = raw  # type: ignore[assignment]  # the common case, only read
            return
        for key, value in raw.items():
            if key in STEP_FIELDS:
                self.fields[key] = value
        for key in raw:
            if key in STEP_FIELDS:
                continue
            canonical = FIELD_ALIASES.get(key)
            if canonical and not self.strict and canonical not in self.fields:
                self.fields[canonical] = raw[key]
                self.keys[canonical] = key
                self.findings.report("PC104", _alias_used, self.span, self.position, key,
                                     canonical, raw[key])
            else:
                extra.append(key)
        if extra:
            self.findings.report("PC111", _extra_fields, self.span, self.position, extra)
        missing = [f for f in STEP_FIELDS if f not in self.fields]
        if missing:
            self.findings.report("PC107", _missing_fields, self.span, self.position, missing)

    def wrong_type(self, field: str, expected: str, value: Any, fix: Any = None) -> None:
        self.findings.report("PC108", _wrong_type, self.span, self.keys.get(field, field),
                             self.position, field, expected, value, fix)

    def tool(self) -> str | None:
        if "agent" not in self.fields:
            return None
        value = self.fields["agent"]
        if isinstance(value, str) and value.strip():
            return value
        self.wrong_type("agent", "a tool name (a non-empty string)", value)
        return None

    def index(self) -> int | None:
        if "step" not in self.fields:
            return None
        value = self.fields["step"]
        if is_int(value):
            return int(value)
        fix: int | None = None
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            fix = int(value.strip())
        elif isinstance(value, float) and value.is_integer():
            fix = int(value)
        self.wrong_type("step", "an integer", value, fix)
        return None

    def dependence(self) -> tuple[int, ...] | None:
        if "dependence" not in self.fields:
            return None
        value = self.fields["dependence"]
        if isinstance(value, list):
            for member in value:
                if not isinstance(member, int) or isinstance(member, bool):  # not is_int
                    break
            else:
                return tuple(value)
        if is_int(value) and not self.strict:
            self.findings.report("PC113", _bare_dependence, self.field_span("dependence"),
                                 self.position, value)
            return (value,)
        self.wrong_type("dependence", "an array of step numbers", value)
        return None

    def dependence_content(self) -> tuple[dict[int, tuple[str, ...]] | None, bool]:
        """Returns (content, readable)."""
        if "dependence_content" not in self.fields:
            return None, False
        value = self.fields["dependence_content"]
        if value is None:
            return None, True
        if isinstance(value, dict):
            content: dict[int, tuple[str, ...]] = {}
            for key, keys in value.items():
                if not (
                    (key.isdigit() or key.strip().lstrip("-").isdigit())
                    and isinstance(keys, list)
                    and _all_strings(keys)
                ):
                    self.wrong_type(
                        "dependence_content",
                        "null or an object mapping step numbers to lists of output keys",
                        value,
                    )
                    return None, False
                content[int(key)] = tuple(keys)
            return content, True
        self.wrong_type(
            "dependence_content",
            "null or an object mapping step numbers to lists of output keys",
            value,
        )
        return None, False

    def arguments(self) -> tuple[Argument, ...] | None:
        if "inputs" not in self.fields:
            return None
        value = self.fields["inputs"]
        if not isinstance(value, dict):
            self.wrong_type("inputs", "an object of input keys and values", value)
            return None
        span = self.field_span("inputs")
        return _arguments(value, span.file, span.pointer or "")

    def outputs(self) -> tuple[str, ...] | None:
        if "outputs" not in self.fields:
            return None
        value = self.fields["outputs"]
        if isinstance(value, list) and _all_strings(value):
            return tuple(value)
        self.wrong_type("outputs", "an array of output keys", value)
        return None


def _all_strings(values: list[Any]) -> bool:
    # (A loop: all() over a generator costs more for the short lists of a step.)
    for value in values:  # noqa: SIM110
        if not isinstance(value, str):
            return False
    return True


def _alias_used(span: Span, position: int, key: str, canonical: str, value: Any
                ) -> Diagnostic:
    return make(
        "PC104",
        f"step {position} writes `{canonical}` as `{key}`",
        primary=span.child(key).key(),
        label=f"read as `{canonical}`",
        data={"position": position, "alias": key, "field": canonical},
        suggestions=[
            Suggestion(
                f"rename `{key}` to `{canonical}`",
                (
                    Edit(span.child(key).pointer or "", delete=True),
                    Edit(span.child(canonical).pointer or "", value),
                ),
                "machine-applicable",
            )
        ],
    )


def _extra_fields(span: Span, position: int, extra: list[str]) -> Diagnostic:
    listed = ", ".join(f"`{k}`" for k in extra)
    return make(
        "PC111",
        f"step {position} has field{'s' if len(extra) > 1 else ''} {listed} "
        "that the plan schema does not define",
        primary=span.child(extra[0]).key(),
        label="not a step field",
        secondary=[(span.child(k).key(), "") for k in extra[1:]],
        notes=["the reference evaluator drops unknown fields before comparing"],
        data={"position": position, "fields": extra},
        suggestions=[
            Suggestion(
                "remove the extra field" + ("s" if len(extra) > 1 else ""),
                tuple(Edit(span.child(k).pointer or "", delete=True) for k in extra),
                "machine-applicable",
            )
        ],
    )


def _missing_fields(span: Span, position: int, missing: list[str]) -> Diagnostic:
    listed = ", ".join(f"`{f}`" for f in missing)
    return make(
        "PC107",
        f"step {position} is missing {listed}",
        primary=span,
        label="in this step",
        data={"position": position, "fields": missing},
    )


def _wrong_type(step_span: Span, key: str, position: int, field: str, expected: str,
                value: Any, fix: Any) -> Diagnostic:
    span = step_span.child(key)
    suggestions = []
    if fix is not None:
        suggestions.append(
            Suggestion(f"write {field} as {fix!r}", (Edit(span.pointer or "", fix),),
                       "machine-applicable")
        )
    return make(
        "PC108",
        f"`{field}` of step {position} must be {expected}, "
        f"found {json_type_name(value)} {_preview(value)}",
        primary=span,
        label=f"expected {expected}",
        data={"position": position, "field": field, "expected": expected,
              "actual": json_type_name(value)},
        suggestions=suggestions,
    )


def _bare_dependence(span: Span, position: int, value: int) -> Diagnostic:
    return make(
        "PC113",
        f"`dependence` of step {position} is the bare number {value}; write it as an array",
        primary=span,
        label=f"write [{value}]",
        data={"position": position, "actual": value},
        suggestions=[
            Suggestion(f"write [{value}]", (Edit(span.pointer or "", [value]),),
                       "machine-applicable")
        ],
    )


# Span(...) goes through a Python-level __new__ that fills in defaults; this is one C call.
_new_span: Callable[[tuple[Any, ...]], Span] = partial(tuple.__new__, Span)
_STEP_FIELD_SET = frozenset(STEP_FIELDS)


# A clean step object's fields: tool, number, dependence, dependence content, inputs, outputs.
CleanFields: TypeAlias = tuple[
    str, int, list[int], dict[int, tuple[str, ...]] | None, dict[str, Any], list[str]
]


def clean_fields(raw: dict[str, Any]) -> CleanFields | None:
    """The fields of a step object that has exactly the schema's fields, each well-typed, so
    that lowering it reports nothing (the common case): its tool, number, dependence,
    dependence content (read as lowering reads it), inputs and outputs, as written. None
    when anything needs a closer look (:func:`lower_step` then reads it field by field)."""
    if len(raw) != 6 or raw.keys() != _STEP_FIELD_SET:
        return None
    tool = raw["agent"]
    index = raw["step"]
    dependence = raw["dependence"]
    inputs = raw["inputs"]
    outputs = raw["outputs"]
    if (
        type(tool) is not str
        or not tool.strip()
        or type(index) is not int
        or type(dependence) is not list
        or type(inputs) is not dict
        or type(outputs) is not list
    ):
        return None
    for member in dependence:
        if type(member) is not int:
            return None
    for key in outputs:
        if type(key) is not str:
            return None
    written = raw["dependence_content"]
    content: dict[int, tuple[str, ...]] | None = None
    if written is not None:
        if type(written) is not dict:
            return None
        content = {}
        for number, keys in written.items():
            # ("0".isdigit() first: the common spelling, read without stripping.)
            if not (
                (number.isdigit() or number.strip().lstrip("-").isdigit()) and type(keys) is list
            ):
                return None
            for key in keys:
                if type(key) is not str:
                    return None
            content[int(number)] = tuple(keys)
    return tool, index, dependence, content, inputs, outputs


def clean_step(fields: CleanFields, position: int, span: Span) -> Step:
    """The step lowered from the :func:`clean_fields` of a step object: the very step
    :func:`lower_plan` makes of it (with no diagnostic)."""
    tool, index, dependence, content, inputs, outputs = fields
    return Step(
        position,
        index,
        tool,
        _arguments(inputs, span.file, f"{span.pointer}/inputs"),
        tuple(outputs),
        span,
        tuple(dependence),
        content,
        True,
    )


def _arguments(inputs: dict[str, Any], file: str, pointer: str) -> tuple[Argument, ...]:
    """The arguments of an ``inputs`` object whose JSON pointer is ``pointer``."""
    args = []
    for key, value in inputs.items():
        token = key if "~" not in key and "/" not in key else escape_pointer(key)
        value_span = _new_span((file, 0, 0, 0, 0, f"{pointer}/{token}", -1, -1, False))
        args.append(Argument(key, read_binding(value, value_span), value_span))
    return tuple(args)


def step_span(root: Span, position: int) -> Span:
    """The span of the step at ``position`` of a plan whose span is ``root``."""
    return _new_span((root.file, 0, 0, 0, 0, f"{root.pointer or ''}/{position}", -1, -1, False))


def lower_step(item: Any, position: int, root: Span, *, strict: bool = False,
               unclean: bool = False) -> tuple[Step | None, Findings]:
    """Lower one element of a plan's step array as :func:`lower_plan` does, with what that
    finds (None: it is not a step object, which is reported). ``unclean``: the caller knows
    :func:`clean_fields` finds the element not clean."""
    span = step_span(root, position)
    findings = Findings()
    if type(item) is dict and not unclean:
        fields = clean_fields(item)
        if fields is not None:
            return clean_step(fields, position, span), findings
    if not isinstance(item, dict):
        findings.report("PC106", _not_a_step, span, position, item)
        return None, findings
    reader = _StepReader(item, position, span, strict, findings)
    tool = reader.tool()
    index = reader.index()
    dependence = reader.dependence()
    content, content_readable = reader.dependence_content()
    args = reader.arguments()
    outputs = reader.outputs()
    step = Step(
        position,
        index,
        tool,
        args if args is not None else (),
        outputs,
        span,
        dependence,
        content,
        dependence is not None and content_readable,
        () if len(item) == 6 and item.keys() == _STEP_FIELD_SET
        else tuple(k for k in item if k not in STEP_FIELDS),
        args is not None,
        reader.keys or None,
    )
    return step, findings


def _not_a_step(span: Span, position: int, item: Any) -> Diagnostic:
    return make(
        "PC106",
        f"step {position} is {json_type_name(item)}, not an object",
        primary=span,
        label="expected a step object",
        data={"position": position, "actual": json_type_name(item)},
    )


_JSON_TEXT = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(value, ensure_ascii=False)

# The builders whose diagnostic is a function of their arguments' values alone (spans,
# positions, names, JSON values as read): what they build may be kept by those values (the
# batch scorer keeps the per-item text of each, since a batch repeats them).
VALUE_BUILDERS: Final = frozenset(
    {empty_plan, _alias_used, _extra_fields, _missing_fields, _wrong_type, _bare_dependence,
     _not_a_step}
)


def _preview(value: Any, limit: int = 40) -> str:
    try:
        text = _JSON_TEXT(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
