"""DORA's failures on the First-Point-of-Failure categories of the DisasterBench paper.

DORA's evaluator has no failure taxonomy; plancheck names the first thing that goes wrong in a
DORA trajectory with the paper's fine types (and so its three categories, Tool Mismatch,
Parameter Binding Error, Structural Error): a checker diagnostic by its code
(:data:`FPOF_OF_CODE`), otherwise the first difference from the gold tool sequence.
"""

from __future__ import annotations

from plancheck.diagnostics.codes import FPOF_CATEGORY

FPOF_OF_CODE = {
    "PC201": "agent_mismatch",  # unknown or look-alike tool
    "PC202": "parameter_error",  # an argument the tool does not take
    "PC203": "parameter_error",  # a required argument missing
    "PC205": "parameter_error",  # a reference DORA cannot read
    "PC208": "parameter_error",  # a key the producing call does not return
    "PC301": "parameter_error",  # a result of the wrong kind
    "PC302": "parameter_error",  # a literal of the wrong kind
    "PC206": "dependency_error",  # a reference to a call the trajectory lacks
    "PC207": "dependency_error",  # a reference to a later call
    "PC105": "format_error",
    "PC106": "format_error",
    "PC107": "format_error",
    "PC108": "format_error",
    "PC112": "empty_output",
}


def fpof_of_code(code: str) -> tuple[str, str] | None:
    """(fine type, category) of a diagnostic code, or ``None`` for codes that are no failure."""
    kind = FPOF_OF_CODE.get(code)
    return None if kind is None else (kind, FPOF_CATEGORY[kind])


def category(kind: str) -> str:
    return FPOF_CATEGORY[kind]
