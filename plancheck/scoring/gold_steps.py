"""What the first-point-of-failure comparison reads of one gold step, prepared once per gold
task (each gold step is compared with many predictions), and the dependence helpers it and the
gold plan's composition share."""

from __future__ import annotations

from typing import Any, NamedTuple

from plancheck.scoring.reference.prepared import is_plain


def dependence_members(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return list(value)
    return [value]


def sorted_dependence(value: Any) -> list[Any] | None:
    try:
        return sorted(dependence_members(value))
    except TypeError:
        return None


def all_ints(values: list[Any]) -> bool:
    for value in values:  # noqa: SIM110 - a plain loop: faster than all() on short lists
        if type(value) is not int:
            return False
    return True


class StepFacts(NamedTuple):
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
    def of(cls, item: Any) -> StepFacts | None:
        if not isinstance(item, dict):
            return None
        inputs, outputs = item.get("inputs"), item.get("outputs")
        content = item.get("dependence_content")
        dependence = sorted_dependence(item.get("dependence"))
        return cls(
            item.get("step"),
            item.get("agent"),
            inputs,
            outputs,
            dependence,
            dependence is not None and all_ints(dependence),
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

