"""The registry of rules: what each rule declares is what it does.

Each rule declares its phase and its codes; the fused checker files every finding under the
phase of the rule that reported it. Checked on randomly edited plans: every finding of a rule
is one of the codes that rule declares, filed under that rule's phase, and the phases come out
in the declared order.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancheck.checks.phases import LOWERING, PHASE_ORDER, rank
from plancheck.checks.registry import RULES, optional_codes, rule_set
from plancheck.compiler.checker import check_json_plan, check_plan_steps
from plancheck.compiler.lowering import lower_plan
from plancheck.diagnostics.codes import CODES
from plancheck.diagnostics.span import Span
from tests.compiler.test_checker import edited
from tests.strategies import TOOLSET, linked_plan, well_typed_plan

_RANK_OF_CODE = {code: rule.rank for rule in RULES for code in rule.codes}


def test_each_rule_declares_registered_codes_of_its_own() -> None:
    claimed: list[str] = [code for rule in RULES for code in rule.codes]
    assert len(claimed) == len(set(claimed)), "a code is claimed by two rules"
    assert all(code in CODES for code in claimed)
    assert len({rule.name for rule in RULES}) == len(RULES)
    assert all(rule.phase in PHASE_ORDER and rule.rank == rank(rule.phase) for rule in RULES)
    assert LOWERING == PHASE_ORDER.index("lowering") == 0


def test_the_options_choose_the_rules() -> None:
    def names(**options: bool) -> set[str]:
        return {rule.name for rule in rule_set(**options).rules}

    def switched_by(*options: str) -> set[str]:  # read from the registry, not restated
        return {rule.name for rule in RULES if rule.option in options}

    optional = {rule.name for rule in RULES if rule.name not in switched_by(
        "types", "interpret", "unreachable") and rule.codes and all(
        not CODES[code].default_enabled for code in rule.codes)}
    assert "empty arguments" in optional  # PC210: run only when selected
    assert {rule.name for rule in rule_set(kept=optional_codes()).rules} >= optional
    everything = {rule.name for rule in RULES} - optional
    assert switched_by("unreachable") == {"unreachable"}
    assert switched_by("types") == {"types"}
    assert names(unreachable=True) == everything
    assert names() == everything - switched_by("unreachable")
    assert names(types=False) == everything - switched_by("unreachable", "types")
    assert names(interpret=False, unreachable=True) == switched_by("", "types") - optional
    assert rule_set().needs_flow and not rule_set(interpret=False).needs_flow


def _filed_as_declared(value: list[Any]) -> None:
    findings = check_json_plan(value, TOOLSET).findings.ordered()
    plan, _ = lower_plan(value, Span("<test>", pointer=""))
    assert plan is not None
    findings += check_plan_steps(plan, TOOLSET, unreachable=True).ordered()
    for phase, code, _, _ in findings:
        if phase != LOWERING:
            assert _RANK_OF_CODE[code] == phase, (code, PHASE_ORDER[phase])
    phases = [phase for phase, _, _, _ in check_json_plan(value, TOOLSET).findings.ordered()]
    assert phases == sorted(phases)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_finding_comes_from_a_rule_that_declares_it(data: st.DataObject) -> None:
    plan = data.draw(st.one_of(well_typed_plan(max_steps=5), linked_plan(max_steps=5)))
    _filed_as_declared(data.draw(edited(plan)))
