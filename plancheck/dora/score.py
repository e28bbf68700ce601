"""Score a predicted trajectory document against a gold one.

By default (``wording="dora"``) the numbers are DORA's released evaluator's
(:func:`plancheck.dora.trajectory_metrics`): a document in DORA's own format
(:mod:`plancheck.dora.formats`) is scored as it is; a trajectory in another call shape
(:mod:`plancheck.dora.trajectory`) is first written as DORA's steps ``{"call", "args"}``.
``wording="paper"`` scores with the DORA paper's wording of the metrics instead
(:mod:`plancheck.dora.paper_metrics`, other metric names). Either way references are rewritten
to count calls from 0, so a gold trajectory numbered from 1 and a prediction numbered from 0
compare correctly.
"""

from __future__ import annotations

from typing import Any

from plancheck.dora.paper_metrics import ToolCall, trajectory_metrics
from plancheck.dora.references import TrajectoryReference, format_reference, parse_reference
from plancheck.dora.trajectory import (
    decode_arguments,
    read_calls,
    reference_base,
)
from plancheck.formats.sniff import unwrap_trajectory


def calls_from_trajectory(value: Any) -> list[ToolCall]:
    """The calls of a trajectory document, references counted from 0. A call whose tool
    cannot be read has tool ``""``; arguments that cannot be read are ``{}``."""
    calls, _ = unwrap_trajectory(value)
    if not isinstance(calls, list):
        return []
    base = reference_base(calls)
    found = []
    for raw in read_calls(calls):
        tool = raw.name if isinstance(raw.name, str) else ""
        arguments = decode_arguments(raw.arguments)
        arguments = arguments if isinstance(arguments, dict) else {}
        found.append(ToolCall(tool, {k: _rebased(v, base) for k, v in arguments.items()}))
    return found


def _rebased(value: Any, base: int) -> Any:
    if isinstance(value, str):
        parsed = parse_reference(value)
        if isinstance(parsed, TrajectoryReference) and parsed.key is not None:
            return format_reference(parsed.step - base, parsed.key)
        return value
    if isinstance(value, list):
        return [_rebased(v, base) for v in value]
    if isinstance(value, dict):
        return {k: _rebased(v, base) for k, v in value.items()}
    return value


def score_trajectory(pred: Any, gold: Any, *, wording: str = "dora") -> dict[str, float]:
    """The five trajectory metrics of ``pred`` against ``gold`` (JSON values): DORA's code's
    (``t_any``, ``t_ord``, ``t_em``, ``par_acc``, ``eff``), or with ``wording="paper"`` the
    paper's."""
    if wording == "paper":
        return trajectory_metrics(calls_from_trajectory(pred), calls_from_trajectory(gold))
    if wording != "dora":
        raise ValueError(f"unknown wording {wording!r}; expected 'dora' or 'paper'")
    from plancheck.dora.metrics import trajectory_metrics as dora_metrics

    return dora_metrics(dora_steps(pred), dora_steps(gold))


def dora_steps(value: Any) -> list[Any]:
    """The trajectory of a document as DORA's steps (a DORA document's own list as it is)."""
    from plancheck.dora.formats import find_trajectories

    found = find_trajectories(value)
    if found is not None and len(found) == 1:
        steps = found[0].value
        return steps if isinstance(steps, list) else []
    return [{"call": call.tool, "args": dict(call.arguments)}
            for call in calls_from_trajectory(value)]
