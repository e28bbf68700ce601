"""A faster, independent implementation of the DisasterBench reference evaluator.

DisasterBench's published numbers come from ``evaluators/evaluators.py`` in
TamuChen18/DisasterBench_Open, driven by ``baselines/test_baseline.py``: for each completion
it extracts an answer, normalises it ("dp" mode), and computes exact match (EM), tool accuracy,
parameter accuracy, dependency accuracy and the First-Point-of-Failure (FPoF). This module
re-implements that pipeline from its observable behaviour so that :func:`score_completion`
returns the same six numbers on every input, only much faster. ``tests/scoring/test_parity.py``
proves it differentially against verdicts recorded from the reference.

Quirks reproduced (the docs in ``docs/reference-parity.md`` explain each one in prose):

1.  *No answer.* A ``None`` completion (the harness had nothing) is ``empty_output`` at step 0.
2.  *Text flattening before isolation.* Every run of ``\n`` becomes one space, **every
    backslash is deleted** (which also breaks JSON escapes such as ``\"`` or ``\n`` inside
    strings), then surrounding whitespace is stripped. ``\r`` and tabs are left alone.
3.  *Bracket balance.* The flattened text must have balanced ``()``, ``[]`` and ``{}`` -
    counting brackets inside string literals and prose too - or regex isolation is skipped.
4.  *Regex isolation*, first hit wins: (a) the first ``[ {...}, {...} ]`` array of objects,
    (b) else the first run of two or more comma-separated objects, wrapped in ``[...]``,
    (c) else the first object, wrapped in ``[...]`` only if its text contains both
    ``"agent"`` and ``"step"`` (otherwise nothing). An "object" here may contain nested
    ``{...}`` only one level deep, and braces inside strings count.
5.  *Bracket-slice fallback.* When isolation yields nothing, the slice of the **original**
    completion (newlines and backslashes intact) from its first ``[`` to its last ``]``.
6.  *Candidates.* The isolated text, then (if different) the same text with ``{{`` -> ``{``
    and ``}}`` -> ``}``. Each is tried with ``json.loads`` and, failing that, with
    ``json.loads(json_repair.repair_json(candidate))`` (default arguments); the first success
    wins. So the doubled-brace candidate is only reached when json-repair gives up.
7.  *Wrappers.* A parsed object is replaced by the first array among its keys
    ``structured_plan``, ``plan``, ``structured_task_plan``, ``task_plan``, ``answer``.
8.  *Shaping the answer* (normalisation for "dp"): (a) a non-empty array of objects is the
    plan; (b) else the first element that is a non-empty array of objects that all have both
    ``agent`` and ``step`` keys; (c) else "coerce": the top-level step-like objects (a
    non-blank string ``agent`` or ``agent_name``), else the step-like objects one array level
    down, else any top-level objects - stably sorted by step number (``step``, else
    ``step_index``; integers and booleans as-is, digit strings via ``int``, anything else
    10**9); (d) else any other array counts as the empty plan ``[]``; (e) a non-array value
    is re-serialised with ``json.dumps`` (ASCII escapes) and the whole extraction (2-7) is run
    again on that text, then (a)-(d); if that yields no array the answer is a format error.
9.  *Canonical steps.* ``step``/``step_index``, ``agent``/``agent_name``,
    ``dependence``/``dependencies``, ``dependence_content``/``dependency_content`` (an alias is
    read only when the canonical key is absent, not when it is ``null``); ``inputs`` if it is a
    non-empty object, else ``input`` if that is an object, else ``{}``; ``outputs`` if an array
    else ``[]``; every other key is dropped. Missing ``step``/``agent``/... become ``null``.
10. *Type-exact deep equality* (EM, inputs, outputs, dependence_content): same Python type
    at every level (``1``, ``1.0`` and ``true`` all differ), objects by key set and values,
    arrays in order - so outputs are order-sensitive.
11. Inside that deep equality, an object key named ``dependence`` at *any* depth is compared
    as sorted lists with plain ``==`` - so for EM ``[0.0]`` equals ``[0]``.
12. *Tool accuracy* compares the (step, agent) pairs with plain ``==``: ``0``, ``0.0`` and
    ``false`` are the same step. Lengths must match.
13. *Parameter accuracy*: same length; per step plain-equal step and agent, type-exact
    inputs and outputs.
14. *Dependency accuracy*: same length; plain-equal step and agent; ``dependence`` compared
    as sorted lists with type-exact equality, reading a bare scalar or string ``x`` as
    ``[x]``, ``null`` as ``[]`` and an object as the list of its keys;
    ``dependence_content`` type-exact (``null`` only equals ``null``).
15. *Crashes.* Sorting a dependence list with incomparable members (``[0, "1"]``) raises
    ``TypeError`` in the reference, as does ``int()`` on a step string such as ``"--1"`` or
    ``"²"`` during the coerce sort. ``test_baseline.py`` records any such crash as all four
    metrics false, error type ``"exception"`` at step 0; so do we (:data:`CRASH_ERROR_TYPE`).
16. *FPoF.* Walk the steps by index up to the shorter length: step differs (plain ``!=``) ->
    ``parameter_error``; agent -> ``agent_mismatch``; inputs -> ``parameter_error``; outputs
    -> ``parameter_error``; dependence (as in 14) -> ``dependency_error``;
    dependence_content -> ``dependency_content_error``. ``error_step`` is the *gold* step's
    ``step`` value (``i + 1`` if it has none; ``i + 1`` with ``format_error`` when the gold
    item is not an object). Then a shorter answer is ``early_stop`` at ``min_len + 1``, a
    longer one ``hallucinated_extra_steps`` at ``len(gold) + 1``.
17. *Degenerate answers.* No answer -> ``empty_output`` at 0; a non-array answer ->
    ``format_error`` at 0; the empty plan ``[]`` is still an answer -> ``early_stop`` at 1.
18. *Consequences worth knowing.* EM does not imply dependency accuracy (dependence
    ``[1.0]``), and FPoF ``None`` does not imply EM (step ``0.0``). What always holds:
    EM => parameter accuracy, parameter or dependency accuracy => tool accuracy, and
    FPoF is ``None`` exactly when parameter and dependency accuracy both hold.
19. *Gold.* The gold plan is compared through ``json.dumps``/``json.loads`` (the reference's
    ``gt`` string), so tuples become arrays and non-string keys become strings.

API: :func:`score_completion` scores raw text, :func:`score_plan` an already-parsed answer
(as if the reference's extraction had produced its ``json.dumps``); both take the gold plan as
a list, as its JSON text, or prepared once with :func:`prepare_gold` (fastest). Both return a
:class:`ReferenceVerdict` and never raise. ``strict=True`` ("--scoring strict") accepts only
a JSON array of schema-exact steps, given as the whole completion or as the only content of
one markdown fence: no isolation from prose, no json-repair, no doubled-brace collapse, no
wrapper, no aliases, no extra keys, no bare dependence, no NaN/Infinity, no repeated keys;
anything else is ``format_error`` (or ``empty_output`` for blank text) at step 0, while the
comparisons stay exactly as above.

Design for speed (each shortcut is argued where it is made, and the differential tests
check it): the gold plan is prepared once (:class:`GoldPlan`, cached per JSON text) and,
for ordinary gold plans, all five checks run in one pass (:func:`_compare_simple`), each step
deep-compared with its gold step once; the answer is parsed once and never re-serialised (a
JSON round trip of parsed values is the identity); a verdict is a named tuple built in one C
call. The commonest completions - a JSON array of steps, alone, fenced, in prose or in a
wrapper, possibly with a comma after the last step - are scored without running the
isolation regexes at all: when the array's braces are provably exactly its objects'
delimiters (counted against the objects, or read off the text), the regexes can only isolate
that very array (:func:`_score_clean_array`, :func:`_score_trailing_comma`). Elsewhere the
per-character bracket loop is a byte-level filter plus pair elimination; the isolation
regexes use possessive quantifiers (their matches are unique, so this cannot change what they
find); comparisons against gold values holding only strings, ``null``, arrays and objects use
C-level ``==``, provably the same as the type-exact deep equality there (:func:`is_plain`);
and for the common kinds of damaged JSON the result of ``json_repair.repair_json`` 0.64.6 is
computed directly instead of by running its character-level parser (stages 2a-2d below; any
other json-repair version is always called), doubled-brace plans being canonicalised straight
from recipes cached per step layout.

Not matched: inputs nested deeper than Python's recursion limit (the reference's own
recursion depth decides between a result and a crash there).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Final

from plancheck.compiler.extraction.brackets import join_lines
from plancheck.compiler.extraction.isolation import extract
from plancheck.compiler.extraction.mend import EMULATE_JSON_REPAIR
from plancheck.compiler.extraction.sentinels import NO_ANSWER, UNKNOWN, Unknown
from plancheck.fast_json import dumps_plain, loads_or_invalid
from plancheck.scoring.reference.compare import crashed, equal_plan_verdict, failed_verdict, judge
from plancheck.scoring.reference.fast_paths import score_clean_array, score_doubled
from plancheck.scoring.reference.prepared import GoldPlan, gold_steps, shallow_objects
from plancheck.scoring.reference.shape import normalize
from plancheck.scoring.reference.strict import judge_strict, strict_read
from plancheck.scoring.reference.verdict import CRASH_ERROR_TYPE, FPOF_ERROR_TYPES, ReferenceVerdict

__all__ = [
    "CRASH_ERROR_TYPE",
    "FPOF_ERROR_TYPES",
    "GoldPlan",
    "ReferenceVerdict",
    "prepare_gold",
    "score_completion",
    "score_plan",
]


@lru_cache(maxsize=4096)
def _gold_from_text(text: str) -> GoldPlan:
    value = loads_or_invalid(text)
    steps = gold_steps(value)
    em_steps = gold_steps(loads_or_invalid(join_lines(text))) if "\n" in text else steps
    pairs = tuple(
        (item.get("step"), item.get("agent"))
        for item in (value if isinstance(value, list) else ())
        if isinstance(item, dict) and "step" in item and "agent" in item
    )
    simple = steps is not None and em_steps is steps and all(g.is_simple for g in steps)
    items = value if isinstance(value, list) else None
    counts: tuple[int, ...] | None = None
    if simple and items is not None:
        shallow = [shallow_objects(item) for item in items]
        counts = tuple(count for count in shallow if count is not None)
        if len(counts) != len(shallow):
            counts = None
    gold = GoldPlan(text, steps, em_steps, pairs, simple, items, counts)
    if simple and items:
        _spell(gold, items)
    return gold


# How models most often write a correct plan: exactly as json.dumps does, compact, minified
# or indented (json mode, or a copy of the prompt's example).
_SPELLINGS: Final[tuple[dict[str, Any], ...]] = (
    {},
    {"separators": (",", ":")},
    {"indent": 2},
    {"indent": 4},
)


def _spell(gold: GoldPlan, items: list[Any]) -> None:
    """Score the gold plan's own spellings once, so that an answer holding one is recognised
    by comparing text (see :func:`score_clean_array`)."""
    for options in _SPELLINGS:
        indent = options.get("indent")
        # (Indented JSON is what json.dumps writes slowly, in pure Python.)
        text = None if indent is None else dumps_plain(items, indent=indent)
        if text is None:
            text = json.dumps(items, **options)
        if "\\" in text or len(text) in gold.spelled:
            continue
        alone = score_clean_array(text, gold)
        around = score_clean_array(f"x{text}x", gold)
        if type(alone) is ReferenceVerdict and type(around) is ReferenceVerdict:
            gold.spelled[len(text)] = (text, alone, around)


def prepare_gold(gold: GoldPlan | list[Any] | str) -> GoldPlan:
    """Prepare a gold plan once: a :class:`GoldPlan` is returned unchanged, a string is taken
    as the reference's ``gt`` JSON text, anything else is ``json.dumps``-ed first (raising
    ``TypeError`` if it is not JSON-serialisable). Preparations are cached by JSON text, so
    passing the same plan object repeatedly only costs one ``json.dumps`` per call; pass the
    :class:`GoldPlan` itself to avoid even that."""
    if isinstance(gold, GoldPlan):
        return gold
    if isinstance(gold, str):
        return _gold_from_text(gold)
    return _gold_from_text(json.dumps(gold))


def score_completion(
    completion: str | None,
    gold: GoldPlan | list[Any] | str,
    *,
    strict: bool = False,
) -> ReferenceVerdict:
    """Score one raw model completion against a gold plan, exactly as DisasterBench does.

    ``gold`` is a :class:`GoldPlan` (fastest), the gold plan itself, or its ``json.dumps``
    text. With ``strict=True`` no leniency is applied (see :func:`strict_read` and
    ``docs/reference-parity.md``); the comparisons themselves are unchanged.
    Never raises for any ``completion``.
    """
    prepared = gold if type(gold) is GoldPlan else prepare_gold(gold)
    if strict:
        problems: list[str] = []
        return judge_strict(strict_read(completion, problems), prepared, problems)
    if type(completion) is not str and not isinstance(completion, str):
        return failed_verdict("empty_output", None, [], "no completion")
    searched: re.Match[str] | Unknown | None = UNKNOWN
    if completion.startswith("[{{"):
        if EMULATE_JSON_REPAIR:
            verdict = score_doubled(completion, prepared)
            if verdict is not None:
                return verdict
    elif prepared.simple and "\\" not in completion:
        outcome = score_clean_array(completion, prepared)
        if type(outcome) is ReferenceVerdict:
            return outcome
        if outcome is None:
            searched = None
    notes: list[str] = []
    try:
        extracted = extract(completion, notes, searched)
        if prepared.simple and type(extracted) is list and extracted == prepared.items:
            # Equal to the gold plan step for step: already canonical (the gold steps have
            # exactly the canonical keys and value kinds), nothing left to normalise.
            return equal_plan_verdict(extracted, prepared, notes)
        answer = extracted if extracted is NO_ANSWER else normalize(extracted, notes)
    except RecursionError as error:
        return crashed(error, None, notes)
    except ValueError as error:  # int() in the coerce sort (quirk 15)
        return crashed(error, None, notes)
    return judge(answer, prepared, notes)


def score_plan(
    plan: Any,
    gold: GoldPlan | list[Any] | str,
    *,
    strict: bool = False,
) -> ReferenceVerdict:
    """Score an already-parsed answer: what the reference does when its extraction step
    produced ``json.dumps(plan)`` (wrappers are still unwrapped, steps still canonicalised).

    ``None`` means "no answer" (``empty_output``). A value that ``json.dumps`` rejects is a
    ``format_error``. With ``strict=True`` the value must already be an array of
    schema-exact step objects.
    """
    prepared = prepare_gold(gold)
    if plan is None:
        return failed_verdict("empty_output", None, [], "no answer")
    try:
        value = json.loads(json.dumps(plan))
    except (TypeError, ValueError, RecursionError) as error:
        return failed_verdict("format_error", None, [],
                              f"the answer is not JSON-serialisable: {error}")
    if strict:
        problems: list[str] = []
        return judge_strict(strict_read(json.dumps(value), problems), prepared, problems)
    notes: list[str] = []
    try:
        answer = normalize(value, notes)
    except (ValueError, RecursionError) as error:
        return crashed(error, None, notes)
    return judge(answer, prepared, notes)
