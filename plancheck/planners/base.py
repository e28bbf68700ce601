"""What every planner takes and returns, so that the runner, the scorer and the report treat
LLM planners and model-free planners alike."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

# HTTP requests one task may send. With the reference's settings and answers that parse, one
# task took 16 (CoT), 24 (ToT) and 49 (RAP) requests of a scripted server that ignores n; a
# server whose answers never parse (cut off at max_tokens, say) kept RAP asking for thousands.
DEFAULT_MAX_REQUESTS = 1000


@dataclass(frozen=True, slots=True)
class PlanningTask:
    """A task as a planner sees it: never the gold plan."""

    task_id: Any
    task_desc: str


@dataclass(slots=True)
class PlanResult:
    """One planner's answer to one task, with what it cost.

    ``completion`` is the raw text the method ends with (what ``plancheck score`` re-scores, as
    the reference does with a model's output); model-free planners write their JSON plan there.
    ``attempts`` records every plan the method proposed when the checker is in the loop, each
    with its diagnostics.
    """

    task_id: Any
    method: str
    completion: str | None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None
    truncated: bool = False
    error: str | None = None  # a transport failure or an exhausted budget, never a plan error
    details: dict[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


class Planner(Protocol):
    """A planning method. ``name`` is the method name used in result paths."""

    name: str

    def plan(self, task: PlanningTask) -> PlanResult: ...
