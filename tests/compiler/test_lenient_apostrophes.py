"""The lenient-JSON emulation of json-repair 0.64.6 on single-quoted texts whose
double-quoted strings hold apostrophes (``{'reason': "the user's question"}``): it must read
what json-repair reads wherever it accepts, and decline where an apostrophe could fool
json-repair's closing-quote look-ahead."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_repair import repair_json

from plancheck.compiler.extraction import lenient_json
from plancheck.compiler.extraction.mend import EMULATE_JSON_REPAIR
from plancheck.compiler.extraction.sentinels import NO_ANSWER
from plancheck.corpus.paths import release_dir
from tests.support.completions import MUTATION_WEIGHTS, load_gold_tasks, make_completion

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


@pytest.mark.slow
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


# --------------------------------------------------------------------------------------------
# The rewrite's shortcuts equal the rewrite token by token
# --------------------------------------------------------------------------------------------

# The lenient rewrite's tokens as first written (plain quantifiers), the specification of
# strictify: each token rewritten on its own.
_TOKENS_AS_FIRST_WRITTEN = re.compile(
    r"""
      (?P<plain>(?:
          "[^"\\\x00-\x1f]*"
        | [ \t\n\r\[\]{}:]
        | ,(?![ \t\n\r]*[\]}])
        | -?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?
      )+)
    | (?P<single>'[^'"\\\x00-\x1f,:{}\[\]()`\#\u201c\u201d\u201e\u2018\u2019]+')
    | (?P<key>[A-Za-z][A-Za-z0-9_]*+)(?=:)
    | (?P<constant>(?i:true|false|null|none))(?=[ \t\n\r,\]}]|\Z)
    | (?P<trailing>,)
    | (?P<other>[A-Za-z0-9_]++|.)
    """,
    re.VERBOSE | re.DOTALL,
)


def _strictify_token_by_token(text: str) -> tuple[str, bool] | None:
    pieces, single_quotes = [], False
    for plain, single, key, constant, trailing, _ in _TOKENS_AS_FIRST_WRITTEN.findall(text):
        if plain:
            pieces.append(plain)
        elif single:
            single_quotes = True
            pieces.append('"' + single[1:-1] + '"')
        elif key:
            pieces.append('"' + key + '"')
        elif constant:
            pieces.append({"none": "null"}.get(constant.lower(), constant.lower()))
        elif not trailing:
            return None
    return "".join(pieces), single_quotes


def _strictify_or_none(text: str) -> tuple[str, bool] | None:
    try:
        return lenient_json.strictify(text)
    except lenient_json.Unsupported:
        return None


_LENIENT_ALPHABET = "ab'\" ,:{}[]()#`1-.eE\\\t\nNnoeTru\u2019"


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(text=st.text(alphabet=_LENIENT_ALPHABET, max_size=30))
def test_strictify_is_the_rewrite_token_by_token_on_any_text(text: str) -> None:
    assert _strictify_or_none(text) == _strictify_token_by_token(text)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.lists(_values, max_size=3), seed=st.integers(0, 2**32 - 1))
def test_strictify_is_the_rewrite_token_by_token_on_lenient_plans(
    value: list[Any], seed: int
) -> None:
    text = _render(value, random.Random(seed))
    assert _strictify_or_none(text) == _strictify_token_by_token(text)


def _read_or_error(text: str) -> Any:
    try:
        return lenient_json._read_json_but_commas_before_closers(text)
    except lenient_json.Unsupported:
        return "repeated key"
    except RecursionError:
        return "too deep"


def _expected_read(text: str) -> Any:
    shortcut = lenient_json.json_but_commas_before_closers(text)
    if shortcut is None:
        return None
    try:
        return shortcut[0], lenient_json._loads_without_repeats(shortcut[1] or shortcut[0])
    except lenient_json.Unsupported:
        return "repeated key"
    except RecursionError:
        return "too deep"


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(text=st.text(alphabet='[]{}",: ab1tfn\n', max_size=30).map(lambda t: "[" + t))
def test_reading_commas_before_closers_is_the_shortcut_then_the_parse(text: str) -> None:
    assert _read_or_error(text) == _expected_read(text)


def test_reading_commas_before_closers_on_cut_off_plans() -> None:
    rng = random.Random(5)
    cut_off = 0
    for _ in range(1500):
        steps = [{"agent": rng.choice("AB"), "step": n, "dependence": [n - 1],
                  "inputs": {"k": rng.choice(["x", "[y]", "a,]"])}, "outputs": ["o"]}
                 for n in range(rng.randint(1, 3))]
        if rng.random() < 0.2:
            steps[0]["step"] = {"step": 1, "a": [], "step ": 2}
        text = json.dumps(steps, indent=rng.choice([None, 2]))
        text = re.sub(r"([\]}])", lambda m: ("," if rng.random() < 0.3 else "") + m.group(1),
                      text)
        end = text.rfind("]", 0, len(text) - rng.randint(1, 40))
        if end > 0 and rng.random() < 0.7:
            text = text[: end + 1]
            cut_off += 1
        if rng.random() < 0.1:
            text = text.replace('"a"', '"agent"')  # a repeated key
        assert _read_or_error(text) == _expected_read(text), text
    assert cut_off > 800


@settings(max_examples=2000, deadline=None)
@given(text=st.text(alphabet="[]{}\"',: ab1Nn\n", max_size=30).map(lambda t: "[" + t))
def test_knowing_the_text_is_not_json_changes_no_reading(text: str) -> None:
    try:
        json.loads(text)
    except ValueError:
        pass
    else:
        return
    plain = lenient_json.mend_lenient_json(text)
    told = lenient_json.mend_lenient_json(text, not_json=True)
    assert json.dumps(plain) == json.dumps(told) if plain is not NO_ANSWER else told is NO_ANSWER


def _closed_as_first_written(text: str) -> str | None:
    """_close_cut_off_text with the strings taken out by a regular expression."""
    if not text.rstrip().endswith("]"):
        return None
    expected: list[str] = []
    for char in re.sub(r'"[^"]*"', "", text):
        if char in "[{":
            expected.append("]" if char == "[" else "}")
        elif char in "]}" and (not expected or expected.pop() != char):
            return None
    return text + "".join(reversed(expected)) if expected else None


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(text=st.text(alphabet='[]{}",: a1\u00e9', max_size=30))
def test_closing_a_cut_off_text(text: str) -> None:
    closed = lenient_json._close_cut_off_text(text)
    expected = _closed_as_first_written(text)
    if text.count('"') % 2:  # (an unpaired quote: no closing makes the text JSON)
        assert closed is None
        if expected is not None:
            with pytest.raises(json.JSONDecodeError):
                json.loads(expected)
    else:
        assert closed == expected
