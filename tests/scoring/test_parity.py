"""Parity of plancheck's reference scorer with the DisasterBench reference evaluator.

* every shared parity case (verdicts recorded from the reference) scores identically;
* every generated completion scores as ``tests/data/reference_verdicts.jsonl.gz`` recorded
  (``scripts/record_reference_verdicts.py`` ran the reference on the same completions);
* the json-repair emulations agree with json-repair itself on random inputs;
* properties: the metric relations that hold in the reference hold here, scoring never
  raises, strict mode rejects exactly the leniencies.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_repair import repair_json

from plancheck.build_info import build_info
from plancheck.compiler.extraction import (
    doubled_braces,
    escaped_newlines,
    lenient_json,
    mend,
    prefixed_plan,
)
from plancheck.compiler.extraction.sentinels import NO_ANSWER
from plancheck.corpus.paths import DATA_ENV, parity_cases_path, release_dir
from plancheck.scoring.reference import (
    CRASH_ERROR_TYPE,
    FPOF_ERROR_TYPES,
    GoldPlan,
    ReferenceVerdict,
    prepare_gold,
    score_completion,
    score_plan,
)
from tests.support.completions import (
    EDGE_KINDS,
    MUTATIONS,
    STYLES,
    generate_completions,
    generate_edge_completions,
    load_gold_tasks,
    make_completion,
)

VERDICTS = Path(__file__).parents[1] / "data" / "reference_verdicts.jsonl.gz"
EDGE_VERDICTS = Path(__file__).parents[1] / "data" / "reference_verdicts_edge.jsonl.gz"

# A small made-up plan for tests that need a gold plan but not the release.
TOY_GOLD: list[dict[str, Any]] = [
    {
        "agent": "Weather_Degraded_Image_Restoration",
        "step": 0,
        "dependence": [-1],
        "dependence_content": None,
        "inputs": {"weather_degraded_image_path": "/data/storm/frame_07.jpg"},
        "outputs": ["restored_image_path"],
    },
    {
        "agent": "Crowd_Counting_in_Adverse_Weather",
        "step": 1,
        "dependence": [0],
        "dependence_content": {"0": ["restored_image_path"]},
        "inputs": {"image_path": "<GENERATED>-0-<restored_image_path>"},
        "outputs": ["crowd_count_path", "density_map_path"],
    },
]


def _required(path: Path, what: str) -> Path:
    """The data file, or skip (fail when PLANCHECK_DATA says the data should be there)."""
    if path.is_file():
        return path
    message = f"{what} not found at {path}"
    if os.environ.get(DATA_ENV):
        pytest.fail(message + f" although {DATA_ENV} is set")
    pytest.skip(message)


@pytest.fixture(scope="module")
def gold_tasks() -> list[tuple[int, list[Any]]]:
    return load_gold_tasks(_required(release_dir() / "benchmark.jsonl", "benchmark.jsonl"))


@pytest.fixture(scope="module")
def golds(gold_tasks: list[tuple[int, list[Any]]]) -> dict[int, GoldPlan]:
    return {task_id: prepare_gold(plan) for task_id, plan in gold_tasks}


def _report(mismatches: list[str]) -> str:
    return f"{len(mismatches)} mismatches, e.g.:\n" + "\n".join(mismatches[:10])


# --------------------------------------------------------------------------------------------
# Differential parity
# --------------------------------------------------------------------------------------------


def test_shared_parity_cases_score_like_the_reference(golds: dict[int, GoldPlan]) -> None:
    cases_path = _required(parity_cases_path(), "parity cases")
    mismatches = []
    checked = 0
    with cases_path.open(encoding="utf-8") as lines:
        for line in lines:
            case = json.loads(line)
            got = score_completion(case["completion"], golds[case["task_id"]]).metrics()
            checked += 1
            if got != case["expected"]:
                mismatches.append(
                    f"{case['id']} ({case['mutation']}/{case['style']}): "
                    f"got {got}, reference {case['expected']}"
                )
    assert checked >= 6000
    assert not mismatches, _report(mismatches)


def _recorded(path: Path = VERDICTS) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        header = json.loads(next(lines))
        return header, {row["id"]: row["expected"] for row in map(json.loads, lines)}


def test_generated_completions_score_as_recorded(
    gold_tasks: list[tuple[int, list[Any]]], golds: dict[int, GoldPlan]
) -> None:
    header, expected = _recorded()
    assert header["json_repair"] == "0.64.6"
    assert header["tasks"] == len(gold_tasks) == 233
    seen: set[str] = set()
    pairs: Counter[tuple[str, str]] = Counter()
    mismatches = []
    for item in generate_completions(gold_tasks, per_task=header["per_task"], seed=header["seed"]):
        seen.add(item.id)
        pairs[(item.mutation, item.style)] += 1
        want = expected.get(item.id)
        got = score_completion(item.completion, golds[item.task_id]).metrics()
        if got != want:
            mismatches.append(
                f"{item.id} ({item.mutation}/{item.style}): got {got}, recorded {want}"
            )
    assert seen == set(expected), "the generator no longer reproduces the recorded ids"
    assert len(seen) >= 6000
    assert {m for m, _ in pairs} == set(MUTATIONS)
    assert {s for _, s in pairs} == set(STYLES)
    assert all(pairs[(m, s)] for m in MUTATIONS for s in STYLES)
    assert not mismatches, _report(mismatches)


def test_edge_completions_score_as_recorded(
    gold_tasks: list[tuple[int, list[Any]]], golds: dict[int, GoldPlan]
) -> None:
    # Completions right at the borders of the scorer's shortcuts (braces inside strings,
    # objects nested deeper than the isolation regexes read, trailing commas, prose with
    # brackets, "[1] prose [plan]", doubled braces around odd strings), with verdicts recorded
    # from the reference (scripts/record_reference_verdicts.py --edge).
    header, expected = _recorded(EDGE_VERDICTS)
    assert header["json_repair"] == "0.64.6"
    assert header["tasks"] == len(gold_tasks)
    kinds: Counter[str] = Counter()
    mismatches = []
    for item in generate_edge_completions(gold_tasks, count=header["count"], seed=header["seed"]):
        kinds[item.style] += 1
        want = expected.get(item.id)
        got = score_completion(item.completion, golds[item.task_id]).metrics()
        if got != want:
            mismatches.append(f"{item.id} ({item.style}): got {got}, recorded {want}")
    assert len(expected) == header["count"] >= 3000
    assert set(kinds) == {f"edge:{kind}" for kind in EDGE_KINDS}
    assert not mismatches, _report(mismatches)


def test_recorded_verdicts_exercise_every_outcome() -> None:
    _, expected = _recorded()
    kinds = Counter(verdict["fpof_type"] for verdict in expected.values())
    assert set(kinds) >= (FPOF_ERROR_TYPES - {"format_error"}) | {None, CRASH_ERROR_TYPE}


# --------------------------------------------------------------------------------------------
# The json-repair emulations, against json-repair
# --------------------------------------------------------------------------------------------

_KEYS = [
    "agent",
    "step",
    "dependence",
    "dependence_content",
    "inputs",
    "outputs",
    "agent_name",
    "step_index",
    "a",
    "b",
    "k",
]
_STRINGS = [
    "x",
    "/data/a b.tif",
    "agent",
    "step",
    "",
    "a,b: c",
    "[x]",
    "(y",
    "it's",
    "<G>-0",
    "None",
    "true",
    "C#",
    "éa",
]


def _random_scalar(rng: random.Random) -> Any:
    return rng.choice([*_STRINGS, 0, 1, -1, 2.5, 1e-05, 10**20, True, False, None])


def _random_member(rng: random.Random, empty_objects: float) -> Any:
    roll = rng.random()
    if roll < 0.35:
        return _random_scalar(rng)
    if roll < 0.6:
        return [_random_scalar(rng) for _ in range(rng.randint(0, 3))]
    if roll < 0.6 + empty_objects:
        return {}
    return {
        rng.choice([*_KEYS, "0", "1"]): rng.choice(
            [_random_scalar(rng), [_random_scalar(rng) for _ in range(rng.randint(0, 2))]]
        )
        for _ in range(rng.randint(1, 3))
    }


def _random_doubled_plans(count: int, seed: int) -> Iterator[str]:
    rng = random.Random(seed)
    for _ in range(count):
        steps = [
            {key: _random_member(rng, 0.15) for key in rng.sample(_KEYS, rng.randint(1, 7))}
            for _ in range(rng.randint(1, 5))
        ]
        yield json.dumps(steps).replace("{", "{{").replace("}", "}}")


def test_doubled_brace_emulation_matches_json_repair() -> None:
    checked = 0
    for text in _random_doubled_plans(4000, seed=1):
        emulated = doubled_braces.mend_doubled_braces(text)
        if emulated is NO_ANSWER:
            continue
        checked += 1
        assert json.dumps(emulated) == json.dumps(json.loads(repair_json(text))), text
    assert checked > 800


def test_doubled_brace_emulation_declines_strings_holding_braces() -> None:
    # json-repair keeps a string's doubled braces ("a}}b"), which undoubling would lose: the
    # emulation must leave every such text to json-repair (or agree with it).
    rng = random.Random(3)
    checked = declined = 0
    for _ in range(1500):
        steps = [
            {key: _random_member(rng, 0.1) for key in rng.sample(_KEYS, rng.randint(1, 5))}
            for _ in range(rng.randint(1, 4))
        ]
        step = rng.choice(steps)
        step[rng.choice(_KEYS)] = rng.choice(["a}b", "}", "{", "x{y}z", "}{"])
        text = json.dumps(steps).replace("{", "{{").replace("}", "}}")
        emulated = doubled_braces.mend_doubled_braces(text)
        if emulated is NO_ANSWER:
            declined += 1
            continue
        checked += 1
        assert json.dumps(emulated) == json.dumps(json.loads(repair_json(text))), text
    assert declined > 1000


def _reference_shaping(value: Any) -> Any:
    """The plan the reference's "dp" shaping takes from a parsed value, in the two cases the
    prefixed-plan emulation covers (quirk 8a and 8b); None otherwise."""
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return value
    for item in value if isinstance(value, list) else []:
        if (
            isinstance(item, list)
            and item
            and all(isinstance(step, dict) and "agent" in step and "step" in step for step in item)
        ):
            return item
    return None


@pytest.mark.slow
def test_prefixed_plan_emulation_matches_json_repair(
    gold_tasks: list[tuple[int, list[Any]]],
) -> None:
    # "[1] some prose\n[{...}]": the bracket-slice fallback's candidate when the prose around
    # a plan does not balance. json-repair reads [first, plan] (or plan); the shaping takes plan.
    rng = random.Random(4)
    token_chars = "ab v12 Z"
    prose_chars = "see the tool list.:;!?-, \n\t0123"
    checked = 0
    for index in range(2500):
        _, gold = rng.choice(gold_tasks)
        plan = json.loads(make_completion(gold, rng.choice(MUTATIONS), "raw", seed=index))
        if plan and rng.random() < 0.4:  # empty containers and strings inside the plan
            rng.choice(plan)[rng.choice(["outputs", "inputs", "x"])] = rng.choice([[], {}, ""])
        text = (
            json.dumps(plan, indent=rng.choice([None, 2]))
            if rng.random() < 0.6
            else _lenient_render(plan, rng)
        )
        token = "".join(rng.choice(token_chars) for _ in range(rng.choice([0, 1, 2, 5])))
        prose = "".join(rng.choice(prose_chars) for _ in range(rng.choice([0, 1, 8, 30])))
        candidate = f"[{token}]{prose}{text}"
        if prefixed_plan.PREFIX_TOKEN_AND_PROSE.match(candidate):
            # Such texts skip the other emulations: they must read none of them.
            assert lenient_json.mend_lenient_json(candidate) is NO_ANSWER, candidate
            assert doubled_braces.mend_doubled_braces(candidate) is NO_ANSWER
            assert escaped_newlines.mend_escaped_newlines(candidate) is NO_ANSWER
        emulated = prefixed_plan.mend_prefixed_plan(candidate)
        if emulated is NO_ANSWER:
            continue
        checked += 1
        repaired = json.loads(repair_json(candidate))
        shaped = _reference_shaping(repaired)
        assert shaped is not None, candidate
        assert json.dumps(_reference_shaping(emulated)) == json.dumps(shaped), candidate
        # Same route through the shaping: the plan itself (8a) or found inside (8b).
        assert (emulated == shaped) == (repaired == shaped), candidate
    assert checked > 1500


def _lenient_render(value: Any, rng: random.Random) -> str:
    from tests.support.completions import _bare_keys, _python_constants, _python_literal

    text = rng.choice(
        [_python_literal, _bare_keys, _python_constants, lambda v: json.dumps(v, indent=2)]
    )(value)
    if rng.random() < 0.3:  # trailing commas
        text = re.sub(r"([\]}])", lambda m: ("," if rng.random() < 0.3 else "") + m.group(1), text)
    if rng.random() < 0.3:  # cut off after an inner "]", as the reference's slice does
        cut = text.rfind("]", 0, max(1, len(text) - 1))
        text = text[: cut + 1] if cut > 0 else text
    return text


def test_trailing_comma_shortcut_is_the_general_rewrite(
    gold_tasks: list[tuple[int, list[Any]]],
) -> None:
    """The cheap reading of "JSON but for commas before closers" gives exactly what the
    general lenient rewrite gives, or declines."""
    rng = random.Random(9)
    taken = 0
    for _ in range(3000):
        _, plan = rng.choice(gold_tasks)
        value: Any = json.loads(json.dumps(plan))
        if value and rng.random() < 0.3:  # strings holding commas before closers, quotes
            rng.choice(value)["note"] = rng.choice(["a,]", "x, }", ",", "it's", "[1,]", "NaN"])
        text = json.dumps(value, indent=rng.choice([None, 2]))
        if rng.random() < 0.5:
            text = re.sub(
                r"([\]}])", lambda m: ("," if rng.random() < 0.4 else "") + m.group(1), text
            )
        if rng.random() < 0.3:
            text = re.sub(r"\btrue\b", "True", text)
        if rng.random() < 0.3:
            cut = text.rfind("]", 0, max(1, len(text) - 1))
            text = text[: cut + 1] if cut > 0 else text
        shortcut = lenient_json.json_but_commas_before_closers(text)
        if shortcut is None:
            continue
        taken += 1
        assert shortcut[0] == lenient_json.strictify(text)[0], text
    assert taken > 1000


@pytest.mark.slow
def test_lenient_json_emulation_matches_json_repair(
    gold_tasks: list[tuple[int, list[Any]]],
) -> None:
    rng = random.Random(2)
    checked = 0
    for _ in range(3000):
        if rng.random() < 0.5:
            _, plan = rng.choice(gold_tasks)
            value: Any = json.loads(json.dumps(plan))
            if value and rng.random() < 0.5:
                value[rng.randrange(len(value))]["extra"] = _random_member(rng, 0.1)
        else:
            value = [_random_member(rng, 0.1) for _ in range(rng.randint(0, 3))]
        text = _lenient_render(value, rng)
        emulated = lenient_json.mend_lenient_json(text)
        if emulated is NO_ANSWER:
            continue
        checked += 1
        assert json.dumps(emulated) == json.dumps(json.loads(repair_json(text))), text
    assert checked > 1000


@pytest.mark.slow
def test_lenient_json_emulation_keeps_empty_object_values(
    gold_tasks: list[tuple[int, list[Any]]],
) -> None:
    # An empty array, object or string as an object's value may stand anywhere (before "}",
    # before whitespace, at a cut-off end): json-repair only drops empty *array items*.
    rng = random.Random(7)
    checked = with_empty_values = 0
    for _ in range(2500):
        _, gold = rng.choice(gold_tasks)
        plan: Any = json.loads(json.dumps(gold))
        for step in rng.sample(plan, rng.randint(1, len(plan))):
            key = rng.choice([*step, "extra"])
            step[key] = rng.choice([[], {}, "", [[]], [{}], {"a": []}, [[], 1], ["", "x"]])
            if rng.random() < 0.5:  # move it to the end of its object
                step[key] = step.pop(key)
        text = _lenient_render(plan, rng)
        emulated = lenient_json.mend_lenient_json(text)
        if emulated is NO_ANSWER:
            continue
        checked += 1
        with_empty_values += re.search(r':\s*(?:\[\s*\]|\{\s*\}|"")(?![,\]])', text) is not None
        assert json.dumps(emulated) == json.dumps(json.loads(repair_json(text))), text
    assert checked > 800
    assert with_empty_values > 400


# Pretty-printed plans whose newlines were written as backslash + n: the reference deletes the
# backslashes, its single-object regex isolates the first step, and json-repair reads
# "[" + step + "]" with every newline an "n" of junk.
_ESCAPED_STRINGS = [
    *_STRINGS,
    "a b ",
    " lead",
    "x, y",
    "it's, ok",
    "a, b: c",
    "null x",
    "TRUE)",
    "nullable",
    "2nd",
    "-1",
    "#tag",
    "<step0.out>",
    "{x}",
    "`q`",
]


def _escaped_scalar(rng: random.Random) -> Any:
    return rng.choice(
        [*_ESCAPED_STRINGS, 0, 1, -1, -23, 10**20, 2.5, -1.5, 1e-05, -0.0, True, False, None]
    )


def _escaped_member(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if roll < 0.4:
        return _escaped_scalar(rng)
    if roll < 0.7 or depth:
        return [_escaped_scalar(rng) for _ in range(rng.choice([0, 1, 1, 2, 3, 5]))]
    return {
        rng.choice([*_KEYS, "0", "1", "_x", "a b", ":k"]): _escaped_member(rng, 1)
        for _ in range(rng.choice([0, 1, 2, 3]))
    }


def _escaped_candidate(step: dict[str, Any], unit: str, base: str) -> str:
    """What the reference hands json-repair for a step of a plan written with escaped
    newlines: its text, laid out at the base indentation, the newlines now the letter n."""
    return "[" + json.dumps(step, indent=unit).replace("\n", "n" + base) + "]"


def test_escaped_newline_emulation_matches_json_repair(
    gold_tasks: list[tuple[int, list[Any]]],
) -> None:
    rng = random.Random(5)
    checked = declined = 0
    for index in range(3000):
        unit = rng.choice([" ", "  ", "  ", "    ", "\t", " \t"])
        base = unit * rng.choice([1, 1, 2]) if rng.random() < 0.9 else rng.choice([" ", "\t"])
        if index % 3 == 0:
            _, gold = rng.choice(gold_tasks)
            plan = json.loads(make_completion(gold, rng.choice(MUTATIONS), "raw", seed=index))
            if type(plan) is not list or not plan or type(plan[0]) is not dict or not plan[0]:
                continue
            step = plan[0]
        else:
            keys = rng.sample([*_KEYS, "0", "_x", "a b", ",k", " k"], rng.randint(1, 7))
            step = {key: _escaped_member(rng, 0) for key in keys}
        text = _escaped_candidate(step, unit, base)
        if "\\" in text:
            continue  # strings needing escapes: the reference would have deleted a backslash
        emulated = escaped_newlines.mend_escaped_newlines(text)
        if emulated is NO_ANSWER:
            declined += 1
            continue
        checked += 1
        assert json.dumps(emulated) == json.dumps(json.loads(repair_json(text))), text
    assert checked > 1000
    assert declined > 300  # the generator does reach the shapes left to json-repair


def test_escaped_newline_emulation_covers_gold_steps(
    gold_tasks: list[tuple[int, list[Any]]],
) -> None:
    # Every step of every gold plan, as json.dumps(plan, indent=...) lays it out once its
    # "\n"s have lost their backslashes: the realistic shape, emulated without exception.
    checked = 0
    for _, gold in gold_tasks:
        for unit, step in zip([" ", "  ", "    ", "\t"] * len(gold), gold, strict=False):
            text = _escaped_candidate(step, unit, unit)
            emulated = escaped_newlines.mend_escaped_newlines(text)
            assert emulated is not NO_ANSWER, text
            checked += 1
            if checked % 4 == 0:
                assert json.dumps(emulated) == json.dumps(json.loads(repair_json(text))), text
    assert checked >= 590


def test_escaped_newline_completions_score_as_with_json_repair(
    gold_tasks: list[tuple[int, list[Any]]],
    golds: dict[int, GoldPlan],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The whole route (flattening, isolation, emulation, shaping, comparison) for realistic
    # completions with escaped newlines scores exactly as with json-repair itself.
    if "plancheck.compiler.extraction.mend" in build_info().compiled:
        pytest.skip("patches functions of the reference module, which compiled code calls "
                    "directly; .ci/run runs it on the plain-Python build")
    rng = random.Random(6)
    items = []
    for index in range(400):
        task_id, gold = rng.choice(gold_tasks)
        mutation = rng.choice(MUTATIONS)
        plan = json.loads(make_completion(gold, mutation, "raw", seed=index))
        unit = rng.choice([1, 2, 4, "\t"])
        items.append((task_id, json.dumps(plan, indent=unit).replace("\n", "\\n")))
    calls = Counter[str]()

    def counted(text: str) -> str:
        calls["repair_json"] += 1
        return repair_json(text)

    monkeypatch.setattr(mend, "repair_json", counted)
    emulated = [score_completion(text, golds[task_id]) for task_id, text in items]
    assert calls["repair_json"] < len(items) // 10  # the emulation read nearly all of them
    monkeypatch.setattr(mend, "mend_escaped_newlines", lambda _: NO_ANSWER)
    calls.clear()
    for (task_id, text), verdict in zip(items, emulated, strict=True):
        assert score_completion(text, golds[task_id]) == verdict, text
    assert calls["repair_json"] > len(items) // 2  # ... which json-repair read here


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

_JUNK = [
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    '"',
    "'",
    "\\",
    "\n",
    ",",
    ":",
    "{{",
    "}}",
    "\\n",
    "null",
    '"agent"',
    '"step"',
    "[{",
    "}]",
    "0.0",
    "True",
]


def _damage(text: str, rng: random.Random) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(chars) + 1)
        roll = rng.random()
        if roll < 0.5 or not chars:
            chars.insert(at, rng.choice(_JUNK))
        elif roll < 0.8:
            del chars[min(at, len(chars) - 1)]
        else:
            chars[min(at, len(chars) - 1)] = rng.choice(_JUNK)
    return "".join(chars)


def _number_types_exact(prediction: list[Any] | None) -> bool:
    """No float or bool where the gold has ints (steps, dependence members): exactly where
    the reference's plain == and its type-exact equality can disagree."""
    for step in prediction or []:
        members = (
            step["dependence"] if isinstance(step["dependence"], list) else [step["dependence"]]
        )
        for value in [step["step"], *members]:
            if isinstance(value, (bool, float)):
                return False
    return True


def _check_relations(verdict: ReferenceVerdict, gold: list[Any]) -> None:
    # What always holds in the reference (docstring quirk 18).
    if verdict.em:
        assert verdict.param_acc
    if verdict.param_acc or verdict.dep_acc:
        assert verdict.tool_acc
    assert (verdict.fpof_type is None) == (verdict.param_acc and verdict.dep_acc)
    # EM and "no failure point" only part ways through int/float/bool confusion.
    if _number_types_exact(verdict.prediction):
        assert verdict.em == (verdict.fpof_type is None)
    assert verdict.fpof_type in FPOF_ERROR_TYPES | {None, CRASH_ERROR_TYPE}
    assert (verdict.fpof_step is None) == (verdict.fpof_type is None)
    if verdict.fpof_type in {"empty_output", "format_error", CRASH_ERROR_TYPE}:
        assert verdict.fpof_step == 0
        assert not (verdict.em or verdict.tool_acc or verdict.param_acc or verdict.dep_acc)
    if verdict.fpof_type == "early_stop":
        assert verdict.prediction is not None
        assert verdict.fpof_step == len(verdict.prediction) + 1
    if verdict.fpof_type == "hallucinated_extra_steps":
        assert verdict.fpof_step == len(gold) + 1
    if verdict.fpof_type == "empty_output":
        assert verdict.prediction is None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    task=st.integers(min_value=0, max_value=232),
    mutation=st.sampled_from(MUTATIONS),
    style=st.sampled_from(STYLES),
    seed=st.integers(min_value=0, max_value=10**6),
    damaged=st.booleans(),
)
def test_metric_relations_hold_on_mutated_and_damaged_completions(
    gold_tasks: list[tuple[int, list[Any]]],
    task: int,
    mutation: str,
    style: str,
    seed: int,
    damaged: bool,
) -> None:
    _, gold = gold_tasks[task % len(gold_tasks)]
    text = make_completion(gold, mutation, style, seed=seed)
    if damaged:
        text = _damage(text, random.Random(seed))
    verdict = score_completion(text, gold)
    _check_relations(verdict, gold)
    if not damaged and mutation != "mixed_dependence":
        # Only a number next to a string in one dependence list makes the reference crash.
        assert verdict.fpof_type in FPOF_ERROR_TYPES | {None}


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "agent",
                    "step",
                    "dependence",
                    "dependence_content",
                    "inputs",
                    "outputs",
                    "step_index",
                    "agent_name",
                    "plan",
                    "x",
                ]
            )
            | st.text(max_size=4),
            inner,
            max_size=6,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.characters() | st.sampled_from(_JUNK), max_size=120).map("".join))
def test_scoring_arbitrary_text_never_raises(text: str) -> None:
    for strict in (False, True):
        verdict = score_completion(text, TOY_GOLD, strict=strict)
        _check_relations(verdict, TOY_GOLD)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(value=_json_values)
def test_scoring_arbitrary_json_never_raises(value: Any) -> None:
    for strict in (False, True):
        for verdict in (
            score_completion(json.dumps(value), TOY_GOLD, strict=strict),
            score_completion(json.dumps(value, indent=1), TOY_GOLD, strict=strict),
            score_plan(value, TOY_GOLD, strict=strict),
        ):
            _check_relations(verdict, TOY_GOLD)


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(_json_values, max_size=4))
def test_scoring_arbitrary_plans_against_arbitrary_golds_never_raises(steps: list[Any]) -> None:
    score_plan(steps, steps)
    score_completion(json.dumps(steps), json.dumps(steps))
    score_completion(json.dumps(TOY_GOLD), steps)


# --------------------------------------------------------------------------------------------
# The documented quirks, one by one
# --------------------------------------------------------------------------------------------


def _toy(**changes: Any) -> list[dict[str, Any]]:
    plan = json.loads(json.dumps(TOY_GOLD))
    for key, value in changes.items():
        index, field = key.split("__")
        plan[int(index[1:])][field] = value
    return plan


def test_gold_can_be_given_as_plan_text_or_prepared() -> None:
    text = make_completion(TOY_GOLD, "swap_agent", "cot", seed=3)
    verdicts = [
        score_completion(text, gold)
        for gold in (TOY_GOLD, json.dumps(TOY_GOLD), prepare_gold(TOY_GOLD))
    ]
    assert verdicts[0] == verdicts[1] == verdicts[2]
    assert prepare_gold(prepare_gold(TOY_GOLD)) is prepare_gold(TOY_GOLD)


def test_exact_copy_is_perfect() -> None:
    verdict = score_completion(json.dumps(TOY_GOLD), TOY_GOLD)
    assert verdict.metrics() == {
        "em": True,
        "tool_acc": True,
        "param_acc": True,
        "dep_acc": True,
        "fpof_type": None,
        "fpof_step": None,
    }
    assert verdict.prediction == TOY_GOLD
    assert verdict.repairs == ()


def test_float_step_is_no_exact_match_yet_has_no_failure_point() -> None:
    verdict = score_plan(_toy(s0__step=0.0), TOY_GOLD)
    assert (verdict.em, verdict.tool_acc, verdict.param_acc, verdict.dep_acc) == (
        False,
        True,
        True,
        True,
    )
    assert verdict.fpof_type is None


def test_float_dependence_is_an_exact_match_but_a_dependency_error() -> None:
    verdict = score_plan(_toy(s1__dependence=[0.0]), TOY_GOLD)
    assert verdict.em and not verdict.dep_acc
    assert (verdict.fpof_type, verdict.fpof_step) == ("dependency_error", 1)


def test_bare_dependence_reads_as_a_list() -> None:
    verdict = score_plan(_toy(s0__dependence=-1), TOY_GOLD)
    assert verdict.em
    assert "dependence -1 read as [-1]" in verdict.repairs


def test_unsortable_dependence_is_recorded_as_a_crash() -> None:
    verdict = score_plan(_toy(s1__dependence=[0, "0"]), TOY_GOLD)
    assert (verdict.fpof_type, verdict.fpof_step) == (CRASH_ERROR_TYPE, 0)
    assert verdict.problem is not None and "TypeError" in verdict.problem


def test_reordered_outputs_are_a_parameter_error() -> None:
    verdict = score_plan(_toy(s1__outputs=["density_map_path", "crowd_count_path"]), TOY_GOLD)
    assert not verdict.param_acc and verdict.dep_acc
    assert (verdict.fpof_type, verdict.fpof_step) == ("parameter_error", 1)


def test_backslashes_are_deleted_before_isolation() -> None:
    # The reference strips every backslash, so an escaped quote ends the string early and
    # the text only parses after json-repair; "\n" inside a string becomes a plain "n".
    plan = _toy(s0__inputs={"weather_degraded_image_path": "/data/storm\nframe_07.jpg"})
    verdict = score_completion(json.dumps(plan), TOY_GOLD)
    assert verdict.prediction is not None
    assert verdict.prediction[0]["inputs"] == {
        "weather_degraded_image_path": "/data/stormnframe_07.jpg"
    }
    assert "backslashes deleted before parsing" in verdict.repairs


def test_wrappers_aliases_and_extra_keys_are_lenient_notes() -> None:
    aliased = [
        {
            "agent_name": s["agent"],
            "step_index": s["step"],
            "dependencies": s["dependence"],
            "dependence_content": s["dependence_content"],
            "input": s["inputs"],
            "outputs": s["outputs"],
            "reason": "why",
        }
        for s in TOY_GOLD
    ]
    verdict = score_completion(
        json.dumps({"thoughts": "...", "structured_plan": aliased}), TOY_GOLD
    )
    assert verdict.em
    for note in (
        "alias key `agent_name` read as `agent`",
        "alias key `input` read as `inputs`",
        "extra key `reason` dropped",
    ):
        assert note in verdict.repairs


def test_degenerate_answers() -> None:
    assert score_completion(None, TOY_GOLD).fpof_type == "empty_output"
    assert score_completion("no plan here", TOY_GOLD).fpof_type == "empty_output"
    empty = score_completion("[]", TOY_GOLD)
    assert (empty.fpof_type, empty.fpof_step, empty.prediction) == ("early_stop", 1, [])
    longer = score_plan([*TOY_GOLD, TOY_GOLD[0]], TOY_GOLD)
    assert (longer.fpof_type, longer.fpof_step) == ("hallucinated_extra_steps", 3)
    assert score_plan({"not": "a plan"}, TOY_GOLD).fpof_type == "format_error"


def test_score_plan_agrees_with_scoring_its_json_text(
    gold_tasks: list[tuple[int, list[Any]]],
) -> None:
    for task_id, gold in gold_tasks[:60]:
        for mutation in MUTATIONS:
            text = make_completion(gold, mutation, "raw", seed=task_id)
            plan = json.loads(text)
            assert score_plan(plan, gold).metrics() == score_completion(text, gold).metrics()


# --------------------------------------------------------------------------------------------
# Strict mode
# --------------------------------------------------------------------------------------------

_LENIENT_ONLY = [
    ("identity", "cot"),
    ("identity", "wrapped"),
    ("identity", "single_quotes"),
    ("identity", "unquoted_keys"),
    ("identity", "python_literals"),
    ("identity", "prose_brackets"),
    ("aliases", "raw"),
    ("extra_key", "pretty"),
    ("bare_int_dependence", "raw"),
]


@pytest.mark.parametrize(("mutation", "style"), _LENIENT_ONLY)
def test_strict_mode_rejects_what_only_leniency_accepts(mutation: str, style: str) -> None:
    text = make_completion(TOY_GOLD, mutation, style, seed=5)
    lenient = score_completion(text, TOY_GOLD)
    strict = score_completion(text, TOY_GOLD, strict=True)
    assert lenient.em, (text, lenient)
    assert lenient.repairs or mutation == "identity"
    assert not strict.em
    assert strict.fpof_type == "format_error"
    assert strict.repairs == ()
    assert strict.problem


def test_strict_mode_trailing_comma_and_repairs() -> None:
    text = json.dumps(TOY_GOLD, indent=2)[: -len("}\n]")] + "},\n]"
    assert score_completion(text, TOY_GOLD).em
    assert score_completion(text, TOY_GOLD, strict=True).fpof_type == "format_error"
    cut = json.dumps(TOY_GOLD)[:-1]
    assert "json-repair mended the JSON" in score_completion(cut, TOY_GOLD).repairs
    assert score_completion(cut, TOY_GOLD, strict=True).fpof_type == "format_error"


@pytest.mark.parametrize("style", ["raw", "pretty", "fence"])
def test_strict_mode_accepts_plain_json_and_one_fence(style: str) -> None:
    text = make_completion(TOY_GOLD, "identity", style, seed=1)
    if style == "fence":
        text = "```json\n" + json.dumps(TOY_GOLD, indent=2) + "\n```"
    verdict = score_completion(text, TOY_GOLD, strict=True)
    assert verdict.em and verdict.fpof_type is None


def test_strict_mode_details() -> None:
    assert score_completion("", TOY_GOLD, strict=True).fpof_type == "empty_output"
    assert score_completion("  \n", TOY_GOLD, strict=True).fpof_type == "empty_output"
    assert score_completion("[]", TOY_GOLD, strict=True).fpof_type == "early_stop"
    fenced = "Here you go:\n```json\n" + json.dumps(TOY_GOLD) + "\n```"
    assert score_completion(fenced, TOY_GOLD, strict=True).fpof_type == "format_error"
    # Comparisons are unchanged: a wrong tool is still an agent mismatch.
    swapped = make_completion(TOY_GOLD, "swap_agent", "raw", seed=2)
    strict = score_completion(swapped, TOY_GOLD, strict=True)
    assert strict.metrics() == score_completion(swapped, TOY_GOLD).metrics()
    assert score_plan(_toy(s0__step=0.0), TOY_GOLD, strict=True).fpof_type == "format_error"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet='0123456789,[]{}": \t\nab', max_size=40))
def test_class_guards_find_what_their_plain_patterns_find(text: str) -> None:
    # The guards are written to start with a literal (fast to scan for); they must find
    # exactly what the plain patterns find.
    glued = re.compile(r"[0-9],[^ \t\n\r]")
    assert (lenient_json.NUMBER_GLUED_TO_COMMA.search(text) is None) == (glued.search(text) is None)
    empty = re.compile(r'(?:\[[ \t\n\r]*\]|\{[ \t\n\r]*\}|"")(?![,\]])')
    patterns = lenient_json.EMPTY_ITEMS_NOT_CLOSED
    starts = sorted(hit.start() for pattern in patterns for hit in pattern.finditer(text))
    assert starts == [hit.start() for hit in empty.finditer(text)]
