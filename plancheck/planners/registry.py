"""Method names and how to build their planners.

Planners are built per worker thread (``planner_factory`` returns a zero-argument factory): LLM
planners then own their HTTP client, which makes per-task usage accounting exact. Method modules
are imported only when their method is used, so the solver (which needs z3) and the LLM methods
(which need openai) cost nothing to the others.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plancheck.planners.structural import STRUCTURAL_METHODS

if TYPE_CHECKING:
    from plancheck.ir.nodes import Toolset
    from plancheck.planners.base import Planner
    from plancheck.planners.client import ClientConfig
    from plancheck.planners.llm import LLMOptions
    from plancheck.planners.prompts import PromptBook

# method -> "module:class"
LLM_METHODS: dict[str, str] = {
    "dp": "plancheck.planners.dp:DirectPlanner",
    "cot": "plancheck.planners.cot:ChainOfThoughtPlanner",
    "tot": "plancheck.planners.tot:TreeOfThoughtsPlanner",
    "rap": "plancheck.planners.rap:ReasoningViaPlanning",
    "react": "plancheck.planners.react:ReActPlanner",
}
SOLVER = "solver"
DEFAULT_METHOD = SOLVER
METHODS: tuple[str, ...] = (SOLVER, *LLM_METHODS, *STRUCTURAL_METHODS)
# The paper's per-method temperatures (Appendix B.1): deterministic single-pass methods,
# mildly stochastic search.
PAPER_TEMPERATURES: dict[str, float] = {"dp": 0.0, "cot": 0.0, "react": 0.0,
                                        "tot": 0.5, "rap": 0.5}
# The keyword arguments each LLM method accepts beyond the shared ones.
METHOD_PARAMETERS: dict[str, tuple[str, ...]] = {
    "dp": (),
    "react": (),
    "cot": ("samples",),
    "tot": ("steps", "generate_samples", "vote_samples", "select"),
    "rap": ("rollouts", "max_depth", "subquestions", "confidence_samples", "w_exp", "alpha",
            "r1_default", "max_answer_rounds"),
}
STRUCTURAL_PARAMETERS = ("seed", "beam_width", "topk_per_step", "global_topk")


def max_workers(method: str) -> int | None:
    """How many threads may plan with ``method`` at once (``None``: no limit).

    The model-free planners are CPU-bound (threads buy nothing under the GIL) and the solver
    drives z3, whose default context must not be used from two threads at once.
    """
    return None if method in LLM_METHODS else 1


def needs_model(method: str) -> bool:
    return method in LLM_METHODS


def needs_gold(method: str) -> bool:
    return method in STRUCTURAL_METHODS


@dataclass
class PlannerSpec:
    """Everything needed to build a method's planners."""

    method: str
    toolset: Toolset
    client: ClientConfig | None = None
    prompts: PromptBook | None = None
    options: LLMOptions | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    gold: dict[str, list[Any]] = field(default_factory=dict)


def _llm_class(method: str) -> type[Any]:
    module_name, class_name = LLM_METHODS[method].split(":")
    return getattr(importlib.import_module(module_name), class_name)  # type: ignore[no-any-return]


def planner_factory(spec: PlannerSpec) -> Callable[[], Planner]:
    """A function that builds one planner for ``spec.method`` (call it once per thread)."""
    method = spec.method
    if method == SOLVER:
        # Imported by name: the solver lives in its own module (and needs z3).
        solver_class = importlib.import_module("plancheck.planners.smt_planner").SolverPlanner
        return lambda: solver_class(toolset=spec.toolset)
    if method in STRUCTURAL_METHODS:
        from plancheck.planners.structural import StructuralPlanner

        kwargs = {k: v for k, v in spec.parameters.items() if k in STRUCTURAL_PARAMETERS}
        shared = StructuralPlanner(method, spec.toolset, spec.gold, **kwargs)  # stateless
        return lambda: shared
    if method in LLM_METHODS:
        from plancheck.planners.client import ChatClient
        from plancheck.planners.llm import LLMOptions
        from plancheck.planners.prompts import load_prompts
        from plancheck.planners.session import FormatPolicy

        if spec.client is None:
            raise ValueError(f"method {method} needs a model (ClientConfig)")
        cls = _llm_class(method)
        prompts = spec.prompts or load_prompts()
        options = spec.options or LLMOptions()
        policy = FormatPolicy()  # what the server accepts is learnt once for the whole run
        client_config = spec.client
        kwargs = {k: v for k, v in spec.parameters.items() if k in METHOD_PARAMETERS[method]}

        def build() -> Planner:
            planner: Planner = cls(ChatClient(client_config), spec.toolset, prompts, options,
                                   policy, **kwargs)
            return planner

        return build
    raise ValueError(f"unknown method {method!r} (choose from {', '.join(METHODS)})")
