"""Lower a parsed JSON plan (Appendix H.3 schema) into the plan IR.

This is where shape problems are reported (``PC105``-``PC113``): a value that is not a list, a
step that is not an object, a missing or ill-typed field. A field that cannot be read becomes
``None`` in the IR so that later phases skip it rather than report it again.

Spans are created *unresolved* (a JSON pointer only); the driver resolves the few that end up in
diagnostics.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from plancheck.compiler.diagnostics import Diagnostic, Edit, Suggestion, make
from plancheck.dsl.ast import (
    Argument,
    Binding,
    Literal,
    MalformedReference,
    Plan,
    Reference,
    Span,
    Step,
    escape_pointer,
)

STEP_FIELDS = ("agent", "step", "dependence", "dependence_content", "inputs", "outputs")
# Field names the reference evaluator reads as aliases of the canonical ones.
FIELD_ALIASES = {
    "agent_name": "agent",
    "step_index": "step",
    "dependencies": "dependence",
    "dependency_content": "dependence_content",
    "input": "inputs",
}
WRAPPER_KEYS = ("structured_plan", "plan", "structured_task_plan", "task_plan", "answer")

REFERENCE_RE = re.compile(r"^<GENERATED>-(\d+)-<([^<>]+)>$")
_LOOKS_LIKE_REFERENCE = re.compile(r"<\s*GENERATED\s*>|^\s*GENERATED\s*-", re.IGNORECASE)
_STEP_NUMBER_IN_REFERENCE = re.compile(r"GENERATED\s*>?\s*-\s*(\d+)", re.IGNORECASE)


def json_type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def format_reference(step: int, key: str) -> str:
    return f"<GENERATED>-{step}-<{key}>"


def read_binding(value: Any, span: Span) -> Binding:
    """Classify an input value: a reference, a reference that cannot be read, or a literal."""
    if type(value) is str and value.startswith("<GENERATED>-"):
        match = REFERENCE_RE.match(value)  # the common spelling, without upper-casing first
        if match:
            return Reference(int(match.group(1)), match.group(2), span, raw=value)
    if isinstance(value, str) and "GENERATED" in value.upper():
        match = REFERENCE_RE.match(value)
        if match:
            return Reference(int(match.group(1)), match.group(2), span, raw=value)
        if _LOOKS_LIKE_REFERENCE.search(value):
            number = _STEP_NUMBER_IN_REFERENCE.search(value)
            return MalformedReference(value, span, int(number.group(1)) if number else None)
    return Literal(value, span)


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
    return value, span, []


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
    if not value:
        diagnostics.append(make("PC112", "the plan has no steps", primary=root, label="empty"))
    steps: list[Step] = []
    file, prefix = root.file, root.pointer or ""
    for position, item in enumerate(value):
        span = _new_span((file, 0, 0, 0, 0, f"{prefix}/{position}", -1, -1, False))
        if type(item) is dict:
            fast = _clean_step(item, position, span)
            if fast is not None:
                steps.append(fast)
                continue
        if not isinstance(item, dict):
            diagnostics.append(
                make(
                    "PC106",
                    f"step {position} is {json_type_name(item)}, not an object",
                    primary=span,
                    label="expected a step object",
                    data={"position": position, "actual": json_type_name(item)},
                )
            )
            continue
        step, step_diagnostics = _lower_step(item, position, span, strict)
        steps.append(step)
        diagnostics.extend(step_diagnostics)
    return Plan(tuple(steps), root, name=name), diagnostics


class _StepReader:
    """Reads one step object, collecting its diagnostics."""

    def __init__(self, raw: Mapping[str, Any], position: int, span: Span, strict: bool) -> None:
        self.raw = raw
        self.position = position
        self.span = span
        self.strict = strict
        self.diagnostics: list[Diagnostic] = []
        self.fields: dict[str, Any] = {}
        self.keys: dict[str, str] = {}  # canonical field -> the alias it was read from
        self._collect_fields()

    def field_span(self, field: str) -> Span:
        return self.span.child(self.keys.get(field, field))

    def _collect_fields(self) -> None:
        extra: list[str] = []
        raw = self.raw
        if len(raw) == 6 and all(k in raw for k in STEP_FIELDS):
            self.fields = dict(raw)  # the common case: exactly the schema's fields
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
                self.diagnostics.append(
                    make(
                        "PC104",
                        f"step {self.position} writes `{canonical}` as `{key}`",
                        primary=self.span.child(key).key(),
                        label=f"read as `{canonical}`",
                        data={"position": self.position, "alias": key, "field": canonical},
                        suggestions=[
                            Suggestion(
                                f"rename `{key}` to `{canonical}`",
                                (
                                    Edit(self.span.child(key).pointer or "", delete=True),
                                    Edit(self.span.child(canonical).pointer or "", self.raw[key]),
                                ),
                                "machine-applicable",
                            )
                        ],
                    )
                )
            else:
                extra.append(key)
        if extra:
            first = self.span.child(extra[0]).key()
            listed = ", ".join(f"`{k}`" for k in extra)
            self.diagnostics.append(
                make(
                    "PC111",
                    f"step {self.position} has field{'s' if len(extra) > 1 else ''} {listed} "
                    "that the plan schema does not define",
                    primary=first,
                    label="not a step field",
                    secondary=[(self.span.child(k).key(), "") for k in extra[1:]],
                    notes=["the reference evaluator drops unknown fields before comparing"],
                    data={"position": self.position, "fields": extra},
                    suggestions=[
                        Suggestion(
                            "remove the extra field" + ("s" if len(extra) > 1 else ""),
                            tuple(Edit(self.span.child(k).pointer or "", delete=True)
                                  for k in extra),
                            "machine-applicable",
                        )
                    ],
                )
            )
        missing = [f for f in STEP_FIELDS if f not in self.fields]
        if missing:
            listed = ", ".join(f"`{f}`" for f in missing)
            self.diagnostics.append(
                make(
                    "PC107",
                    f"step {self.position} is missing {listed}",
                    primary=self.span,
                    label="in this step",
                    data={"position": self.position, "fields": missing},
                )
            )

    def wrong_type(self, field: str, expected: str, value: Any, fix: Any = None) -> None:
        span = self.field_span(field)
        suggestions = []
        if fix is not None:
            suggestions.append(
                Suggestion(f"write {field} as {fix!r}", (Edit(span.pointer or "", fix),),
                           "machine-applicable")
            )
        self.diagnostics.append(
            make(
                "PC108",
                f"`{field}` of step {self.position} must be {expected}, "
                f"found {json_type_name(value)} {_preview(value)}",
                primary=span,
                label=f"expected {expected}",
                data={"position": self.position, "field": field, "expected": expected,
                      "actual": json_type_name(value)},
                suggestions=suggestions,
            )
        )

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
        if isinstance(value, list) and all(is_int(v) for v in value):
            return tuple(value)
        if is_int(value) and not self.strict:
            span = self.field_span("dependence")
            self.diagnostics.append(
                make(
                    "PC113",
                    f"`dependence` of step {self.position} is the bare number {value}; "
                    f"write it as an array",
                    primary=span,
                    label=f"write [{value}]",
                    data={"position": self.position, "actual": value},
                    suggestions=[
                        Suggestion(f"write [{value}]", (Edit(span.pointer or "", [value]),),
                                   "machine-applicable")
                    ],
                )
            )
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
                if not (key.strip().lstrip("-").isdigit() and isinstance(keys, list)
                        and all(isinstance(k, str) for k in keys)):
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
        args = []
        span = self.field_span("inputs")
        for key, raw in value.items():
            value_span = span.child(key)
            args.append(Argument(key, read_binding(raw, value_span), value_span))
        return tuple(args)

    def outputs(self) -> tuple[str, ...] | None:
        if "outputs" not in self.fields:
            return None
        value = self.fields["outputs"]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        self.wrong_type("outputs", "an array of output keys", value)
        return None


# Span(...) goes through a Python-level __new__ that fills in defaults; this is one C call.
_new_span: Callable[[tuple[Any, ...]], Span] = partial(tuple.__new__, Span)
_STEP_FIELD_SET = frozenset(STEP_FIELDS)


def _clean_step(raw: dict[str, Any], position: int, span: Span) -> Step | None:
    """The step of a step object that has exactly the schema's fields, each well-typed, so
    that lowering it reports nothing (the common case, built without a :class:`_StepReader`);
    None when anything needs a closer look, which :func:`_lower_step` then takes. Gives the
    very step :func:`_lower_step` would."""
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
            if not (number.strip().lstrip("-").isdigit() and type(keys) is list):
                return None
            for key in keys:
                if type(key) is not str:
                    return None
            content[int(number)] = tuple(keys)
    file = span.file
    inputs_pointer = f"{span.pointer}/inputs"
    args = []
    for key, value in inputs.items():
        token = key if "~" not in key and "/" not in key else escape_pointer(key)
        value_span = _new_span((file, 0, 0, 0, 0, f"{inputs_pointer}/{token}", -1, -1, False))
        args.append(Argument(key, read_binding(value, value_span), value_span))
    return Step(
        position,
        index,
        tool,
        tuple(args),
        tuple(outputs),
        span,
        tuple(dependence),
        content,
        True,
    )


def _lower_step(
    raw: Mapping[str, Any], position: int, span: Span, strict: bool
) -> tuple[Step, list[Diagnostic]]:
    reader = _StepReader(raw, position, span, strict)
    tool = reader.tool()
    index = reader.index()
    dependence = reader.dependence()
    content, content_readable = reader.dependence_content()
    args = reader.arguments()
    outputs = reader.outputs()
    step = Step(
        position=position,
        index=index,
        tool=tool,
        args=args if args is not None else (),
        outputs=outputs,
        span=span,
        dependence=dependence,
        dependence_content=content,
        declares_dependence=dependence is not None and content_readable,
        extra_fields=tuple(k for k in raw if k not in STEP_FIELDS),
        inputs_readable=args is not None,
        field_keys=reader.keys or None,
    )
    return step, reader.diagnostics


_JSON_TEXT = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(value, ensure_ascii=False)


def _preview(value: Any, limit: int = 40) -> str:
    try:
        text = _JSON_TEXT(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
