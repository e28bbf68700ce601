"""Score a predicted DORA-style trajectory against a gold one (DORA paper, section 4).

Both trajectories are read as :mod:`plancheck.dora.trajectory` describes; references are
rewritten to count calls from 0 (so a gold trajectory numbered from 1 and a prediction numbered
from 0 compare correctly), then :func:`plancheck.dora.paper_metrics.trajectory_metrics` scores
them.
"""

from __future__ import annotations

from typing import Any

from plancheck.dora.paper_metrics import ToolCall, trajectory_metrics
from plancheck.dora.references import TrajectoryReference, format_reference, parse_reference
from plancheck.dora.trajectory import (
    decode_arguments,
    read_calls,
    reference_base,
    unwrap_trajectory,
)


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


def score_trajectory(pred: Any, gold: Any) -> dict[str, float]:
    """DORA's five trajectory metrics of ``pred`` against ``gold`` (JSON values)."""
    return trajectory_metrics(calls_from_trajectory(pred), calls_from_trajectory(gold))
