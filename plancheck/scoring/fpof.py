"""First-Point-of-Failure as compiler diagnostics.

:func:`fpof_diagnostics` turns the reference evaluator's verdict on a prediction into
diagnostics: the first point of failure is the one error (``PC601``-``PC611``), its type and step
are the verdict's own, and every later divergence is a *cascaded* note on it rather than another
error. Labels point into the prediction (JSON pointers the caller resolves) and, when the gold
file's positions are wanted, into the gold file (already resolved). ``plancheck score`` writes
the same diagnostic, without spans, in its per-item lines (:func:`fpof_text`: no
:class:`Diagnostic` is built).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from plancheck.diagnostics.codes import CODES, FPOF_CATEGORY
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span
from plancheck.fast_json import dumps_plain
from plancheck.scoring.compact import compact_text
from plancheck.scoring.gold_steps import StepFacts, all_ints, sorted_dependence
from plancheck.scoring.reference import ReferenceVerdict
from plancheck.scoring.reference.compare import reference_equal
from plancheck.scoring.reference.prepared import is_plain

if TYPE_CHECKING:
    from plancheck.scoring.gold import GoldTask

__all__ = ["Locator", "fpof_category", "fpof_diagnostics", "fpof_text"]

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


def _same(a: Any, b: Any) -> bool:
    """The reference's type-exact deep equality (1, 1.0 and true all differ, a nested
    ``dependence`` compared sorted); where the reference would raise (an unsortable
    ``dependence``), the values differ."""
    try:
        return reference_equal(a, b)
    except TypeError:
        return False


def _equal_step_same_types(predicted: dict[str, Any], gold: StepFacts) -> bool:
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


def _value_differs(predicted: Any, gold: Any, plain: bool) -> bool:
    """Whether a step value differs type-exactly from the gold step's (``plain``: whether
    :func:`is_plain` holds of the gold value)."""
    if predicted != gold:  # at C speed; type-exact equality implies ==
        return True
    return not (plain or _same(predicted, gold))


def _dependence_differs(predicted: Any, gold: list[Any] | None, gold_ints: bool) -> bool:
    """Whether a step's dependence differs from the gold step's sorted members (quirk 14;
    ``gold_ints``: they are all integers)."""
    if gold_ints and type(predicted) is list and all_ints(predicted):
        # Integers sort, and compare type-exactly with integers as they compare.
        return sorted(predicted) != gold
    mine = sorted_dependence(predicted)
    return mine is None or gold is None or not _same(mine, gold)


class _Divergence(NamedTuple):  # a named tuple: failed items have several, built fast
    position: int
    field: str
    code: str


def _step_divergences(
    position: int, predicted: dict[str, Any], gold: StepFacts | None
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
    code = first.code if CODES[first.code].fpof_type == kind else _CODE_FOR_TYPE[kind]
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


def _primary(
    divergences: list[_Divergence], kind: str, fpof_step: Any, gold: list[Any]
) -> int | None:
    """Which divergence the verdict names: the first one of the verdict's type, preferring the
    one at the gold step the verdict reports."""
    if kind in ("early_stop", "hallucinated_extra_steps"):
        return None
    # (The registry read as it is now, not a copy made at import: see scoring.metrics.)
    matching = [i for i, d in enumerate(divergences) if CODES[d.code].fpof_type == kind]
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


def fpof_text(verdict: ReferenceVerdict, task: GoldTask) -> str:
    """The encoded gold-comparison entry of a per-item line (the text
    ``diagnostic_text(fpof_diagnostics(...)[0])`` would give, written from its parts: no
    diagnostic, no dictionary); empty when the verdict has no first point of failure."""
    parts = _fpof_parts(verdict, task)
    if parts is None:
        return ""
    info = CODES[parts.code]
    return compact_text(parts.code, info.name, info.severity.label, parts.message,
                        parts.position, parts.notes)
