"""The reference evaluator's verdict on one answer, and the constants its comparisons use
(the eight FPoF error types, the canonical step keys and their aliases)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Final, NamedTuple, cast

from plancheck.ir.schema import CANONICAL_STEP_ORDER, REFERENCE_ALIASES, STEP_FIELDS

FPOF_ERROR_TYPES: Final[frozenset[str]] = frozenset(
    {
        "agent_mismatch",
        "parameter_error",
        "dependency_error",
        "dependency_content_error",
        "early_stop",
        "hallucinated_extra_steps",
        "empty_output",
        "format_error",
    }
)
"""The eight error types the reference evaluator itself can report."""


CRASH_ERROR_TYPE: Final = "exception"
"""What ``test_baseline.py`` records when the evaluator raises (quirk 15)."""


CANONICAL_ORDER: Final = CANONICAL_STEP_ORDER
CANONICAL_KEYS: Final = frozenset(STEP_FIELDS)
ALIASES: Final = REFERENCE_ALIASES


UNKNOWN_STEP_RANK: Final = 10**9


class ReferenceVerdict(NamedTuple):
    """The reference evaluator's six numbers for one answer, plus how we got there.

    ``prediction`` is the normalised plan exactly as the reference compares it (a list of
    canonical step objects, possibly empty), or ``None`` when it had no JSON array to compare.
    A step object that already had exactly the canonical keys is handed back as parsed, so its
    key order may differ from the reference's canonical order (no comparison looks at it).
    ``repairs`` lists, in order, each leniency that was needed to read the answer (empty in
    strict mode); ``problem`` says why an answer could not be scored normally (nothing to
    read, not an array, a strict-mode rejection, or the exception the reference would raise).
    The verdict shares objects with the prepared gold plan and the parsed answer: treat it as
    read-only. (A named tuple, not a frozen dataclass: building one is several times cheaper,
    which matters at tens of thousands of verdicts a second.)
    """

    em: bool
    tool_acc: bool
    param_acc: bool
    dep_acc: bool
    fpof_type: str | None
    fpof_step: int | None
    prediction: list[Any] | None
    repairs: tuple[str, ...] = ()
    problem: str | None = None

    def metrics(self) -> dict[str, Any]:
        """The six numbers, keyed like the ``expected`` objects of the parity cases."""
        return {
            "em": self.em,
            "tool_acc": self.tool_acc,
            "param_acc": self.param_acc,
            "dep_acc": self.dep_acc,
            "fpof_type": self.fpof_type,
            "fpof_step": self.fpof_step,
        }


# tuple.__new__ bound to the class: builds a verdict from its nine fields in one C call,
# without the Python-level __new__ that a named tuple's constructor goes through.
make_verdict: Final = cast(
    "Callable[[tuple[Any, ...]], ReferenceVerdict]",
    partial(tuple.__new__, ReferenceVerdict),
)


class NotAList:
    """Sentinel: the reference's answer is JSON but not an array (``format_error``)."""


NOT_A_LIST: Final = NotAList()
