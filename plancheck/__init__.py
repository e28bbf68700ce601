"""plancheck: a statically typed, compiler-style checker for LLM tool-use plans.

The public API is imported lazily so that ``import plancheck`` stays cheap:

    plancheck.check(plan, toolset=None)           -> Report
    plancheck.score(prediction, gold)             -> per-item scores (the reference's, and more)
    plancheck.repair(generate, plan, toolset)     -> the checker-in-the-loop result
    plancheck.load_toolset(spec=None)             -> Toolset
    plancheck.Guard(toolset, policies=None)       -> .propose(call) before each call runs
"""

from __future__ import annotations

# A constant of this name is what type checkers look for; importing it from typing would cost
# `plancheck --version` a few milliseconds (typing is a large module), and nothing else here
# needs typing at run time.
TYPE_CHECKING = False

__version__ = "0.1.0"

_EXPORTS = {
    "check": "plancheck.api",
    "check_trajectory": "plancheck.api",
    "load_toolset": "plancheck.corpus.pool_values",
    "score": "plancheck.api",
    "Report": "plancheck.compiler.driver",
    "Diagnostic": "plancheck.diagnostics.model",
    "Severity": "plancheck.diagnostics.severity",
    "Toolset": "plancheck.ir.nodes",
    "Plan": "plancheck.ir.nodes",
    "repair": "plancheck.planners.repair_loop",
    "CheckOptions": "plancheck.compiler.driver",
    "Guard": "plancheck.guard",
    "Verdict": "plancheck.guard",
    "TurnVerdict": "plancheck.guard",
}

__all__ = [
    "CheckOptions",
    "Diagnostic",
    "Guard",
    "Plan",
    "Report",
    "Severity",
    "Toolset",
    "TurnVerdict",
    "Verdict",
    "__version__",
    "check",
    "check_trajectory",
    "load_toolset",
    "repair",
    "score",
]

if TYPE_CHECKING:
    from typing import Any

    from plancheck.api import check, check_trajectory, score
    from plancheck.compiler.driver import CheckOptions, Report
    from plancheck.corpus.pool_values import load_toolset
    from plancheck.diagnostics.model import Diagnostic
    from plancheck.diagnostics.severity import Severity
    from plancheck.guard import Guard, TurnVerdict, Verdict
    from plancheck.ir.nodes import Plan, Toolset
    from plancheck.planners.repair_loop import repair


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'plancheck' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
