"""A faster, independent implementation of the DisasterBench reference evaluator.

DisasterBench's published numbers come from ``evaluators/evaluators.py`` in
TamuChen18/DisasterBench_Open, driven by ``baselines/test_baseline.py``: for each completion
it extracts an answer, normalises it ("dp" mode), and computes exact match (EM), tool accuracy,
parameter accuracy, dependency accuracy and the First-Point-of-Failure (FPoF). This module
re-implements that pipeline from its observable behaviour so that :func:`score_completion`
returns the same six numbers on every input, only much faster. ``tests/test_parity.py``
proves it differentially against verdicts recorded from the reference.

Quirks reproduced (the docs in ``docs/reference-parity.md`` explain each one in prose):

1.  *No answer.* A ``None`` completion (the harness had nothing) is ``empty_output`` at step 0.
2.  *Text flattening before isolation.* Every run of ``\\n`` becomes one space, **every
    backslash is deleted** (which also breaks JSON escapes such as ``\\"`` or ``\\n`` inside
    strings), then surrounding whitespace is stripped. ``\\r`` and tabs are left alone.
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
C-level ``==``, provably the same as the type-exact deep equality there (:func:`_is_plain`);
and for the common kinds of damaged JSON the result of ``json_repair.repair_json`` 0.64.6 is
computed directly instead of by running its character-level parser (stages 2a-2d below; any
other json-repair version is always called), doubled-brace plans being canonicalised straight
from recipes cached per step layout.

Not matched: inputs nested deeper than Python's recursion limit (the reference's own
recursion depth decides between a result and a crash there).
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache, partial
from itertools import chain, compress, repeat
from operator import countOf, eq
from typing import Any, Final, NamedTuple, cast

from json_repair import repair_json

from plancheck.fast_json import INVALID, loads_or_invalid

__all__ = [
    "CRASH_ERROR_TYPE",
    "FPOF_ERROR_TYPES",
    "GoldPlan",
    "ReferenceVerdict",
    "prepare_gold",
    "score_completion",
    "score_plan",
]

# --------------------------------------------------------------------------------------------
# Results and constants
# --------------------------------------------------------------------------------------------

FPOF_ERROR_TYPES: Final[frozenset[str]] = frozenset(
    {
        "agent_mismatch",
        "parameter_error",
        "dependency_error",
        "dependency_content_error",
        "early_stop",
        "hallucinated_extra_steps",
        "empty_output",
        "format_error",
    }
)
"""The eight error types the reference evaluator itself can report."""

CRASH_ERROR_TYPE: Final = "exception"
"""What ``test_baseline.py`` records when the evaluator raises (quirk 15)."""

_CANONICAL_ORDER: Final = (
    "step",
    "agent",
    "inputs",
    "outputs",
    "dependence",
    "dependence_content",
)

_CANONICAL_KEYS: Final = frozenset(_CANONICAL_ORDER)

_ALIASES: Final = (
    ("step", "step_index"),
    ("agent", "agent_name"),
    ("dependence", "dependencies"),
    ("dependence_content", "dependency_content"),
)

_WRAPPER_KEYS: Final = ("structured_plan", "plan", "structured_task_plan", "task_plan", "answer")

_UNKNOWN_STEP_RANK: Final = 10**9


class ReferenceVerdict(NamedTuple):
    """The reference evaluator's six numbers for one answer, plus how we got there.

    ``prediction`` is the normalised plan exactly as the reference compares it (a list of
    canonical step objects, possibly empty), or ``None`` when it had no JSON array to compare.
    A step object that already had exactly the canonical keys is handed back as parsed, so its
    key order may differ from the reference's canonical order (no comparison looks at it).
    ``repairs`` lists, in order, each leniency that was needed to read the answer (empty in
    strict mode); ``problem`` says why an answer could not be scored normally (nothing to
    read, not an array, a strict-mode rejection, or the exception the reference would raise).
    The verdict shares objects with the prepared gold plan and the parsed answer: treat it as
    read-only. (A named tuple, not a frozen dataclass: building one is several times cheaper,
    which matters at tens of thousands of verdicts a second.)
    """

    em: bool
    tool_acc: bool
    param_acc: bool
    dep_acc: bool
    fpof_type: str | None
    fpof_step: int | None
    prediction: list[Any] | None
    repairs: tuple[str, ...] = ()
    problem: str | None = None

    def metrics(self) -> dict[str, Any]:
        """The six numbers, keyed like the ``expected`` objects of the parity cases."""
        return {
            "em": self.em,
            "tool_acc": self.tool_acc,
            "param_acc": self.param_acc,
            "dep_acc": self.dep_acc,
            "fpof_type": self.fpof_type,
            "fpof_step": self.fpof_step,
        }


# tuple.__new__ bound to the class: builds a verdict from its nine fields in one C call,
# without the Python-level __new__ that a named tuple's constructor goes through.
_verdict: Final = cast(
    "Callable[[tuple[Any, ...]], ReferenceVerdict]",
    partial(tuple.__new__, ReferenceVerdict),
)


class _NoAnswer:
    """Sentinel: the reference found nothing to score (``empty_output``)."""


class _NotAList:
    """Sentinel: the reference's answer is JSON but not an array (``format_error``)."""


_NO_ANSWER: Final = _NoAnswer()

_NOT_A_LIST: Final = _NotAList()


class _Unknown:
    """Marker: stage (a) of the isolation has not been run yet."""


_UNKNOWN: Final = _Unknown()

# --------------------------------------------------------------------------------------------
# Gold plans, prepared once
# --------------------------------------------------------------------------------------------


def _is_plain(value: Any) -> bool:
    """True when ``value`` holds only strings, nulls, arrays and objects without a
    ``dependence`` key.

    For such a gold value ``g`` and any JSON value ``a``, ``a == g`` is exactly the type-exact
    deep equality of quirk 10, and never raises: a JSON value can only ``==`` a string if it
    is a string (likewise for null, arrays, objects), so no int/float/bool confusion can
    sneak in, and the ``dependence`` special case (quirk 11) needs the key on both sides.
    """
    if value is None or type(value) is str:
        return True
    if type(value) is list:
        return all(_is_plain(item) for item in value)
    if type(value) is dict:
        return "dependence" not in value and all(_is_plain(item) for item in value.values())
    return False


@dataclass(frozen=True, slots=True)
class _GoldStep:
    """One gold item with everything the comparisons need, looked up once."""

    is_object: bool
    has_exact_keys: bool  # the six canonical keys and nothing else (needed for EM)
    step: Any
    agent: Any
    inputs: Any
    outputs: Any
    dependence: Any
    dependence_content: Any
    error_step: Any  # what FPoF reports when this step is the first failure
    step_plain: bool
    agent_plain: bool
    inputs_plain: bool
    outputs_plain: bool
    content_plain: bool
    dependence_ints: list[int] | None  # the dependence array when it is made of ints only
    dependence_sorted: list[Any] | None  # None when sorting it raises (re-raised on use)
    item: Any  # the gold item itself

    @property
    def is_simple(self) -> bool:
        """Exactly the six keys, an int step, a string agent, plain inputs/outputs/content and
        an all-int dependence array - true of every benchmark gold step, and what
        :func:`_compare_simple` relies on."""
        return (
            self.has_exact_keys
            and type(self.step) is int
            and type(self.agent) is str
            and self.inputs_plain
            and self.outputs_plain
            and self.content_plain
            and self.dependence_ints is not None
        )

    @classmethod
    def from_item(cls, item: Any, index: int) -> _GoldStep:
        if not isinstance(item, dict):
            # Every check fails on it; FPoF reports format_error at index + 1.
            return cls(
                is_object=False,
                has_exact_keys=False,
                step=None,
                agent=None,
                inputs=None,
                outputs=None,
                dependence=None,
                dependence_content=None,
                error_step=index + 1,
                step_plain=False,
                agent_plain=False,
                inputs_plain=False,
                outputs_plain=False,
                content_plain=False,
                dependence_ints=None,
                dependence_sorted=None,
                item=item,
            )
        dependence = item.get("dependence")
        ints = (
            dependence
            if type(dependence) is list and all(type(member) is int for member in dependence)
            else None
        )
        try:
            ordered: list[Any] | None = sorted(_dependence_as_list(dependence))
        except TypeError:
            ordered = None
        inputs = item.get("inputs", {})
        outputs = item.get("outputs", [])
        content = item.get("dependence_content")
        return cls(
            is_object=True,
            has_exact_keys=item.keys() == _CANONICAL_KEYS,
            step=item.get("step"),
            agent=item.get("agent"),
            inputs=inputs,
            outputs=outputs,
            dependence=dependence,
            dependence_content=content,
            error_step=item.get("step", index + 1),
            step_plain=_is_plain(item.get("step")),
            agent_plain=_is_plain(item.get("agent")),
            inputs_plain=_is_plain(inputs),
            outputs_plain=_is_plain(outputs),
            content_plain=_is_plain(content),
            dependence_ints=ints,
            dependence_sorted=ordered,
            item=item,
        )


@dataclass(frozen=True, slots=True, eq=False)
class GoldPlan:
    """A gold plan prepared for repeated scoring.

    ``text`` is the reference's ``gt`` string (``json.dumps`` of the plan). ``steps`` is
    ``None`` when that text is not a JSON array (every check then fails). The EM check
    parses ``gt`` after replacing newlines, the others parse it as is; ``em_steps`` keeps
    the former in the (odd) case a caller hands in gold text whose strings hold raw newlines.
    Build one with :func:`prepare_gold`.
    """

    text: str
    steps: tuple[_GoldStep, ...] | None
    em_steps: tuple[_GoldStep, ...] | None
    tool_pairs: tuple[tuple[Any, Any], ...]
    simple: bool  # every step is_simple and the EM parse is the same: the fast comparator applies
    items: list[Any] | None  # the parsed gold plan, shared by all scorings: never mutate it
    # Per step, how many objects it holds, when the plan is simple and every step is shallow
    # (see _shallow_objects); else None.
    step_objects: tuple[int, ...] | None = None
    # The plan's own JSON in the spellings answers copy verbatim (see _SPELLINGS), by length:
    # (text, its verdict as the whole answer, its verdict with other text around it).
    spelled: dict[int, tuple[str, ReferenceVerdict, ReferenceVerdict]] = field(
        default_factory=dict
    )

    @property
    def plan(self) -> list[Any] | None:
        """A fresh copy of the gold plan (parsed from :attr:`text`), or None if not an array."""
        value = _loads_or_invalid(self.text)
        return value if isinstance(value, list) else None


_INVALID: Final = object()


def _loads_or_invalid(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _INVALID


def _gold_steps(value: Any) -> tuple[_GoldStep, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(_GoldStep.from_item(item, index) for index, item in enumerate(value))


@lru_cache(maxsize=4096)
def _gold_from_text(text: str) -> GoldPlan:
    value = _loads_or_invalid(text)
    steps = _gold_steps(value)
    em_steps = _gold_steps(_loads_or_invalid(_join_lines(text))) if "\n" in text else steps
    pairs = tuple(
        (item.get("step"), item.get("agent"))
        for item in (value if isinstance(value, list) else ())
        if isinstance(item, dict) and "step" in item and "agent" in item
    )
    simple = steps is not None and em_steps is steps and all(g.is_simple for g in steps)
    items = value if isinstance(value, list) else None
    counts: tuple[int, ...] | None = None
    if simple and items is not None:
        shallow = [_shallow_objects(item) for item in items]
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
    by comparing text (see :func:`_score_clean_array`)."""
    for options in _SPELLINGS:
        text = json.dumps(items, **options)
        if "\\" in text or len(text) in gold.spelled:
            continue
        alone = _score_clean_array(text, gold)
        around = _score_clean_array(f"x{text}x", gold)
        if type(alone) is ReferenceVerdict and type(around) is ReferenceVerdict:
            gold.spelled[len(text)] = (text, alone, around)


def _shallow_objects(step: Any) -> int | None:
    """How many objects a step holds, itself included, when it is an object whose objects
    are all its own members and hold no object themselves (and no array holds one); else
    None."""
    if type(step) is not dict:
        return None
    count = 1
    for value in step.values():
        if type(value) is dict:
            if _holds_object(list(value.values())):
                return None
            count += 1
        elif type(value) is list and _holds_object(value):
            return None
    return count


def _holds_object(values: list[Any]) -> bool:
    """Whether an object occurs anywhere among ``values``, however deep."""
    for value in values:
        if type(value) is dict:
            return True
        if type(value) is list and _holds_object(value):
            return True
    return False


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


# --------------------------------------------------------------------------------------------
# Stage 1: isolating the answer in free text (quirks 2-5)
# --------------------------------------------------------------------------------------------


def _extract(
    completion: str,
    notes: list[str],
    searched: re.Match[str] | _Unknown | None = _UNKNOWN,
) -> Any:
    """The reference's answer extraction: isolate, slice, parse (quirks 2-7). ``searched`` is
    the result of ``_ARRAY_OF_OBJECTS.search(completion)`` when the caller already has it."""
    array: str | _Unknown | None = _UNKNOWN
    if _EMULATE_JSON_REPAIR and completion.startswith("[{{"):
        value = _extract_doubled(completion, notes)
        if value is not _NO_ANSWER:
            return value
    if "\\" not in completion:
        # Without backslashes, flattening only turns newline runs into spaces, and the
        # isolation regex treats a newline exactly like a space (both are whitespace and
        # non-braces). So stage (a) can run on the raw text: its match there is, with newline
        # runs joined, the match the reference finds in the flattened text.
        found = _ARRAY_OF_OBJECTS.search(completion) if isinstance(searched, _Unknown) else searched
        if found is None:
            array = None
        else:
            value = _parse_whole_span(completion, found, notes)
            if value is not _NO_ANSWER:
                return value
            array = _join_lines(found.group())
    flat = _flatten_text(completion)
    isolated = _isolate(flat, notes, array) if _brackets_balanced(flat) else None
    if isolated is None:
        isolated = _first_to_last_bracket(completion)
        if isolated is None:
            return _NO_ANSWER
        notes.append("read the raw text between the first `[` and the last `]`")
    elif "\\" in completion:
        notes.append("backslashes deleted before parsing")
    return _parse_candidates(isolated, notes)


def _parse_whole_span(completion: str, found: re.Match[str], notes: list[str]) -> Any:
    """Fast path for a backslash-free completion whose array-of-objects match runs from the
    first `[` to the last `]` and parses as it stands; ``_NO_ANSWER`` when it does not apply.

    Then the reference's candidate is that span whether or not the brackets balance:
    balanced, isolation returns the (flattened) match; unbalanced, the bracket-slice fallback
    returns the raw span. If the raw span parses, it holds no raw newline inside a string, so
    both spellings parse to the same value - and the balance check can be skipped.
    """
    start, end = found.span()
    if start != completion.find("[") or end != completion.rfind("]") + 1:
        return _NO_ANSWER
    value = _loads_bracketed(found.group())
    if value is not _NO_ANSWER and (completion[:start].strip() or completion[end:].strip()):
        notes.append("plan array cut out of the surrounding text")
    return value


def _loads_bracketed(text: str) -> Any:
    """``json.loads(text)``, or ``_NO_ANSWER`` on failure."""
    value = loads_or_invalid(text)
    return _NO_ANSWER if value is INVALID else value


_NEWLINE_RUN: Final = re.compile(r"\n+")


def _join_lines(text: str) -> str:
    """Each run of newlines becomes a single space."""
    if "\n\n" in text:
        return _NEWLINE_RUN.sub(" ", text)
    # Without two newlines in a row every run is a single character: a plain replace is
    # the same thing, several times faster.
    return text.replace("\n", " ")


def _flatten_text(text: str) -> str:
    """The reference's pre-isolation normalisation (quirk 2)."""
    if "\n" in text:
        text = _join_lines(text)
    if "\\" in text:
        text = text.replace("\\", "")
    return text.strip()


# Every byte except the six bracket characters. UTF-8 never uses ASCII bytes inside
# multi-byte sequences, so filtering the encoded text keeps exactly the bracket characters.
_NOT_A_BRACKET: Final = bytes(b for b in range(256) if b not in b"()[]{}")

_MATCHED_PAIRS: Final = (b"()", b"[]", b"{}")

_CLOSER_OF: Final = {ord("("): ord(")"), ord("["): ord("]"), ord("{"): ord("}")}


def _brackets_balanced(text: str) -> bool:
    """Whether (), [] and {} are balanced and properly nested over the whole text (quirk 3).

    Equivalent to the reference's stack walk: a bracket word is well nested exactly when
    repeatedly deleting adjacent matched pairs empties it (every non-empty well-nested word
    has an innermost adjacent pair, and deleting one never changes the verdict). Each pass
    removes a whole nesting level at C speed; pathological depth falls back to a stack.
    """
    word = text.encode("utf-8", "surrogatepass").translate(None, _NOT_A_BRACKET)
    for _ in range(48):
        if not word:
            return True
        shorter = word
        for pair in _MATCHED_PAIRS:
            shorter = shorter.replace(pair, b"")
        if len(shorter) == len(word):
            return False
        word = shorter
    return _balanced_by_stack(word)


def _balanced_by_stack(word: bytes) -> bool:
    expected: list[int] = []
    for byte in word:
        closer = _CLOSER_OF.get(byte)
        if closer is not None:
            expected.append(closer)
        elif not expected or expected.pop() != byte:
            return False
    return not expected


# An "object" for isolation purposes: braces around non-brace text and brace pairs that hold
# no braces themselves. From a given "{" there is at most one way to match it (a "{" must
# open an inner pair, the first "}" at the outer level must close), so possessive
# quantifiers find exactly what the reference's backtracking pattern finds, without the
# backtracking.
_OBJ: Final = r"\{(?:[^{}]++|\{[^{}]*+\})*+\}"

_ARRAY_OF_OBJECTS: Final = re.compile(rf"\[\s*+{_OBJ}(?:\s*+,\s*+{_OBJ})*+\s*+\]")

_OBJECT_RUN: Final = re.compile(rf"{_OBJ}\s*+(?:,\s*+{_OBJ}\s*+)++")

_ONE_OBJECT: Final = re.compile(_OBJ)


def _isolate(flat: str, notes: list[str], array: str | _Unknown | None) -> str | None:
    """The three regex stages of quirk 4, on already-flattened, balanced text. ``array`` is
    stage (a)'s result when the caller already knows it (see :func:`_extract`)."""
    if isinstance(array, _Unknown):
        found = _ARRAY_OF_OBJECTS.search(flat)
        array = None if found is None else found.group()
    if array is not None:
        if len(array) != len(flat):
            notes.append("plan array cut out of the surrounding text")
        return array
    run = _OBJECT_RUN.search(flat)
    if run is not None:
        notes.append("comma-separated step objects wrapped into an array")
        return "[" + run.group().strip() + "]"
    single = _ONE_OBJECT.search(flat)
    if single is not None:
        body = single.group()
        if '"agent"' in body and '"step"' in body:
            notes.append("single step object wrapped into an array")
            return "[" + body + "]"
    return None


def _first_to_last_bracket(completion: str) -> str | None:
    """Quirk 5: the raw slice from the first '[' to the last ']'."""
    start = completion.find("[")
    if start < 0:
        return None
    end = completion.rfind("]")
    return completion[start : end + 1] if end > start else None


# --------------------------------------------------------------------------------------------
# Stage 2: parsing the candidates (quirks 6-7)
# --------------------------------------------------------------------------------------------


def _parse_candidates(text: str, notes: list[str]) -> Any:
    """Quirk 6. Returns the unwrapped value, or ``_NO_ANSWER``."""
    value = _load_or_mend(text, notes)
    if value is _NO_ANSWER:
        # The doubled-brace candidate is only built when the first one failed outright.
        collapsed = text.replace("{{", "{").replace("}}", "}")
        if collapsed == text:
            return _NO_ANSWER
        value = _load_or_mend(collapsed, notes)
        if value is _NO_ANSWER:
            return _NO_ANSWER
        notes.append("doubled braces collapsed")
    return _unwrap(value, notes)


def _load_or_mend(candidate: str, notes: list[str]) -> Any:
    """``json.loads``, else ``json.loads(repair_json(...))`` as the reference calls it."""
    value = loads_or_invalid(candidate)
    if value is not INVALID:
        return value
    value = _NO_ANSWER
    if _EMULATE_JSON_REPAIR:
        if _PREFIX_TOKEN_AND_PROSE.match(candidate) is not None:
            # No other emulation reads such a text: the doubled-brace and escaped-newline
            # shapes start "[{", and in the lenient class the first array would end at the
            # token's "]", before the plan's "[" (extra data, with closers added or not).
            value = _mend_prefixed_plan(candidate)
        else:
            value = _mend_doubled_braces(candidate)
            if value is _NO_ANSWER:
                value = _mend_escaped_newlines(candidate)
            if value is _NO_ANSWER:
                value = _mend_lenient_json(candidate)
    if value is _NO_ANSWER:
        try:
            value = json.loads(repair_json(candidate))
        except Exception:
            return _NO_ANSWER
    notes.append("json-repair mended the JSON")
    return value


def _unwrap(value: Any, notes: list[str]) -> Any:
    """Quirk 7."""
    if isinstance(value, dict):
        for key in _WRAPPER_KEYS:
            inner = value.get(key)
            if isinstance(inner, list):
                notes.append(f"unwrapped `{key}` wrapper")
                return inner
    return value


def _json_repair_version() -> str | None:
    try:
        return importlib.metadata.version("json-repair")
    except importlib.metadata.PackageNotFoundError:
        return None


# The emulations below follow json-repair 0.64.6's code; any other version is simply called.
_EMULATE_JSON_REPAIR: Final = _json_repair_version() == "0.64.6"

# --------------------------------------------------------------------------------------------
# Stage 2a: json-repair on doubled braces, computed structurally
# --------------------------------------------------------------------------------------------

# Texts like ``[{{"agent": "X", "inputs": {{"a": "b"}}, ...}}]`` (a prompt template's escaped
# braces copied into the answer) are common, and json-repair takes ~0.2 ms on each. For the
# shape below, its result follows from reading json-repair 0.64.6's parser
# (parse_array / parse_object / _complete_object_parse / _parse_top_level):
#
# * Inside the top-level array, a step's ``{{`` opens one object (the second brace is skipped
#   as junk before the first key). A member whose value is an object ends that object: the
#   first ``}`` of the value's ``}}`` closes the value, the second the step. Later members
#   become a new object, parsed from their key ("missing opening brace"). The step's own
#   closing ``}}`` closes the current object and is skipped as an extra brace.
# * If a step's last member is an object, the extra brace ends the whole array. The remaining
#   steps are then parsed as further top-level values: each is read whole (top-level objects
#   merge continuation members back in), the result becomes ``[array, step, step, ...]``, and
#   from the second such step on a step replaces its predecessor when both have the same
#   shape (json-repair's "repeated objects are updates" rule, ObjectComparer.is_same_object).
#
# * An *empty* object member is different: ``{{}}`` holds no key, so json-repair skips its
#   braces as junk in front of the next key, and that empty object swallows the members that
#   follow, up to and including the next object member (whose ``}}`` then closes it), or up
#   to the end of the step (whose ``}}`` closes it and the current object).
#
# The shape: an ASCII JSON text without backslashes, with every brace doubled, starting
# ``[{{``; undoubled, it parses to a non-empty array of non-empty objects with non-empty keys,
# whose members are scalars, arrays of scalars, or objects of such members; no string holds
# a brace and no float is NaN or infinite. So every string is opaque to json-repair (each
# takes its "simple quoted string" fast path). Not emulated, and left to json-repair: an
# empty object as a step's last member or inside a swallowed run, and an empty object after
# the array closed early.
# tests/test_parity.py checks this emulation against json-repair on many random inputs.

# Floats parsed from text without NaN/Infinity are finite or overflowed numbers (1e999),
# which json-repair turns into the same float.
_SCALAR_TYPES: Final = frozenset({str, int, float, bool, type(None)})


@dataclass(frozen=True, slots=True)
class _DoubledPlan:
    """A candidate of the doubled-brace shape, undoubled and parsed."""

    steps: list[dict[str, Any]]
    flat_steps: list[bool]  # per step: no member is an object
    arrays: int  # how many arrays the value holds, itself included


def _undouble(candidate: str) -> _DoubledPlan | None:
    """Parse ``candidate`` if it has the doubled-brace shape described above, else None."""
    if not candidate.startswith("[{{") or "\\" in candidate or not candidate.isascii():
        return None
    collapsed = candidate.replace("{{", "{").replace("}}", "}")
    # Every brace was doubled: each replacement shortens the text by one, so a single brace
    # that survived would leave the text longer than that.
    opening = collapsed.count("{")
    closing = collapsed.count("}")
    if len(candidate) - len(collapsed) != opening + closing:
        return None
    if "NaN" in collapsed or "Infinity" in collapsed:
        return None  # json.loads reads these constants, json-repair does not (maybe in strings)
    steps = loads_or_invalid(collapsed)
    if type(steps) is not list or not steps:
        return None
    objects = 0
    arrays = 1
    flat_steps = []
    scalars = _SCALAR_TYPES
    for step in steps:
        if type(step) is not dict or not step or "" in step:
            return None
        objects += 1
        flat = True
        for value in step.values():
            kind = type(value)
            if kind is list:
                arrays += 1
                if not scalars.issuperset(map(type, value)):
                    return None
            elif kind is dict:
                if "" in value:
                    return None
                objects += 1
                flat = False
                for inner in value.values():
                    inner_kind = type(inner)
                    if inner_kind is list:
                        arrays += 1
                        if not scalars.issuperset(map(type, inner)):
                            return None
                    elif inner_kind not in scalars:
                        return None
            elif kind not in scalars:
                return None
        flat_steps.append(flat)
    if opening != objects or closing != objects:  # a brace inside some string
        return None
    return _DoubledPlan(steps, flat_steps, arrays)


def _mend_doubled_braces(candidate: str) -> Any:
    """``json.loads(repair_json(candidate))`` for the doubled-brace shape described above, or
    ``_NO_ANSWER`` when ``candidate`` does not have that shape."""
    plan = _undouble(candidate)
    return _NO_ANSWER if plan is None else _split_doubled_steps(plan.steps)


def _split_doubled_steps(steps: list[dict[str, Any]]) -> Any:
    """json-repair's reading of the doubled-brace array, or ``_NO_ANSWER`` for the corners we
    do not emulate (an empty object as a step's last member, nested empty objects, or an
    empty object after the array closed early)."""
    pieces: list[Any] = []
    for index, step in enumerate(steps):
        closed_early = _split_doubled_step(list(step.items()), pieces)
        if closed_early is None:
            return _NO_ANSWER
        if closed_early and index + 1 < len(steps):
            rest = steps[index + 1 :]
            if any(type(v) is dict and not v for step in rest for v in step.values()):
                return _NO_ANSWER
            return _doubled_top_level_tail(pieces, rest)
    return pieces


def _split_doubled_step(members: list[tuple[str, Any]], pieces: list[Any]) -> bool | None:
    """Append the objects json-repair makes of one doubled-brace step inside the top-level
    array (see the notes above); True when the step's last ``}}`` leaves a stray brace that
    closes the array, None for a corner that is not emulated."""
    current: dict[str, Any] = {}
    position = 0
    while position < len(members):
        key, value = members[position]
        position += 1
        if type(value) is not dict:
            current[key] = value
            continue
        if value:
            current[key] = value
            pieces.append(current)
            current = {}
            if position == len(members):
                return True
            continue
        if position == len(members):
            return None  # swallows the next step (or trails off the end): not emulated
        swallowed: dict[str, Any] = {}
        while position < len(members):
            inner_key, inner_value = members[position]
            position += 1
            swallowed[inner_key] = inner_value
            if type(inner_value) is dict:
                if not inner_value:
                    return None
                break
        current[key] = swallowed
    if current:
        pieces.append(current)
    return False


def _doubled_top_level_tail(pieces: list[Any], rest: list[dict[str, Any]]) -> list[Any]:
    values: list[Any] = [pieces]
    for position, step in enumerate(rest):
        if position > 0 and _same_shape(values[-1], step):
            values.pop()
        values.append(step)
    return values


def _same_shape(left: Any, right: Any) -> bool:
    """json-repair's ObjectComparer.is_same_object: same types, keys and lengths throughout."""
    if type(left) is not type(right):
        return False
    if type(left) is dict:
        return len(left) == len(right) and all(
            key in right and _same_shape(value, right[key]) for key, value in left.items()
        )
    if type(left) is list:
        return len(left) == len(right) and all(
            _same_shape(a, b) for a, b in zip(left, right, strict=True)
        )
    return True


def _extract_doubled(completion: str, notes: list[str]) -> Any:
    """The whole extraction (quirks 2-7) for a completion that is nothing but a doubled-brace
    plan of the shape above (no newline, so the flattened text is the completion itself);
    ``_NO_ANSWER`` when it does not apply.

    In such a text the isolation regexes can only see these objects: a step without object
    members (``{{...}}`` is a brace pair around a brace pair), an inner object, and single-brace
    views of either that are always followed by a ``}``. Hence: stage (a) matches the whole
    text exactly when no step has an object member; stage (b) matches the first run of two or
    more consecutive such steps; stage (c) takes step 1 if it has no object member, else its
    first inner object, and keeps it if a string in it is exactly "agent" and one is exactly
    "step" (the only way the quoted words can occur in backslash-free JSON). Whatever is
    isolated fails ``json.loads`` (doubled braces) and goes to json-repair, emulated above.
    """
    if not completion.endswith("}}]") or "\n" in completion:
        return _NO_ANSWER
    plan = _undouble(completion)
    if plan is None:
        return _NO_ANSWER
    how, value = _doubled_isolation(completion, plan)
    if value is _SPLIT:
        value = _split_doubled_steps(plan.steps)
    if value is _NO_ANSWER:
        return _NO_ANSWER
    if how:
        notes.append(how)
    notes.append("json-repair mended the JSON")
    return value


class _Split:
    """Marker: json-repair reads the whole doubled-brace text (:func:`_split_doubled_steps`)."""


_SPLIT: Final = _Split()


def _doubled_isolation(completion: str, plan: _DoubledPlan) -> tuple[str, Any]:
    """How the reference isolates a doubled-brace text ("" when it keeps all of it), and
    json-repair's reading of what it isolated (``_SPLIT`` for the whole text)."""
    steps, flat = plan.steps, plan.flat_steps
    if _doubled_text_balanced(completion, plan):
        if all(flat):
            return "", list(steps)
        for first in range(len(steps) - 1):
            if flat[first] and flat[first + 1]:
                last = first + 1
                while last + 1 < len(steps) and flat[last + 1]:
                    last += 1
                return "comma-separated step objects wrapped into an array", steps[first : last + 1]
        head = steps[0] if flat[0] else next(v for v in steps[0].values() if type(v) is dict)
        if _holds_string(head, "agent") and _holds_string(head, "step"):
            return "single step object wrapped into an array", [head]
    return "read the raw text between the first `[` and the last `]`", _SPLIT


def _score_doubled(completion: str, gold: GoldPlan) -> ReferenceVerdict | None:
    """Score a completion that is nothing but a doubled-brace plan (see
    :func:`_extract_doubled`), or None when the general path has to. When json-repair reads
    the whole text, its pieces are canonicalised straight from each step's members
    (:func:`_canonical_doubled_pieces`), skipping the intermediate objects."""
    if not completion.endswith("}}]") or "\n" in completion:
        return None
    plan = _undouble(completion)
    if plan is None:
        return None
    how, value = _doubled_isolation(completion, plan)
    notes = [how, "json-repair mended the JSON"] if how else ["json-repair mended the JSON"]
    if value is _SPLIT:
        pieces = _canonical_doubled_pieces(plan.steps, notes)
        if pieces is not None:
            return _judge(pieces, gold, notes)
        value = _split_doubled_steps(plan.steps)
        if value is _NO_ANSWER:
            return None
    try:
        answer = _normalize(value, notes)
    except (ValueError, RecursionError) as error:  # int() in the coerce sort (quirk 15)
        return _crashed(error, None, notes)
    return _judge(answer, gold, notes)


@dataclass(frozen=True, slots=True)
class _PieceRecipe:
    """How to build one canonical piece of a doubled-brace step from the step's members
    (indices into its values; -1 for absent, which reads None from the padded values)."""

    step: int
    agent: int
    inputs: int  # -1: {} (absent, or not an object)
    outputs: int  # -1: [] (absent, or not an array)
    dependence: int
    content: int
    notes: tuple[str, ...]  # every note _canonical_step_slow would make, but a bare dependence
    bare_dependence: bool  # the dependence is present and not an array: note it


@lru_cache(maxsize=1024)
def _doubled_step_recipe(
    keys: tuple[str, ...], kinds: tuple[type, ...]
) -> tuple[_PieceRecipe, ...] | None:
    """The canonical pieces json-repair makes of a doubled-brace step with these member keys
    and value types (no empty object among them), as _split_doubled_step and then
    _canonical_step_slow build them; None when the step closes the array early."""
    pieces: list[list[int]] = []
    current: list[int] = []
    for position, kind in enumerate(kinds):
        current.append(position)
        if kind is dict:  # an object member closes the current object
            pieces.append(current)
            current = []
            if position == len(kinds) - 1:
                return None
    if current:
        pieces.append(current)
    recipes = []
    for members in pieces:
        index = {keys[position]: position for position in members}
        recipe = _recipe(tuple(index))
        notes = list(recipe.notes)
        inputs = index.get("inputs", -1)
        alias_used = False
        if inputs < 0 or kinds[inputs] is not dict:  # (objects here are never empty)
            alternative = index.get("input", -1)
            if alternative >= 0 and kinds[alternative] is dict:
                inputs = alternative
                alias_used = True
                notes.append("alias key `input` read as `inputs`")
            else:
                notes.append("missing or non-object `inputs` read as {}")
                inputs = -1
        outputs = index.get("outputs", -1)
        if outputs < 0 or kinds[outputs] is not list:
            notes.append("missing or non-array `outputs` read as []")
            outputs = -1
        notes += [n for n in recipe.dropped_notes if not (alias_used and n == _INPUT_DROPPED)]
        step, agent, dependence, content = (
            -1 if key is None else index[key] for key in recipe.sources
        )
        recipes.append(
            _PieceRecipe(
                step,
                agent,
                inputs,
                outputs,
                dependence,
                content,
                tuple(notes),
                dependence >= 0 and kinds[dependence] is not list,
            )
        )
    return tuple(recipes)


def _canonical_doubled_pieces(
    steps: list[dict[str, Any]], notes: list[str]
) -> list[dict[str, Any]] | None:
    """``_normalize(_split_doubled_steps(steps))`` for steps without empty object members of
    which none closes the array early (else None): the same pieces and notes, built from
    recipes cached per step layout."""
    plan: list[dict[str, Any]] = []
    for step in steps:
        values = list(step.values())
        if {} in values:
            return None
        recipes = _doubled_step_recipe(tuple(step), tuple(map(type, values)))
        if recipes is None:
            return None
        values.append(None)  # what index -1 reads
        for piece in recipes:
            dependence = values[piece.dependence]
            plan.append(
                {
                    "step": values[piece.step],
                    "agent": values[piece.agent],
                    "inputs": values[piece.inputs] if piece.inputs >= 0 else {},
                    "outputs": values[piece.outputs] if piece.outputs >= 0 else [],
                    "dependence": dependence,
                    "dependence_content": values[piece.content],
                }
            )
            notes += piece.notes
            if piece.bare_dependence:
                _note_bare_dependence(dependence, notes)
    return plan


def _doubled_text_balanced(text: str, plan: _DoubledPlan) -> bool:
    """Quirk 3 for a doubled-brace text: its braces are all structural, so it balances when no
    string holds a bracket or parenthesis; otherwise count properly."""
    if (
        text.count("[") == plan.arrays
        and text.count("]") == plan.arrays
        and "(" not in text
        and ")" not in text
    ):
        return True
    return _brackets_balanced(text)


def _holds_string(item: dict[str, Any], word: str) -> bool:
    """Whether a key or string value (or array member) of ``item`` is exactly ``word``."""
    return word in item or any(
        value == word or (type(value) is list and word in value) for value in item.values()
    )


# --------------------------------------------------------------------------------------------
# Stage 2b: json-repair on "lenient JSON", computed by rewriting
# --------------------------------------------------------------------------------------------

# The other common kinds of damage - Python literals (``{'agent': 'X', 'x': None}``), bare
# keys (``{agent: "X"}``), ``True``/``None`` constants, trailing commas, and a plan cut off
# after some ``]`` (the reference's bracket-slice fallback on a truncated answer) - are also
# read by json-repair 0.64.6 in the obvious way, provided nothing triggers its heuristics:
#
# * a double-quoted string without backslashes or control characters always takes the
#   "simple quoted string" fast path (it is followed by ``:``, ``,``, ``}`` or ``]``), so its
#   content is opaque;
# * a single-quoted string goes through the slow string scanner, which only reacts to quotes,
#   backslashes, ``, : { } [ ] ( )``, backticks and typographic quotes - so its content must
#   avoid those (and must not be empty, which has special handling); the closing quote's
#   look-ahead can be fooled by an apostrophe inside a double-quoted string, so the two kinds
#   of string may not both contain the other's quote;
# * a bare key is read up to the ``:`` (it must start with a letter, since leading ``_`` or
#   digits are skipped as junk, and be followed by the ``:`` directly); any other bare word
#   outside strings must be a constant;
# * ``true``/``false``/``null``/``none`` in any letter case are constants when followed by a
#   delimiter; any other bare word would become a string, which we do not emulate;
# * a comma before a closer is skipped; a number directly followed by ``,x`` is not emulated
#   (in an object json-repair reads ``1,x`` as one token);
# * at the end of the text every open container is closed, but an empty array item (``[]``,
#   ``{}``, ``""``) that is not directly followed by ``,`` or ``]`` is dropped - not emulated;
#   an empty *object value* (after ``:``) is kept wherever it stands, as parse_object has no
#   such rule (``"outputs": []}`` reads as it should, also cut off after the ``]``);
# * a repeated key inside an array splits the object - not emulated.
#
# So for texts in that class ``json.loads(repair_json(text))`` is ``json.loads`` of the text
# with single quotes turned double, bare keys quoted, constants spelled the JSON way, trailing
# commas dropped and missing closers appended. tests/test_parity.py checks it against
# json-repair on random damaged plans.

_LENIENT_PIECE: Final = re.compile(
    r"""
      (?P<plain>(?:                      # a run of tokens that stay as they are:
          "[^"\\\x00-\x1f]*"             #   double-quoted strings without escapes
        | [ \t\n\r\[\]{}:]              #   whitespace, brackets, colons
        | ,(?![ \t\n\r]*[\]}])            #   commas not before a closer
        | -?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?   # numbers
      )+)
    | (?P<single>'[^'"\\\x00-\x1f,:{}\[\]()`\#\u201c\u201d\u201e\u2018\u2019]+')
    | (?P<key>[A-Za-z][A-Za-z0-9_]*+)(?=:)                        # a bare key
    | (?P<constant>(?i:true|false|null|none))(?=[ \t\n\r,\]}]|\Z)  # a constant, delimited
    | (?P<trailing>,)
    | (?P<other>.)                     # anything else, including any other bare word
    """,
    re.VERBOSE | re.DOTALL,
)

_CONSTANTS: Final = {"true": "true", "false": "false", "null": "null", "none": "null"}

# Things the class excludes, found on the whole text (a hit inside a string only costs a call
# to json-repair): a number glued to ",x"; an empty container or "" not followed by , or ].
# (Each pattern starts with a literal character, which the regex engine finds at C speed.)
_NUMBER_GLUED_TO_COMMA: Final = re.compile(r",(?<=[0-9],)[^ \t\n\r]")

_EMPTY_ITEMS_NOT_CLOSED: Final = (
    re.compile(r"\[[ \t\n\r]*\](?![,\]])"),
    re.compile(r"\{[ \t\n\r]*\}(?![,\]])"),
    re.compile(r'""(?![,\]])'),
)


def _has_empty_item_not_closed(text: str) -> bool:
    """Whether an empty array item that json-repair would drop may occur in ``text``.

    A hit right after a colon (and whitespace) is an object value, not an array item: in
    text that parses, a colon outside strings separates a key from its value, and after a
    colon inside a string such a thing can only lie in that same string (a ``""`` there would
    be two strings in a row), where it is opaque. (Hits are rare, so looking back is cheap.)
    """
    for pattern in _EMPTY_ITEMS_NOT_CLOSED:  # (no two kinds of hit can overlap)
        for hit in pattern.finditer(text):
            before = hit.start() - 1
            while before >= 0 and text[before] in " \t\n\r":
                before -= 1
            if before < 0 or text[before] != ":":
                return True
    return False


_APOSTROPHE_IN_DOUBLE_QUOTES: Final = re.compile(r'"[^"]*\'[^"]*"')


class _Unsupported(Exception):
    """The text is outside the emulated class; ask json-repair itself."""


def _mend_lenient_json(candidate: str) -> Any:
    """``json.loads(repair_json(candidate))`` for the "lenient JSON" class described above, or
    ``_NO_ANSWER`` when ``candidate`` is outside it."""
    if (
        not candidate.startswith("[")
        or "\\" in candidate
        or "`" in candidate
        or _NUMBER_GLUED_TO_COMMA.search(candidate)
    ):
        return _NO_ANSWER
    try:
        shortcut = _json_but_commas_before_closers(candidate)
        if shortcut is not None:
            text, closed = shortcut
            if _has_empty_item_not_closed(text):
                return _NO_ANSWER
            # Whether the text parses as it stands is known: parse what does (with the
            # repeated-key check, which the cut-off text would meet first all the same).
            return json.loads(closed or text, object_pairs_hook=_object_without_repeats)
        text, had_single_quotes = _strictify(candidate)
        if had_single_quotes and _APOSTROPHE_IN_DOUBLE_QUOTES.search(candidate):
            return _NO_ANSWER  # the closing-quote look-ahead could stop inside that string
        if _has_empty_item_not_closed(text):
            return _NO_ANSWER
        try:
            return json.loads(text, object_pairs_hook=_object_without_repeats)
        except ValueError:
            closed = _close_cut_off_text(text)
            if closed is None:
                return _NO_ANSWER
            return json.loads(closed, object_pairs_hook=_object_without_repeats)
    except (_Unsupported, ValueError, RecursionError):
        return _NO_ANSWER


_COMMA_BEFORE_CLOSER: Final = re.compile(r",(?=[ \t\n\r]*[\]}])")


def _json_but_commas_before_closers(candidate: str) -> tuple[str, str | None] | None:
    """``_strictify(candidate)[0]``, found cheaply, for a backslash-free candidate that is
    JSON but for commas before closers and perhaps a cut-off end, and with it the text closed
    by :func:`_close_cut_off_text` when it needs closing (else None); None when the candidate
    is not such a text (or might not be), for :func:`_strictify` to decide.

    Why it is the same text: once those commas are gone the text (closed, if cut off after a
    ``]``) is JSON, so its tokens are JSON tokens - double-quoted strings without escapes or
    control characters, numbers, punctuation and whitespace, all of them plain tokens to
    _strictify, and true/false/null, constants it spells the same - and each comma removed
    was outside the strings (an even number of quotes before it: without backslashes quotes
    only delimit strings), where _strictify drops exactly the commas before a closer.
    NaN and Infinity, which json.loads reads, are bare words to _strictify: such texts are
    left to it."""
    if "'" in candidate or "NaN" in candidate or "Infinity" in candidate:
        return None
    pieces = []
    start = 0
    for comma in _COMMA_BEFORE_CLOSER.finditer(candidate):
        position = comma.start()
        if candidate.count('"', 0, position) % 2:
            return None  # inside a string, if the text is JSON at all
        pieces.append(candidate[start:position])
        start = position + 1
    text = "".join(pieces) + candidate[start:] if pieces else candidate
    if loads_or_invalid(text) is not INVALID:
        return text, None
    closed = _close_cut_off_text(text)
    if closed is None or loads_or_invalid(closed) is INVALID:
        return None
    return text, closed


def _object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Unsupported  # json-repair would split the object at the repeated key
    return obj


def _strictify(text: str) -> tuple[str, bool]:
    """Rewrite lenient JSON as strict JSON (single quotes, bare keys, constants, trailing
    commas); raises ``_Unsupported`` outside the class."""
    single_quotes = False
    pieces = []
    # findall hands back every token's groups at C speed; only the few kinds of token that
    # change need Python.
    for plain, single, key, constant, trailing, _ in _LENIENT_PIECE.findall(text):
        if plain:
            pieces.append(plain)
        elif single:
            single_quotes = True
            pieces.append('"' + single[1:-1] + '"')
        elif key:
            pieces.append('"' + key + '"')
        elif constant:
            pieces.append(_CONSTANTS[constant.lower()])
        elif not trailing:  # json-repair skips a comma right before a closer
            raise _Unsupported
    return "".join(pieces), single_quotes


_DOUBLE_QUOTED: Final = re.compile(r'"[^"]*"')
_NOT_A_SQUARE_OR_CURLY: Final = bytes(b for b in range(256) if b not in b"[]{}")
_SQUARE_OR_CURLY_CLOSER: Final = {ord("["): ord("]"), ord("{"): ord("}")}


def _close_cut_off_text(text: str) -> str | None:
    """Append the closers json-repair supplies at the end of a text cut off after a ``]``."""
    if not text.rstrip().endswith("]"):
        return None
    # The brackets outside double-quoted strings, in order (non-ASCII characters encode to
    # bytes >= 0x80, which the filter drops with everything else).
    structure = (
        _DOUBLE_QUOTED.sub("", text)
        .encode("utf-8", "surrogatepass")
        .translate(None, _NOT_A_SQUARE_OR_CURLY)
    )
    expected: list[int] = []
    for char in structure:
        closer = _SQUARE_OR_CURLY_CLOSER.get(char)
        if closer is not None:
            expected.append(closer)
        elif not expected or expected.pop() != char:
            return None
    if not expected:
        return None
    return text + bytes(reversed(expected)).decode("ascii")


# --------------------------------------------------------------------------------------------
# Stage 2c: json-repair on a bracketed token, prose, then the plan
# --------------------------------------------------------------------------------------------

# A short bracketed token, some prose, then the plan - as in "[1] see the tool
# list.\n[{...}, ...]", the bracket-slice fallback's candidate when prose around a plan does
# not balance its brackets. json-repair 0.64.6 reads the first array (a number or a word:
# json.loads-able, or an unquoted string), skips the prose at the top level (letters, digits,
# whitespace and these punctuation marks start no value there), then reads the plan as a
# second top-level value with its array parser - the same reading as the plan text alone, in
# the "lenient JSON" class above. The result is ``[first, plan]``, or just ``plan`` when the
# first array is empty (a falsy value is dropped); the two never merge, as the first holds no
# object. When every step of the plan has ``agent`` and ``step`` keys, the reference's
# shaping takes the plan from either form (quirk 8a or 8b): ``[plan]`` stands for the first.
_PREFIX_TOKEN_AND_PROSE: Final = re.compile(
    r"\[(?P<token>[A-Za-z0-9 ]*)\][A-Za-z0-9 \t\n\r.,:;!?-]*(?=\[)"
)


def _mend_prefixed_plan(candidate: str) -> Any:
    """json-repair's reading of ``[token] prose [plan]`` as far as the reference's shaping
    can tell (see above): ``plan`` for an empty token, else ``[plan]``; ``_NO_ANSWER``
    outside that class."""
    prefix = _PREFIX_TOKEN_AND_PROSE.match(candidate)
    if prefix is None:
        return _NO_ANSWER
    text = candidate[prefix.end() :]
    plan = _loads_valid_plan(text)
    if plan is _NO_ANSWER:
        plan = _mend_lenient_json(text)
    if type(plan) is not list or not plan:
        return _NO_ANSWER
    for step in plan:
        if type(step) is not dict or "agent" not in step or "step" not in step:
            return _NO_ANSWER
    return [plan] if prefix.group("token").strip() else plan


def _loads_valid_plan(text: str) -> Any:
    """``json.loads`` of a plan text inside the "lenient JSON" class that needs no rewriting,
    else ``_NO_ANSWER``. Valid JSON (without NaN or Infinity, repeated keys, backslashes,
    backticks or a number glued to ",x") json-repair's parser reads as json.loads does, empty
    containers included (the empty items it drops are a cut-off text's): _strictify would
    hand it back unchanged - its strings and numbers are plain tokens, its only bare words
    the constants true/false/null, and no comma precedes a closer."""
    if "\\" in text or "`" in text or _NUMBER_GLUED_TO_COMMA.search(text):
        return _NO_ANSWER
    try:
        return json.loads(
            text, object_pairs_hook=_object_without_repeats, parse_constant=_reject_constant
        )
    except (ValueError, _Unsupported, RecursionError):
        return _NO_ANSWER


# --------------------------------------------------------------------------------------------
# Stage 2d: json-repair on a pretty-printed step whose newlines were written as "\n"
# --------------------------------------------------------------------------------------------

# Completions written as ``json.dumps(plan, indent=2).replace("\n", "\\n")`` - a pretty-printed
# plan whose newlines are the two characters ``\`` ``n`` - lose their backslashes in the
# reference's flattening, leaving ``[n  {n    "agent": "X",n    "step": 0,n ...}n]``. The
# ``n`` after ``[`` defeats the array and run-of-objects regexes, so the single-object regex
# isolates the first step, and json-repair (~0.5 ms) reads ``"[" + step + "]"``. Call the
# step's layout ``NL(d)`` = ``n`` + the base indentation (that of the step's closing brace,
# non-empty) + ``d`` indentation units (non-empty whitespace): the text is ``{`` NL(1) member
# ``,`` NL(1) member ... NL(0) ``}``, an object member's object ``{`` NL(2) ... NL(1) ``}``, an
# array ``[`` NL(d+1) item ``,`` ... NL(d) ``]``, and ``[]``/``{}`` when empty. Reading
# json-repair 0.64.6's parser (parse_object, _parse_object_key, parse_string and its helpers
# classify_object_value_comma and _handle_right_delimiter_candidate, parse_number,
# parse_boolean_or_null, parse_array) on exactly this text gives:
#
# * *Keys.* Before each key the junk ``n`` + indentation is read as an unquoted key, which
#   ends at the whitespace and is dropped as "a comment instead of a key" (a quote follows,
#   not ``:``); the quoted key then takes the "simple quoted string" fast path, as it is
#   followed by ``:``. Before a closing brace the junk reads as an empty key and the brace
#   closes the object.
# * *A member that is not its object's last* is followed by ``,`` NL and the next key, so a
#   string takes the fast path (its content as is); ``true``/``false``/``null`` are read as
#   such (a comma delimits them); a number is read up to ``,``, but the letter ``n`` after
#   it makes parse_number hand over to parse_string, which skips a leading ``-`` and reads
#   the number's text as an unquoted string up to the comma (the comma is classified as
#   starting the next member: the next quoted text is a key followed by ``:``). So ``-1``
#   becomes ``"1"`` and ``2.5`` becomes ``"2.5"``.
# * *An object's last member*, followed by NL and ``}``. A non-empty string without
#   ``{}[]``` ``, and without ``:`` or ``'`` if it holds a comma, takes the slow string scanner
#   (the fast path wants ``,`` or ``}`` next, not ``n``) and comes out as is: each comma is
#   classified as part of the string, and the closing quote is accepted because after it
#   comes ``n``, whitespace and ``}``. A number or constant is read as an unquoted string
#   (``true`` followed by ``n`` is no constant) that runs over the junk ``n`` and the
#   indentation to the ``}``, where json-repair looks ahead: when the step follows (the
#   ``}`` closes an object member of the step and more members follow) or nothing follows
#   (the ``}`` closes the step), the string stops there and is right-stripped: ``"1n"``. When
#   the ``}`` closes the step's last member, an object, the look-ahead finds the step's own
#   ``}`` further on and keeps going, so the string takes in ``}`` and the next junk up to
#   the step's ``}``: ``"1n" + NL(1) indentation + "}n"``; that object then ends at the
#   step's brace, and the step ends at the ``]`` (no member is lost).
# * *Array items* are read as unquoted strings starting at the junk ``n``: a number or
#   constant item gives ``"n" + indentation + its text`` up to the comma (plus ``"n"`` for
#   the last item, which runs to the ``]``). Before a string item the unquoted ``n`` +
#   indentation stops at the opening quote (the quotes that follow pair up before the next
#   ``]``), which is then skipped, and gives ``"n"``; the string's content, which must start
#   with a letter (else parse_json dispatches on it) and hold no ``,]}`` (which would end or
#   upset the look-aheads) nor start with a word json-repair reads as a constant, is then
#   read as an unquoted string up to its closing quote and right-stripped; after the last
#   string item the junk before ``]`` gives one more ``"n"``. So ``[-1]`` becomes
#   ``["n      -1n"]`` and ``["a", "b"]`` becomes ``["n", "a", "n", "b", "n"]``.
# * Empty arrays and objects are read as such.
#
# The class emulated: the candidate, without backslashes and ASCII, is ``[`` + a non-empty
# step object + ``]`` where the step, as laid out above, is exactly what ``json.dumps`` with
# some indentation unit of spaces and tabs produces, newlines replaced by ``n`` and every
# line shifted by a non-empty base indentation - checked by parsing the text with the junk
# turned back into newlines, re-rendering it and comparing byte for byte - whose members are
# scalars, arrays of scalars, or objects of such (no deeper nesting), whose keys start with a
# letter, digit or underscore (the look-aheads read the next key's first character), and
# whose strings obey the rules above where they apply. Everything else - such as a numeric
# string inside an array, which sends json-repair's array reading astray - goes to json-repair.
# tests/test_parity.py checks this emulation against json-repair on many random steps.

# Array string items json-repair reads back (see above): a letter first, no , ] or }.
_JUNK_ARRAY_STRING: Final = re.compile(r"[A-Za-z][^,\]}]*+")

# A string json-repair's parse_boolean_or_null would read as a constant instead.
_CONSTANT_PREFIX: Final = re.compile(r"(?i:true|false|null|none)[ )]")

# A key whose first character the look-aheads cannot mistake for a delimiter.
_PLAIN_KEY_START: Final = re.compile(r"[A-Za-z0-9_]")


def _mend_escaped_newlines(candidate: str) -> Any:
    """``json.loads(repair_json(candidate))`` for a pretty-printed step whose newlines became
    ``n`` (the class described above), or ``_NO_ANSWER`` outside it."""
    layout = _escaped_newline_layout(candidate)
    if layout is None:
        return _NO_ANSWER
    step, base, unit = layout
    try:
        return [_read_junk_object(step, base, unit, 0, False)]
    except _Unsupported:
        return _NO_ANSWER


def _escaped_newline_layout(candidate: str) -> tuple[dict[str, Any], str, str] | None:
    """The step, base indentation and indentation unit of a candidate laid out exactly as
    described above, or None."""
    if (
        not candidate.startswith("[{n")
        or not candidate.endswith("}]")
        or "\\" in candidate
        or not candidate.isascii()
    ):
        return None
    text = candidate[1:-1]
    # Without backslashes every quote delimits a string: outside them (the even pieces) the
    # letter n is junk except in null. Any other reading fails the re-rendering below.
    pieces = text.split('"')
    if not len(pieces) % 2:
        return None
    pieces[::2] = [piece.replace("n", "\n").replace("\null", "null") for piece in pieces[::2]]
    try:
        step = json.loads('"'.join(pieces), parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    if type(step) is not dict or not step:
        return None
    body = text[2:]
    first = body[: len(body) - len(body.lstrip(" \t"))]  # NL(1)'s indentation
    base = text[text.rfind("n") + 1 : -1]  # NL(0)'s
    if not base or base.strip(" \t") or len(first) <= len(base) or not first.startswith(base):
        return None
    unit = first[len(base) :]
    if json.dumps(step, indent=unit).replace("\n", "n" + base) != text:
        return None
    return step, base, unit


def _read_junk_object(
    members: dict[str, Any], base: str, unit: str, depth: int, last_in_step: bool
) -> dict[str, Any]:
    """json-repair's reading of an object laid out as above: the step (``depth`` 0) or one
    of its members (``depth`` 1; ``last_in_step`` when it is the step's last member).
    Raises ``_Unsupported`` outside the emulated class."""
    read: dict[str, Any] = {}
    last_key = next(reversed(members))
    for key, value in members.items():
        if _PLAIN_KEY_START.match(key) is None:
            raise _Unsupported
        kind = type(value)
        if kind is str:
            if key == last_key and not _slow_string_reads_back(value):
                raise _Unsupported
            read[key] = value
        elif kind is list:
            read[key] = _read_junk_array(value, base + unit * (depth + 2)) if value else []
        elif kind is dict:
            if depth:
                raise _Unsupported  # an object two levels down
            read[key] = _read_junk_object(value, base, unit, 1, key == last_key) if value else {}
        elif key != last_key:
            read[key] = value if value is None or kind is bool else json.dumps(value).lstrip("-")
        elif depth and last_in_step:
            read[key] = json.dumps(value).lstrip("-") + "n" + base + unit + "}n"
        else:
            read[key] = json.dumps(value).lstrip("-") + "n"
    return read


def _slow_string_reads_back(value: str) -> bool:
    """Whether json-repair's slow string scanner reads a last member's string as it is."""
    if not value or "{" in value or "}" in value or "[" in value or "]" in value or "`" in value:
        return False
    return "," not in value or (":" not in value and "'" not in value)


def _read_junk_array(values: list[Any], indent: str) -> list[Any]:
    """json-repair's reading of a non-empty array laid out as above, its items indented by
    ``indent``. Raises ``_Unsupported`` outside the emulated class."""
    read: list[Any] = []
    last = len(values) - 1
    for position, value in enumerate(values):
        kind = type(value)
        if kind is str:
            if _JUNK_ARRAY_STRING.fullmatch(value) is None or _CONSTANT_PREFIX.match(value):
                raise _Unsupported
            read.append("n")
            read.append(value.rstrip())
            if position == last:
                read.append("n")
        elif kind is list or kind is dict:
            raise _Unsupported
        else:
            read.append("n" + indent + json.dumps(value) + ("n" if position == last else ""))
    return read


# --------------------------------------------------------------------------------------------
# Stage 3: shaping the parsed value into a plan (quirks 8-9)
# --------------------------------------------------------------------------------------------


def _normalize(value: Any, notes: list[str]) -> list[dict[str, Any]] | _NotAList:
    """The reference's "dp" normalisation of an extracted value (quirks 7-8)."""
    if type(value) is list and value:
        plan = _canonical_plan_if_all_objects(value, notes)
        if plan is not None:
            return plan
    value = _unwrap(value, notes)
    plan = _shape(value, notes)
    if plan is not None:
        return plan
    # Quirk 8e: the reference re-runs extraction on the serialised value.
    notes.append("answer was not an array; extraction re-run on its JSON text")
    again = _extract(json.dumps(value), notes)
    if again is _NO_ANSWER:
        return _NOT_A_LIST
    plan = _shape(again, notes)
    return _NOT_A_LIST if plan is None else plan


def _shape(value: Any, notes: list[str]) -> list[dict[str, Any]] | None:
    """Quirk 8a-d; None when ``value`` is not an array at all."""
    if not isinstance(value, list):
        return None
    if value:
        plan = _canonical_plan_if_all_objects(value, notes)
        if plan is not None:
            return plan
    for item in value:
        if _is_object_array(item) and all("agent" in x and "step" in x for x in item):
            notes.append("plan found nested inside an outer array")
            return _canonical_plan(item, notes)
    salvaged = _salvage_steps(value)
    if salvaged is not None:
        notes.append("non-step items dropped and steps sorted by step number")
        return _canonical_plan(sorted(salvaged, key=_step_rank), notes)
    notes.append("array without step objects scored as the empty plan")
    return []


def _looks_like_step(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    for key in ("agent", "agent_name"):
        name = item.get(key)
        if isinstance(name, str) and name.strip():
            return True
    return False


def _step_rank(item: Any) -> int:
    """Sort key of the coerce path. ``int()`` may raise on odd digit strings, as it does
    in the reference (quirk 15)."""
    if not isinstance(item, dict):
        return _UNKNOWN_STEP_RANK
    number = item.get("step", item.get("step_index"))
    if isinstance(number, int):
        return number
    if isinstance(number, str) and number.strip().lstrip("-").isdigit():
        return int(number.strip())
    return _UNKNOWN_STEP_RANK


def _is_object_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(x, dict) for x in value)


def _salvage_steps(items: list[Any]) -> list[Any] | None:
    """Quirk 8c, for a list that is not purely objects."""
    if not items:
        return None
    top_level = [item for item in items if _looks_like_step(item)]
    if top_level:
        return top_level
    nested = [
        inner
        for item in items
        if isinstance(item, list)
        for inner in item
        if _looks_like_step(inner)
    ]
    if nested:
        return nested
    objects = [item for item in items if isinstance(item, dict)]
    return objects or None


def _canonical_plan(items: list[Any], notes: list[str]) -> list[dict[str, Any]]:
    return [_canonical_step(item, notes) for item in items]


def _canonical_plan_if_all_objects(
    items: list[Any], notes: list[str]
) -> list[dict[str, Any]] | None:
    """Quirk 8a fused with quirk 9: None as soon as an item is not an object."""
    plan = []
    for item in items:
        if type(item) is not dict:
            return None
        if (
            item.keys() == _CANONICAL_KEYS
            and type(item["inputs"]) is dict
            and type(item["outputs"]) is list
        ):
            # Already canonical (see _canonical_step), but for a bare dependence to note.
            if type(item["dependence"]) is not list:
                _note_bare_dependence(item["dependence"], notes)
            plan.append(item)
        else:
            plan.append(_canonical_step_slow(item, notes))
    return plan


def _canonical_step(item: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Quirk 9."""
    if item.keys() == _CANONICAL_KEYS:
        inputs = item["inputs"]
        outputs = item["outputs"]
        dependence = item["dependence"]
        if type(inputs) is dict and type(outputs) is list:
            if type(dependence) is not list:
                _note_bare_dependence(dependence, notes)
            # Already canonical: the object itself has exactly the canonical keys and values
            # (only its key order may differ, which no comparison looks at).
            return item
    return _canonical_step_slow(item, notes)


_ALIAS_TARGET: Final = {alias: key for key, alias in _ALIASES}


@dataclass(frozen=True, slots=True)
class _Recipe:
    """How to canonicalise a step object with a given sequence of keys (quirk 9)."""

    # Where step, agent, dependence and dependence_content come from; None when absent
    # (``item.get(None)`` is None: JSON keys are strings).
    sources: tuple[str | None, str | None, str | None, str | None]
    notes: tuple[str, ...]  # alias and missing-key notes
    dropped_notes: tuple[str, ...]  # one per key neither canonical nor read as an alias
    drops_input: bool  # `input` is one of those keys (not noted when read as `inputs`)


_INPUT_DROPPED: Final = "extra key `input` dropped"


@lru_cache(maxsize=4096)
def _recipe(keys: tuple[str, ...]) -> _Recipe:
    present = set(keys)
    sources: list[str | None] = []
    notes: list[str] = []
    for canonical, alias in _ALIASES:
        if canonical in present:
            sources.append(canonical)
        elif alias in present:
            sources.append(alias)
            notes.append(f"alias key `{alias}` read as `{canonical}`")
        else:
            sources.append(None)
            notes.append(f"missing `{canonical}` read as null")
    dropped = [
        key
        for key in keys
        if key not in _CANONICAL_KEYS
        and not (key in _ALIAS_TARGET and _ALIAS_TARGET[key] not in present)
    ]
    step, agent, dependence, content = sources
    return _Recipe(
        (step, agent, dependence, content),
        tuple(notes),
        tuple(f"extra key `{key}` dropped" for key in dropped),
        "input" in dropped,
    )


def _canonical_step_slow(item: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    recipe = _recipe(tuple(item))
    step_key, agent_key, dependence_key, content_key = recipe.sources
    if recipe.notes:
        notes += recipe.notes
    get = item.get
    inputs = get("inputs")
    input_alias_used = False
    if type(inputs) is not dict or not inputs:
        alternative = get("input")
        if type(alternative) is dict:
            inputs = alternative
            input_alias_used = True
            notes.append("alias key `input` read as `inputs`")
        elif type(inputs) is not dict:
            notes.append("missing or non-object `inputs` read as {}")
            inputs = {}
    outputs = get("outputs")
    if type(outputs) is not list:
        notes.append("missing or non-array `outputs` read as []")
        outputs = []
    if recipe.dropped_notes:
        if input_alias_used and recipe.drops_input:
            notes += [note for note in recipe.dropped_notes if note != _INPUT_DROPPED]
        else:
            notes += recipe.dropped_notes
    dependence = get(dependence_key)  # type: ignore[arg-type]
    if type(dependence) is not list:
        _note_bare_dependence(dependence, notes)
    return {
        "step": get(step_key),  # type: ignore[arg-type]
        "agent": get(agent_key),  # type: ignore[arg-type]
        "inputs": inputs,
        "outputs": outputs,
        "dependence": dependence,
        "dependence_content": get(content_key),  # type: ignore[arg-type]
    }


def _note_bare_dependence(dependence: Any, notes: list[str]) -> None:
    if dependence is None:
        return  # already noted as missing, or an explicit null read as []
    if isinstance(dependence, dict):
        notes.append("dependence object read as the list of its keys")
    elif isinstance(dependence, (str, int, float)):
        # json.dumps spelling; an int (not a bool) spells the same with str(), much faster.
        shown = str(dependence) if type(dependence) is int else json.dumps(dependence)
        notes.append(f"dependence {shown} read as [{shown}]")


# --------------------------------------------------------------------------------------------
# Stage 4: comparing with the gold plan (quirks 10-17)
# --------------------------------------------------------------------------------------------


def _dependence_as_list(dependence: Any) -> list[Any]:
    """Quirk 14's reading of a dependence value as a list."""
    if dependence is None:
        return []
    if isinstance(dependence, (list, tuple)):
        return list(dependence)
    if isinstance(dependence, (int, float, str)):
        return [dependence]
    try:
        return list(dependence)
    except TypeError:
        return [dependence]


def _same(left: Any, right: Any) -> bool:
    """The reference's type-exact deep equality (quirks 10-11); iterates ``left``'s keys in
    order, which decides whether an unsortable ``dependence`` raises before a difference is
    found."""
    kind = type(left)
    if kind is not type(right):
        return False
    if kind is dict:
        if left.keys() != right.keys():
            return False
        for key, value in left.items():
            if key == "dependence":
                if sorted(_dependence_as_list(value)) != sorted(_dependence_as_list(right[key])):
                    return False
            elif not _same(value, right[key]):
                return False
        return True
    if kind is list:
        if len(left) != len(right):
            return False
        return all(_same(a, b) for a, b in zip(left, right, strict=True))
    return bool(left == right)


def _sorted_gold_dependence(gold: _GoldStep) -> list[Any]:
    if gold.dependence_sorted is None:
        return sorted(_dependence_as_list(gold.dependence))  # raises, as the reference does
    return gold.dependence_sorted


def _all_ints(values: list[Any]) -> bool:
    # A plain loop: on the one- or two-member lists of the hot path it is about three times
    # faster than all() over a generator.
    for value in values:  # noqa: SIM110
        if type(value) is not int:
            return False
    return True


def _dependence_matches(dependence: Any, gold: _GoldStep) -> bool:
    """Quirk 14 (type-exact, after sorting); may raise TypeError like the reference."""
    ints = gold.dependence_ints
    if ints is not None and type(dependence) is list and dependence == ints:
        # Every member equals an int, so it is a number and sorting cannot fail; the sorted
        # lists agree in value, and type-exactly iff every member really is an int.
        return _all_ints(dependence)
    ordered = sorted(_dependence_as_list(dependence))
    return _same(ordered, _sorted_gold_dependence(gold))


def _dependence_loosely_matches(dependence: Any, gold: _GoldStep) -> bool:
    """Quirk 11, as EM applies it to the step's own ``dependence`` key."""
    ints = gold.dependence_ints
    if ints is not None and type(dependence) is list and dependence == ints:
        return True
    ordered = sorted(_dependence_as_list(dependence))
    return bool(ordered == _sorted_gold_dependence(gold))


def _exactly(value: Any, gold_value: Any, plain: bool) -> bool:
    return bool(value == gold_value) if plain else _same(value, gold_value)


def _steps_exactly_equal(step: dict[str, Any], gold: _GoldStep) -> bool:
    """The reference's deep equality of a canonical step with a gold step (EM)."""
    return (
        gold.has_exact_keys
        and _exactly(step["step"], gold.step, gold.step_plain)
        and _exactly(step["agent"], gold.agent, gold.agent_plain)
        and _exactly(step["inputs"], gold.inputs, gold.inputs_plain)
        and _exactly(step["outputs"], gold.outputs, gold.outputs_plain)
        and _dependence_loosely_matches(step["dependence"], gold)
        and _exactly(step["dependence_content"], gold.dependence_content, gold.content_plain)
    )


def _exact_match(plan: list[dict[str, Any]], gold: GoldPlan) -> bool:
    golds = gold.em_steps
    if golds is None or len(plan) != len(golds):
        return False
    return all(_steps_exactly_equal(s, g) for s, g in zip(plan, golds, strict=True))


def _tools_match(plan: list[dict[str, Any]], gold: GoldPlan) -> bool:
    golds = gold.steps
    if golds is None or len(plan) != len(golds) or len(gold.tool_pairs) != len(plan):
        return False
    return all(
        s["step"] == step and s["agent"] == agent
        for s, (step, agent) in zip(plan, gold.tool_pairs, strict=True)
    )


def _parameters_match(plan: list[dict[str, Any]], gold: GoldPlan) -> bool:
    golds = gold.steps
    if golds is None or len(plan) != len(golds):
        return False
    for s, g in zip(plan, golds, strict=True):
        if not g.is_object or s["step"] != g.step or s["agent"] != g.agent:
            return False
        if not _exactly(s["inputs"], g.inputs, g.inputs_plain):
            return False
        if not _exactly(s["outputs"], g.outputs, g.outputs_plain):
            return False
    return True


def _dependencies_match(plan: list[dict[str, Any]], gold: GoldPlan) -> bool:
    golds = gold.steps
    if golds is None or len(plan) != len(golds):
        return False
    for s, g in zip(plan, golds, strict=True):
        if not g.is_object or s["step"] != g.step or s["agent"] != g.agent:
            return False
        if not _dependence_matches(s["dependence"], g):
            return False
        # The reference's null checks followed by deep equality amount to deep equality.
        if not _exactly(s["dependence_content"], g.dependence_content, g.content_plain):
            return False
    return True


def _first_point_of_failure(plan: list[dict[str, Any]], gold: GoldPlan) -> tuple[str | None, Any]:
    """Quirk 16."""
    golds = gold.steps
    if golds is None:
        return "format_error", 0
    for index, (s, g) in enumerate(zip(plan, golds, strict=False)):
        if not g.is_object:
            return "format_error", index + 1
        if s["step"] != g.step:
            return "parameter_error", g.error_step
        if s["agent"] != g.agent:
            return "agent_mismatch", g.error_step
        if not _exactly(s["inputs"], g.inputs, g.inputs_plain):
            return "parameter_error", g.error_step
        if not _exactly(s["outputs"], g.outputs, g.outputs_plain):
            return "parameter_error", g.error_step
        if not _dependence_matches(s["dependence"], g):
            return "dependency_error", g.error_step
        if not _exactly(s["dependence_content"], g.dependence_content, g.content_plain):
            return "dependency_content_error", g.error_step
    if len(plan) < len(golds):
        return "early_stop", min(len(plan), len(golds)) + 1
    if len(plan) > len(golds):
        return "hallucinated_extra_steps", len(golds) + 1
    return None, None


def _compare_simple(
    plan: list[dict[str, Any]], gold: GoldPlan, same: list[bool] | None = None
) -> tuple[bool, bool, bool, bool, str | None, Any]:
    """All five checks in one pass, for a gold plan whose steps are all ``is_simple``.

    Same results as the five separate checks: each flag follows its own check's early exits,
    and a model ``dependence`` is only sorted when some still-running check would sort it in
    the reference, so a TypeError is raised exactly when the reference raises one. (With a
    simple gold, sorting the model's dependence is the only operation that can raise.)
    ``same`` holds ``step == gold item`` for each position both have, when the caller already
    compared them (deep equality of equal steps is the costliest comparison here).
    """
    golds: tuple[_GoldStep, ...] = gold.steps  # type: ignore[assignment]
    if same is None:
        same = list(map(eq, plan, gold.items))  # type: ignore[arg-type]
    if len(plan) == len(golds) and all(same):
        # Every step is == its gold step: only an int step or dependence member that is
        # really a float or bool can still make a difference (see the per-step case below).
        return _compare_equal_plan(plan, golds)
    em = tools = params = deps = len(plan) == len(golds)
    kind: str | None = None
    where: Any = None
    # Usually the steps equal to their gold step are also typed like it, and then they can
    # change no flag below: skip them.
    equal_steps_typed = _typed_like_gold(compress(plan, same))
    for s, g, equal in zip(plan, golds, same, strict=False):
        if equal:
            if equal_steps_typed:
                continue
            # Everything is ==, and the gold has only strings/nulls/containers besides the int
            # step and int dependence: only those two can still differ in type.
            if em and type(s["step"]) is not int:
                em = False
            for member in s["dependence"]:
                if type(member) is not int:
                    deps = False
                    if kind is None:
                        kind, where = "dependency_error", g.error_step
                    break
            continue
        step = s["step"]
        if step != g.step or s["agent"] != g.agent:
            if kind is None:
                kind = "parameter_error" if step != g.step else "agent_mismatch"
                where = g.error_step
            return False, False, False, False, kind, where
        if em and type(step) is not int:
            em = False
        if s["inputs"] != g.inputs or s["outputs"] != g.outputs:
            em = params = False
            if kind is None:
                kind, where = "parameter_error", g.error_step
        if not (deps or em or kind is None):
            if not tools:
                break
            continue
        dependence = s["dependence"]
        if type(dependence) is list and dependence == g.dependence_ints:
            exact = _all_ints(dependence)
            loose = True
        else:
            ordered = sorted(_dependence_as_list(dependence))  # may raise, like the reference
            exact = _same(ordered, g.dependence_sorted)
            loose = ordered == g.dependence_sorted
        content = s["dependence_content"] == g.dependence_content
        if not (exact and content):
            deps = False
        if not (loose and content):
            em = False
        if kind is None and not (exact and content):
            kind = "dependency_error" if not exact else "dependency_content_error"
            where = g.error_step
        if not (em or params or deps or tools) and kind is not None:
            break
    if kind is None:
        if len(plan) < len(golds):
            kind, where = "early_stop", len(plan) + 1
        elif len(plan) > len(golds):
            kind, where = "hallucinated_extra_steps", len(golds) + 1
    return em, tools, params, deps, kind, where


def _compare_equal_plan(
    plan: list[dict[str, Any]], golds: tuple[_GoldStep, ...]
) -> tuple[bool, bool, bool, bool, str | None, Any]:
    if _typed_like_gold(plan):
        return True, True, True, True, None, None
    em = deps = True
    kind: str | None = None
    where: Any = None
    for s, g in zip(plan, golds, strict=True):
        if em and type(s["step"]) is not int:
            em = False
        if deps and not _all_ints(s["dependence"]):
            deps = False
            kind, where = "dependency_error", g.error_step
    return em, True, True, deps, kind, where


def _typed_like_gold(steps: Iterable[dict[str, Any]]) -> bool:
    """For steps each == its step of a simple gold plan (so ``dependence`` is a list): whether
    every ``step`` and every ``dependence`` member really is an int, not an equal float or
    bool - then the type-exact comparisons agree with ``==`` on them."""
    for step in steps:
        if type(step["step"]) is not int:
            return False
        for member in step["dependence"]:
            if type(member) is not int:
                return False
    return True


def _judge(answer: Any, gold: GoldPlan, notes: list[str]) -> ReferenceVerdict:
    if answer is _NO_ANSWER:
        return _failed("empty_output", None, notes, "no answer could be extracted")
    if answer is _NOT_A_LIST:
        return _failed("format_error", None, notes, "the answer is not a JSON array")
    plan: list[dict[str, Any]] = answer
    try:
        if gold.simple:
            em, tools, parameters, dependencies, kind, step = _compare_simple(plan, gold)
        else:
            em = _exact_match(plan, gold)
            tools = _tools_match(plan, gold)
            parameters = _parameters_match(plan, gold)
            dependencies = _dependencies_match(plan, gold)
            kind, step = _first_point_of_failure(plan, gold)
    except Exception as error:  # the reference raises on exactly these inputs (quirk 15)
        return _crashed(error, plan, notes)
    repairs = tuple(dict.fromkeys(notes)) if notes else ()
    return _verdict((em, tools, parameters, dependencies, kind, step, plan, repairs, None))


def _equal_plan_verdict(
    plan: list[dict[str, Any]], gold: GoldPlan, notes: list[str]
) -> ReferenceVerdict:
    steps: tuple[_GoldStep, ...] = gold.steps  # type: ignore[assignment]
    em, tools, params, deps, kind, where = _compare_equal_plan(plan, steps)
    repairs = tuple(dict.fromkeys(notes)) if notes else ()
    return _verdict((em, tools, params, deps, kind, where, plan, repairs, None))


def _failed(
    kind: str, prediction: list[Any] | None, notes: list[str], problem: str
) -> ReferenceVerdict:
    return ReferenceVerdict(
        em=False,
        tool_acc=False,
        param_acc=False,
        dep_acc=False,
        fpof_type=kind,
        fpof_step=0,
        prediction=prediction,
        repairs=tuple(dict.fromkeys(notes)),
        problem=problem,
    )


def _crashed(
    error: BaseException, prediction: list[Any] | None, notes: list[str]
) -> ReferenceVerdict:
    problem = f"the reference evaluator raises {type(error).__name__}: {error}"
    return _failed(CRASH_ERROR_TYPE, prediction, notes, problem)


# --------------------------------------------------------------------------------------------
# Strict reading ("--scoring strict")
# --------------------------------------------------------------------------------------------

_FENCE: Final = re.compile(r"```(?:json|JSON)?[ \t]*\r?\n(?P<body>.*)```", re.DOTALL)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("duplicate key in object")
    return result


def _strict_step_problem(item: Any) -> str | None:
    if not isinstance(item, dict):
        return "is not an object"
    if item.keys() != _CANONICAL_KEYS:
        # (Comprehensions: ``frozenset - dict_keys`` is a set at run time, not the frozenset
        # typeshed declares, which compiled code would reject.)
        missing = sorted(key for key in _CANONICAL_KEYS if key not in item)
        extra = sorted(key for key in item if key not in _CANONICAL_KEYS)
        return f"keys differ from the schema (missing {missing}, extra {extra})"
    if type(item["step"]) is not int:
        return "`step` is not an integer"
    if not isinstance(item["agent"], str):
        return "`agent` is not a string"
    if not isinstance(item["inputs"], dict):
        return "`inputs` is not an object"
    if not isinstance(item["outputs"], list):
        return "`outputs` is not an array"
    dependence = item["dependence"]
    if not isinstance(dependence, list) or any(type(x) is not int for x in dependence):
        return "`dependence` is not an array of integers"
    content = item["dependence_content"]
    if content is not None and not isinstance(content, dict):
        return "`dependence_content` is neither null nor an object"
    return None


def _strict_read(completion: str | None, problems: list[str]) -> Any:
    """Strict mode: one JSON document (optionally as the only thing in one markdown fence),
    an array of schema-exact step objects, nothing mended, nothing guessed."""
    if not isinstance(completion, str) or not completion.strip():
        return _NO_ANSWER
    body = completion.strip()
    fenced = _FENCE.fullmatch(body)
    if fenced is not None:
        body = fenced.group("body")
        if "```" in body:
            problems.append("more than one markdown code fence")
            return _NOT_A_LIST
    try:
        value = json.loads(
            body, parse_constant=_reject_constant, object_pairs_hook=_reject_duplicate_keys
        )
    except (ValueError, RecursionError) as error:
        problems.append(f"not a single JSON document: {error}")
        return _NOT_A_LIST
    if not isinstance(value, list):
        problems.append("the JSON document is not an array")
        return _NOT_A_LIST
    for index, item in enumerate(value):
        problem = _strict_step_problem(item)
        if problem is not None:
            problems.append(f"step object #{index} {problem}")
            return _NOT_A_LIST
    return [{key: item[key] for key in _CANONICAL_ORDER} for item in value]


def _judge_strict(answer: Any, gold: GoldPlan, problems: list[str]) -> ReferenceVerdict:
    if answer is _NOT_A_LIST:
        return _failed("format_error", None, [], problems[0])
    if answer is _NO_ANSWER:
        return _failed("empty_output", None, [], "the completion is empty")
    return _judge(answer, gold, [])


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


def score_completion(
    completion: str | None,
    gold: GoldPlan | list[Any] | str,
    *,
    strict: bool = False,
) -> ReferenceVerdict:
    """Score one raw model completion against a gold plan, exactly as DisasterBench does.

    ``gold`` is a :class:`GoldPlan` (fastest), the gold plan itself, or its ``json.dumps``
    text. With ``strict=True`` no leniency is applied (see :func:`_strict_read` and
    ``docs/reference-parity.md``); the comparisons themselves are unchanged.
    Never raises for any ``completion``.
    """
    prepared = gold if type(gold) is GoldPlan else prepare_gold(gold)
    if strict:
        problems: list[str] = []
        return _judge_strict(_strict_read(completion, problems), prepared, problems)
    if type(completion) is not str and not isinstance(completion, str):
        return _failed("empty_output", None, [], "no completion")
    searched: re.Match[str] | _Unknown | None = _UNKNOWN
    if completion.startswith("[{{"):
        if _EMULATE_JSON_REPAIR:
            verdict = _score_doubled(completion, prepared)
            if verdict is not None:
                return verdict
    elif prepared.simple and "\\" not in completion:
        outcome = _score_clean_array(completion, prepared)
        if type(outcome) is ReferenceVerdict:
            return outcome
        if outcome is None:
            searched = None
    notes: list[str] = []
    try:
        extracted = _extract(completion, notes, searched)
        if prepared.simple and type(extracted) is list and extracted == prepared.items:
            # Equal to the gold plan step for step: already canonical (the gold steps have
            # exactly the canonical keys and value kinds), nothing left to normalise.
            return _equal_plan_verdict(extracted, prepared, notes)
        answer = extracted if extracted is _NO_ANSWER else _normalize(extracted, notes)
    except RecursionError as error:
        return _crashed(error, None, notes)
    except ValueError as error:  # int() in the coerce sort (quirk 15)
        return _crashed(error, None, notes)
    return _judge(answer, prepared, notes)


def _score_clean_array(completion: str, gold: GoldPlan) -> ReferenceVerdict | _Unknown | None:
    """The commonest cases start to finish, for a backslash-free completion and a simple gold
    plan: the text from the first ``[`` to the last ``]`` is a JSON array of step objects
    (plain JSON, a fence, prose around it, a wrapper object), or is one but for a comma after
    the last step (:func:`_score_trailing_comma`). Returns None when the text has no ``[``
    (so the array-of-objects regex cannot match), else ``_UNKNOWN`` when the general path has
    to decide.

    Why the span is the reference's answer without running its regex: when no string in the
    span holds a brace and objects nest at most two deep (shown by counting braces against
    the parsed objects below, or for unusual gold plans by :func:`_braces_are_shallow_objects`),
    the span's braces are exactly its objects' delimiters, as the regex understands objects,
    so the array-of-objects regex matches at the first ``[`` (the leftmost place any match can
    start), through exactly this array. With brackets balanced the reference isolates that
    match from the flattened text; otherwise its bracket-slice fallback takes this very span
    from the raw text. Both spellings parse to the same value: the raw span parses, so its
    newlines are all between tokens (JSON strings cannot hold raw newlines), where a space
    reads the same.
    """
    start = completion.find("[")
    if start < 0:
        return None
    end = completion.rfind("]") + 1
    if end <= start:
        return _UNKNOWN
    spelled = gold.spelled.get(end - start)
    if spelled is not None and completion.startswith(spelled[0], start):
        # The span is one of the gold plan's own spellings: everything below depends on the
        # completion only through the span and whether other text surrounds it.
        if (start and not completion[:start].isspace()) or (
            end < len(completion) and not completion[end:].isspace()
        ):
            return spelled[2]
        return spelled[1]
    last = end - 2  # the last character before the closing bracket that is not whitespace
    while last > start and completion[last] in " \t\n\r":
        last -= 1
    if completion[last] == ",":
        return _score_trailing_comma(completion, start, last, gold)
    first = start + 1  # the first character after the opening bracket that is not whitespace
    while first < last and completion[first] in " \t\n\r":
        first += 1
    if completion[first] != "{" or completion[last] != "}":
        return _UNKNOWN  # not an array of objects from the first [ to the last ]: don't parse
    plan = loads_or_invalid(completion[start:end])
    if type(plan) is not list or not plan:
        return _UNKNOWN
    items: list[Any] = gold.items  # type: ignore[assignment]
    same = list(map(eq, plan, items))
    counts = gold.step_objects
    canonical: bool | None = True
    if counts is None:
        if not _braces_are_shallow_objects(completion[start:end]):
            return _UNKNOWN
        canonical = None  # (still to check)
    else:
        # Count the objects: a step equal to its gold step holds as many as the gold step;
        # for the others count the step and its object members. If the span has exactly that
        # many braces of each kind, no string holds one and no object sits deeper (either
        # would add a brace the count does not include), so the braces are exactly the
        # objects' delimiters, at most two deep. (The same pass checks which steps are
        # canonical already: those equal to their gold step are.)
        objects = 0
        steps: Iterable[tuple[Any, bool, int]] = zip(plan, same, counts, strict=False)
        if len(plan) > len(items):
            steps = chain(steps, zip(plan[len(items) :], repeat(False), repeat(0)))
        for step, equal, count in steps:
            if equal:
                objects += count
                continue
            if type(step) is not dict:
                return _UNKNOWN
            objects += 1 + countOf(map(type, step.values()), dict)
            if canonical and (
                step.keys() != _CANONICAL_KEYS
                or type(step["inputs"]) is not dict
                or type(step["outputs"]) is not list
                or type(step["dependence"]) is not list
            ):
                canonical = False
        if completion.count("{", start, end) != objects:
            return _UNKNOWN
        if completion.count("}", start, end) != objects:
            return _UNKNOWN
    notes: list[str] = []
    if (start and not completion[:start].isspace()) or (
        end < len(completion) and not completion[end:].isspace()
    ):
        notes.append("plan array cut out of the surrounding text")
    return _verdict_for_parsed_steps(plan, gold, notes, same, canonical)


# Every byte except braces and double quotes (see _braces_are_shallow_objects).
_NOT_A_BRACE_OR_QUOTE: Final = bytes(b for b in range(256) if b not in b'{}"')


def _braces_are_shallow_objects(span: str) -> bool:
    """For a backslash-free JSON text: whether no string in it holds a brace and no object in
    it lies more than two objects deep - so that its braces are exactly the delimiters of its
    objects, which the isolation regexes read as objects.

    Without backslashes no string holds a quote, so quotes pair up as string delimiters, in
    order. Keep only quotes and braces: a string holds no brace exactly when its two quotes
    end up adjacent, and deleting adjacent quote pairs (one left-to-right pass) leaves no quote
    exactly when every string is like that - the first quote can only pair with its own
    closing quote, and so on. What remains is the brace structure of the objects, and one
    pass deleting adjacent ``{}`` pairs removes every innermost object: two passes empty it
    exactly when nothing nests deeper than two. (Non-ASCII characters encode to bytes
    >= 0x80, which the filter drops with everything else.)
    """
    word = span.encode("utf-8", "surrogatepass").translate(None, _NOT_A_BRACE_OR_QUOTE)
    if b'"' in word:
        word = word.replace(b'""', b"")
        if b'"' in word:
            return False
    return not word.replace(b"{}", b"").replace(b"{}", b"")


def _score_trailing_comma(
    completion: str, start: int, comma: int, gold: GoldPlan
) -> ReferenceVerdict | _Unknown:
    """Plans written with a comma after the last step (``[{...}, {...},]``, the comma at
    index ``comma``): the reference's answer is the array without that comma, tagged as a run
    of comma-separated objects (or, for one step, as a single object). ``_UNKNOWN`` when the
    argument below does not apply.

    Suppose the span without its last comma parses to an array of at least two objects, no
    string in it holds a bracket or a brace, it nests objects and arrays only as
    :data:`_SHALLOW_STRUCTURE` allows (objects at most two deep, no object inside an array
    below the top), the text before the first ``[`` has no brace, and the whole text balances
    its brackets. Then in the reference:

    * the array-of-objects regex finds nothing: at the first ``[`` it reads every step as an
      object but then meets the trailing comma where it needs ``]``; any other match would have
      to start at a ``[`` directly followed (after whitespace) by a ``{``, which only an array
      holding an object can provide (braces never occur inside strings), or would have to end
      at a ``]`` after the last one;
    * the run-of-objects regex first matches at the first step's ``{`` (no brace comes
      earlier) and takes every step (they are separated by commas and whitespace only), up to
      the trailing comma;
    * the reference parses ``[`` + that run + ``]``: the steps' text, newline runs flattened
      to spaces (outside strings, as the text parses), so the same value as the array parsed
      here.

    With a single step there is no run of objects, provided no brace follows the span either;
    the single-object stage then takes the first object, the step, and keeps it when its text
    contains ``"agent"`` and ``"step"``.
    """
    if comma <= start or "{" in completion[:start]:
        return _UNKNOWN
    candidate = completion[start:comma] + "]"
    plan = loads_or_invalid(candidate)
    if type(plan) is not list or not plan:
        return _UNKNOWN
    if len(plan) == 1:
        # No run of two objects anywhere (nothing but the step holds a brace), so the
        # single-object stage takes the step, if its text has "agent" and "step" in quotes.
        if "{" in completion[comma:] or '"agent"' not in candidate or '"step"' not in candidate:
            return _UNKNOWN
        note = "single step object wrapped into an array"
    else:
        note = "comma-separated step objects wrapped into an array"
    word = _bracket_structure(candidate)
    if word is None or _SHALLOW_STRUCTURE.fullmatch(word) is None:
        return _UNKNOWN
    if not _balanced_around(completion, start, candidate):
        return _UNKNOWN  # the reference would read the raw span with json-repair instead
    return _verdict_for_parsed_steps(plan, gold, [note])


# Every byte except brackets, braces and double quotes (see _bracket_structure).
_NOT_A_BRACKET_OR_QUOTE: Final = bytes(b for b in range(256) if b not in b'[]{}"')

# Arrays and objects nested as the isolation regexes read objects, with no object inside an
# array below the top: an array of objects, each holding arrays (of scalars) and objects
# (holding arrays of scalars besides scalars). Scalars leave no trace in the structure.
_SHALLOW_STRUCTURE: Final = re.compile(rb"\[(?:\{(?:\[\]|\{(?:\[\])*+\})*+\})++\]")


def _bracket_structure(text: str) -> bytes | None:
    """The brackets and braces of a backslash-free JSON text in order, when no string in it
    holds one (else None): exactly the nesting of its arrays and objects.

    Without backslashes no string holds a quote, so quotes pair up as string delimiters, in
    order. Keep only quotes, brackets and braces: a string holds none of them exactly when its
    two quotes end up adjacent, and deleting adjacent quote pairs (one left-to-right pass)
    leaves no quote exactly when every string is like that - the first quote can only pair
    with its own closing quote, and so on. (Non-ASCII characters encode to bytes >= 0x80,
    which the filter drops with everything else.)
    """
    word = text.encode("utf-8", "surrogatepass").translate(None, _NOT_A_BRACKET_OR_QUOTE)
    if b'"' in word:
        word = word.replace(b'""', b"")
        if b'"' in word:
            return None
    return word


def _balanced_around(completion: str, start: int, span: str) -> bool:
    """Whether the whole completion balances its brackets (quote 3), given that it holds
    ``span`` from ``start`` (up to a trailing comma and whitespace), a JSON text whose strings
    hold no bracket or brace. Such a span balances (), [] and {} on its own unless a string
    holds a parenthesis; and cutting a balanced block out of a text does not change whether
    the text balances, so then only the text around it needs checking."""
    if "(" in span or ")" in span:
        return _brackets_balanced(completion)
    end = completion.rfind("]") + 1
    around = completion[:start] + completion[end:]
    return not around or around.isspace() or _brackets_balanced(around)


def _verdict_for_parsed_steps(
    plan: list[Any],
    gold: GoldPlan,
    notes: list[str],
    same: list[bool] | None = None,
    canonical: bool | None = None,
) -> ReferenceVerdict | _Unknown:
    """Finish scoring a non-empty array as parsed, against a simple gold plan: the plan when
    every item is an object (quirk 8a), else ``_UNKNOWN``. Steps equal to their gold step are
    canonical already (the gold steps are); the others are checked, and canonicalised (quirk
    9) as :func:`_normalize` would. ``same`` (each step ``==`` its gold step) and
    ``canonical`` (every item is a canonical step object) are passed when already known."""
    items: list[Any] = gold.items  # type: ignore[assignment]
    if same is None:
        same = list(map(eq, plan, items))
    if len(plan) == len(items) and all(same):
        return _equal_plan_verdict(plan, gold, notes)
    if canonical is None:
        canonical = True
        for index, step in enumerate(plan):
            if index < len(same) and same[index]:
                continue
            if type(step) is not dict:
                return _UNKNOWN
            if canonical and (
                step.keys() != _CANONICAL_KEYS
                or type(step["inputs"]) is not dict
                or type(step["outputs"]) is not list
                or type(step["dependence"]) is not list
            ):
                canonical = False
    if not canonical:
        plan = _canonical_plan_if_all_objects(plan, notes)  # type: ignore[assignment]
        same = list(map(eq, plan, items))
    try:
        em, tools, params, deps, kind, where = _compare_simple(plan, gold, same)
    except Exception as error:  # the reference raises on exactly these inputs (quirk 15)
        return _crashed(error, plan, notes)
    repairs = tuple(dict.fromkeys(notes)) if notes else ()
    return _verdict((em, tools, params, deps, kind, where, plan, repairs, None))


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
        return _failed("empty_output", None, [], "no answer")
    try:
        value = json.loads(json.dumps(plan))
    except (TypeError, ValueError, RecursionError) as error:
        return _failed("format_error", None, [], f"the answer is not JSON-serialisable: {error}")
    if strict:
        problems: list[str] = []
        return _judge_strict(_strict_read(json.dumps(value), problems), prepared, problems)
    notes: list[str] = []
    try:
        answer = _normalize(value, notes)
    except (ValueError, RecursionError) as error:
        return _crashed(error, None, notes)
    return _judge(answer, prepared, notes)
