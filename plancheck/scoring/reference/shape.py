"""Stage 3: shaping the parsed answer into a plan as the reference does (quirks 8-9): a
list of step objects, each with the canonical keys, aliases renamed, extra keys dropped."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from plancheck.compiler.extraction.isolation import extract
from plancheck.compiler.extraction.mend import unwrap
from plancheck.compiler.extraction.sentinels import NO_ANSWER
from plancheck.scoring.reference.verdict import (
    ALIASES,
    CANONICAL_KEYS,
    NOT_A_LIST,
    UNKNOWN_STEP_RANK,
    NotAList,
)


def normalize(value: Any, notes: list[str]) -> list[dict[str, Any]] | NotAList:
    """The reference's "dp" normalisation of an extracted value (quirks 7-8)."""
    if type(value) is list and value:
        plan = canonical_plan_if_all_objects(value, notes)
        if plan is not None:
            return plan
    value = unwrap(value, notes)
    plan = _shape(value, notes)
    if plan is not None:
        return plan
    # Quirk 8e: the reference re-runs extraction on the serialised value.
    notes.append("answer was not an array; extraction re-run on its JSON text")
    again = extract(json.dumps(value), notes)
    if again is NO_ANSWER:
        return NOT_A_LIST
    plan = _shape(again, notes)
    return NOT_A_LIST if plan is None else plan


def _shape(value: Any, notes: list[str]) -> list[dict[str, Any]] | None:
    """Quirk 8a-d; None when ``value`` is not an array at all."""
    if not isinstance(value, list):
        return None
    if value:
        plan = canonical_plan_if_all_objects(value, notes)
        if plan is not None:
            return plan
    for item in value:
        if _is_object_array(item) and all("agent" in x and "step" in x for x in item):
            notes.append("plan found nested inside an outer array")
            return _canonical_plan(item, notes)
    salvaged = _salvage_steps(value)
    if salvaged is not None:
        notes.append("non-step items dropped and steps sorted by step number")
        return _canonical_plan(sorted(salvaged, key=_step_rank), notes)
    notes.append("array without step objects scored as the empty plan")
    return []


def _looks_like_step(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    for key in ("agent", "agent_name"):
        name = item.get(key)
        if isinstance(name, str) and name.strip():
            return True
    return False


def _step_rank(item: Any) -> int:
    """Sort key of the coerce path. ``int()`` may raise on odd digit strings, as it does
    in the reference (quirk 15)."""
    if not isinstance(item, dict):
        return UNKNOWN_STEP_RANK
    number = item.get("step", item.get("step_index"))
    if isinstance(number, int):
        return number
    if isinstance(number, str) and number.strip().lstrip("-").isdigit():
        return int(number.strip())
    return UNKNOWN_STEP_RANK


def _is_object_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(x, dict) for x in value)


def _salvage_steps(items: list[Any]) -> list[Any] | None:
    """Quirk 8c, for a list that is not purely objects."""
    if not items:
        return None
    top_level = [item for item in items if _looks_like_step(item)]
    if top_level:
        return top_level
    nested = [
        inner
        for item in items
        if isinstance(item, list)
        for inner in item
        if _looks_like_step(inner)
    ]
    if nested:
        return nested
    objects = [item for item in items if isinstance(item, dict)]
    return objects or None


def _canonical_plan(items: list[Any], notes: list[str]) -> list[dict[str, Any]]:
    return [_canonical_step(item, notes) for item in items]


def canonical_plan_if_all_objects(
    items: list[Any], notes: list[str]
) -> list[dict[str, Any]] | None:
    """Quirk 8a fused with quirk 9: None as soon as an item is not an object."""
    plan = []
    for item in items:
        if type(item) is not dict:
            return None
        if (
            item.keys() == CANONICAL_KEYS
            and type(item["inputs"]) is dict
            and type(item["outputs"]) is list
        ):
            # Already canonical (see _canonical_step), but for a bare dependence to note.
            if type(item["dependence"]) is not list:
                note_bare_dependence(item["dependence"], notes)
            plan.append(item)
        else:
            plan.append(canonical_step_slow(item, notes))
    return plan


def _canonical_step(item: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Quirk 9."""
    if item.keys() == CANONICAL_KEYS:
        inputs = item["inputs"]
        outputs = item["outputs"]
        dependence = item["dependence"]
        if type(inputs) is dict and type(outputs) is list:
            if type(dependence) is not list:
                note_bare_dependence(dependence, notes)
            # Already canonical: the object itself has exactly the canonical keys and values
            # (only its key order may differ, which no comparison looks at).
            return item
    return canonical_step_slow(item, notes)


_ALIAS_TARGET: Final = {alias: key for key, alias in ALIASES}


@dataclass(frozen=True, slots=True)
class _Recipe:
    """How to canonicalise a step object with a given sequence of keys (quirk 9)."""

    # Where step, agent, dependence and dependence_content come from; None when absent
    # (``item.get(None)`` is None: JSON keys are strings).
    sources: tuple[str | None, str | None, str | None, str | None]
    notes: tuple[str, ...]  # alias and missing-key notes
    dropped_notes: tuple[str, ...]  # one per key neither canonical nor read as an alias
    drops_input: bool  # `input` is one of those keys (not noted when read as `inputs`)


INPUT_DROPPED: Final = "extra key `input` dropped"


@lru_cache(maxsize=4096)
def _recipe(keys: tuple[str, ...]) -> _Recipe:
    present = set(keys)
    sources: list[str | None] = []
    notes: list[str] = []
    for canonical, alias in ALIASES:
        if canonical in present:
            sources.append(canonical)
        elif alias in present:
            sources.append(alias)
            notes.append(f"alias key `{alias}` read as `{canonical}`")
        else:
            sources.append(None)
            notes.append(f"missing `{canonical}` read as null")
    dropped = [
        key
        for key in keys
        if key not in CANONICAL_KEYS
        and not (key in _ALIAS_TARGET and _ALIAS_TARGET[key] not in present)
    ]
    step, agent, dependence, content = sources
    return _Recipe(
        (step, agent, dependence, content),
        tuple(notes),
        tuple(f"extra key `{key}` dropped" for key in dropped),
        "input" in dropped,
    )


def canonical_step_slow(item: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    recipe = _recipe(tuple(item))
    step_key, agent_key, dependence_key, content_key = recipe.sources
    if recipe.notes:
        notes += recipe.notes
    get = item.get
    inputs = get("inputs")
    input_alias_used = False
    if type(inputs) is not dict or not inputs:
        alternative = get("input")
        if type(alternative) is dict:
            inputs = alternative
            input_alias_used = True
            notes.append("alias key `input` read as `inputs`")
        elif type(inputs) is not dict:
            notes.append("missing or non-object `inputs` read as {}")
            inputs = {}
    outputs = get("outputs")
    if type(outputs) is not list:
        notes.append("missing or non-array `outputs` read as []")
        outputs = []
    if recipe.dropped_notes:
        if input_alias_used and recipe.drops_input:
            notes += [note for note in recipe.dropped_notes if note != INPUT_DROPPED]
        else:
            notes += recipe.dropped_notes
    dependence = get(dependence_key)  # type: ignore[arg-type]
    if type(dependence) is not list:
        note_bare_dependence(dependence, notes)
    return {
        "step": get(step_key),  # type: ignore[arg-type]
        "agent": get(agent_key),  # type: ignore[arg-type]
        "inputs": inputs,
        "outputs": outputs,
        "dependence": dependence,
        "dependence_content": get(content_key),  # type: ignore[arg-type]
    }


def note_bare_dependence(dependence: Any, notes: list[str]) -> None:
    if dependence is None:
        return  # already noted as missing, or an explicit null read as []
    if isinstance(dependence, dict):
        notes.append("dependence object read as the list of its keys")
    elif isinstance(dependence, (str, int, float)):
        # json.dumps spelling; an int (not a bool) spells the same with str(), much faster.
        shown = str(dependence) if type(dependence) is int else json.dumps(dependence)
        notes.append(f"dependence {shown} read as [{shown}]")
