"""Parity of plancheck's DORA scorer with DORA's released evaluator.

``tests/data/dora_verdicts.jsonl.gz`` holds generated cases with the verdicts DORA's own
``dora/evaluation.py`` gave them (``scripts/record_dora_verdicts.py``). Every case is replayed
through ``plancheck.dora``'s public API and must give the same numbers (floats to 1e-9, DORA's
NaN as None) or, where DORA raised, a :class:`plancheck.dora.DoraInputError`. Properties
check what holds for any input.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancheck import dora
from tests.support.dora_cases import read_cases, with_root, write_files

VERDICTS = Path(__file__).parents[1] / "data" / "dora_verdicts.jsonl.gz"
KINDS = ("trajectory", "answer", "polygon", "parse", "dimension", "run")
TOLERANCE = 1e-9
# The DORA line of DORA's results table is printed with 6 decimals.
TABLE_TOLERANCE = 5e-7 + 1e-12


def _cases() -> dict[str, list[dict[str, Any]]]:
    _, cases = read_cases(VERDICTS)
    grouped: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    for case in cases:
        grouped[case["kind"]].append(case)
    return grouped


CASES = _cases()


def difference(
    expected: Any, actual: Any, where: str = "$", tolerance: float = TOLERANCE
) -> str | None:
    """Where and how ``actual`` differs from ``expected`` (None when they agree)."""
    nan = isinstance(expected, float) and math.isnan(expected)
    if nan and isinstance(actual, float) and math.isnan(actual):
        return None
    if isinstance(expected, bool) or isinstance(actual, bool) or expected is None or actual is None:
        return (
            None
            if type(expected) is type(actual) and expected == actual
            else (f"{where}: expected {expected!r}, got {actual!r}")
        )
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if math.isclose(expected, actual, rel_tol=0.0, abs_tol=tolerance):
            return None
        return f"{where}: expected {expected!r}, got {actual!r}"
    if isinstance(expected, dict) and isinstance(actual, dict):
        if set(expected) != set(actual):
            wanted, got = sorted(map(str, expected)), sorted(map(str, actual))
            return f"{where}: keys {wanted} expected, got {got}"
        for key in expected:
            found = difference(expected[key], actual[key], f"{where}.{key}", tolerance)
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{where}: {len(expected)} items expected, got {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found = difference(e, a, f"{where}[{i}]", tolerance)
            if found:
                return found
        return None
    if type(expected) is type(actual) and expected == actual:
        return None
    return f"{where}: expected {expected!r}, got {actual!r}"


def replay(kind: str, case: dict[str, Any], root: Path) -> Any:
    """plancheck's answer to a recorded case, in the shape DORA's verdict has."""
    data = with_root(case, root)
    try:
        if kind == "trajectory":
            return dora.trajectory_metrics(data["pred"], data["gold"])
        if kind == "parse":
            return {"value": dora.parse_prediction(data["text"])}
        if kind in ("answer", "polygon"):
            return dora.score_answer(
                data["pred"], data["gold"], data["spec"], gsd_m=data["gsd"], polygon_roots=(root,)
            )
        if kind == "dimension":
            rows = dora.score_samples(data["gold"], data["pred"], polygon_roots=(root,))
            return {**dora.aggregate_tasks(rows), "tasks": rows}
        tasks_dir, run_dir = root / "tasks", root / "run"
        roots = (tasks_dir,) if data["records"] is None else (tasks_dir, run_dir)
        result = dora.evaluate_run(data["gold"], data["records"], polygon_roots=roots)
    except dora.DoraInputError as error:
        return {"error": type(error).__name__}
    full = {d: {**result["dimensions"][d], "tasks": result["tasks"][d]} for d in result["tasks"]}
    table = [result["n_tasks"], result["dora_score"], *result["trajectory"].values()]
    return {"dora_score": result["dora_score"], "full": full, "table_row": table}


def mismatch(kind: str, case: dict[str, Any], root: Path) -> str | None:
    expected = case["expected"]
    actual = replay(kind, case["input"], root)
    if "error" in expected or (
        isinstance(actual, dict) and actual.get("error") == "DoraInputError"
    ):
        if "error" in expected and isinstance(actual, dict) and "error" in actual:
            return None
        return f"DORA gave {str(expected)[:200]}, plancheck gave {str(actual)[:200]}"
    if kind == "run":
        table, expected_table = actual.pop("table_row"), expected["table_row"]
        expected = {k: v for k, v in expected.items() if k != "table_row"}
        if expected_table is not None:
            found = difference(expected_table, table, "$.table_row", TABLE_TOLERANCE)
            if found:
                return found
    return difference(expected, actual)


def test_the_recorded_cases_cover_every_kind() -> None:
    header, _ = read_cases(VERDICTS)
    counts = Counter({kind: len(cases) for kind, cases in CASES.items()})
    assert sum(counts.values()) >= 2000
    assert all(counts[kind] for kind in KINDS), counts
    assert header["counts"] == dict(counts)


@pytest.mark.parametrize("kind", KINDS)
def test_plancheck_scores_every_recorded_case_as_dora_does(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # relative polygon paths must resolve under the roots only
    failures = []
    for case in CASES[kind]:
        root = tmp_path / case["id"]
        root.mkdir()
        write_files(case["input"].get("files", {}), root)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dora.PolygonWarning)
            found = mismatch(kind, case, root)
        if found:
            failures.append(f"{case['id']}: {found}\n    input: {json.dumps(case['input'])[:600]}")
    assert not failures, (
        f"{len(failures)} of {len(CASES[kind])} {kind} cases differ from DORA:\n"
        + "\n".join(failures[:10])
    )


# --------------------------------------------------------------------------- properties

TOOLS = st.sampled_from(["seg.a", "seg_a", "calc.b", "calc_b(x=1)", "vis.c", "tool.loop", ""])
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-1000, 1000)
    | st.floats(allow_infinity=False)
    | st.sampled_from(["/data/a.tif", "./out/m_3fa9c2d1.png", "<k> from trajectory[0].obs", "x"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
STEPS = st.lists(
    st.fixed_dictionaries(
        {
            "call": TOOLS,
            "args": st.dictionaries(st.sampled_from(["a", "b", "output"]), VALUES, max_size=3),
        }
    ),
    max_size=6,
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(STEPS, STEPS)
def test_trajectory_metrics_lie_in_the_unit_interval_and_nest(pred: Any, gold: Any) -> None:
    metrics = dora.trajectory_metrics(pred, gold)
    assert set(metrics) == set(dora.METRICS)
    assert all(0.0 <= v <= 1.0 for v in metrics.values()), metrics
    # A matching prefix is a common subsequence; a full one contains every gold tool.
    assert metrics["t_em"] <= metrics["t_ord"] + 1e-12
    if metrics["t_em"] == 1.0:
        assert metrics["t_ord"] == 1.0
    if metrics["t_ord"] == 1.0:
        assert metrics["t_any"] == 1.0


@settings(max_examples=150, deadline=None)
@given(STEPS)
def test_a_trajectory_scores_full_marks_against_itself(gold: Any) -> None:
    assert dora.trajectory_metrics(gold, gold) == dict.fromkeys(dora.METRICS, 1.0)


SIMPLE_TYPES = [
    "scalar_count",
    "scalar_continuous",
    "ratio_pct",
    "exact_match",
    "set_f1",
    "unknown",
]
# No backticks: a code fence inside a value would hide the answer from DORA's reader too.
TEXT = st.text(st.characters(blacklist_characters="`"), max_size=6)
FIELD_VALUES = (
    st.integers(-(10**6), 10**6) | st.floats(-1e6, 1e6) | TEXT | st.lists(TEXT, max_size=3)
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.text(st.characters(blacklist_characters="`"), min_size=1, max_size=8),
        st.sampled_from([*SIMPLE_TYPES, "ignore"]),
        max_size=5,
    ),
    st.data(),
)
def test_answer_scores_are_means_of_unit_field_scores(spec: dict[str, str], data: Any) -> None:
    gold = {field: data.draw(FIELD_VALUES) for field in spec}
    pred = {field: data.draw(FIELD_VALUES) for field in spec if data.draw(st.booleans())}
    result = dora.score_answer(pred, gold, spec)
    fields = result["fields"]
    assert set(fields) == {f for f, t in spec.items() if t != "ignore"}
    assert all(0.0 <= v <= 1.0 for v in fields.values())
    if fields:
        assert result["score"] == pytest.approx(sum(fields.values()) / len(fields))
    else:
        assert result["score"] is None
    # The gold answer itself scores full marks, whether given as an object or as model text.
    assert dora.score_answer(gold, gold, spec)["fields"] == dict.fromkeys(fields, 1.0)
    text = f"Done.\n<Answer>{json.dumps(gold)}</Answer>"
    assert dora.score_answer(text, gold, spec)["fields"] == dict.fromkeys(fields, 1.0)


# --------------------------------------------------------------------------- edges of the API


def _square(x: float) -> dict[str, Any]:
    ring = [[x, 0.0], [x + 10.0, 0.0], [x + 10.0, 10.0], [x, 10.0], [x, 0.0]]
    return {"type": "Polygon", "coordinates": [ring]}


def test_a_polygon_in_another_crs_names_the_extra_when_pyproj_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grid = {"transform": [1.0, 0.0, 0.0, 0.0, 1.0, 0.0], "crs": "EPSG:32633"}
    write_files(
        {
            "gold.geojson": {"json": {**_square(0.0), "dora_grid": grid}},
            "pred.geojson": {
                "json": {**_square(1.0), "crs": {"properties": {"name": "EPSG:4326"}}}
            },
        },
        tmp_path,
    )
    monkeypatch.setitem(sys.modules, "pyproj", None)  # import pyproj now fails
    with pytest.raises(dora.MissingExtraError, match=r"plancheck\[dora\]"):
        dora.score_answer(
            {"extent": "pred.geojson"},
            {"extent": "gold.geojson"},
            {"extent": "polygon_iou"},
            polygon_roots=(tmp_path,),
        )


def test_a_missing_polygon_file_scores_zero_with_a_warning(tmp_path: Path) -> None:
    write_files({"gold.geojson": {"json": _square(0.0)}}, tmp_path)
    spec = {"extent": "polygon_iou"}
    with pytest.warns(dora.PolygonWarning, match="cannot locate pred polygon file"):
        result = dora.score_answer(
            {"extent": "nowhere.geojson"},
            {"extent": "gold.geojson"},
            spec,
            polygon_roots=(tmp_path,),
        )
    assert result == {"score": 0.0, "fields": {"extent": 0.0}}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dora.trajectory_metrics(None, []), "cannot score this trajectory"),
        (lambda: dora.trajectory_metrics([{"call": 5}], []), "tool name must be a string"),
        (lambda: dora.score_answer({}, {}, ["scalar"]), "eval_spec must be an object"),
        (
            lambda: dora.score_answer({}, None, {"n": "scalar_count"}),
            "gold answer must be an object",
        ),
    ],
)
def test_inputs_dora_cannot_score_raise_one_clear_error(call: Any, message: str) -> None:
    with pytest.raises(dora.DoraInputError, match=message):
        call()
