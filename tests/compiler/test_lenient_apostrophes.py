"""The lenient-JSON emulation of json-repair 0.64.6 on single-quoted texts whose
double-quoted strings hold apostrophes (``{'reason': "the user's question"}``): it must read
what json-repair reads wherever it accepts, and decline where an apostrophe could fool
json-repair's closing-quote look-ahead."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_repair import repair_json

from plancheck.compiler.extraction import lenient_json
from plancheck.compiler.extraction.mend import EMULATE_JSON_REPAIR
from plancheck.compiler.extraction.sentinels import NO_ANSWER
from plancheck.corpus.paths import release_dir
from plancheck.testing.completions import MUTATION_WEIGHTS, load_gold_tasks, make_completion

pytestmark = pytest.mark.skipif(not EMULATE_JSON_REPAIR, reason="emulates json-repair 0.64.6")

# Characters that json-repair's string scanner and look-aheads react to, and some that it
# does not: strings made of them land on both sides of the class's borders.
_STRING_ALPHABET = "ab Z'\",}]{[:()\t#`\u2019"
_SINGLE_SAFE = "ab Z\t"  # what a single-quoted string of the class may hold (and more below)

_strings = st.one_of(
    st.text(alphabet=_STRING_ALPHABET, max_size=8),
    st.sampled_from(
        ["answers the user's question directly", "user's", "it's, ok", "a', b", "x' }", "'",
         "y' ,", "'s", "b'", "a 'quoted' b", "x'  ,y", "z'}", "c'-,", "c'_,"]
    ),
)
_scalars = st.one_of(
    _strings,
    st.integers(-20, 20),
    st.sampled_from([2.5, -1.5, True, False, None]),
)
_keys = st.one_of(
    st.sampled_from(["agent", "step", "reason", "inputs", "a", "b_1", "None", "x y"]),
    _strings,
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(_keys, inner, max_size=3),
    ),
    max_leaves=10,
)


def _render(value: Any, rng: random.Random) -> str:
    """Python-ish text of ``value``: strings single- or double-quoted at random (double when
    they hold a single quote, as ``repr`` does), keys sometimes bare, constants in Python or
    JSON spelling, some commas before closers."""
    if isinstance(value, str):
        if "'" in value or rng.random() < 0.3:
            return json.dumps(value, ensure_ascii=False)
        return "'" + value + "'"
    if value is None or isinstance(value, bool):
        return rng.choice([repr(value), json.dumps(value)])
    if isinstance(value, (int, float)):
        return json.dumps(value)
    comma = "," if rng.random() < 0.2 else ""
    if isinstance(value, list):
        return "[" + ", ".join(_render(item, rng) for item in value) + comma + "]"
    members = []
    for key, item in value.items():
        bare = key.isidentifier() and key[0].isalpha() and rng.random() < 0.3
        members.append(f"{key if bare else _render(key, rng)}: {_render(item, rng)}")
    return "{" + ", ".join(members) + comma + "}"


def _check(text: str) -> bool:
    """Compare the emulation with json-repair on ``text``; True when the emulation read it."""
    emulated = lenient_json.mend_lenient_json(text)
    if emulated is NO_ANSWER:
        return False
    assert json.dumps(emulated) == json.dumps(json.loads(repair_json(text))), text
    return True


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(st.dictionaries(_keys, _values, min_size=1, max_size=5), min_size=1,
                   max_size=3),
    seed=st.integers(0, 2**32 - 1),
    cut=st.booleans(),
)
def test_single_quotes_with_apostrophes_in_double_quotes_read_as_json_repair(
    steps: list[dict[str, Any]], seed: int, cut: bool
) -> None:
    rng = random.Random(seed)
    text = _render(steps, rng)
    if cut:  # cut off after an inner "]", as the reference's bracket slice may
        end = text.rfind("]", 0, len(text) - 1)
        text = text[: end + 1] if end > 0 else text
    _check(text)


def test_apostrophes_that_could_fool_the_look_ahead_are_declined() -> None:
    # After 'b', json-repair looks for the next single quote: the apostrophe, followed by
    # a comma, makes it read 'b' on as a string with a stray quote.
    fooled = "[{'a': 'b', \"c\": \"it', x\", 'd': 1}]"
    assert lenient_json.mend_lenient_json(fooled) is NO_ANSWER
    assert json.loads(repair_json(fooled)) != [{"a": "b", "c": "it', x", "d": 1}]
    harmless = "[{'a': 'b', 'c': \"the user's question\", 'd': 1}]"
    assert lenient_json.mend_lenient_json(harmless) == [
        {"a": "b", "c": "the user's question", "d": 1}
    ]
    assert _check(harmless)


def test_many_random_texts_with_apostrophes_are_read() -> None:
    """Not a vacuous class: most texts like the single-quote style's are accepted."""
    rng = random.Random(3)
    accepted = with_apostrophes = 0
    for _ in range(600):
        step = {
            "agent": rng.choice(["A", "B_c"]),
            "step": rng.randint(0, 3),
            "dependence": [rng.randint(-1, 2)],
            "dependence_content": rng.choice([None, {"0": ["x_path"]}]),
            "inputs": {"image_path": rng.choice(["/d/a.tif", "<GENERATED>-0-<x>"])},
            "outputs": ["y_path"],
            "reason": rng.choice(["answers the user's question directly", "it's fine",
                                  "prepares the input", "a user's, note", "x' }"]),
        }
        text = _render([step, dict(step, step=step["step"] + 1)], rng)
        with_apostrophes += "'s" in text
        accepted += _check(text)
    assert accepted > 250 and with_apostrophes > 300  # (numbers before ",]" are declined)


def _single_quote_style_corpus() -> list[str]:
    """The per-style benchmark's single-quote completions (bench/bench_cli_score.py's
    triples), as far as the data is here."""
    benchmark = release_dir() / "benchmark.jsonl"
    if not benchmark.is_file():
        pytest.skip("benchmark.jsonl not found")
    tasks = load_gold_tasks(benchmark)
    rng = random.Random("styles:2024")
    names = list(MUTATION_WEIGHTS)
    weights = [MUTATION_WEIGHTS[name] for name in names]
    texts = []
    for n in range(1000):
        _, plan = tasks[n % len(tasks)]
        mutation = rng.choices(names, weights)[0]
        texts.append(make_completion(plan, mutation, "single_quotes", seed=n))
    return texts


def test_single_quote_style_texts_with_apostrophes_read_as_json_repair() -> None:
    texts = [
        text for text in _single_quote_style_corpus()
        if lenient_json._APOSTROPHE_IN_DOUBLE_QUOTES.search(text) and "'" in text
    ]
    assert len(texts) >= 10
    assert all(_check(text) for text in texts)
