"""The registry: every rule of the checker, one line each, in the order they report within a
phase. Adding a rule is a module under ``rules/`` and a line here (see docs/adding-a-rule.md).
"""

from __future__ import annotations

from typing import Final

from plancheck.checks.rule import Rule
from plancheck.checks.rules.dependencies import Dependencies
from plancheck.checks.rules.early_reads import EarlyReads
from plancheck.checks.rules.names import ToolsAndKeys
from plancheck.checks.rules.numbering import Numbering
from plancheck.checks.rules.references import References
from plancheck.checks.rules.repeated_calls import RepeatedCalls
from plancheck.checks.rules.types import Types
from plancheck.checks.rules.unreachable import Unreachable
from plancheck.checks.rules.unused_outputs import UnusedOutputs

__all__ = ["RULES", "RuleSet", "rule_set"]

RULES: Final[tuple[Rule, ...]] = (
    Numbering(),
    ToolsAndKeys(),
    References(),  # before the rules that read what resolving references found
    Dependencies(),
    Types(),
    EarlyReads(),
    RepeatedCalls(),
    UnusedOutputs(),
    Unreachable(),
)


class RuleSet:
    """The rules one check runs, sorted into the hooks each uses (so that no hook a rule
    leaves alone is called), and whether any needs the data flow."""

    __slots__ = ("cleaners", "finishers", "needs_flow", "on_lowered", "on_settled", "rules",
                 "starters")

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        ordered = tuple(sorted(rules, key=_rank))  # stable: the table's order within a phase
        self.rules = ordered
        self.starters = tuple(rule for rule in ordered if "start" in rule.hooks)
        self.cleaners = tuple(rule for rule in ordered if "clean" in rule.hooks)
        # The step hooks of a settled step, and of one that is not (in the table's order).
        self.on_settled = tuple(rule for rule in ordered if "step" in rule.hooks)
        self.on_lowered = tuple((rule, "lowered" in rule.hooks) for rule in ordered
                                if "step" in rule.hooks or "lowered" in rule.hooks)
        self.finishers = tuple(rule for rule in ordered if "finish" in rule.hooks)
        self.needs_flow = any("flow" in rule.needs for rule in ordered)


def _rank(rule: Rule) -> int:
    return rule.rank


_SETS: dict[tuple[bool, bool, bool], RuleSet] = {}


def rule_set(*, types: bool = True, interpret: bool = True, unreachable: bool = False
             ) -> RuleSet:
    """The rules a check runs: the type rules unless ``types`` is false, those of symbolic
    execution unless ``interpret`` is false, and ``PC503`` when ``unreachable`` (and
    ``interpret``)."""
    key = (types, interpret, unreachable)
    found = _SETS.get(key)
    if found is None:
        on = {"": True, "types": types, "interpret": interpret,
              "unreachable": unreachable and interpret}
        found = _SETS[key] = RuleSet(tuple(rule for rule in RULES if on[rule.option]))
    return found
