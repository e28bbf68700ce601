"""The per-item diagnostics of ``plancheck score --per-item`` are written without the JSON
encoder's dispatch (:func:`compact_text`, :func:`entry_text`, :func:`diagnostic_text`), and
what the value builders of lowering build is kept by their arguments' values (``_frozen``),
and the values the gold comparison's messages show are written directly
(``plancheck.fast_json.dumps_plain``).
Each must give exactly the text of ``json.dumps(entry, ensure_ascii=False)``, for any entry."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancheck.diagnostics.codes import CODES
from plancheck.diagnostics.model import Severity, make
from plancheck.diagnostics.span import Span
from plancheck.fast_json import dumps_plain
from plancheck.ir.nodes import Toolset
from plancheck.scoring.fpof import _show
from plancheck.scoring.metrics import (
    PredictionAnalyzer,
    _arguments_key,
    _frozen,
    compact_entry,
    compact_text,
    diagnostic_text,
    entry_text,
)


def _reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


texts = st.text(st.characters(codec=None), max_size=30) | st.sampled_from(
    ["", "é", "日本", "\x00", "\n\t\"\\", "\u2028", "\ud800", "😀", "</script>"]
)
scalars = (
    st.none() | st.booleans() | st.integers() | st.integers(-(10**40), 10**40)
    | st.floats(allow_nan=True, allow_infinity=True) | texts
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
codes = st.sampled_from(sorted(CODES))


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(code=codes | texts, name=texts, severity=st.sampled_from(["error", "warning"]) | texts,
       message=texts | json_values, position=json_values,
       notes=st.none() | st.lists(texts, max_size=3) | st.tuples(texts) | json_values)
def test_compact_text_is_the_encoders_text(
    code: Any, name: Any, severity: Any, message: Any, position: Any, notes: Any
) -> None:
    entry: dict[str, Any] = {"code": code, "name": name, "severity": severity, "message": message}
    if position is not None:
        entry["position"] = position
    if notes is not None:
        entry["notes"] = notes
    assert compact_text(code, name, severity, message, position, notes) == _reference(entry)
    assert entry_text(entry) == _reference(entry)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(entry=st.dictionaries(
    st.sampled_from(["code", "name", "severity", "message", "position", "notes", "x"]) | texts,
    json_values, max_size=7,
))
def test_entry_text_of_any_dictionary(entry: dict[str, Any]) -> None:
    assert entry_text(entry) == _reference(entry)


@settings(max_examples=300, deadline=None)
@given(code=codes, message=texts, position=json_values, notes=st.lists(texts, max_size=3),
       severity=st.none() | st.sampled_from(list(Severity)))
def test_diagnostic_text_is_the_encoded_compact_entry(
    code: str, message: str, position: Any, notes: list[str], severity: Severity | None
) -> None:
    data = {"position": position, "other": 1} if position is not None else {}
    diagnostic = make(code, message, notes=notes, data=data, severity=severity)
    assert diagnostic_text(diagnostic) == _reference(compact_entry(diagnostic))


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(a=json_values, b=json_values)
def test_frozen_values_are_equal_only_for_the_same_json(a: Any, b: Any) -> None:
    fa, fb = _frozen(a), _frozen(b)
    if fa == fb and fa is not _frozen(object()):
        assert _reference(a) == _reference(b)
        assert _shape(a) == _shape(b)


spans = st.builds(Span, texts, st.integers(0, 3), st.integers(0, 3), st.integers(0, 3),
                  st.integers(0, 3), st.none() | texts, st.integers(-1, 3), st.integers(-1, 3),
                  st.booleans())


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(a=st.tuples(spans, json_values, json_values), b=st.tuples(spans, json_values, json_values))
def test_arguments_keys_are_equal_only_for_the_same_values(a: Any, b: Any) -> None:
    """Builders' arguments (a span first) are kept by a key equal only for equal values of
    equal types, like _frozen's; equal arguments get equal keys at least from _frozen."""
    ka, kb = _arguments_key(a), _arguments_key(b)
    if ka == kb and ka is not _frozen(object()):
        assert a[0] == b[0] and _shape(tuple(a[0])) == _shape(tuple(b[0]))
        assert _reference(a[1:]) == _reference(b[1:])
        assert _shape(a[1:]) == _shape(b[1:])
    assert _arguments_key(a) == ka  # the same arguments, the same key


def _shape(value: Any) -> Any:
    """The types all the way down, and float signs (what _frozen must keep apart)."""
    if isinstance(value, dict):
        return ("dict", [(_shape(k), _shape(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_shape(v) for v in value])
    if isinstance(value, float):
        return ("float", math.copysign(1.0, value), repr(value))
    return (type(value).__name__, value)


def test_frozen_keeps_lookalikes_apart() -> None:
    values = [1, 1.0, True, 0, 0.0, -0.0, False, None, "1", [1], (1,), {"a": 1}, [[1]]]
    frozen = [_frozen(v) for v in values]
    for n, x in enumerate(frozen):
        for m, y in enumerate(frozen):
            assert (x == y) == (n == m), (values[n], values[m])
    assert _frozen([object()]) is _frozen(object())  # not frozen: never kept
    deep: Any = 1
    for _ in range(20):
        deep = [deep]
    assert _frozen(deep) is _frozen(object())


steps = st.fixed_dictionaries(
    {},
    optional={
        "step": json_values, "agent": json_values, "dependence": json_values,
        "inputs": json_values, "outputs": json_values, "node": json_values,
        "extra": json_values,
    },
)
_SHARED: dict[int, PredictionAnalyzer] = {}


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])
@given(prediction=st.lists(steps | json_values, min_size=1, max_size=4))
def test_kept_diagnostic_texts_are_what_building_gives(
    toolset: Toolset, prediction: list[Any]
) -> None:
    """One analyzer for every example, so that the texts it keeps by the value builders'
    arguments are met again by other values; each result must be what an analyzer that
    keeps nothing gives."""
    shared = _SHARED.setdefault(id(toolset), PredictionAnalyzer(toolset, cache_size=4096))
    fresh = PredictionAnalyzer(toolset, cache_size=0)
    assert shared.static(prediction) == fresh.static(prediction)
    assert shared.static(prediction) == fresh.static(prediction)  # known the second time


deep_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(texts | st.integers() | st.booleans() | st.none(), inner, max_size=3),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(value=deep_values)
def test_shown_values_are_the_encoders_text(value: Any) -> None:
    text = dumps_plain(value, ensure_ascii=False, max_depth=3)
    assert text is None or text == _reference(value)
    shown = _reference(value)
    assert _show(value) == (shown if len(shown) <= 60 else shown[:57] + "...")


@settings(max_examples=500, deadline=None)
@given(value=deep_values, indent=st.sampled_from([None, 0, 1, 2, 4]),
       ensure_ascii=st.booleans())
def test_plain_values_are_written_as_json_dumps_writes_them(
    value: Any, indent: int | None, ensure_ascii: bool
) -> None:
    """What the gold plans' indented spellings (plancheck.scoring.reference) and the shown
    step values are written with: json.dumps's text, or None."""
    text = dumps_plain(value, indent=indent, ensure_ascii=ensure_ascii)
    assert text is None or text == json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)
