"""The plan interpreter: run a plan over symbolic values (the default) or real tools.

    from plancheck.interp import replay
    outputs = replay(plan, {"Weather_Degraded_Image_Restoration": restore, ...})

``run`` executes a plan with any executor; ``SymbolicExecutor`` computes values with provenance,
``CallableExecutor`` (used by ``replay``) calls real Python functions. ``canonical_form`` and
``equivalent`` compare plans by what they compute; ``checks`` holds what the checker's rules
of symbolic execution (:mod:`plancheck.checks`) run a step at a time.
"""

from __future__ import annotations

from plancheck.interp.canonical import canonical_form, equivalent
from plancheck.interp.engine import (
    CallableExecutor,
    ExecutionError,
    Executor,
    SymbolicExecutor,
    Trace,
    replay,
    run,
)

__all__ = [
    "CallableExecutor",
    "ExecutionError",
    "Executor",
    "SymbolicExecutor",
    "Trace",
    "canonical_form",
    "equivalent",
    "replay",
    "run",
]
