"""Metrics beyond the reference evaluator's four booleans.

* **Execution equivalence**: the prediction computes the same workflow as the gold plan (the
  symbolic interpreter's canonical form), so independent steps listed in another order, or
  numbered differently, still count.
* **Static validity**: the prediction checks clean (no error from names, dependencies, types or
  symbolic execution), without looking at the gold plan; the codes found give per-code lint rates.
* **TaskBench-style F1** over tool nodes, tool-to-tool edges, argument names and argument values.
* **DORA-style trajectory metrics**, from :mod:`plancheck.dora.paper_metrics` when installed.

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

from plancheck.compiler.checker import check_json_plan
from plancheck.compiler.driver import check_plan
from plancheck.compiler.lowering import VALUE_BUILDERS, lower_plan
from plancheck.diagnostics.findings import Findings
from plancheck.diagnostics.span import Span
from plancheck.interp.canonical import canonical_form, form_and_completeness
from plancheck.ir.nodes import MalformedReference, Reference, Toolset
from plancheck.ir.references import REFERENCE_RE, read_binding
from plancheck.scoring.code_sets import CODE_SETS
from plancheck.scoring.compact import compact_entry, compact_text, diagnostic_text, entry_text

__all__ = [
    "TASKBENCH_METRICS",
    "PredictionAnalyzer",
    "StaticResult",
    "compact_entry",
    "compact_text",
    "entry_text",
    "taskbench_f1s",
    "taskbench_scores",
    "trajectory_scorer",
]

TASKBENCH_METRICS: Final = ("node_f1", "edge_f1", "arg_name_f1", "arg_value_f1")
_ROOT: Final = Span("<prediction>", pointer="")
_NO_PLAN_CODE: Final = {"empty_output": "PC101"}  # anything else unreadable: PC105 not-a-plan


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


@dataclass(slots=True)
class _Analysis:
    """What is known about one prediction; each part is computed when first needed."""

    keys: tuple[bytes, ...] | None = None  # its steps' serialisations (:func:`_step_keys`)
    static: StaticResult | None = None
    form: tuple[str, ...] | None = None
    has_form: bool = False
    # Execution equivalence with gold plans, by the gold entry's serial number.
    equivalence: dict[int, bool] | None = None
    # What :meth:`PredictionAnalyzer.against_gold` computed with gold plans, by serial.
    compared: dict[int, Any] | None = None


_serials = itertools.count()


class _Gold:
    """What the analyzer keeps about one gold plan, each part computed when first needed."""

    __slots__ = ("_signatures", "analysis", "clean", "form", "key", "plain", "plan", "serial",
                 "tools")

    def __init__(self, plan: list[Any]) -> None:
        self.plan = plan  # kept: entries are found by the plan's identity
        self.serial = next(_serials)  # never reused, unlike an id
        self.tools = _tool_names(plan)
        self._signatures: Counter[Any] | bool | None = False  # False: not computed yet
        self.key = _step_keys(plan)
        # Per step: whether a step that serialises as this one makes the same call in place
        # (a step object with an integer number and a tool name, and no float, whose NaN
        # would equal nothing).
        self.plain = tuple(_plain_step(step) for step in plan)
        self.analysis = _Analysis(self.key)  # the gold plan's own static result and form
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
    (:func:`_step_keys`: it tells ``1``, ``1.0`` and ``true`` apart and keeps key order, and
    checking depends on nothing else). The cache holds at most ``cache_size`` entries (0: no
    cache), so memory stays flat however long the batch. Whatever the cache size, a
    prediction that serialises as its gold plan does gets the gold plan's result, computed
    once per gold plan (every exactly correct answer is one).
    """

    def __init__(self, toolset: Toolset, *, cache_size: int = 1024, entries: bool = True) -> None:
        self.toolset = toolset
        self.cache_size = cache_size
        self.entries = entries  # render the diagnostics of static results for per-item lines
        self._cache: OrderedDict[tuple[bytes, ...], _Analysis] = OrderedDict()
        # The per-item texts of value builders' diagnostics, by builder and arguments
        # (:meth:`_entries`; None: none kept).
        self._texts: dict[Any, str] | None = {} if cache_size > 0 else None
        self._golds: dict[int, _Gold] = {}
        # The call signatures of step objects, by serialisation: a batch repeats most steps.
        self._signatures: dict[bytes, Any] | None = {} if cache_size > 0 else None
        # How many static results of readable predictions were asked for, and how many of
        # those had to be computed (the rest were known: the cache hit rate is the share).
        self.static_asked = 0
        self.static_checked = 0
        # The prediction :meth:`assess` saw last and its cache entry (the batch scorer asks
        # :meth:`against_gold` about the same prediction next; its key is not made again).
        self._last: tuple[Any, _Analysis] | None = None

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
        checking the prediction at most once.

        Exact match implies equivalence by definition (the reference's EM tolerates a few
        spellings, such as a dependence written ``[0.0]``, that change nothing the plan
        computes). Otherwise cheap tests come first: the same calls under the same step
        numbers compute the gold plan's values; equal canonical forms need equal multisets of
        tools called, then of call signatures (tool, argument names, literal values, output
        keys referenced). Only what passes those is put in canonical form, by the same pass
        that checks it when it is checked now. What is settled is kept with the prediction's
        cache entry, by gold plan.
        """
        if prediction is None:
            no_plan = StaticResult(
                False, (_NO_PLAN_CODE.get(fpof_type or "", "PC105"),), "" if self.entries else None
            )
            return False, (no_plan if static else None)
        entry = self._gold(gold_plan) if type(gold_plan) is list else None
        gold = entry if not em else None
        if not static:
            if gold is None:
                return em, None
            cheap = self._cheap_equivalence(prediction, gold, None)
            if cheap is not None:
                return cheap, None
            return self._settled(prediction, gold, self._analysis(prediction, gold)), None
        analysis = self._analysis(prediction, entry)
        self._last = (prediction, analysis)
        self.static_asked += 1
        if gold is None:
            if analysis.static is None:
                analysis.static = self._check(prediction, analysis, form=False)
            return em, analysis.static
        memo = analysis.equivalence
        if memo is None:
            memo = analysis.equivalence = {}
        equivalent = memo.get(gold.serial)
        if equivalent is None:
            equivalent = self._cheap_equivalence(prediction, gold, analysis.keys)
            if analysis.static is None:
                # When the form will be needed, the same pass writes it.
                form = equivalent is None and not analysis.has_form
                analysis.static = self._check(prediction, analysis, form=form)
            if equivalent is None:
                equivalent = self._settled(prediction, gold, analysis)
            memo[gold.serial] = equivalent
        elif analysis.static is None:
            analysis.static = self._check(prediction, analysis, form=False)
        return equivalent, analysis.static

    def against_gold(
        self, prediction: list[Any] | None, gold_plan: Any, compute: Callable[[], Any]
    ) -> Any:
        """``compute()``, a pure function of the prediction and the gold plan ``gold_plan``
        (such as the TaskBench F1s and the trajectory metrics), kept with the prediction's
        cache entry: a prediction that serialises as an earlier one, compared with the same
        gold plan, gets the same value without computing it."""
        if type(prediction) is not list or type(gold_plan) is not list:
            return compute()
        last = self._last
        if last is not None and last[0] is prediction:
            analysis = last[1]
        else:
            analysis = self._analysis(prediction, self._gold(gold_plan))
        if analysis.keys is None:
            return compute()  # not cached: nothing to keep it with
        serial = self._gold(gold_plan).serial
        compared = analysis.compared
        if compared is None:
            compared = analysis.compared = {}
        found = compared.get(serial, _MISSING)
        if found is _MISSING:
            found = compared[serial] = compute()
        return found

    def _cheap_equivalence(
        self, prediction: list[Any], gold: _Gold, keys: tuple[bytes, ...] | None
    ) -> bool | None:
        """Equivalence when a quick look settles it (most predictions), else None
        (``keys``: the prediction's step keys, when known)."""
        if self._same_calls_in_place(prediction, gold, keys):
            # The same calls under the same step numbers: the interpreter would compute the
            # gold plan's values exactly (dependence fields and, for known tools, the listed
            # outputs do not enter the computation).
            return self._gold_clean(gold)
        if _tool_names(prediction) != gold.tools:
            return False
        return None

    def _settled(self, prediction: list[Any], gold: _Gold, analysis: _Analysis) -> bool:
        """Equivalence of predictions calling the same tools: the same call signatures and
        the same canonical form (whichever is known first: the form, when it has been
        written, else the signatures)."""
        if analysis.has_form:
            return self._same_form(prediction, gold, analysis) and self._signatures_match(
                prediction, gold, analysis
            )
        return self._signatures_match(prediction, gold, analysis) and self._same_form(
            prediction, gold, analysis
        )

    def _same_form(self, prediction: list[Any], gold: _Gold, analysis: _Analysis) -> bool:
        if not analysis.has_form:
            analysis.form, analysis.has_form = self._form(prediction, analysis), True
        return analysis.form is not None and analysis.form == self._gold_form(gold)

    def _signatures_match(self, prediction: list[Any], gold: _Gold, analysis: _Analysis
                          ) -> bool:
        gold_signatures = gold.signatures
        return gold_signatures is not None and _call_signatures(
            prediction, analysis.keys, self._signatures
        ) == gold_signatures

    def _same_calls_in_place(
        self, prediction: list[Any], gold: _Gold, keys: tuple[bytes, ...] | None
    ) -> bool:
        gold_plan = gold.plan
        if len(prediction) != len(gold_plan):
            return False
        tools = self.toolset.tools
        gold_keys = gold.key if keys is not None else None
        for position, (mine, theirs) in enumerate(zip(prediction, gold_plan, strict=True)):
            if gold_keys is not None and keys is not None and gold.plain[position] and (
                keys[position] == gold_keys[position]
            ):
                continue  # the very same step object, which makes its call in place
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

    def _form(self, prediction: list[Any], analysis: _Analysis) -> tuple[str, ...] | None:
        # An unreadable reference evaluates to an unknown value whose term is unique, so a
        # plan holding one is equivalent to no other plan, as it should be.
        if type(prediction) is list:
            return check_json_plan(prediction, self.toolset, _ROOT, form=True).form
        plan = lower_plan(prediction, _ROOT)[0]
        return canonical_form(plan, self.toolset) if plan is not None else None

    def _analysis(self, prediction: list[Any], gold: _Gold | None) -> _Analysis:
        """The cache entry of a prediction (a fresh one when it cannot be cached); that of
        ``gold``, its task's gold plan, when it serialises as the gold plan does."""
        key = _step_keys(prediction)
        if key is None:
            return _Analysis()  # not JSON: never cached
        if gold is not None and key == gold.key:
            return gold.analysis
        if self.cache_size <= 0:
            return _Analysis(key)
        cache = self._cache
        analysis = cache.get(key)
        if analysis is None:
            analysis = cache[key] = _Analysis(key)
            if len(cache) > self.cache_size:
                cache.popitem(last=False)
        else:
            cache.move_to_end(key)
        return analysis

    def _check(self, prediction: list[Any], analysis: _Analysis, *, form: bool) -> StaticResult:
        """The static result of a prediction, and (``form``) its canonical form, kept in
        ``analysis``."""
        self.static_checked += 1
        if type(prediction) is not list:  # a value the checker must unwrap or reject first
            plan, diagnostics = lower_plan(prediction, _ROOT)
            if plan is not None:
                diagnostics.extend(check_plan(plan, self.toolset))
            if form:
                analysis.form = canonical_form(plan, self.toolset) if plan is not None else None
                analysis.has_form = True
            off = CODE_SETS.now().off
            return self._result(plan is not None, [d.code for d in diagnostics],
                                lambda: ", ".join([diagnostic_text(d) for d in diagnostics
                                                   if d.code not in off]))
        checked = check_json_plan(prediction, self.toolset, _ROOT, form=form)
        if form:
            analysis.form, analysis.has_form = checked.form, True
        return self._result(True, checked.codes(), lambda: self._entries(checked.findings))

    def _entries(self, findings: Findings) -> str:
        """The per-item text of what was found: each diagnostic that is on by default, as
        :func:`diagnostic_text` writes it, joined by ``", "``. What a value builder
        (``VALUE_BUILDERS``) builds is kept by its arguments' values (:func:`_frozen`), so
        that a batch builds each such diagnostic once."""
        texts = self._texts
        off = CODE_SETS.now().off
        parts: list[str] = []
        for _, code, build, args in findings.ordered():
            if code in off:
                continue
            key: Any = None
            if texts is not None and build in VALUE_BUILDERS:
                frozen = _arguments_key(args)
                if frozen is not _UNFROZEN:
                    key = (build, frozen)
                    text = texts.get(key)
                    if text is not None:
                        parts.append(text)
                        continue
            diagnostic = build(*args)
            if diagnostic.code != code:  # a builder that disagrees with its finding is a bug
                raise AssertionError(f"{build.__name__} built {diagnostic.code}, not {code}")
            text = diagnostic_text(diagnostic)
            if key is not None and texts is not None:
                if len(texts) >= 4 * self.cache_size:
                    texts.clear()
                texts[key] = text
            parts.append(text)
        return ", ".join(parts)

    def _result(
        self, planned: bool, codes: list[str], entries: Callable[[], str]
    ) -> StaticResult:
        """The static result of what was found (``codes``, in order; ``entries`` writes
        their per-item text), when a plan was read (``planned``)."""
        sets = CODE_SETS.now()
        off, errors = sets.off, sets.errors
        kept = tuple(dict.fromkeys(code for code in codes if code not in off))
        valid = planned and not any(code in errors for code in kept)
        if self.entries:
            return StaticResult(valid, kept, entries())
        # Results are immutable and few are distinct: one object each (fewer to allocate and
        # for the collector to walk in the cache).
        result = _RESULTS.get((valid, kept))
        if result is None:
            if len(_RESULTS) >= 4096:
                _RESULTS.clear()
            result = _RESULTS[(valid, kept)] = StaticResult(valid, kept)
        return result


_RESULTS: dict[tuple[bool, tuple[str, ...]], StaticResult] = {}
_MISSING: Final = object()
_UNFROZEN: Final = object()
_TRUE: Final = object()  # booleans in frozen values (True == 1 and hash alike)
_FALSE: Final = object()
_FLOAT: Final = object()  # a float is frozen with its repr (0.0 == -0.0, and NaN != NaN)


def _arguments_key(args: Any) -> Any:
    """A hashable stand-in for a value builder's arguments, equal for two of them only when
    they are the same values of the same types, as :func:`_frozen`'s: their marshal bytes
    (marshal writes only exact types, each read back as it was; the leading span, a named
    tuple, written as the plain tuple of its fields) when they serialise, else ``_frozen``'s.
    The usual arguments, a span and a few strings and numbers, serialise several times faster
    than ``_frozen`` walks them."""
    if type(args) is tuple and args and type(args[0]) is Span:
        try:
            return marshal.dumps((tuple(args[0]), *args[1:]), 2)
        except ValueError:  # something marshal does not write: a nested span, ...
            pass
    return _frozen(args)


def _frozen(value: Any, depth: int = 0) -> Any:
    """A hashable stand-in for ``value`` that is equal for two values exactly when they are
    the same JSON-like value of the same types (1, 1.0 and True apart, -0.0 and 0.0 apart,
    lists and dictionaries with their order): strings, integers, floats, booleans, None,
    spans, and tuples, lists and dictionaries of them, nested at most 8 deep; :data:`_UNFROZEN`
    for anything else."""
    kind = type(value)
    if kind is str or kind is int or value is None:
        return value
    if kind is bool:
        return _TRUE if value else _FALSE
    if kind is float:
        return (_FLOAT, float.__repr__(value))
    if depth >= 8:
        return _UNFROZEN
    if kind is tuple or kind is list or kind is Span:
        items = []
        for item in value:
            frozen = _frozen(item, depth + 1)
            if frozen is _UNFROZEN:
                return _UNFROZEN
            items.append(frozen)
        return (kind, tuple(items))
    if kind is dict:
        pairs = []
        for name, item in value.items():
            frozen_name = _frozen(name, depth + 1)
            frozen = _frozen(item, depth + 1)
            if frozen_name is _UNFROZEN or frozen is _UNFROZEN:
                return _UNFROZEN
            pairs.append((frozen_name, frozen))
        return (kind, tuple(pairs))
    return _UNFROZEN


def _step_keys(plan: Any) -> tuple[bytes, ...] | None:
    """A faithful serialisation of a plan's steps (a cache key): one bytes per step, equal
    exactly when the steps are equal JSON values of equal types (``1``, ``1.0`` and ``true``
    differ) with keys in the same order. marshal (format 2, which writes no back-references)
    is several times faster than json.dumps. None when the plan is not a list or a step
    cannot be serialised (never cached)."""
    if type(plan) is not list:
        return None
    try:
        return tuple([marshal.dumps(step, 2) for step in plan])
    except ValueError:
        return None


def _plain_step(step: Any) -> bool:
    """Whether a step object that serialises as ``step`` makes the same call in place as it
    (see ``_same_calls_in_place``): an object with an integer number and a string tool, with
    no float anywhere (NaN equals nothing, itself included)."""
    return (
        type(step) is dict
        and type(step.get("step")) is int
        and isinstance(step.get("agent"), str)
        and not _has_float(step)
    )


def _has_float(value: Any) -> bool:
    kind = type(value)
    if kind is float:
        return True
    if kind is dict:
        return any(_has_float(v) for v in value.values())
    if kind is list:
        return any(_has_float(v) for v in value)
    return False


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


_SKIPPED: Final = object()  # the signature of a step without a readable tool
_EQUAL_TO_NOTHING: Final = object()  # that of a call that can equal nothing


def _call_signatures(
    plan: list[Any],
    keys: tuple[bytes, ...] | None = None,
    memo: dict[bytes, Any] | None = None,
) -> Counter[Any] | None:
    """The multiset of call signatures, or None when some call can equal nothing. With
    ``keys`` (each step's serialisation) and ``memo``, each step object's signature is
    computed once."""
    signatures: Counter[Any] = Counter()
    for position, item in enumerate(plan):
        if keys is not None and memo is not None:
            key = keys[position]
            signature = memo.get(key)
            if signature is None:
                if len(memo) >= 1024:
                    memo.clear()
                signature = memo[key] = _call_signature(item)
        else:
            signature = _call_signature(item)
        if signature is _SKIPPED:
            continue
        if signature is _EQUAL_TO_NOTHING:
            return None
        signatures[signature] += 1
    return signatures


def _call_signature(item: Any) -> Any:
    """A step's call signature: its tool and its arguments (names and binding keys, by
    name)."""
    if not isinstance(item, dict):
        return _SKIPPED
    tool = item.get("agent")
    if not isinstance(tool, str) or not tool.strip():
        return _SKIPPED  # the interpreter skips steps without a readable tool
    inputs = item.get("inputs")
    arguments = []
    if isinstance(inputs, dict):
        for name, value in inputs.items():
            key = _binding_key(value)
            if key is None:
                return _EQUAL_TO_NOTHING
            arguments.append((name, key))
    arguments.sort()  # by name: names are distinct (keys of one object)
    return (tool, tuple(arguments))


# --------------------------------------------------------------------------- TaskBench F1


def _f1(predicted: Counter[Any], gold: Counter[Any]) -> float | None:
    """Multiset F1; ``None`` when neither side has anything (the metric does not apply)."""
    total = sum(predicted.values()) + sum(gold.values())
    if total == 0:
        return None
    # The size of the multiset intersection (``predicted & gold``), without building it.
    overlap = 0
    for element, count in predicted.items():
        other = gold.get(element)
        if other is not None:
            smaller = count if count < other else other
            if smaller > 0:
                overlap += smaller
    return 2.0 * overlap / total


def _value_key(value: Any, tools_by_step: Mapping[Any, str]) -> str:
    """An argument value, with a reference written as the producing tool and output key (so
    that renumbering steps does not change it) and literals type-exactly."""
    if isinstance(value, str):
        reference = _reference_parts(value)
        if reference is not None:
            return f"ref:{tools_by_step.get(reference[0], '?')}.{reference[1]}"
        return "s:" + value
    try:
        return "j:" + json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return "r:" + repr(value)


def _reference_parts(value: str) -> tuple[int, str] | None:
    """The producing step and output key of a reference (None: the string is a literal), kept
    by the string: the argument values of a batch's predictions repeat."""
    found = _REFERENCES.get(value)
    if found is None:
        match = REFERENCE_RE.match(value)
        found = (int(match.group(1)), match.group(2)) if match is not None else ()
        if len(_REFERENCES) >= 16384:
            _REFERENCES.clear()
        _REFERENCES[value] = found
    return found or None


# What _reference_parts read in each string (an empty tuple: a literal).
_REFERENCES: dict[str, tuple[int, str] | tuple[()]] = {}


def clear_caches() -> None:
    """Forget how strings read as references (for benchmarks that must start cold)."""
    _REFERENCES.clear()


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
    # Listed, then counted by Counter's own loop (in C): the same counts, in the same order.
    tools: list[str] = []
    edges: list[tuple[str, str]] = []
    names: list[tuple[str, str]] = []
    values: list[tuple[str, str, str]] = []
    for item in steps:
        tool = str(item.get("agent"))
        tools.append(tool)
        dependence = item.get("dependence")
        members = dependence if isinstance(dependence, list) else [dependence]
        for member in members:
            if isinstance(member, int) and not isinstance(member, bool) and member >= 0:
                edges.append((tools_by_step.get(member, "?"), tool))
        inputs = item.get("inputs")
        if isinstance(inputs, dict):
            for name, value in inputs.items():
                names.append((tool, name))
                values.append((tool, name, _value_key(value, tools_by_step)))
    return Counter(tools), Counter(edges), Counter(names), Counter(values)


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
    return dict(zip(TASKBENCH_METRICS, taskbench_f1s(prediction, gold), strict=True))


def taskbench_f1s(prediction: list[Any] | None, gold: Any) -> tuple[float | None, ...]:
    """The values of :func:`taskbench_scores`, in the order of :data:`TASKBENCH_METRICS`."""
    gold_parts: tuple[Counter[Any], ...] = _gold_graph(gold if isinstance(gold, list) else [])
    if prediction is None:
        return tuple(0.0 if sum(part.values()) else None for part in gold_parts)
    mine: tuple[Counter[Any], ...] = _graph(prediction)
    return tuple(_f1(p, g) for p, g in zip(mine, gold_parts, strict=True))


# --------------------------------------------------------------------------- DORA trajectories

TrajectoryScorer = Callable[[list[Any] | None, Any], Mapping[str, float]]


def trajectory_scorer() -> TrajectoryScorer | None:
    """DORA's trajectory metrics of a prediction against a gold plan, from
    :mod:`plancheck.dora.paper_metrics` (None when that module is not installed)."""
    try:
        from plancheck.dora.paper_metrics import calls_from_steps, trajectory_metrics
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
