"""Gold plans, and First-Point-of-Failure as compiler diagnostics.

A :class:`GoldIndex` holds the gold plans a prediction is compared with: one plan (a ``.json``
file; every prediction is compared with it) or a benchmark JSONL whose records are matched by
``task_id``. :func:`fpof_diagnostics` turns the reference evaluator's verdict into diagnostics:
the first point of failure is the one error (``PC601``-``PC611``), its type and step are the
verdict's own, and every later divergence is a *cascaded* note on it rather than another error.
Labels point into the prediction (JSON pointers the caller resolves) and, when the gold file's
positions are wanted, into the gold file (already resolved).

``plancheck check PRED --gold GOLD`` calls :func:`add_gold_diagnostics` on every report;
``plancheck score`` (:mod:`plancheck.scoring.batch`) writes the same diagnostic, without spans,
in its per-item lines (:func:`fpof_text`: no :class:`Diagnostic` is built), where diagnostics
are listed in a compact form (:func:`compact_entry`, written out by :func:`compact_text`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from plancheck.diagnostics.codes import CODES, FPOF_CATEGORY
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.positions import LineIndex, Positions
from plancheck.diagnostics.span import Span, escape_pointer
from plancheck.fast_json import dumps_plain
from plancheck.scoring.reference import GoldPlan, ReferenceVerdict, prepare_gold
from plancheck.scoring.reference.compare import reference_equal
from plancheck.scoring.reference.prepared import is_plain

if TYPE_CHECKING:
    from plancheck.compiler.driver import CheckOptions, Report

__all__ = [
    "COMPOSITIONS",
    "GoldError",
    "GoldIndex",
    "GoldTask",
    "Locator",
    "add_gold_diagnostics",
    "compact_entry",
    "compact_text",
    "composition_of",
    "diagnostic_text",
    "entry_text",
    "fpof_category",
    "fpof_diagnostics",
    "fpof_text",
    "task_key",
]

GOLD_PLAN_FIELDS: Final = ("structured_plan", "plan", "gt_solution")
COMPOSITIONS: Final = ("Node", "Chain", "Branching")

# The reference harness records a crash of the evaluator as error type "exception"; the paper's
# Table 18 has no row for it. An unreadable answer is what makes it crash, so it is counted
# with the structural errors.
_EXTRA_CATEGORY: Final = {"exception": "Structural Error"}

# The code reporting each fine FPoF type when the failing field is not known more precisely.
_CODE_FOR_TYPE: Final = {
    "empty_output": "PC601",
    "format_error": "PC602",
    "agent_mismatch": "PC604",
    "parameter_error": "PC605",
    "dependency_error": "PC607",
    "dependency_content_error": "PC608",
    "early_stop": "PC609",
    "hallucinated_extra_steps": "PC610",
    "exception": "PC611",
}

_MAX_CASCADED_NOTES: Final = 6


def fpof_category(fpof_type: str | None) -> str | None:
    """The paper's top-level category (Table 18) of a fine FPoF type; None when correct."""
    if fpof_type is None:
        return None
    return FPOF_CATEGORY.get(fpof_type) or _EXTRA_CATEGORY.get(fpof_type, "Structural Error")


def task_key(task_id: Any) -> str | None:
    """How task ids are matched: ``1``, ``1.0`` and ``"1"`` name the same task."""
    if task_id is None or isinstance(task_id, bool):
        return None
    if isinstance(task_id, float) and task_id.is_integer():
        return str(int(task_id))
    if isinstance(task_id, int | float):
        return str(task_id)
    if isinstance(task_id, str):
        text = task_id.strip()
        return text or None
    return json.dumps(task_id, sort_keys=True)


def _dependence_members(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return list(value)
    return [value]


def composition_of(plan: Any) -> str:
    """Node (one step), Branching (some step's results feed two or more steps) or Chain,
    the paper's Section 3 definition (the release has 35 / 32 / 166 of them)."""
    if not isinstance(plan, list) or len(plan) <= 1:
        return "Node"
    consumers: dict[Any, int] = {}
    for item in plan:
        if not isinstance(item, dict):
            continue
        for member in _dependence_members(item.get("dependence")):
            if isinstance(member, int) and not isinstance(member, bool) and member >= 0:
                consumers[member] = consumers.get(member, 0) + 1
    return "Branching" if any(count >= 2 for count in consumers.values()) else "Chain"


# --------------------------------------------------------------------------- gold files


class GoldError(Exception):
    """The gold file cannot be used; ``diagnostics`` says why (``PC001`` or ``PC004``)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


@dataclass(slots=True, eq=False)
class GoldTask:
    """One gold plan and where it lies in its file."""

    task_id: Any
    plan: Any
    file: str
    pointer: str  # the JSON pointer of the plan inside its document
    positions: Positions | None
    _prepared: GoldPlan | None = field(default=None, repr=False)
    key: str | None = field(default=None, init=False)  # task_key(task_id), how it is matched
    _facts: tuple[_StepFacts | None, ...] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.key = task_key(self.task_id)

    @property
    def prepared(self) -> GoldPlan:
        """The plan prepared for the reference scorer (once)."""
        if self._prepared is None:
            self._prepared = prepare_gold(self.plan)
        return self._prepared

    @property
    def step_facts(self) -> tuple[_StepFacts | None, ...]:
        """What the FPoF diagnostic compares of each gold step (once; None: not an object,
        and nothing when the plan is not a list)."""
        if self._facts is None:
            plan = self.plan if isinstance(self.plan, list) else []
            self._facts = tuple(_StepFacts.of(item) for item in plan)
        return self._facts

    @property
    def depth(self) -> int:
        """The number of steps (the paper's workflow depth)."""
        return len(self.plan) if isinstance(self.plan, list) else 0

    @property
    def composition(self) -> str:
        return composition_of(self.plan)

    def span(self, position: int | None = None, path: str | None = None) -> Span | None:
        """The resolved span, in the gold file, of the plan, a step or a step field."""
        if self.positions is None:
            return None
        pointer = self.pointer
        if position is not None:
            pointer += f"/{position}"
            if path:
                pointer += "/" + "/".join(escape_pointer(part) for part in path.split("/"))
        return self.positions.resolve(Span(self.file, pointer=pointer))


@dataclass(slots=True, eq=False)
class GoldIndex:
    """Gold plans by task id, or one gold plan for every prediction (``single``)."""

    file: str
    tasks: dict[str, GoldTask]
    single: GoldTask | None = None
    # The tasks whose key is an integer's, by that integer: the common lookup, without
    # task_key's normalisation (built on first use).
    _by_int: dict[int, GoldTask] | None = field(default=None, init=False, repr=False)

    def get(self, task_id: Any) -> GoldTask | None:
        if self.single is not None:
            return self.single
        if type(task_id) is int:
            by_int = self._by_int
            if by_int is None:
                by_int = self._by_int = {
                    int(key): task for key, task in self.tasks.items() if _is_int_key(key)
                }
            return by_int.get(task_id)
        key = task_key(task_id)
        return None if key is None else self.tasks.get(key)

    def __iter__(self) -> Iterator[GoldTask]:
        if self.single is not None:
            return iter([self.single])
        return iter(self.tasks.values())

    def __len__(self) -> int:
        return 1 if self.single is not None else len(self.tasks)

    @classmethod
    def load(cls, path: str) -> GoldIndex:
        """Read a gold file; raises :class:`GoldError` when it cannot be used."""
        from plancheck.compiler.frontends import read_text

        text, error = read_text(path)
        if text is None:
            assert error is not None
            raise GoldError([error.with_context(file=path, record=None)])
        return cls.parse(text, path)

    @classmethod
    def parse(cls, text: str, file: str) -> GoldIndex:
        if not text.strip():
            raise GoldError([_unusable(file, "the gold file is empty: it holds no gold plan")])
        lines = LineIndex(text)
        if file.lower().endswith((".jsonl", ".ndjson")) or _looks_like_jsonl(text):
            return cls(file, _jsonl_tasks(text, file, lines))
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as error:
            from plancheck.compiler.frontends import sniff_kind

            if sniff_kind(file, text) == "dsl":
                raise GoldError([_unusable(
                    file, "the gold file is workflow DSL; gold plans are read from JSON or "
                    "JSONL (convert it: plancheck fmt --to json FILE --tools POOL)")]) from None
            reason = "nested too deeply" if isinstance(error, RecursionError) else error
            raise GoldError([_unusable(file, f"the gold file is not JSON: {reason}")]) from None
        start = len(text) - len(text.lstrip())
        positions = Positions(file, lines, json_region=(start, len(text.rstrip())))
        if isinstance(value, list) and value and all(_is_gold_record(v) for v in value):
            tasks: dict[str, GoldTask] = {}
            for index, record in enumerate(value):
                _add_task(tasks, record, file, f"/{index}", positions, f"element {index}")
            return cls(file, tasks)
        if _is_gold_record(value):
            key = _gold_field(value)
            return cls(
                file, {}, GoldTask(value.get("task_id"), value[key], file, f"/{key}", positions)
            )
        if isinstance(value, list):
            return cls(file, {}, GoldTask(None, value, file, "", positions))
        raise GoldError(
            [
                _unusable(
                    file,
                    "the gold file holds neither a plan (a JSON array of steps) nor benchmark "
                    "records with `task_id` and `structured_plan`",
                )
            ]
        )


def _is_int_key(key: str) -> bool:
    """Whether ``key`` is ``task_key`` of an integer (``str(n)`` for some int ``n``)."""
    try:
        return str(int(key)) == key
    except ValueError:
        return False


def _looks_like_jsonl(text: str) -> bool:
    first = text.lstrip().split("\n", 1)
    return len(first) == 2 and first[0].rstrip().endswith("}") and first[1].lstrip()[:1] == "{"


def _gold_field(record: dict[str, Any]) -> str:
    return next(key for key in GOLD_PLAN_FIELDS if key in record)


def _is_gold_record(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and "task_id" in value
        and any(key in value for key in GOLD_PLAN_FIELDS)
    )


def _unusable(file: str, message: str) -> Diagnostic:
    return make("PC004", message, data={"path": file}).with_context(file=file, record=None)


def _add_task(
    tasks: dict[str, GoldTask],
    record: dict[str, Any],
    file: str,
    pointer: str,
    positions: Positions,
    where: str,
) -> None:
    key = task_key(record.get("task_id"))
    if key is None:
        raise GoldError([_unusable(file, f"{where} of the gold file has no usable `task_id`")])
    if key in tasks:
        raise GoldError([_unusable(file, f"{where} of the gold file repeats task id {key}")])
    name = _gold_field(record)
    tasks[key] = GoldTask(record["task_id"], record[name], file, f"{pointer}/{name}", positions)


def _jsonl_tasks(text: str, file: str, lines: LineIndex) -> dict[str, GoldTask]:
    tasks: dict[str, GoldTask] = {}
    offset = 0
    for number, line in enumerate(text.split("\n"), start=1):
        start = offset
        offset += len(line) + 1
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            raise GoldError(
                [_unusable(file, f"line {number} of the gold file is not JSON")]
            ) from None
        if not _is_gold_record(record):
            raise GoldError(
                [
                    _unusable(
                        file,
                        f"line {number} of the gold file is not a benchmark record (an object "
                        "with `task_id` and `structured_plan`)",
                    )
                ]
            )
        positions = Positions(file, lines, json_region=(start, start + len(line.rstrip())))
        _add_task(tasks, record, file, "", positions, f"line {number}")
    if not tasks:
        raise GoldError([_unusable(file, "the gold file holds no gold plans")])
    return tasks


# --------------------------------------------------------------------------- divergences


class _StepFacts(NamedTuple):
    """What the FPoF diagnostic compares of one gold step object, looked up once per task
    (each gold step is compared with many predictions)."""

    step: Any
    agent: Any
    inputs: Any
    outputs: Any
    dependence: list[Any] | None  # its members, sorted; None when sorting them raises
    dependence_ints: bool  # those members are all integers
    content: Any  # dependence_content
    inputs_plain: bool  # is_plain(inputs), and so on: ``==`` is the type-exact equality
    outputs_plain: bool
    content_plain: bool
    # Every value but ``step`` and a ``dependence`` array is plain: two equal steps can
    # differ in type only there.
    plain_but_numbers: bool
    item: dict[str, Any]

    @classmethod
    def of(cls, item: Any) -> _StepFacts | None:
        if not isinstance(item, dict):
            return None
        inputs, outputs = item.get("inputs"), item.get("outputs")
        content = item.get("dependence_content")
        dependence = _sorted_dependence(item.get("dependence"))
        return cls(
            item.get("step"),
            item.get("agent"),
            inputs,
            outputs,
            dependence,
            dependence is not None and _all_ints(dependence),
            content,
            is_plain(inputs),
            is_plain(outputs),
            is_plain(content),
            all(
                is_plain(value)
                for key, value in item.items()
                if key != "step" and not (key == "dependence" and type(value) is list)
            ),
            item,
        )


def _same(a: Any, b: Any) -> bool:
    """The reference's type-exact deep equality (1, 1.0 and true all differ, a nested
    ``dependence`` compared sorted); where the reference would raise (an unsortable
    ``dependence``), the values differ."""
    try:
        return reference_equal(a, b)
    except TypeError:
        return False


def _equal_step_same_types(predicted: dict[str, Any], gold: _StepFacts) -> bool:
    """For steps already ``==``: whether they are also equal type-exactly. Benchmark gold
    steps hold only strings besides the integer ``step`` and ``dependence`` members, so only
    those need a look; anything else takes the full comparison."""
    item = gold.item
    if gold.plain_but_numbers:
        # Only the step number and the dependence members can differ in type.
        number = item.get("step", _ABSENT)
        if number is not _ABSENT and type(predicted.get("step")) is not type(number):
            return False
        dependence = item.get("dependence")
        if type(dependence) is list:
            mine = predicted.get("dependence")
            if type(mine) is not list or any(
                type(a) is not type(b) for a, b in zip(mine, dependence, strict=False)
            ):
                return False
        return True
    for key, value in item.items():
        if key == "step":
            if type(predicted.get(key)) is not type(value):
                return False
        elif key == "dependence" and type(value) is list:
            mine = predicted.get(key)
            if type(mine) is not list or any(
                type(a) is not type(b) for a, b in zip(mine, value, strict=False)
            ):
                return False
        elif not is_plain(value):
            return _same(predicted, item)
    return True


_ABSENT: Final = object()


def _sorted_dependence(value: Any) -> list[Any] | None:
    try:
        return sorted(_dependence_members(value))
    except TypeError:
        return None


def _value_differs(predicted: Any, gold: Any, plain: bool) -> bool:
    """Whether a step value differs type-exactly from the gold step's (``plain``: whether
    :func:`is_plain` holds of the gold value)."""
    if predicted != gold:  # at C speed; type-exact equality implies ==
        return True
    return not (plain or _same(predicted, gold))


def _dependence_differs(predicted: Any, gold: list[Any] | None, gold_ints: bool) -> bool:
    """Whether a step's dependence differs from the gold step's sorted members (quirk 14;
    ``gold_ints``: they are all integers)."""
    if gold_ints and type(predicted) is list and _all_ints(predicted):
        # Integers sort, and compare type-exactly with integers as they compare.
        return sorted(predicted) != gold
    mine = _sorted_dependence(predicted)
    return mine is None or gold is None or not _same(mine, gold)


def _all_ints(values: list[Any]) -> bool:
    for value in values:  # noqa: SIM110 - a plain loop: faster than all() on short lists
        if type(value) is not int:
            return False
    return True


class _Divergence(NamedTuple):  # a named tuple: failed items have several, built fast
    position: int
    field: str
    code: str


def _step_divergences(
    position: int, predicted: dict[str, Any], gold: _StepFacts | None
) -> list[_Divergence]:
    """How a predicted step differs from its gold step, field by field in the order the
    reference's FPoF walk checks them, each with the code of its mismatch (for a step not
    already known to equal its gold step: see :func:`_divergences`)."""
    if gold is None:
        return [_Divergence(position, "", "PC602")]
    get = predicted.get
    found: list[_Divergence] = []
    if get("step") != gold.step:
        found.append(_Divergence(position, "step", "PC603"))
    if get("agent") != gold.agent:
        found.append(_Divergence(position, "agent", "PC604"))
    if _value_differs(get("inputs"), gold.inputs, gold.inputs_plain):
        found.append(_Divergence(position, "inputs", "PC605"))
    if _value_differs(get("outputs"), gold.outputs, gold.outputs_plain):
        found.append(_Divergence(position, "outputs", "PC606"))
    if _dependence_differs(get("dependence"), gold.dependence, gold.dependence_ints):
        found.append(_Divergence(position, "dependence", "PC607"))
    if _value_differs(get("dependence_content"), gold.content, gold.content_plain):
        found.append(_Divergence(position, "dependence_content", "PC608"))
    return found


# --------------------------------------------------------------------------- diagnostics

Locator = Callable[[int | None, str | None], Span | None]
"""Where, in the prediction, a step (``position``) or one of its fields (``"agent"``,
``"inputs/<key>"``) lies; ``(None, None)`` is the whole prediction."""


_ENCODE: Final = json.JSONEncoder(ensure_ascii=False).encode  # built once, not per call
# What that encoder does with a string (it calls this directly), without its dispatch.
_ENCODE_STRING: Final = json.encoder.encode_basestring


def _show(value: Any, limit: int = 60) -> str:
    # Step values are shallow; deeper ones (where the encoder's own recursion limit could
    # matter) are left to the encoder.
    text = dumps_plain(value, ensure_ascii=False, max_depth=3)
    if text is None:
        try:
            text = _ENCODE(value)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _input_difference(predicted: Any, gold: Any) -> tuple[str, str | None]:
    """A sentence on how the inputs differ, and the input key to point at."""
    if not isinstance(predicted, dict) or not isinstance(gold, dict):
        return f"inputs are {_show(predicted)}, the gold plan's {_show(gold)}", None
    missing = [k for k in gold if k not in predicted]
    extra = [k for k in predicted if k not in gold]
    changed = [k for k in gold if k in predicted and not _same(predicted[k], gold[k])]
    parts = []
    if changed:
        key = changed[0]
        parts.append(
            f"`{key}` is {_show(predicted[key])} where the gold plan has {_show(gold[key])}"
        )
        if len(changed) > 1:
            parts.append(f"{len(changed) - 1} more input(s) differ")
    if missing:
        parts.append("missing " + ", ".join(f"`{k}`" for k in missing))
    if extra:
        parts.append("unexpected " + ", ".join(f"`{k}`" for k in extra))
    target = changed[0] if changed else (extra[0] if extra else None)
    return "; ".join(parts) or "inputs differ in type", target


def _describe(divergence: _Divergence, predicted: list[Any], gold: list[Any]) -> tuple[str, str]:
    """The message of a step-level divergence and the short label under it."""
    i = divergence.position
    mine: dict[str, Any] = predicted[i]
    theirs = gold[i]
    if divergence.code == "PC602":
        return (
            f"step {i} of the gold plan is not a step object, so nothing can match it",
            "compared with a malformed gold step",
        )
    tool = mine.get("agent")
    field_name = divergence.field
    if field_name == "agent":
        return (
            f"step {i} calls `{tool}` where the gold plan calls `{theirs.get('agent')}`",
            f"gold: `{theirs.get('agent')}`",
        )
    name = f"step {i} `{tool}`" if isinstance(tool, str) else f"step {i}"
    if field_name == "inputs":
        sentence, _ = _input_difference(mine.get("inputs"), theirs.get("inputs"))
        return f"{name}: {sentence}", "inputs differ from the gold plan's"
    theirs_shown = _show(theirs.get(field_name))  # written once, for message and label
    mine_shown = _show(mine.get(field_name))
    if field_name == "step":
        message = (
            f"the step at position {i} is numbered {mine_shown}; the gold plan numbers it "
            f"{theirs_shown}"
        )
    elif field_name == "outputs":
        message = f"{name} lists outputs {mine_shown}; the gold plan {theirs_shown}"
    elif field_name == "dependence":
        message = f"{name} depends on {mine_shown}; the gold plan on {theirs_shown}"
    else:
        message = f"{name} has dependence_content {mine_shown}; the gold plan {theirs_shown}"
    return message, f"gold: {theirs_shown}"


def _field_path(divergence: _Divergence, predicted: list[Any], gold: list[Any]) -> str | None:
    if divergence.field == "inputs":
        _, key = _input_difference(
            predicted[divergence.position].get("inputs"), gold[divergence.position].get("inputs")
        )
        if (
            key is not None
            and isinstance(predicted[divergence.position].get("inputs"), dict)
            and key in predicted[divergence.position]["inputs"]
        ):
            return f"inputs/{key}"
    return divergence.field or None


def _cascade_note(divergence: _Divergence, predicted: list[Any], gold: list[Any]) -> str:
    message, _ = _describe(divergence, predicted, gold)
    return f"then: {message}"


@dataclass(slots=True)
class _Finding:
    """The parts of the gold-comparison diagnostic, before it is a :class:`Diagnostic`."""

    code: str
    message: str
    label: str
    primary: Span | None
    secondary: list[tuple[Span, str]]
    data: dict[str, Any]
    notes: list[str]


def fpof_diagnostics(
    verdict: ReferenceVerdict,
    task: GoldTask,
    locate: Locator | None = None,
    *,
    gold_spans: bool = True,
) -> list[Diagnostic]:
    """The gold-comparison diagnostic for one scored prediction: none when the verdict has no
    first point of failure, otherwise exactly one error whose ``data["fpof_type"]`` and
    ``data["fpof_step"]`` are the verdict's, with later divergences as cascaded notes."""
    if verdict.fpof_type is None:
        return []

    def here(position: int | None = None, path: str | None = None) -> Span | None:
        return locate(position, path) if locate is not None else None

    def there(position: int | None = None, path: str | None = None) -> Span | None:
        return task.span(position, path) if gold_spans else None

    finding = _fpof_finding(verdict, task, here, there)
    return [
        make(
            finding.code,
            finding.message,
            primary=finding.primary,
            label=finding.label,
            secondary=finding.secondary,
            notes=finding.notes,
            data=finding.data,
        )
    ]


class _FpofParts(NamedTuple):
    """What the compact gold-comparison entry of a per-item line says (:func:`fpof_text`)."""

    code: str
    message: str
    position: int | None  # the step it is about; None when not one step
    notes: list[str]


def _fpof_parts(verdict: ReferenceVerdict, task: GoldTask) -> _FpofParts | None:
    """What :func:`fpof_text` writes besides the code's name and severity: the diagnostic of
    :func:`fpof_diagnostics` without its spans, labels and data (a batch writes one per
    failed item)."""
    kind = verdict.fpof_type
    if kind is None:
        return None
    prediction = verdict.prediction
    gold_plan = task.plan if isinstance(task.plan, list) else None
    if prediction is None or gold_plan is None:
        code, message = _whole_answer_message(verdict, kind)
        return _FpofParts(code, message, None, _whole_answer_notes(verdict))
    divergences = _divergences(prediction, task)
    primary_index = _primary(divergences, kind, verdict.fpof_step, gold_plan)
    position: int | None
    if primary_index is None:
        code, message, position = _length_failure(kind, prediction, gold_plan)
    else:
        first = divergences[primary_index]
        code, message, _ = _primary_failure(first, kind, prediction, gold_plan)
        position = first.position
    notes = ["first point of failure: " + _verdict_words(verdict)]
    notes += _cascade(divergences, primary_index, prediction, gold_plan)[1]
    return _FpofParts(code, message, position, notes)


def _nowhere(position: int | None = None, path: str | None = None) -> Span | None:
    return None


def _fpof_finding(
    verdict: ReferenceVerdict,
    task: GoldTask,
    here: Callable[..., Span | None],
    there: Callable[..., Span | None],
) -> _Finding:
    kind = verdict.fpof_type
    assert kind is not None
    prediction = verdict.prediction
    gold_plan = task.plan if isinstance(task.plan, list) else None
    data: dict[str, Any] = {
        "task_id": task.task_id,
        "fpof_type": kind,
        "fpof_step": verdict.fpof_step,
        "fpof_category": fpof_category(kind),
        "position": None,
    }
    if prediction is None or gold_plan is None:
        return _whole_answer_finding(verdict, kind, data, here(), there())

    divergences = _divergences(prediction, task)
    primary_index = _primary(divergences, kind, verdict.fpof_step, gold_plan)
    gold_note: str | None = None
    if primary_index is None:
        finding = _length_finding(kind, data, prediction, gold_plan, here, there)
    else:
        first = divergences[primary_index]
        code, message, label = _primary_failure(first, kind, prediction, gold_plan)
        # Where to point in the prediction (only asked for when there is somewhere to point).
        path = _field_path(first, prediction, gold_plan) if here is not _nowhere else None
        gold_step = gold_plan[first.position]
        data.update(
            position=first.position,
            field=first.field or None,
            expected=gold_step.get(first.field)
            if first.field and isinstance(gold_step, dict)
            else None,
            actual=prediction[first.position].get(first.field) if first.field else None,
        )
        primary = here(first.position, path)
        gold_span = there(first.position, first.field or None)
        finding = _Finding(
            code,
            message,
            label,
            primary,
            _gold_label(primary, gold_span, "the gold plan has this"),
            data,
            [],
        )
        if gold_span is not None:
            gold_note = f"the gold plan's step is at {_where(gold_span)}"
    count, cascade = _cascade(divergences, primary_index, prediction, gold_plan)
    finding.data["cascaded"] = count
    notes = finding.notes
    notes.append("first point of failure: " + _verdict_words(verdict))
    if gold_note is not None:
        notes.append(gold_note)
    notes.extend(cascade)
    return finding


def _divergences(prediction: list[Any], task: GoldTask) -> list[_Divergence]:
    """Every divergence of the prediction's steps from the gold plan's, in plan order, over
    the steps both have."""
    facts = task.step_facts
    divergences: list[_Divergence] = []
    for i in range(min(len(prediction), len(facts))):
        step, gold = prediction[i], facts[i]
        if gold is not None and step == gold.item and _equal_step_same_types(step, gold):
            continue  # the common case, settled (mostly) at C speed
        divergences.extend(_step_divergences(i, step, gold))
    return divergences


def _primary_failure(
    first: _Divergence, kind: str, prediction: list[Any], gold_plan: list[Any]
) -> tuple[str, str, str]:
    """The code, message and label of the divergence the verdict names."""
    message, label = _describe(first, prediction, gold_plan)
    code = first.code if _FPOF_TYPE_OF_CODE[first.code] == kind else _CODE_FOR_TYPE[kind]
    if code != first.code:
        message = f"{message} (the reference scores this as {kind})"
    return code, message, label


def _cascade(
    divergences: list[_Divergence],
    primary_index: int | None,
    prediction: list[Any],
    gold_plan: list[Any],
) -> tuple[int, list[str]]:
    """How many divergences follow from the first point of failure, and the notes listing
    them (none when there are none)."""
    if primary_index is None:
        later = divergences  # cascaded divergences, in plan order
        length_note: list[str] = []
    else:
        later = divergences[primary_index + 1 :]
        length_note = (
            ["then: " + _length_sentence(len(prediction), len(gold_plan))]
            if len(prediction) != len(gold_plan)
            else []
        )
    count = len(later) + len(length_note)
    # Only the notes shown are described (describing is what costs time in a batch).
    shown = _MAX_CASCADED_NOTES if count <= _MAX_CASCADED_NOTES else _MAX_CASCADED_NOTES - 1
    notes_later = [_cascade_note(d, prediction, gold_plan) for d in later[:shown]]
    notes_later += length_note[: max(0, shown - len(notes_later))]
    if count > len(notes_later):
        notes_later.append(f"... and {count - len(notes_later)} more divergences")
    if not notes_later:
        return count, []
    return count, ["later divergences are cascaded from this one and are not counted:",
                   *notes_later]


def _gold_label(primary: Span | None, gold: Span | None, text: str) -> list[tuple[Span, str]]:
    """A label in the gold file, only under a label in the prediction: a diagnostic's first
    label names its location, which must be in the prediction."""
    return [(gold, text)] if primary is not None and gold is not None else []


def _where(span: Span) -> str:
    return f"{span.file}:{span.start_line}:{span.start_col}"


def _verdict_words(verdict: ReferenceVerdict) -> str:
    category = fpof_category(verdict.fpof_type)
    return f"{verdict.fpof_type} at step {verdict.fpof_step} ({category})"


# The fine FPoF type each code reports (None for the codes that report none).
_FPOF_TYPE_OF_CODE: Final = {code: info.fpof_type for code, info in CODES.items()}


def _primary(
    divergences: list[_Divergence], kind: str, fpof_step: Any, gold: list[Any]
) -> int | None:
    """Which divergence the verdict names: the first one of the verdict's type, preferring the
    one at the gold step the verdict reports."""
    if kind in ("early_stop", "hallucinated_extra_steps"):
        return None
    matching = [i for i, d in enumerate(divergences) if _FPOF_TYPE_OF_CODE[d.code] == kind]
    for i in matching:
        position = divergences[i].position
        item = gold[position]
        reported = item.get("step", position + 1) if isinstance(item, dict) else position + 1
        if reported == fpof_step:
            return i
    if matching:
        return matching[0]
    return 0 if divergences else None


def _length_sentence(predicted: int, gold: int) -> str:
    if predicted < gold:
        return (
            f"the prediction stops after {predicted} step{'s' * (predicted != 1)}; the gold "
            f"plan has {gold}"
        )
    return (
        f"the prediction has {predicted - gold} step{'s' * (predicted - gold != 1)} past "
        f"the gold plan's {gold}"
    )


def _length_failure(
    kind: str, prediction: list[Any], gold: list[Any]
) -> tuple[str, str, int | None]:
    """The code, message and position of a failure that no divergence stands for: the
    prediction stops early or goes on past the gold plan (its position: the first step one
    has and the other lacks), or the verdict's type has no divergence to stand on (a quirk of
    the reference, e.g. an empty plan scored as an early stop: no position)."""
    code = _CODE_FOR_TYPE.get(kind, "PC602")
    if kind == "early_stop" and len(prediction) < len(gold):
        return code, _length_sentence(len(prediction), len(gold)), len(prediction)
    if kind == "hallucinated_extra_steps" and len(prediction) > len(gold):
        return code, _length_sentence(len(prediction), len(gold)), len(gold)
    return code, f"the reference evaluator scores this prediction as {kind}", None


def _length_finding(
    kind: str,
    data: dict[str, Any],
    prediction: list[Any],
    gold: list[Any],
    here: Callable[..., Span | None],
    there: Callable[..., Span | None],
) -> _Finding:
    code, message, position = _length_failure(kind, prediction, gold)
    if position is None:  # reported on the whole prediction
        return _Finding(code, message, kind, here(), [], data, [])
    data["position"] = position
    if kind == "early_stop":
        missing = gold[position]
        tool = missing.get("agent") if isinstance(missing, dict) else None
        primary = here(position - 1) if prediction else here()
        return _Finding(
            code,
            message,
            "the prediction ends here",
            primary,
            _gold_label(primary, there(position, "agent"), f"the gold plan goes on with `{tool}`"),
            data,
            [],
        )
    extra = prediction[position]
    tool = extra.get("agent") if isinstance(extra, dict) else None
    primary = here(position, "agent")
    return _Finding(
        code,
        message,
        f"`{tool}` is not in the gold plan",
        primary,
        _gold_label(primary, there(), "the gold plan ends here"),
        data,
        [],
    )


def _whole_answer_message(verdict: ReferenceVerdict, kind: str) -> tuple[str, str]:
    """The code and message of a prediction that is no list of steps."""
    code = _CODE_FOR_TYPE.get(kind, "PC602")
    reason = verdict.problem or kind
    if kind == "empty_output":
        return code, f"no answer could be read from the prediction ({reason})"
    if kind == "exception":
        return code, f"the reference evaluator would crash on this prediction ({reason})"
    return code, f"the prediction is not a list of step objects ({reason})"


def _whole_answer_notes(verdict: ReferenceVerdict) -> list[str]:
    notes = [f"first point of failure: {_verdict_words(verdict)}"]
    if verdict.repairs:
        notes.append("read after: " + "; ".join(verdict.repairs))
    return notes


def _whole_answer_finding(
    verdict: ReferenceVerdict,
    kind: str,
    data: dict[str, Any],
    primary: Span | None,
    gold: Span | None,
) -> _Finding:
    code, message = _whole_answer_message(verdict, kind)
    return _Finding(
        code,
        message,
        kind.replace("_", " "),
        primary,
        _gold_label(primary, gold, "the gold plan"),
        data,
        _whole_answer_notes(verdict),
    )


# --------------------------------------------------------------------------- per-item entries
# Diagnostics as the lines of ``plancheck score --per-item`` list them, encoded. (Here, beside
# the gold comparison's entries, so that scoring with the reference's metrics alone never
# imports the static checker.)


def compact_entry(diagnostic: Diagnostic) -> dict[str, Any]:
    """A diagnostic as a per-item line lists it: code, name, severity, message, the step
    position when known, and (for the gold-comparison codes, ``PC6xx``) the notes."""
    entry: dict[str, Any] = {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity.label,
        "message": diagnostic.message,
    }
    position = diagnostic.data.get("position")
    if position is not None:
        entry["position"] = position
    if diagnostic.code.startswith("PC6"):
        entry["notes"] = list(diagnostic.notes)
    return entry


def compact_text(
    code: Any, name: Any, severity: Any, message: Any, position: Any, notes: Any
) -> str:
    """``_ENCODE`` of the compact entry ``{code, name, severity, message, position?,
    notes?}`` (``position`` left out when None, ``notes`` when None), as :func:`compact_entry`
    and the gold comparison's entries are written, without building the dictionary or going
    through the encoder's dispatch: the prefix up to the message is the same for every
    diagnostic of a code, and the other values are usually a string, an integer and strings.
    ``tests/scoring/test_compact_text.py`` checks it against the encoder."""
    prefix = _PREFIXES.get((code, name, severity)) if type(code) is str else None
    if prefix is None:
        if not (type(code) is str and type(name) is str and type(severity) is str):
            entry: dict[str, Any] = {"code": code, "name": name, "severity": severity,
                                     "message": message}
            if position is not None:
                entry["position"] = position
            if notes is not None:
                entry["notes"] = notes
            return _ENCODE(entry)
        prefix = (f'{{"code": {_ENCODE_STRING(code)}, "name": {_ENCODE_STRING(name)}, '
                  f'"severity": {_ENCODE_STRING(severity)}, "message": ')
        if len(_PREFIXES) < 4096:
            _PREFIXES[(code, name, severity)] = prefix
    text = prefix + (_ENCODE_STRING(message) if type(message) is str else _ENCODE(message))
    if position is not None:
        text += ', "position": ' + (
            int.__repr__(position) if type(position) is int else _ENCODE(position)
        )
    if notes is not None:
        if (type(notes) is list or type(notes) is tuple) and all(
            type(note) is str for note in notes
        ):
            text += ', "notes": [' + ", ".join([_ENCODE_STRING(note) for note in notes]) + "]"
        else:
            text += ', "notes": ' + _ENCODE(notes)
    return text + "}"


def diagnostic_text(diagnostic: Diagnostic) -> str:
    """``_ENCODE(compact_entry(diagnostic))``, by :func:`compact_text`."""
    code = diagnostic.code
    return compact_text(
        code,
        diagnostic.name,
        diagnostic.severity.label,
        diagnostic.message,
        diagnostic.data.get("position"),
        list(diagnostic.notes) if code.startswith("PC6") else None,
    )


def entry_text(entry: dict[str, Any]) -> str:
    """``_ENCODE(entry)`` of a compact entry dictionary (as :func:`compact_entry` and the
    gold comparison build them), by :func:`compact_text` when it has their shape."""
    if len(entry) >= 4:
        keys = tuple(entry)
        if keys[:4] == _ENTRY_KEYS and entry.get("position", 0) is not None and (
            entry.get("notes", 0) is not None
        ) and (len(keys) == 4 or keys[4:] in _ENTRY_TAILS):
            return compact_text(entry["code"], entry["name"], entry["severity"],
                                entry["message"], entry.get("position"), entry.get("notes"))
    return _ENCODE(entry)


_ENTRY_KEYS: Final = ("code", "name", "severity", "message")
_ENTRY_TAILS: Final = (("position",), ("notes",), ("position", "notes"))
_PREFIXES: dict[tuple[Any, Any, Any], str] = {}


def fpof_text(verdict: ReferenceVerdict, task: GoldTask) -> str:
    """The encoded gold-comparison entry of a per-item line (the text
    ``diagnostic_text(fpof_diagnostics(...)[0])`` would give, written from its parts: no
    diagnostic, no dictionary); empty when the verdict has no first point of failure."""
    parts = _fpof_parts(verdict, task)
    if parts is None:
        return ""
    name, severity = _CODE_WORDS[parts.code]
    return compact_text(parts.code, name, severity, parts.message, parts.position, parts.notes)


# The name and severity label of each code.
_CODE_WORDS: Final = {code: (info.name, info.severity.label) for code, info in CODES.items()}


# --------------------------------------------------------------------------- check --gold


def prediction_answer(report: Report) -> tuple[str, Any] | None:
    """What the reference would score for a checked plan: ``("completion", text)`` for a raw
    completion, ``("plan", value)`` for a parsed plan, or None when the input holds nothing to
    compare (a file that could not be read, a record that is not JSON)."""
    from plancheck.compiler.frontends import RECORD_PLAN_FIELDS, sniff_kind

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
    kind = sniff_kind(report.file, text)
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
