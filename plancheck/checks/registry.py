"""The registry: every rule of the checker, in the order they report within a phase: the
table below, then each module of ``rules/`` that ends in ``RULE = SomeRule()`` (found there,
in name order), then on demand the plugins' (entry-point group ``plancheck.rules``). Adding a
rule is a module under ``rules/`` and its test case (see docs/adding-a-rule.md); a line in the
table places it before the rules found.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

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
from plancheck.diagnostics.codes import CODES
from plancheck.formats.plugins import builtin, load

__all__ = ["RULES", "RuleSet", "optional_codes", "rule_set", "rules"]

_TABLE: Final[tuple[Rule, ...]] = (
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
_LISTED: Final = frozenset(type(rule) for rule in _TABLE)
RULES: Final[tuple[Rule, ...]] = (*_TABLE, *(
    rule for rule in builtin("plancheck.checks.rules.*", "RULE", every=False)
    if type(rule) not in _LISTED))


def rules() -> tuple[Rule, ...]:
    """Every rule, the plugins' after the built-in ones (loaded on first use)."""
    found = _ALL_RULES.get("")
    if found is None:
        found = _ALL_RULES[""] = (*RULES, *(rule for _, rule in load("plancheck.rules", Rule)))
    return found


_ALL_RULES: dict[str, tuple[Rule, ...]] = {}


class RuleSet:
    """The rules one check runs, sorted by the hooks each uses (so that no hook a rule leaves
    alone is called; a rule with a step hook is called through :meth:`Rule.settled` and
    :meth:`Rule.lowered`, which call it unless overridden), and whether any needs the data
    flow. The walk (:mod:`.run`) calls each rule's method directly: compiled, that is a call
    through the class's method table, with nothing boxed or looked up."""

    __slots__ = ("clean_rules", "finish_rules", "lowered_hooks", "needs_flow", "rules",
                 "settled_rules", "start_rules")

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        ordered = tuple(sorted(rules, key=_rank))  # stable: the table's order within a phase
        self.rules = ordered
        self.start_rules = _using(ordered, "start")
        self.clean_rules = _using(ordered, "clean")
        self.settled_rules = _using(ordered, "step", "settled")
        # A lowered step's hooks, each bound and paired with its rule's rank: a lowered plan
        # makes a call per rule and step, and in plain Python a bound method called from a
        # tuple is the cheapest call (the step hook itself, not Rule.lowered calling it).
        self.lowered_hooks: tuple[tuple[int, Callable[[StepView, CheckContext], None]], ...] = \
            tuple((rule.rank, rule.step if "step" in rule.hooks else rule.lowered)
                  for rule in _using(ordered, "step", "lowered"))
        self.finish_rules = _using(ordered, "finish")
        self.needs_flow = any("flow" in rule.needs for rule in ordered)


def _using(rules: tuple[Rule, ...], *hooks: str) -> tuple[Rule, ...]:
    """The rules (in order) that use one of ``hooks``."""
    return tuple(rule for rule in rules if any(hook in rule.hooks for hook in hooks))


def _rank(rule: Rule) -> int:
    return rule.rank


_SETS: dict[tuple[bool, bool, bool, frozenset[str]], RuleSet] = {}


def rule_set(*, types: bool = True, interpret: bool = True, unreachable: bool = False,
             kept: frozenset[str] = frozenset()) -> RuleSet:
    """The rules a check runs: the type rules unless ``types`` is false, those of symbolic
    execution unless ``interpret`` is false, and ``PC503`` when ``unreachable`` (and
    ``interpret``). A rule no option switches whose codes are all off by default runs only
    when one of them is ``kept`` (selected): the usual check pays nothing for it."""
    key = (types, interpret, unreachable, kept)
    found = _SETS.get(key)
    if found is None:
        on = {"": True, "types": types, "interpret": interpret,
              "unreachable": unreachable and interpret}
        found = _SETS[key] = RuleSet(tuple(
            rule for rule in rules() if on[rule.option]
            and (rule.option or not off_by_default(rule) or not kept.isdisjoint(rule.codes))))
    return found


def off_by_default(rule: Rule) -> bool:
    """Whether every code ``rule`` reports is off unless selected."""
    return not any(CODES[code].default_enabled for code in rule.codes)


def optional_codes() -> frozenset[str]:
    """The codes of the rules that run only when one of their codes is kept."""
    return frozenset(code for rule in rules() if not rule.option and off_by_default(rule)
                     for code in rule.codes)
