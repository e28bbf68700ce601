"""plancheck's JSON reader must be json.loads exactly: same values, same types, same errors."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancheck.fast_json import INVALID, loads, loads_or_invalid

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False)
    | st.text()
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=25,
)


def _outcome(reader: Any, text: str) -> str:
    """What reading ``text`` gives, spelled so that any difference shows: repr tells ints from
    floats and bools, shows key order and every float's digits; errors by type and message."""
    try:
        return "value " + repr(reader(text))
    except (ValueError, RecursionError) as error:
        return f"error {type(error).__name__}: {error}"


@pytest.mark.slow
@settings(max_examples=400)
@given(_values, st.sampled_from([None, 0, 2]), st.booleans(), st.booleans())
def test_reads_what_json_writes_exactly_as_json_loads(
    value: Any, indent: int | None, ascii_only: bool, compact: bool
) -> None:
    separators = (",", ":") if compact else None
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only, separators=separators)
    assert _outcome(loads, text) == _outcome(json.loads, text)


_NUMBERS = [
    "0", "-0", "-0.0", "1E5", "1e-400", "5e-324", "1e400", "-1e400", "1.7976931348623157e308",
    "2.2250738585072011e-308", "0.1", "0.30000000000000004", "9007199254740993",
    "9007199254740993.0", "18446744073709551616", "-9223372036854775809", "1" * 40,
    "123456789012345678901234567890.5", "1.0e+2", "01", "1.", ".5", "+1", "NaN", "Infinity",
    "-Infinity", "nan", "1e", "--1",
]  # fmt: skip


@pytest.mark.parametrize("number", _NUMBERS)
def test_numbers_read_as_json_loads_reads_them(number: str) -> None:
    for text in (number, f"[{number}]", f'{{"k": {number}}}', f" {number} "):
        assert _outcome(loads, text) == _outcome(json.loads, text)


_STRINGS = [
    r'"\ud800"', r'"\udc00x"', r'"\ud83d\ude00"', '"\ud800"', r'"\u0000"', '"a\tb"', r'"a\/b"',
    '"\x7f"', '"é"', '"\u2028"', r'"\x41"', r'"\'"', '"unterminated',
]  # fmt: skip


@pytest.mark.parametrize("string", _STRINGS)
def test_strings_read_as_json_loads_reads_them(string: str) -> None:
    for text in (string, f"[{string}]", f'{{"k": {string}}}', f"{{{string}: 1}}"):
        assert _outcome(loads, text) == _outcome(json.loads, text)


def test_documents_and_damage_read_as_json_loads_reads_them() -> None:
    documents = [
        '{"a": 1, "b": 2, "a": 3}', "[1, 2,]", "[1 2]", "{'a': 1}", '{"a" 1}', "[]", "{}", "",
        " ", "\ufeff[1]", "[1]\x00", "[1] [2]", "[1]]", "true", "True", "null", "none",
        '[{"agent": "X", "step": 0}]', "[{}, [], [[]], {\"\": {}}]", "\n\t [1]\r\n",
    ]  # fmt: skip
    for text in documents:
        assert _outcome(loads, text) == _outcome(json.loads, text), text


def test_random_damage_to_plans_reads_as_json_loads_reads_it() -> None:
    rng = random.Random(7)
    plan = [
        {
            "agent": "Flood_Detection",
            "step": 0,
            "dependence": [-1],
            "dependence_content": None,
            "inputs": {"image_path": "/data/a.tif", "threshold": 0.5},
            "outputs": ["flood_map_path"],
        },
        {
            "agent": "Flood_depth_prediction",
            "step": 1,
            "dependence": [0],
            "dependence_content": {"0": ["flood_map_path"]},
            "inputs": {"flood_map_path": "<GENERATED>-0-<flood_map_path>"},
            "outputs": ["water_depth_path"],
        },
    ]
    alphabet = '[]{},:"\\ 0123456789.eE-+tfnaulsrNIy\n\t\ud800é'
    agreed_values = 0
    for _ in range(3000):
        text = json.dumps(plan, indent=rng.choice([None, 2]))
        for _ in range(rng.randint(1, 3)):
            position = rng.randrange(len(text) + 1)
            action = rng.random()
            if action < 0.4:
                text = text[:position] + rng.choice(alphabet) + text[position:]
            elif action < 0.8:
                text = text[:position] + text[position + 1 :]
            else:
                text = text[:position]
        expected = _outcome(json.loads, text)
        assert _outcome(loads, text) == expected, text
        agreed_values += expected.startswith("value")
    assert agreed_values > 100  # the damage left many texts readable: both paths were compared


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _at_stack_depth(frames: int, job: Any) -> Any:
    return job() if frames == 0 else _at_stack_depth(frames - 1, job)


@pytest.mark.parametrize("frames", [0, 40, 300])
def test_deep_nesting_fails_where_json_loads_fails(frames: int) -> None:
    for depth in (100, 600, 900, 960, 990, 995, 1000, 1100, 5000):
        text = _nested(depth)
        ours = _at_stack_depth(frames, lambda text=text: _outcome(loads, text))
        theirs = _at_stack_depth(frames, lambda text=text: _outcome(json.loads, text))
        assert ours == theirs, (frames, depth)


def _invalid_or_value(text: str) -> str:
    value = loads_or_invalid(text)
    return "invalid" if value is INVALID else "value " + repr(value)


def _json_invalid_or_value(text: str) -> str:
    try:
        return "value " + repr(json.loads(text))
    except (ValueError, RecursionError):
        return "invalid"


def test_loads_or_invalid_tells_what_json_loads_tells() -> None:
    texts = [*_NUMBERS, *_STRINGS, "[NaN, 1]", '{"a": Infinity}', "[-Infinity]", "[1,]", "{"]
    texts += [f"[{number}]" for number in _NUMBERS] + [f"[{string}]" for string in _STRINGS]
    texts += [_nested(depth) for depth in (10, 990, 1000, 5000)]
    for text in texts:
        assert _invalid_or_value(text) == _json_invalid_or_value(text), text


@settings(max_examples=300)
@given(_values, st.integers(min_value=0, max_value=10**6))
def test_loads_or_invalid_on_damaged_json(value: Any, seed: int) -> None:
    rng = random.Random(seed)
    text = json.dumps(value, ensure_ascii=rng.random() < 0.5, allow_nan=True)
    for _ in range(rng.randint(0, 3)):
        position = rng.randrange(len(text) + 1)
        text = text[:position] + rng.choice('[]{},:"\\ 0eE-NaInfity\ud800') + text[position:]
    assert _invalid_or_value(text) == _json_invalid_or_value(text)
