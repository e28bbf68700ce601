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

import itertools
import json
import marshal
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from plancheck.compiler.codes import CODES
from plancheck.compiler.diagnostics import Diagnostic, Severity
from plancheck.compiler.driver import check_plan
from plancheck.compiler.lowering import REFERENCE_RE, lower_plan, read_binding
from plancheck.dsl.ast import MalformedReference, Plan, Reference, Span, Toolset
from plancheck.interp.canonical import canonical_form, form_and_completeness

__all__ = [
    "TASKBENCH_METRICS",
    "PredictionAnalyzer",
    "StaticResult",
    "compact_entry",
    "taskbench_scores",
    "trajectory_scorer",
]

TASKBENCH_METRICS: Final = ("node_f1", "edge_f1", "arg_name_f1", "arg_value_f1")
_ROOT: Final = Span("<prediction>", pointer="")
_NO_PLAN_CODE: Final = {"empty_output": "PC101"}  # anything else unreadable: PC105 not-a-plan
_ENCODE: Final = json.JSONEncoder(ensure_ascii=False).encode  # as the per-item lines are


@dataclass(frozen=True, slots=True)
class StaticResult:
    """What the static checker found in one prediction (no gold involved).

    ``entries`` is what goes between the brackets of a per-item ``diagnostics`` list: each
    diagnostic as :func:`compact_entry` writes it, JSON-encoded, joined by ``", "``; None when
    the analyzer was made without ``entries``. (Results are cached, so they keep this text
    rather than the diagnostics: a few objects instead of dozens, for the garbage collector
    to walk.)
    """

    valid: bool
    codes: tuple[str, ...]  # distinct codes, in first-seen order
    entries: str | None = None


def compact_entry(diagnostic: Diagnostic) -> dict[str, Any]:
    """A diagnostic as a per-item line lists it: code, name, severity, message, the step
    position when known, and (for the gold-comparison codes, ``PC6xx``) the notes."""
    entry: dict[str, Any] = {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity.label,
        "message": diagnostic.message,
    }
    position = diagnostic.data.get("position")
    if position is not None:
        entry["position"] = position
    if diagnostic.code.startswith("PC6"):
        entry["notes"] = list(diagnostic.notes)
    return entry


@dataclass(slots=True)
class _Analysis:
    """What is known about one prediction; each part is computed when first needed."""

    static: StaticResult | None = None
    form: tuple[str, ...] | None = None
    has_form: bool = False
    # Execution equivalence with gold plans, by the gold entry's serial number.
    equivalence: dict[int, bool] | None = None


_serials = itertools.count()


class _Gold:
    """What the analyzer keeps about one gold plan, each part computed when first needed."""

    __slots__ = ("_signatures", "analysis", "clean", "form", "key", "plan", "serial", "tools")

    def __init__(self, plan: list[Any]) -> None:
        self.plan = plan  # kept: entries are found by the plan's identity
        self.serial = next(_serials)  # never reused, unlike an id
        self.tools = _tool_names(plan)
        self._signatures: Counter[Any] | bool | None = False  # False: not computed yet
        self.key = _plan_key(plan)
        self.analysis = _Analysis()  # the gold plan's own static result and form
        self.form: tuple[str, ...] | None = None
        self.clean: bool | None = None

    @property
    def signatures(self) -> Counter[Any] | None:
        if self._signatures is False:
            self._signatures = _call_signatures(self.plan)
        return self._signatures  # type: ignore[return-value]


class PredictionAnalyzer:
    """Static checks and canonical forms of normalised predictions, with a bounded cache.

    Batches repeat themselves (the same correct plan from many runs, the same plan in several
    output styles), so results are cached by a faithful serialisation of the prediction
    (:func:`_plan_key`: it tells ``1``, ``1.0`` and ``true`` apart and keeps key order, and
    checking depends on nothing else). The cache holds at most ``cache_size`` entries (0: no
    cache), so memory stays flat however long the batch. Whatever the cache size, a
    prediction that serialises as its gold plan does gets the gold plan's result, computed
    once per gold plan (every exactly correct answer is one).
    """

    def __init__(self, toolset: Toolset, *, cache_size: int = 1024, entries: bool = True) -> None:
        self.toolset = toolset
        self.cache_size = cache_size
        self.entries = entries  # render the diagnostics of static results for per-item lines
        self._cache: OrderedDict[bytes, _Analysis] = OrderedDict()
        self._golds: dict[int, _Gold] = {}

    # ------------------------------------------------------------------ public

    def static(self, prediction: list[Any] | None, fpof_type: str | None = None) -> StaticResult:
        """Static validity of a prediction; ``None`` (nothing readable) is invalid."""
        return self.assess(prediction, None, em=False, fpof_type=fpof_type, static=True)[
            1
        ] or StaticResult(False, (), "" if self.entries else None)

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
        computes). Otherwise cheap tests come first: the same calls under the same step
        numbers compute the gold plan's values; equal canonical forms need equal multisets of
        tools called, then of call signatures (tool, argument names, literal values, output
        keys referenced). Only what passes those is lowered and put in canonical form.
        """
        if prediction is None:
            no_plan = StaticResult(
                False, (_NO_PLAN_CODE.get(fpof_type or "", "PC105"),), "" if self.entries else None
            )
            return False, (no_plan if static else None)
        gold = self._gold(gold_plan) if not em and type(gold_plan) is list else None
        equivalent: bool | None = em
        if gold is not None:
            equivalent = self._cheap_equivalence(prediction, gold)
        if not static and equivalent is not None:
            return equivalent, None
        analysis = self._analysis(prediction, gold_plan if static else None, gold)
        lowered: Plan | None = None
        if static and analysis.static is None:
            lowered, diagnostics = lower_plan(prediction, _ROOT)
            analysis.static = self._check(lowered, diagnostics)
        if equivalent is None:
            assert gold is not None
            memo = analysis.equivalence
            if memo is None:
                memo = analysis.equivalence = {}
            equivalent = memo.get(gold.serial)
            if equivalent is None:
                equivalent = memo[gold.serial] = self._dear_equivalence(
                    prediction, gold, analysis, lowered
                )
        return equivalent, analysis.static

    def _cheap_equivalence(self, prediction: list[Any], gold: _Gold) -> bool | None:
        """Equivalence when a quick look settles it (most predictions), else None."""
        if self._same_calls_in_place(prediction, gold.plan):
            # The same calls under the same step numbers: the interpreter would compute the
            # gold plan's values exactly (dependence fields and, for known tools, the listed
            # outputs do not enter the computation).
            return self._gold_clean(gold)
        if _tool_names(prediction) != gold.tools:
            return False
        return None

    def _dear_equivalence(
        self, prediction: list[Any], gold: _Gold, analysis: _Analysis, lowered: Plan | None
    ) -> bool:
        """Equivalence by call signatures, then canonical forms (the same tools are called);
        ``lowered`` is the prediction's plan when it has just been lowered."""
        gold_signatures = gold.signatures
        if gold_signatures is None or _call_signatures(prediction) != gold_signatures:
            return False
        if not analysis.has_form:
            plan = lowered if lowered is not None else lower_plan(prediction, _ROOT)[0]
            analysis.form, analysis.has_form = self._form(plan), True
        return analysis.form is not None and analysis.form == self._gold_form(gold)

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
            inputs, gold_inputs = mine.get("inputs"), theirs.get("inputs")
            # == first (C speed, and it rejects most), then type-exactly.
            if inputs != gold_inputs or not _same(inputs, gold_inputs):
                return False
            if tool not in tools and not _same(mine.get("outputs"), theirs.get("outputs")):
                return False  # an unknown tool makes exactly the outputs it lists
        return True

    # ------------------------------------------------------------------ internals

    def _gold(self, gold_plan: list[Any]) -> _Gold:
        # Gold plans are long-lived objects (one per task): keyed by identity, and kept in the
        # entry so that the identity cannot be reused while cached.
        entry = self._golds.get(id(gold_plan))
        if entry is None or entry.plan is not gold_plan:
            if len(self._golds) >= 4096:
                self._golds.clear()
            entry = _Gold(gold_plan)
            self._golds[id(gold_plan)] = entry
        return entry

    def _gold_lowered(self, gold: _Gold) -> None:
        plan, _ = lower_plan(gold.plan, _ROOT)
        if plan is None:
            gold.form, gold.clean = None, False
        else:
            # Clean: running it meets no unresolvable reference (else it is equivalent to
            # nothing, itself included).
            gold.form, gold.clean = form_and_completeness(plan, self.toolset)

    def _gold_clean(self, gold: _Gold) -> bool:
        """Whether the gold plan's values are all known (no unreadable or dangling reference,
        which would make it equivalent to nothing, itself included)."""
        if gold.clean is None:
            self._gold_lowered(gold)
        return bool(gold.clean)

    def _gold_form(self, gold: _Gold) -> tuple[str, ...] | None:
        if gold.clean is None:
            self._gold_lowered(gold)
        return gold.form

    def _form(self, plan: Plan | None) -> tuple[str, ...] | None:
        if plan is None:
            return None
        # An unreadable reference evaluates to an unknown value whose term is unique, so a
        # plan holding one is equivalent to no other plan, as it should be.
        return canonical_form(plan, self.toolset)

    def _analysis(self, prediction: list[Any], gold_plan: Any, gold: _Gold | None) -> _Analysis:
        """The cache entry of a prediction (a fresh one when it cannot be cached)."""
        key = _plan_key(prediction)
        if key is None:
            return _Analysis()  # not JSON: never cached
        if gold is None and type(gold_plan) is list:
            gold = self._gold(gold_plan)
        if gold is not None and key == gold.key:
            return gold.analysis
        if self.cache_size <= 0:
            return _Analysis()
        cache = self._cache
        analysis = cache.get(key)
        if analysis is None:
            analysis = cache[key] = _Analysis()
            if len(cache) > self.cache_size:
                cache.popitem(last=False)
        else:
            cache.move_to_end(key)
        return analysis

    def _check(self, plan: Plan | None, diagnostics: list[Diagnostic]) -> StaticResult:
        if plan is not None:
            diagnostics.extend(check_plan(plan, self.toolset))
        diagnostics = [d for d in diagnostics if CODES[d.code].default_enabled]
        codes = tuple(dict.fromkeys(d.code for d in diagnostics))
        valid = plan is not None and not any(d.severity is Severity.ERROR for d in diagnostics)
        entries = (
            ", ".join(_ENCODE(compact_entry(d)) for d in diagnostics) if self.entries else None
        )
        return StaticResult(valid, codes, entries)


def _plan_key(value: Any) -> bytes | None:
    """A faithful serialisation of a JSON value (a cache key): equal keys mean equal values
    of equal types (``1``, ``1.0`` and ``true`` differ) with keys in the same order. marshal
    (format 2, which writes no back-references) is several times faster than json.dumps.
    None when the value cannot be serialised (never cached)."""
    try:
        return marshal.dumps(value, 2)
    except ValueError:
        return None


def _tool_names(plan: list[Any]) -> list[str]:
    """The tools a plan calls, sorted: steps without a readable tool are skipped, as the
    interpreter (and :func:`_call_signatures`) skip them."""
    names = [
        tool
        for item in plan
        if type(item) is dict and type(tool := item.get("agent")) is str and tool.strip()
    ]
    names.sort()
    return names


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
    if type(value) is str:
        if value.startswith("<GENERATED>-"):
            found = REFERENCE_RE.match(value)  # the common spelling first
            if found is not None:
                return ("ref", found.group(2))
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
        arguments.sort()  # by name: names are distinct (keys of one object)
        signatures[(tool, tuple(arguments))] += 1
    return signatures


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


# The graphs of gold plans, by identity (a batch compares thousands of predictions with each
# of a few hundred gold plans); the plan is kept in its entry so that its id is not reused.
_GOLD_GRAPHS: dict[int, tuple[list[Any], tuple[Counter[Any], ...]]] = {}


def _gold_graph(gold: list[Any]) -> tuple[Counter[Any], ...]:
    entry = _GOLD_GRAPHS.get(id(gold))
    if entry is None or entry[0] is not gold:
        if len(_GOLD_GRAPHS) >= 4096:
            _GOLD_GRAPHS.clear()
        entry = (gold, _graph(gold))
        _GOLD_GRAPHS[id(gold)] = entry
    return entry[1]


def taskbench_scores(prediction: list[Any] | None, gold: Any) -> dict[str, float | None]:
    """TaskBench's node, edge, argument-name and argument-value F1 of one prediction.

    Nodes are the tools called; edges are (producer tool, consumer tool) pairs from the
    ``dependence`` lists; argument names are (tool, input key) pairs; argument values are
    (tool, input key, value) triples. All are multisets, so a tool called twice counts twice.
    An F1 is ``None`` when neither plan has anything of its kind (edges of two one-step plans).
    """
    gold_parts: tuple[Counter[Any], ...] = _gold_graph(gold if isinstance(gold, list) else [])
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

    gold_calls: dict[int, tuple[Any, list[Any]]] = {}  # by the gold plan's identity

    def score(prediction: list[Any] | None, gold: Any) -> Mapping[str, float]:
        mine = calls_from_steps(prediction) if isinstance(prediction, list) else []
        entry = gold_calls.get(id(gold))
        if entry is None or entry[0] is not gold:
            if len(gold_calls) >= 4096:
                gold_calls.clear()
            entry = gold_calls[id(gold)] = (
                gold,
                calls_from_steps(gold) if isinstance(gold, list) else [],
            )
        return trajectory_metrics(mine, entry[1])

    return score
