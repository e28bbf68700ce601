"""Values JSON cannot hold are refused with a diagnostic at every entry point of the API
(issue 33): ``a = []; a.append(a); plancheck.check(a)`` never returned (1.1 GB in 60 s), and
``check_trajectory`` of a call whose arguments held the call raised ``RecursionError``. A
value inside itself, a part shared so often that reading it as a tree never ends (``x = [x,
x]`` sixty times), and (for trajectories) nesting past what the recursive readers take are each
refused: ``PC100`` in a report, ``PC706`` in a ``ToolsetError``, a format error when scoring.
Each case runs in a child under CPU, memory and time caps, so the old code fails, not hangs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancheck.ir.json_data import json_data_problem
from tests.security.capped import last_json, run_capped

SETUP = """
import json, plancheck
from plancheck.corpus.pool_errors import ToolsetError
cyclic = []; cyclic.append(cyclic)
looped = {}; looped["self"] = looped
call = {"name": "GeoChat", "arguments": {}}; call["arguments"]["again"] = call
shared = [1]
for _ in range(60): shared = [shared, shared]
schema = {"type": "object"}
for _ in range(60): schema = {"type": "object", "properties": {"a": schema, "b": schema}}
deep = []
for _ in range(5000): deep = [deep]
GOLD = [{"agent": "GeoChat", "step": 0, "inputs": {}}]
def codes(report): return [d.code for d in report.diagnostics]
def pool(schema): return {'tools': [{'name': 't', 'inputSchema': schema}]}
def refused(load):
    try: load()
    except ToolsetError as error: return [d.code for d in error.diagnostics]
    return "loaded"
"""

CASES = {
    "check(a list inside itself)": "codes(plancheck.check(cyclic))",
    "check(a dict inside itself)": "codes(plancheck.check({'plan': looped}))",
    "check(a shared part 2**60 times)": "codes(plancheck.check(shared))",
    "check_trajectory(a call inside itself)": "codes(plancheck.check_trajectory([call]))",
    "check_trajectory(a list inside itself)": "codes(plancheck.check_trajectory(cyclic))",
    "check_trajectory(shared arguments)":
        "codes(plancheck.check_trajectory([{'name': 'GeoChat', 'arguments': {'a': shared}}]))",
    "check_trajectory(5,000 levels deep)":
        "codes(plancheck.check_trajectory([{'name': 'GeoChat', 'arguments': {'a': deep}}]))",
    "score(a shared prediction)": "plancheck.score(shared, GOLD)['fpof_type']",
    "score(a prediction inside itself)": "plancheck.score(cyclic, GOLD)['fpof_type']",
    "load_toolset(a schema inside itself)":
        "refused(lambda: plancheck.load_toolset(pool(looped)))",
    "load_toolset(a shared schema)":
        "refused(lambda: plancheck.load_toolset(pool(schema)))",
    "Guard(a pool inside itself)":
        "refused(lambda: plancheck.Guard(pool(looped)))",
}
EXPECTED = {"score": "format_error", "load_toolset": ["PC706"], "Guard": ["PC706"]}


@pytest.mark.parametrize("case", list(CASES))
def test_a_value_json_cannot_hold_is_refused(case: str) -> None:
    code = SETUP + f"print(json.dumps({CASES[case]}))\n"
    done = run_capped(code, cpu_seconds=20, memory_bytes=1 << 30, timeout=60)
    found = last_json(done)
    expected = EXPECTED.get(case.split("(", maxsplit=1)[0], ["PC100"])
    assert found == expected, (found, done.stderr[-2000:])


def test_a_gold_plan_inside_itself_raises_value_error() -> None:
    code = SETUP + ("try:\n    plancheck.score([], cyclic)\n"
                    "except ValueError as error:\n    print(json.dumps(str(error)))\n")
    assert "contains itself" in str(last_json(run_capped(code, cpu_seconds=20, timeout=60)))


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=3), inner, max_size=4), max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_json_data_is_never_refused(value: Any) -> None:
    assert json_data_problem(value, max_depth=500) is None
    assert json_data_problem([value, value, {"again": value}]) is None  # shared, not cyclic


@settings(max_examples=100, deadline=None)
@given(JSON, st.integers(min_value=0, max_value=3))
def test_a_value_placed_inside_itself_is_always_found(value: Any, depth: int) -> None:
    outer: list[Any] = [value]
    inner = outer
    for _ in range(depth):
        inner.append({"k": []})
        inner = inner[-1]["k"]
    inner.append(outer)
    problem = json_data_problem(outer)
    assert problem is not None and "contains itself" in problem


def test_the_limits_are_where_they_say() -> None:
    shared: list[Any] = [0] * 10
    for _ in range(3):
        shared = [shared] * 10  # 10 + 100 + 1,000 + 10,000 members as a tree
    assert json_data_problem(shared, max_members=11_110) is None
    assert "11,109 members" in str(json_data_problem(shared, max_members=11_109))
    nested: list[Any] = []
    for _ in range(9):
        nested = [nested]  # 10 levels
    assert json_data_problem(nested, max_depth=10) is None
    assert "10 levels" in str(json_data_problem([nested], max_depth=10))
    assert "not a string" in str(json_data_problem({"a": [{1: 2}]}))
