"""Gold plans prepared once for the comparisons: each step's canonical fields, sorted
dependence and the facts the fast paths need (how many objects each step holds)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plancheck.fast_json import loads_or_invalid
from plancheck.scoring.reference.verdict import CANONICAL_KEYS, ReferenceVerdict


def is_plain(value: Any) -> bool:
    """True when ``value`` holds only strings, nulls, arrays and objects without a
    ``dependence`` key.

    For such a gold value ``g`` and any JSON value ``a``, ``a == g`` is exactly the type-exact
    deep equality of quirk 10, and never raises: a JSON value can only ``==`` a string if it
    is a string (likewise for null, arrays, objects), so no int/float/bool confusion can
    sneak in, and the ``dependence`` special case (quirk 11) needs the key on both sides.
    """
    if value is None or type(value) is str:
        return True
    if type(value) is list:
        return all(is_plain(item) for item in value)
    if type(value) is dict:
        return "dependence" not in value and all(is_plain(item) for item in value.values())
    return False


@dataclass(frozen=True, slots=True)
class GoldStep:
    """One gold item with everything the comparisons need, looked up once."""

    is_object: bool
    has_exact_keys: bool  # the six canonical keys and nothing else (needed for EM)
    step: Any
    agent: Any
    inputs: Any
    outputs: Any
    dependence: Any
    dependence_content: Any
    error_step: Any  # what FPoF reports when this step is the first failure
    step_plain: bool
    agent_plain: bool
    inputs_plain: bool
    outputs_plain: bool
    content_plain: bool
    dependence_ints: list[int] | None  # the dependence array when it is made of ints only
    dependence_sorted: list[Any] | None  # None when sorting it raises (re-raised on use)
    item: Any  # the gold item itself

    @property
    def is_simple(self) -> bool:
        """Exactly the six keys, an int step, a string agent, plain inputs/outputs/content and
        an all-int dependence array - true of every benchmark gold step, and what
        :func:`compare_simple` relies on."""
        return (
            self.has_exact_keys
            and type(self.step) is int
            and type(self.agent) is str
            and self.inputs_plain
            and self.outputs_plain
            and self.content_plain
            and self.dependence_ints is not None
        )

    @classmethod
    def from_item(cls, item: Any, index: int) -> GoldStep:
        if not isinstance(item, dict):
            # Every check fails on it; FPoF reports format_error at index + 1.
            return cls(
                is_object=False,
                has_exact_keys=False,
                step=None,
                agent=None,
                inputs=None,
                outputs=None,
                dependence=None,
                dependence_content=None,
                error_step=index + 1,
                step_plain=False,
                agent_plain=False,
                inputs_plain=False,
                outputs_plain=False,
                content_plain=False,
                dependence_ints=None,
                dependence_sorted=None,
                item=item,
            )
        dependence = item.get("dependence")
        ints = (
            dependence
            if type(dependence) is list and all(type(member) is int for member in dependence)
            else None
        )
        try:
            ordered: list[Any] | None = sorted(dependence_as_list(dependence))
        except TypeError:
            ordered = None
        inputs = item.get("inputs", {})
        outputs = item.get("outputs", [])
        content = item.get("dependence_content")
        return cls(
            is_object=True,
            has_exact_keys=item.keys() == CANONICAL_KEYS,
            step=item.get("step"),
            agent=item.get("agent"),
            inputs=inputs,
            outputs=outputs,
            dependence=dependence,
            dependence_content=content,
            error_step=item.get("step", index + 1),
            step_plain=is_plain(item.get("step")),
            agent_plain=is_plain(item.get("agent")),
            inputs_plain=is_plain(inputs),
            outputs_plain=is_plain(outputs),
            content_plain=is_plain(content),
            dependence_ints=ints,
            dependence_sorted=ordered,
            item=item,
        )


@dataclass(frozen=True, slots=True, eq=False)
class GoldPlan:
    """A gold plan prepared for repeated scoring.

    ``text`` is the reference's ``gt`` string (``json.dumps`` of the plan). ``steps`` is
    ``None`` when that text is not a JSON array (every check then fails). The EM check
    parses ``gt`` after replacing newlines, the others parse it as is; ``em_steps`` keeps
    the former in the (odd) case a caller hands in gold text whose strings hold raw newlines.
    Build one with :func:`prepare_gold`.
    """

    text: str
    steps: tuple[GoldStep, ...] | None
    em_steps: tuple[GoldStep, ...] | None
    tool_pairs: tuple[tuple[Any, Any], ...]
    simple: bool  # every step is_simple and the EM parse is the same: the fast comparator applies
    items: list[Any] | None  # the parsed gold plan, shared by all scorings: never mutate it
    # Per step, how many objects it holds, when the plan is simple and every step is shallow
    # (see shallow_objects); else None.
    step_objects: tuple[int, ...] | None = None
    # The plan's own JSON in the spellings answers copy verbatim (see _SPELLINGS), by length:
    # (text, its verdict as the whole answer, its verdict with other text around it).
    spelled: dict[int, tuple[str, ReferenceVerdict, ReferenceVerdict]] = field(
        default_factory=dict
    )

    @property
    def plan(self) -> list[Any] | None:
        """A fresh copy of the gold plan (parsed from :attr:`text`), or None if not an array."""
        value = loads_or_invalid(self.text)
        return value if isinstance(value, list) else None


def gold_steps(value: Any) -> tuple[GoldStep, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(GoldStep.from_item(item, index) for index, item in enumerate(value))


def shallow_objects(step: Any) -> int | None:
    """How many objects a step holds, itself included, when it is an object whose objects
    are all its own members and hold no object themselves (and no array holds one); else
    None."""
    if type(step) is not dict:
        return None
    count = 1
    for value in step.values():
        if type(value) is dict:
            if _holds_object(list(value.values())):
                return None
            count += 1
        elif type(value) is list and _holds_object(value):
            return None
    return count


def _holds_object(values: list[Any]) -> bool:
    """Whether an object occurs anywhere among ``values``, however deep."""
    for value in values:
        if type(value) is dict:
            return True
        if type(value) is list and _holds_object(value):
            return True
    return False


def dependence_as_list(dependence: Any) -> list[Any]:
    """Quirk 14's reading of a dependence value as a list."""
    if dependence is None:
        return []
    if isinstance(dependence, (list, tuple)):
        return list(dependence)
    if isinstance(dependence, (int, float, str)):
        return [dependence]
    try:
        return list(dependence)
    except TypeError:
        return [dependence]
