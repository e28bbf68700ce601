"""The registry: every rule of the checker, one line each, in the order they report within a
phase. Adding a rule is a module under ``rules/`` and a line here (see docs/adding-a-rule.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeAlias

from plancheck.checks.context import CheckContext
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
from plancheck.checks.view import StepView

__all__ = ["RULES", "RuleSet", "StepHook", "rule_set", "step_hook"]

StepHook: TypeAlias = Callable[[StepView, CheckContext], None]

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
    leaves alone is called), and whether any needs the data flow.

    The walk (:mod:`.run`) calls the hooks from tuples made here once per set of options:
    each hook bound to its rule and paired with the rank of the rule's phase, so that a step
    costs a call per hook and nothing to look them up (the plain-Python build feels each
    lookup: a plan of three steps runs some thirty hooks)."""

    __slots__ = ("clean_hooks", "finish_hooks", "lowered_hooks", "needs_flow", "rules",
                 "settled_hooks", "start_hooks")

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        ordered = tuple(sorted(rules, key=_rank))  # stable: the table's order within a phase
        self.rules = ordered
        self.start_hooks: tuple[tuple[int, Callable[[CheckContext], None]], ...] = tuple(
            (rule.rank, rule.start) for rule in ordered if "start" in rule.hooks)
        # Whether a candidate step is clean: every rule with a clean hook says so (no rank:
        # a clean hook reports nothing).
        self.clean_hooks: tuple[Callable[[StepView, CheckContext], bool], ...] = tuple(
            rule.clean for rule in ordered if "clean" in rule.hooks)
        # The step hooks of a settled step, and of one that is not (in the table's order).
        self.settled_hooks: tuple[tuple[int, StepHook], ...] = tuple(
            (rule.rank, hook) for rule in ordered
            if (hook := step_hook(rule, settled=True)) is not None)
        self.lowered_hooks: tuple[tuple[int, StepHook], ...] = tuple(
            (rule.rank, hook) for rule in ordered
            if (hook := step_hook(rule, settled=False)) is not None)
        self.finish_hooks: tuple[tuple[int, Callable[[CheckContext], None]], ...] = tuple(
            (rule.rank, rule.finish) for rule in ordered if "finish" in rule.hooks)
        self.needs_flow = any("flow" in rule.needs for rule in ordered)


def step_hook(rule: Rule, *, settled: bool) -> StepHook | None:
    """The hook of ``rule`` for a settled step, or for one that is not (None: it has none)."""
    if "step" in rule.hooks:
        return rule.step
    if settled:
        return rule.settled if "settled" in rule.hooks else None
    return rule.lowered if "lowered" in rule.hooks else None


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
