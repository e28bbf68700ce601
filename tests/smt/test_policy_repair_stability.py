"""``plancheck fix --policy`` gives a plan the same repair, and ``check --policy`` the same
explanation, whatever was repaired or checked before it.

Z3's optimiser breaks ties between repairs of equal cost by the state of its context; in the
shared context that state is everything the process solved before, so the same plan and
policies got one repair alone and another after other repairs. Checked on real material: the
model-style completions of the shared parity cases, each with a few random rules over the
tools it calls (seeded), repaired in one order and then in the reverse order.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.policy.loader import PolicyError, parse_policies
from plancheck.smt.policy_repair import repair_policies

TOOLSET = plancheck.load_toolset()


def _problems(parity_cases: Path, count: int) -> list[tuple[Any, list[Any], Any, str]]:
    rng = random.Random(3)
    with parity_cases.open(encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    rng.shuffle(records)
    problems = []
    for record in records:
        try:
            document = json.loads(record["completion"])
        except ValueError:
            continue
        if not isinstance(document, list) or len(document) < 2:
            continue
        plan = plancheck.check(document, TOOLSET).plan
        tools = sorted({step.tool for step in plan.steps if step.tool}) if plan else []
        if len(tools) < 2:
            continue
        rules = []
        for _ in range(rng.randrange(1, 4)):
            a, b = rng.sample(tools, 2)
            rules.append(rng.choice([f"forbid {a} after {b}", f"require {b} before {a}",
                                     f"at most 1 {a}"]))
        text = "policy p {\n" + "".join(f"  {rule}\n" for rule in rules) + "}\n"
        try:
            policies = parse_policies(text, TOOLSET)
        except PolicyError:  # a rule names a tool the completion made up
            continue
        problems.append((plan, document, policies, text))
        if len(problems) == count:
            break
    return problems


@pytest.mark.slow
def test_policy_repairs_of_real_completions_do_not_depend_on_the_order(
        parity_cases: Path) -> None:
    problems = _problems(parity_cases, 300)
    assert len(problems) == 300

    def solved(index: int) -> tuple[str, list[int], list[Any]]:
        plan, document, policies, _ = problems[index]
        repair = repair_policies(plan, document, policies)
        return repair.status, repair.deleted, repair.changed

    forward = [solved(i) for i in range(len(problems))]
    backward = [solved(i) for i in reversed(range(len(problems)))][::-1]
    assert {status for status, _, _ in forward} >= {"clean", "repaired", "unrepairable"}
    unstable = [problems[i][3] for i in range(len(problems)) if forward[i] != backward[i]]
    assert not unstable, unstable[:3]


@pytest.mark.slow
def test_policy_checks_of_real_completions_do_not_depend_on_the_order(
        parity_cases: Path) -> None:
    """The static check explains each violation by an unsat core: which facts it names must
    not depend on what was checked before (in Z3's shared context one of these did)."""
    from plancheck.diagnostics.serialize import diagnostic_to_dict
    from plancheck.smt.policy_check import policy_diagnostics

    problems = _problems(parity_cases, 300)

    def checked(index: int) -> str:
        plan, _, policies, _ = problems[index]
        return json.dumps([diagnostic_to_dict(d) for d in policy_diagnostics(plan, policies)],
                          sort_keys=True, default=str)

    forward = [checked(i) for i in range(len(problems))]
    backward = [checked(i) for i in reversed(range(len(problems)))][::-1]
    assert sum(1 for found in forward if found != "[]") > 100
    unstable = [problems[i][3] for i in range(len(problems)) if forward[i] != backward[i]]
    assert not unstable, unstable[:3]
