"""``--policy`` on the commands that judge plans besides ``check``: ``score`` (each prediction),
``compile`` (a plan that breaks a deny rule is not compiled) and ``plan`` (the plans a planner
wrote). One reading of a record, one tally and one summary line, so that every command counts
violations alike; the policy file itself is loaded (and refused, exit 2) by
:func:`plancheck.cli.common.load_policies_or_exit`.

What is decided is the plan as ``plancheck check`` reads it (the linter's reading of a
completion), as a complete plan: a ``require A`` nothing meets is a violation.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from plancheck.diagnostics.model import Diagnostic, Severity
from plancheck.diagnostics.span import Span
from plancheck.ir.nodes import Plan, Toolset

SHOWN = 5  # violations printed on standard error

# The codes of a policy decided on a plan: its violations, and a check past its budget.
VERDICT_CODES = frozenset({"PC801", "PC802", "PC803", "PC804", "PC805", "PC806", "PC814"})


class PolicyVerdicts:
    """The policies of one file decided on plan after plan, and the counts of what broke."""

    def __init__(self, policies: Any, toolset: Toolset, timeout_ms: int) -> None:
        from plancheck.smt.policy_check import policy_phase

        self.policies = policies
        self.toolset = toolset
        self.timeout_ms = timeout_ms
        self.phase = policy_phase(policies, complete=True, timeout_ms=timeout_ms)
        self.plans = 0
        self.breaking = 0  # plans with a deny violation (or a check past its budget)
        self.warned = 0  # plans with warn violations only
        self.by_code: Counter[str] = Counter()
        self.first: list[Diagnostic] = []  # the first few, shown on standard error

    @classmethod
    def load(cls, spec: str, toolset: Toolset, timeout_ms: int | None = None
             ) -> PolicyVerdicts | None:
        """The verdicts of the policy file ``spec``, or None after printing why it cannot be
        used (the caller exits 2)."""
        from plancheck.cli.common import load_policies_or_exit
        from plancheck.smt.policy_check import DEFAULT_TIMEOUT_MS

        budget = DEFAULT_TIMEOUT_MS if timeout_ms is None else timeout_ms
        policies = load_policies_or_exit(spec, toolset, budget)
        return None if policies is None else cls(policies, toolset, budget)

    def of_plan(self, plan: Plan, toolset: Toolset | None = None) -> list[Diagnostic]:
        """The policy diagnostics of one plan, counted: a check phase (``check_paths``'
        ``extra_phases``), so that their spans are resolved in the plan's file."""
        return self._count(self.phase(plan, toolset or self.toolset))

    def of_record(self, text: str, file: str, record: str | None = None) -> list[Diagnostic]:
        """The policy diagnostics of the plan one JSONL record holds (its ``completion`` or
        ``plan``, read as ``plancheck check`` reads the record), counted; none when the record
        holds no readable plan (scoring says what is wrong with it)."""
        from plancheck.compiler.driver import CheckOptions, check_source
        from plancheck.compiler.frontends import parse_source

        source = parse_source(text, file, kind="jsonl")
        found: list[Diagnostic] = []
        options = CheckOptions(types=False, interpret=False)
        for report in check_source(source, self.toolset, options, [self.phase]):
            found.extend(d.with_context(file=file, record=record or report.record)
                         for d in report.diagnostics if d.code in VERDICT_CODES)
        return self._count(found)

    def of_calls(self, value: Any, where: Span) -> list[Diagnostic]:
        """The policy diagnostics of the tool calls one prediction holds (as ``score`` reads
        them against tool-call gold plans), counted; none when it holds no call."""
        from plancheck.compiler.callshapes import bind_plan
        from plancheck.scoring.callscore import read_calls

        calls = read_calls(value, where)
        if calls.plan is None:
            return []
        bound, _ = bind_plan(calls.plan, self.toolset)
        return [d.with_context(file=where.file, record=calls.id) for d in self.of_plan(bound)]

    def _count(self, found: list[Diagnostic]) -> list[Diagnostic]:
        self.plans += 1
        if any(d.severity is Severity.ERROR for d in found):
            self.breaking += 1
        elif found:
            self.warned += 1
        self.by_code.update(d.code for d in found)
        self.first.extend(found[:SHOWN - len(self.first)])
        return found

    def print_first(self) -> None:
        """The first violations found, one line each, on standard error (the per-item file or
        the command's own report has them all)."""
        import sys

        for diagnostic in self.first:
            where = diagnostic.file or ""
            if diagnostic.record:
                where += f" ({diagnostic.record})"
            print(f"{where}: {diagnostic.severity.label}[{diagnostic.code}]: "
                  f"{diagnostic.message}", file=sys.stderr)
        total = sum(self.by_code.values())
        if total > len(self.first):
            print(f"... and {total - len(self.first)} more policy diagnostics",
                  file=sys.stderr)

    def to_dict(self) -> dict[str, Any]:
        return {"policy_file": self.policies.name, "plans": self.plans,
                "breaking": self.breaking, "warned": self.warned,
                "by_code": dict(sorted(self.by_code.items()))}

    def summary(self, noun: str = "plans") -> str:
        """One line: how many of the plans break a deny rule, and by which codes."""
        codes = ", ".join(f"{code} x{n}" for code, n in sorted(self.by_code.items()))
        warned = f", {self.warned} only warn rules" if self.warned else ""
        return (f"policy {self.policies.name}: {self.breaking} of {self.plans} {noun} break a "
                f"deny rule{warned}" + (f" ({codes})" if codes else ""))


def entries(diagnostics: list[Diagnostic]) -> list[dict[str, Any]]:
    """Policy diagnostics as the compact JSON a per-item line carries."""
    return [{"code": d.code, "severity": d.severity.label, "message": d.message,
             "step": d.data.get("step"), "rule": d.data.get("rule")} for d in diagnostics]


def with_policy(line: str, diagnostics: list[Diagnostic]) -> str:
    """A per-item JSON line (an object) with a ``policy`` member appended: the other members,
    the parity numbers among them, are left exactly as they were written."""
    import json

    assert line.endswith("}")
    return line[:-1] + ', "policy": ' + json.dumps(entries(diagnostics),
                                                    ensure_ascii=False) + "}"
