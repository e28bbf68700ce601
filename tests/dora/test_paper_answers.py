"""DORA's typed final-answer operators, against hand-computed values.

Polygon areas and intersections are also checked against an independent estimate: counting
the points of a fine grid that fall in both polygons (even-odd rule).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancheck.dora.paper_answers import (
    as_region,
    infer_kind,
    intersection_area,
    normalize_string,
    polygon_iou,
    region_area,
    score_answer,
    score_answers,
    score_dict,
    score_line,
    score_point,
    score_polygon,
    score_scalar,
    score_set,
    score_string,
)

SQUARE = [[0, 0], [2, 0], [2, 2], [0, 2]]
SHIFTED = [[1, 1], [3, 1], [3, 3], [1, 3]]
L_SHAPE = [[0, 0], [3, 0], [3, 1], [1, 1], [1, 3], [0, 3]]  # area 3 + 2 = 5
BIG = [[0, 0], [3, 0], [3, 3], [0, 3]]


def test_scalar_relative_tolerance() -> None:
    assert score_scalar(80, 100) == score_scalar(120, 100) == 1.0  # |p - g| = 20 = 0.2 * 100
    assert score_scalar(79.9, 100) == score_scalar(120.1, 100) == 0.0
    assert score_scalar(-110, -100) == 1.0  # relative to |g|
    assert score_scalar(0, 0) == 1.0 and score_scalar(1e-9, 0) == 0.0  # gold 0 needs exactly 0
    assert score_scalar("1,150", 1000) == 1.0  # a numeric string
    assert score_scalar(105, 100, tolerance=0.01) == 0.0
    assert score_scalar("about ten", 10) == score_scalar(True, 1) == score_scalar(None, 1) == 0


def test_string_normalization() -> None:
    assert normalize_string("  Partial_Damaged ") == "partial damaged"
    assert score_string("MAJOR-damage", "major damage") == 1.0
    assert score_string("Straße", "STRASSE") == 1.0  # case folding
    assert score_string("ｆｌｏｏｄ", "flood") == 1.0  # NFKC
    assert score_string("minor damage", "major damage") == 0.0
    assert score_string(["flood"], "flood") == 0.0


def test_point_pixel_distance() -> None:
    assert score_point([112, 116], [100, 100]) == 1.0  # distance exactly 20
    assert score_point([112, 116.1], [100, 100]) == 0.0
    assert score_point({"x": 5, "y": 5}, {"type": "Point", "coordinates": [0, 0]}) == 1.0
    assert score_point([0, 30], [0, 0], max_distance=50) == 1.0
    assert score_point("here", [0, 0]) == score_point([1], [0, 0]) == 0.0


def test_polygon_area_and_iou_by_hand() -> None:
    assert region_area(as_region(L_SHAPE)) == 5.0
    # two 2x2 squares overlapping in a 1x1 square: 1 / (4 + 4 - 1)
    assert polygon_iou(SQUARE, SHIFTED) == pytest.approx(1 / 7)
    # a non-convex L inside a 3x3 square: 5 / 9
    assert polygon_iou(L_SHAPE, BIG) == pytest.approx(5 / 9)
    # they only touch along edges
    assert polygon_iou(L_SHAPE, SHIFTED) == pytest.approx(0.0)
    # L & [0,2]^2 = [0,2]x[0,1] + [0,1]x[1,2], area 3: 3 / (5 + 4 - 3)
    assert polygon_iou(L_SHAPE, SQUARE) == pytest.approx(0.5)
    # orientation, closing vertex and GeoJSON spelling change nothing
    clockwise_closed = [*SQUARE[::-1], SQUARE[-1]]
    geojson = {"type": "Feature", "geometry": {"type": "Polygon",
                                               "coordinates": [[*SHIFTED, SHIFTED[0]]]}}
    assert polygon_iou(clockwise_closed, geojson) == pytest.approx(1 / 7)
    assert polygon_iou(SQUARE, [[5, 5], [6, 5], [6, 6]]) == 0.0  # disjoint
    assert polygon_iou(SQUARE, SQUARE) == pytest.approx(1.0)


def test_polygons_with_holes_and_multipolygons() -> None:
    frame = [[[0, 0], [4, 0], [4, 4], [0, 4]], [[1, 1], [3, 1], [3, 3], [1, 3]]]  # 16 - 4
    assert region_area(as_region(frame)) == 12.0
    assert polygon_iou(frame, [[0, 0], [4, 0], [4, 4], [0, 4]]) == pytest.approx(12 / 16)
    assert polygon_iou(frame, [[1, 1], [3, 1], [3, 3], [1, 3]]) == pytest.approx(0.0)
    two = {"type": "MultiPolygon", "coordinates": [[SQUARE], [[[5, 0], [7, 0], [7, 2], [5, 2]]]]}
    assert region_area(as_region(two)) == 8.0
    assert polygon_iou(two, SQUARE) == pytest.approx(4 / 8)


def test_polygon_threshold() -> None:
    assert score_polygon(SQUARE, SHIFTED) == 0.0  # IoU 1/7 < 0.5
    assert score_polygon(L_SHAPE, BIG) == 1.0  # IoU 5/9 >= 0.5
    assert score_polygon(L_SHAPE, SQUARE) == 1.0  # IoU exactly 0.5
    assert score_polygon(SQUARE, SHIFTED, threshold=0.1) == 1.0
    assert score_polygon([[0, 0], [1, 1]], SQUARE) == 0.0  # not a polygon
    assert score_polygon([[0, 0], [1, 1], [2, 2]], SQUARE) == 0.0  # no area


def test_line_start_end_and_length() -> None:
    gold = [[0, 0], [100, 0], [100, 100]]  # length 200
    assert score_line([[5, 5], [100, 0], [100, 95]], gold) == 1.0  # length 195.0...
    assert score_line([[0, 0], [200, 0]], gold) == pytest.approx(2 / 3)  # end too far
    # length 10 + sqrt(100^2 + 90^2) = 144.5, more than 20% short of 200
    assert score_line([[0, 0], [0, 10], [100, 100]], gold) == pytest.approx(2 / 3)
    # length 50 + sqrt(100^2 + 50^2) = 161.8: within 20%
    assert score_line([[0, 0], [0, 50], [100, 100]], gold) == 1.0
    assert score_line({"type": "LineString", "coordinates": gold}, gold) == 1.0


def test_set_f1() -> None:
    assert score_set(["Hospital A", "school b", "Depot"], ["hospital a", "School B", "Mall"]) \
        == pytest.approx(2 / 3)  # P = R = 2/3
    assert score_set(["a"], ["a", "b", "c", "d"]) == pytest.approx(2 * 1 * 0.25 / 1.25)
    assert score_set([], []) == 1.0
    assert score_set(["a"], []) == score_set([], ["a"]) == score_set("a", ["a"]) == 0.0


def test_dict_mean_over_the_key_union() -> None:
    # keys a, b, c: a within 20%, b missing from the prediction, c missing from gold
    assert score_dict({"a": 11, "c": 3}, {"a": 10, "b": 5}) == pytest.approx(1 / 3)
    assert score_dict({"phase1": 100, "phase2": 50}, {"phase1": 90, "phase2": 80}) == 0.5
    assert score_dict({"grade": "Major"}, {"grade": "major"}) == 1.0  # strings by string
    assert score_dict({}, {}) == 1.0
    assert score_dict([1], {"a": 1}) == 0.0


def test_dispatch_and_inference() -> None:
    assert infer_kind(3.5) == "scalar" and infer_kind("flood") == "string"
    assert infer_kind([1, 2]) == "point" and infer_kind({"x": 1, "y": 2}) == "point"
    assert infer_kind([*SQUARE, SQUARE[0]]) == "polygon" and infer_kind(SQUARE) == "line"
    assert infer_kind({"type": "Polygon", "coordinates": [SQUARE]}) == "polygon"
    assert infer_kind(["a", "b"]) == "set" and infer_kind({"a": 1}) == "dict"
    assert score_answer(SQUARE, SQUARE, "polygon") == 1.0
    assert score_answer(85, 100) == 1.0
    assert score_answer(85, 100, tolerance=0.1) == 0.0
    with pytest.raises(ValueError, match="unknown answer kind"):
        score_answer(1, 1, "vector")
    gold = {"damaged_area_m2": 1200.0, "worst_grade": "destroyed", "epicenter": [10, 10],
            "affected": ["school", "clinic"]}
    pred = {"damaged_area_m2": 1000, "worst_grade": "Destroyed", "epicenter": [40, 10],
            "affected": ["clinic"]}
    assert score_answers(pred, gold) == {"damaged_area_m2": 1.0, "worst_grade": 1.0,
                                         "epicenter": 0.0, "affected": pytest.approx(2 / 3)}
    assert score_answers({}, gold, {"epicenter": "point"})["epicenter"] == 0.0


# --------------------------------------------------------------------------- properties


@st.composite
def star_polygon(draw: st.DrawFn) -> list[list[float]]:
    """A simple, possibly non-convex polygon: star-shaped around its centre, since consecutive
    vertices are less than half a turn apart (angle 2 pi k / n plus a jitter under 3/4 of a
    step, n >= 4)."""
    count = draw(st.integers(min_value=4, max_value=8))
    cx, cy = draw(st.floats(2, 8)), draw(st.floats(2, 8))
    step = 2 * math.pi / count
    jitters = draw(st.lists(st.floats(0, 0.75 * step), min_size=count, max_size=count))
    radii = draw(st.lists(st.floats(0.5, 2.0), min_size=count, max_size=count))
    return [[cx + r * math.cos(k * step + j), cy + r * math.sin(k * step + j)]
            for k, (r, j) in enumerate(zip(radii, jitters, strict=True))]


def _inside(x: float, y: float, polygon: list[list[float]]) -> bool:
    inside = False
    for (ax, ay), (bx, by) in zip(polygon, [*polygon[1:], polygon[0]], strict=True):
        if (ay > y) != (by > y) and x < ax + (y - ay) * (bx - ax) / (by - ay):
            inside = not inside
    return inside


def _grid_area(a: list[list[float]], b: list[list[float]] | None = None, cells: int = 120
               ) -> float:
    size = 10 / cells
    hits = 0
    for i in range(cells):
        for j in range(cells):
            x, y = (i + 0.5) * size, (j + 0.5) * size
            if _inside(x, y, a) and (b is None or _inside(x, y, b)):
                hits += 1
    return hits * size * size


@pytest.mark.slow
@given(star_polygon(), star_polygon())
@settings(max_examples=25, deadline=None)
def test_intersection_area_agrees_with_a_grid_estimate(a: list[list[float]],
                                                       b: list[list[float]]) -> None:
    ra, rb = as_region(a), as_region(b)
    assert region_area(ra) == pytest.approx(_grid_area(a), abs=0.4)
    assert intersection_area(ra, rb) == pytest.approx(_grid_area(a, b), abs=0.4)


@given(star_polygon(), star_polygon())
@settings(max_examples=100, deadline=None)
def test_iou_is_symmetric_bounded_and_one_on_itself(a: list[list[float]],
                                                    b: list[list[float]]) -> None:
    iou = polygon_iou(a, b)
    assert 0.0 <= iou <= 1.0 + 1e-9
    assert iou == pytest.approx(polygon_iou(b, a), abs=1e-9)
    assert polygon_iou(a, a) == pytest.approx(1.0)
    assert intersection_area(as_region(a), as_region(b)) <= min(
        region_area(as_region(a)), region_area(as_region(b))) + 1e-9
