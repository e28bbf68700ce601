"""Shortcuts to the reference's verdict for the commonest answers, each proven to give what
extraction, parsing, shaping and comparison give (``tests/scoring/test_parity.py``): an
answer that is one of the gold plan's own spellings, a clean array of step objects, an array
spoiled only by a trailing comma, and a doubled-brace plan."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, repeat
from operator import countOf, eq
from typing import Any, Final

from plancheck.compiler.extraction.brackets import brackets_balanced
from plancheck.compiler.extraction.doubled_braces import (
    SPLIT,
    doubled_isolation,
    split_doubled_steps,
    undouble,
)
from plancheck.compiler.extraction.sentinels import NO_ANSWER, UNKNOWN, Unknown
from plancheck.fast_json import loads_or_invalid
from plancheck.scoring.reference.compare import compare_simple, crashed, equal_plan_verdict, judge
from plancheck.scoring.reference.prepared import GoldPlan
from plancheck.scoring.reference.shape import (
    INPUT_DROPPED,
    _recipe,
    canonical_plan_if_all_objects,
    normalize,
    note_bare_dependence,
)
from plancheck.scoring.reference.verdict import CANONICAL_KEYS, ReferenceVerdict, make_verdict


def score_doubled(completion: str, gold: GoldPlan) -> ReferenceVerdict | None:
    """Score a completion that is nothing but a doubled-brace plan (see
    :func:`extract_doubled`), or None when the general path has to. When json-repair reads
    the whole text, its pieces are canonicalised straight from each step's members
    (:func:`_canonical_doubled_pieces`), skipping the intermediate objects."""
    if not completion.endswith("}}]") or "\n" in completion:
        return None
    plan = undouble(completion)
    if plan is None:
        return None
    how, value = doubled_isolation(completion, plan)
    notes = [how, "json-repair mended the JSON"] if how else ["json-repair mended the JSON"]
    if value is SPLIT:
        pieces = _canonical_doubled_pieces(plan.steps, notes)
        if pieces is not None:
            return judge(pieces, gold, notes)
        value = split_doubled_steps(plan.steps)
        if value is NO_ANSWER:
            return None
    try:
        answer = normalize(value, notes)
    except (ValueError, RecursionError) as error:  # int() in the coerce sort (quirk 15)
        return crashed(error, None, notes)
    return judge(answer, gold, notes)


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
    notes: tuple[str, ...]  # every note canonical_step_slow would make, but a bare dependence
    bare_dependence: bool  # the dependence is present and not an array: note it


@lru_cache(maxsize=1024)
def _doubled_step_recipe(
    keys: tuple[str, ...], kinds: tuple[type, ...]
) -> tuple[_PieceRecipe, ...] | None:
    """The canonical pieces json-repair makes of a doubled-brace step with these member keys
    and value types (no empty object among them), as split_doubled_step and then
    canonical_step_slow build them; None when the step closes the array early."""
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
        notes += [n for n in recipe.dropped_notes if not (alias_used and n == INPUT_DROPPED)]
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
    """``normalize(split_doubled_steps(steps))`` for steps without empty object members of
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
                note_bare_dependence(dependence, notes)
    return plan


def score_clean_array(completion: str, gold: GoldPlan) -> ReferenceVerdict | Unknown | None:
    """The commonest cases start to finish, for a backslash-free completion and a simple gold
    plan: the text from the first ``[`` to the last ``]`` is a JSON array of step objects
    (plain JSON, a fence, prose around it, a wrapper object), or is one but for a comma after
    the last step (:func:`_score_trailing_comma`). Returns None when the text has no ``[``
    (so the array-of-objects regex cannot match), else ``UNKNOWN`` when the general path has
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
        return UNKNOWN
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
        return UNKNOWN  # not an array of objects from the first [ to the last ]: don't parse
    plan = loads_or_invalid(completion[start:end])
    if type(plan) is not list or not plan:
        return UNKNOWN
    items: list[Any] = gold.items  # type: ignore[assignment]
    same = list(map(eq, plan, items))
    counts = gold.step_objects
    canonical: bool | None = True
    if counts is None:
        if not _braces_are_shallow_objects(completion[start:end]):
            return UNKNOWN
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
                return UNKNOWN
            objects += 1 + countOf(map(type, step.values()), dict)
            if canonical and (
                step.keys() != CANONICAL_KEYS
                or type(step["inputs"]) is not dict
                or type(step["outputs"]) is not list
                or type(step["dependence"]) is not list
            ):
                canonical = False
        if completion.count("{", start, end) != objects:
            return UNKNOWN
        if completion.count("}", start, end) != objects:
            return UNKNOWN
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
) -> ReferenceVerdict | Unknown:
    """Plans written with a comma after the last step (``[{...}, {...},]``, the comma at
    index ``comma``): the reference's answer is the array without that comma, tagged as a run
    of comma-separated objects (or, for one step, as a single object). ``UNKNOWN`` when the
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
        return UNKNOWN
    candidate = completion[start:comma] + "]"
    plan = loads_or_invalid(candidate)
    if type(plan) is not list or not plan:
        return UNKNOWN
    if len(plan) == 1:
        # No run of two objects anywhere (nothing but the step holds a brace), so the
        # single-object stage takes the step, if its text has "agent" and "step" in quotes.
        if "{" in completion[comma:] or '"agent"' not in candidate or '"step"' not in candidate:
            return UNKNOWN
        note = "single step object wrapped into an array"
    else:
        note = "comma-separated step objects wrapped into an array"
    word = _bracket_structure(candidate)
    if word is None or _SHALLOW_STRUCTURE.fullmatch(word) is None:
        return UNKNOWN
    if not _balanced_around(completion, start, candidate):
        return UNKNOWN  # the reference would read the raw span with json-repair instead
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
        return brackets_balanced(completion)
    end = completion.rfind("]") + 1
    around = completion[:start] + completion[end:]
    return not around or around.isspace() or brackets_balanced(around)


def _verdict_for_parsed_steps(
    plan: list[Any],
    gold: GoldPlan,
    notes: list[str],
    same: list[bool] | None = None,
    canonical: bool | None = None,
) -> ReferenceVerdict | Unknown:
    """Finish scoring a non-empty array as parsed, against a simple gold plan: the plan when
    every item is an object (quirk 8a), else ``UNKNOWN``. Steps equal to their gold step are
    canonical already (the gold steps are); the others are checked, and canonicalised (quirk
    9) as :func:`normalize` would. ``same`` (each step ``==`` its gold step) and
    ``canonical`` (every item is a canonical step object) are passed when already known."""
    items: list[Any] = gold.items  # type: ignore[assignment]
    if same is None:
        same = list(map(eq, plan, items))
    if len(plan) == len(items) and all(same):
        return equal_plan_verdict(plan, gold, notes)
    if canonical is None:
        canonical = True
        for index, step in enumerate(plan):
            if index < len(same) and same[index]:
                continue
            if type(step) is not dict:
                return UNKNOWN
            if canonical and (
                step.keys() != CANONICAL_KEYS
                or type(step["inputs"]) is not dict
                or type(step["outputs"]) is not list
                or type(step["dependence"]) is not list
            ):
                canonical = False
    if not canonical:
        plan = canonical_plan_if_all_objects(plan, notes)  # type: ignore[assignment]
        same = list(map(eq, plan, items))
    try:
        em, tools, params, deps, kind, where = compare_simple(plan, gold, same)
    except Exception as error:  # the reference raises on exactly these inputs (quirk 15)
        return crashed(error, plan, notes)
    repairs = tuple(dict.fromkeys(notes)) if notes else ()
    return make_verdict((em, tools, params, deps, kind, where, plan, repairs, None))
