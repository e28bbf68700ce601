"""Metrics beyond the reference evaluator's four booleans.

* **Execution equivalence**: the prediction computes the same workflow as the gold plan (the
  symbolic interpreter's canonical form), so independent steps listed in another order, or
  numbered differently, still count.
* **Static validity**: the prediction checks clean (no error from names, dependencies, types or
  symbolic execution), without looking at the gold plan; the codes found give per-code lint rates.
* **TaskBench-style F1** over tool nodes, tool-to-tool edges, argument names and argument values.
* **DORA-style trajectory metrics**, from :mod:`plancheck.scoring.trajectory` when installed.

Everything here reads the prediction *as the reference evaluator compares it* (the verdict's
normalised step list), so that "EM implies execution equivalence" holds on every item, odd
predictions included.
"""

from __future__ import annotations

import json
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from plancheck.compiler.diagnostics import Diagnostic, Severity
from plancheck.compiler.lowering import REFERENCE_RE, lower_plan, read_binding
from plancheck.dsl.ast import MalformedReference, Plan, Reference, Span, Toolset

__all__ = [
    "TASKBENCH_METRICS",
    "PredictionAnalyzer",
    "StaticResult",
    "taskbench_scores",
    "trajectory_scorer",
]

TASKBENCH_METRICS: Final = ("node_f1", "edge_f1", "arg_name_f1", "arg_value_f1")
_ROOT: Final = Span("<prediction>", pointer="")
_NO_PLAN_CODE: Final = {"empty_output": "PC101"}  # anything else unreadable: PC105 not-a-plan


@dataclass(frozen=True, slots=True)
class StaticResult:
    """What the static checker found in one prediction (no gold involved)."""

    valid: bool
    codes: tuple[str, ...]  # distinct codes, in first-seen order
    diagnostics: tuple[Diagnostic, ...]


@dataclass(slots=True)
class _Analysis:
    """What is known about one prediction; each part is computed when first needed."""

    static: StaticResult | None = None
    form: tuple[str, ...] | None = None
    has_form: bool = False


class PredictionAnalyzer:
    """Static checks and canonical forms of normalised predictions, with a bounded cache.

    Batches repeat themselves (the same correct plan from many runs, the same plan in several
    output styles), so results are cached by the prediction's exact JSON text, which is a
    faithful key: ``json.dumps`` tells ``1``, ``1.0`` and ``true`` apart and keeps key order,
    and checking depends on nothing else. The cache holds at most ``cache_size`` entries, so
    memory stays flat however long the batch.
    """

    def __init__(self, toolset: Toolset, *, cache_size: int = 1024) -> None:
        self.toolset = toolset
        self.cache_size = cache_size
        self._cache: OrderedDict[str, _Analysis] = OrderedDict()
        self._gold: dict[int, tuple[Any, Counter[Any] | None, tuple[str, ...] | None, bool]] = {}

    # ------------------------------------------------------------------ public

    def static(self, prediction: list[Any] | None, fpof_type: str | None = None) -> StaticResult:
        """Static validity of a prediction; ``None`` (nothing readable) is invalid."""
        return self.assess(prediction, None, em=False, fpof_type=fpof_type, static=True)[
            1
        ] or StaticResult(False, (), ())

    def equivalent(self, prediction: list[Any] | None, gold_plan: Any, *, em: bool) -> bool:
        """Whether the prediction computes the same workflow as the gold plan."""
        return self.assess(prediction, gold_plan, em=em, static=False)[0]

    def assess(
        self,
        prediction: list[Any] | None,
        gold_plan: Any,
        *,
        em: bool,
        fpof_type: str | None = None,
        static: bool = True,
    ) -> tuple[bool, StaticResult | None]:
        """Execution equivalence with ``gold_plan`` and (with ``static``) static validity,
        lowering the prediction at most once.

        Exact match implies equivalence by definition (the reference's EM tolerates a few
        spellings, such as a dependence written ``[0.0]``, that change nothing the plan
        computes). Otherwise a cheap necessary condition comes first: equal canonical forms
        need equal multisets of call signatures (tool, argument names, literal values, output
        keys referenced), which settles most predictions without the interpreter.
        """
        if prediction is None:
            no_plan = StaticResult(False, (_NO_PLAN_CODE.get(fpof_type or "", "PC105"),), ())
            return False, (no_plan if static else None)
        need_form = False
        equivalent = em
        if not em and isinstance(gold_plan, list):
            gold_signatures, _ = self._gold_parts(gold_plan)
            need_form = (
                gold_signatures is not None and _call_signatures(prediction) == gold_signatures
            )
        if need_form and self._same_calls_in_place(prediction, gold_plan):
            # The same calls under the same step numbers: the interpreter would compute the
            # gold plan's values exactly (dependence fields and, for known tools, the listed
            # outputs do not enter the computation).
            need_form, equivalent = False, self._gold_clean(gold_plan)
        if not (static or need_form):
            return equivalent, None
        analysis = self._analysis(prediction, static=static, form=need_form)
        if need_form:
            _, gold_form = self._gold_parts(gold_plan)
            equivalent = analysis.form is not None and analysis.form == gold_form
        return equivalent, analysis.static

    def _same_calls_in_place(self, prediction: list[Any], gold_plan: list[Any]) -> bool:
        if len(prediction) != len(gold_plan):
            return False
        tools = self.toolset.tools
        for mine, theirs in zip(prediction, gold_plan, strict=True):
            if not (isinstance(mine, dict) and isinstance(theirs, dict)):
                return False
            number, tool = theirs.get("step"), theirs.get("agent")
            if type(number) is not int or type(mine.get("step")) is not int:
                return False
            if mine["step"] != number or not isinstance(tool, str) or mine.get("agent") != tool:
                return False
            if not _same(mine.get("inputs"), theirs.get("inputs")):
                return False
            if tool not in tools and not _same(mine.get("outputs"), theirs.get("outputs")):
                return False  # an unknown tool makes exactly the outputs it lists
        return True

    def _gold_clean(self, gold_plan: list[Any]) -> bool:
        """Whether the gold plan's values are all known (no unreadable or dangling reference,
        which would make it equivalent to nothing, itself included)."""
        return self._gold[id(gold_plan)][3]

    # ------------------------------------------------------------------ internals

    def _gold_parts(
        self, gold_plan: list[Any]
    ) -> tuple[Counter[Any] | None, tuple[str, ...] | None]:
        # Gold plans are long-lived objects (one per task): keyed by identity, and kept in the
        # entry so that the identity cannot be reused while cached.
        entry = self._gold.get(id(gold_plan))
        if entry is None or entry[0] is not gold_plan:
            if len(self._gold) >= self.cache_size:
                self._gold.clear()
            plan, _ = lower_plan(gold_plan, _ROOT)
            entry = (
                gold_plan,
                _call_signatures(gold_plan),
                self._form(plan),
                _clean(plan, self.toolset),
            )
            self._gold[id(gold_plan)] = entry
        return entry[1], entry[2]

    def _form(self, plan: Plan | None) -> tuple[str, ...] | None:
        if plan is None:
            return None
        from plancheck.interp.canonical import canonical_form

        # An unreadable reference evaluates to an unknown value whose term is unique, so a
        # plan holding one is equivalent to no other plan, as it should be.
        return canonical_form(plan, self.toolset)

    def _analysis(self, prediction: list[Any], *, static: bool, form: bool) -> _Analysis:
        try:
            key: str | None = json.dumps(prediction)
        except (TypeError, ValueError):  # not JSON: never cached
            key = None
        analysis = self._cache.get(key) if key is not None else None
        if analysis is None:
            analysis = _Analysis()
            if key is not None:
                self._cache[key] = analysis
                if len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        elif key is not None:
            self._cache.move_to_end(key)
        missing_static = static and analysis.static is None
        missing_form = form and not analysis.has_form
        if missing_static or missing_form:
            plan, diagnostics = lower_plan(prediction, _ROOT)
            if missing_form:
                analysis.form, analysis.has_form = self._form(plan), True
            if missing_static:
                analysis.static = self._check(plan, diagnostics)
        return analysis

    def _check(self, plan: Plan | None, diagnostics: list[Diagnostic]) -> StaticResult:
        from plancheck.compiler.driver import check_plan

        if plan is not None:
            diagnostics.extend(check_plan(plan, self.toolset))
        diagnostics = [d for d in diagnostics if _enabled(d.code)]
        codes = tuple(dict.fromkeys(d.code for d in diagnostics))
        valid = plan is not None and not any(d.severity is Severity.ERROR for d in diagnostics)
        return StaticResult(valid, codes, tuple(diagnostics))


def _clean(plan: Plan | None, toolset: Toolset) -> bool:
    """Whether running the plan meets no unresolvable reference."""
    if plan is None:
        return False
    from plancheck.interp.engine import run

    return not run(plan, toolset).events


def _same(a: Any, b: Any) -> bool:
    """Type-exact deep equality (1, 1.0 and true all differ)."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if kind is dict:
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _binding_key(value: Any) -> Any:
    """How an argument value enters a call term: a literal by its JSON text, a reference by
    the output key it reads (the producer is settled by the interpreter), and an unreadable
    reference as None (it evaluates to an unknown, equal to nothing)."""
    if isinstance(value, str):
        if "GENERATED" in value.upper():
            binding = read_binding(value, _ROOT)
            if isinstance(binding, Reference):
                return ("ref", binding.key)
            if isinstance(binding, MalformedReference):
                return None
        return value
    try:
        return ("json", json.dumps(value, sort_keys=True))
    except (TypeError, ValueError):
        return None


def _call_signatures(plan: list[Any]) -> Counter[Any] | None:
    """The multiset of call signatures, or None when some call can equal nothing."""
    signatures: Counter[Any] = Counter()
    for item in plan:
        if not isinstance(item, dict):
            continue
        tool = item.get("agent")
        if not isinstance(tool, str) or not tool.strip():
            continue  # the interpreter skips steps without a readable tool
        inputs = item.get("inputs")
        arguments = []
        if isinstance(inputs, dict):
            for name, value in inputs.items():
                key = _binding_key(value)
                if key is None:
                    return None
                arguments.append((name, key))
        arguments.sort(key=lambda pair: pair[0])
        signatures[(tool, tuple(arguments))] += 1
    return signatures


def _enabled(code: str) -> bool:
    from plancheck.compiler.codes import CODES

    return CODES[code].default_enabled


# --------------------------------------------------------------------------- TaskBench F1


def _f1(predicted: Counter[Any], gold: Counter[Any]) -> float | None:
    """Multiset F1; ``None`` when neither side has anything (the metric does not apply)."""
    total = sum(predicted.values()) + sum(gold.values())
    if total == 0:
        return None
    overlap = sum((predicted & gold).values())
    return 2.0 * overlap / total


def _value_key(value: Any, tools_by_step: Mapping[Any, str]) -> str:
    """An argument value, with a reference written as the producing tool and output key (so
    that renumbering steps does not change it) and literals type-exactly."""
    if isinstance(value, str):
        found = REFERENCE_RE.match(value)
        if found is not None:
            producer = tools_by_step.get(int(found.group(1)), "?")
            return f"ref:{producer}.{found.group(2)}"
        return "s:" + value
    try:
        return "j:" + json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return "r:" + repr(value)


def _graph(
    plan: list[Any],
) -> tuple[
    Counter[str], Counter[tuple[str, str]], Counter[tuple[str, str]], Counter[tuple[str, str, str]]
]:
    steps = [item for item in plan if isinstance(item, dict)]
    tools_by_step: dict[Any, str] = {}
    for item in steps:
        number = item.get("step")
        if isinstance(number, int) and not isinstance(number, bool):
            tools_by_step.setdefault(number, str(item.get("agent")))
    nodes: Counter[str] = Counter()
    edges: Counter[tuple[str, str]] = Counter()
    names: Counter[tuple[str, str]] = Counter()
    values: Counter[tuple[str, str, str]] = Counter()
    for item in steps:
        tool = str(item.get("agent"))
        nodes[tool] += 1
        dependence = item.get("dependence")
        members = dependence if isinstance(dependence, list) else [dependence]
        for member in members:
            if isinstance(member, int) and not isinstance(member, bool) and member >= 0:
                edges[(tools_by_step.get(member, "?"), tool)] += 1
        inputs = item.get("inputs")
        if isinstance(inputs, dict):
            for name, value in inputs.items():
                names[(tool, name)] += 1
                values[(tool, name, _value_key(value, tools_by_step))] += 1
    return nodes, edges, names, values


def taskbench_scores(prediction: list[Any] | None, gold: Any) -> dict[str, float | None]:
    """TaskBench's node, edge, argument-name and argument-value F1 of one prediction.

    Nodes are the tools called; edges are (producer tool, consumer tool) pairs from the
    ``dependence`` lists; argument names are (tool, input key) pairs; argument values are
    (tool, input key, value) triples. All are multisets, so a tool called twice counts twice.
    An F1 is ``None`` when neither plan has anything of its kind (edges of two one-step plans).
    """
    gold_parts: tuple[Counter[Any], ...] = _graph(gold if isinstance(gold, list) else [])
    if prediction is None:
        return {
            name: (0.0 if sum(part.values()) else None)
            for name, part in zip(TASKBENCH_METRICS, gold_parts, strict=True)
        }
    mine: tuple[Counter[Any], ...] = _graph(prediction)
    return {name: _f1(p, g) for name, p, g in zip(TASKBENCH_METRICS, mine, gold_parts, strict=True)}


# --------------------------------------------------------------------------- DORA trajectories

TrajectoryScorer = Callable[[list[Any] | None, Any], Mapping[str, float]]


def trajectory_scorer() -> TrajectoryScorer | None:
    """DORA's trajectory metrics of a prediction against a gold plan, from
    :mod:`plancheck.scoring.trajectory` (None when that module is not installed)."""
    try:
        from plancheck.scoring.trajectory import calls_from_steps, trajectory_metrics
    except ImportError:
        return None

    def score(prediction: list[Any] | None, gold: Any) -> Mapping[str, float]:
        mine = calls_from_steps(prediction) if isinstance(prediction, list) else []
        theirs = calls_from_steps(gold) if isinstance(gold, list) else []
        return trajectory_metrics(mine, theirs)

    return score
