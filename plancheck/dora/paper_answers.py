"""DORA's typed final-answer scoring operators (DORA paper, section 4 and Table 3).

DORA's final answers are JSON objects whose fields fall into seven types, scored by four atomic
operators and three composites built from them:

=========  =======================================================  ======================
kind       score                                                    parameter (default)
=========  =======================================================  ======================
scalar     1 if ``|p - g| <= tau_r * |g|``                          ``tolerance`` 0.2
string     1 if ``nrm(p) == nrm(g)``                                --
point      1 if the Euclidean distance ``||p - g||_2 <= tau_px``    ``max_distance`` 20 px
polygon    1 if ``IoU(p, g) >= tau_IoU``                            ``threshold`` 0.5
line       mean of: start point, end point (point operator), and total length (scalar)
set        F1 of the predicted elements against the gold ones, elements string-normalized
dict       mean over the union of keys of each key's score (0 when one side lacks the key)
=========  =======================================================  ======================

The paper does not spell out ``nrm``; plancheck's normalization is Unicode NFKC, case folding,
and every run of characters other than letters and digits turned into one space (so
``"Partial_Damaged"`` equals ``"partial damaged"``). A dict's values are scored by the operator
their gold value calls for (numbers by the scalar operator, as the paper says; strings by the
string operator; nested dicts recursively).

Geometry: a point is ``[x, y]``, ``{"x": x, "y": y}`` or a GeoJSON Point; a line a list of
points or a GeoJSON LineString; a polygon a ring (a list of points, closed or not), a list of
rings (outer ring first, then holes), a GeoJSON Polygon or MultiPolygon (or a Feature holding
one). Polygons must be simple (holes allowed); polygon areas and intersections are computed
exactly here (no geometry library): the intersection area of two polygons is the signed sum
of the intersections of their fan triangles (:func:`intersection_area`).

A value that cannot be read as its kind scores 0.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

KINDS = ("scalar", "string", "point", "line", "polygon", "set", "dict")
SCALAR_TOLERANCE = 0.2
POINT_MAX_DISTANCE = 20.0
IOU_THRESHOLD = 0.5

Point = tuple[float, float]
Ring = list[Point]


class AnswerError(ValueError):
    """A value cannot be read as the geometry or number its kind needs."""


# --------------------------------------------------------------------------- scalars, strings


def as_number(value: Any) -> float:
    """A JSON number, or a string holding one (``"1,250.5"`` reads as 1250.5)."""
    if isinstance(value, bool):
        raise AnswerError("a boolean is not a number")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip().replace(",", ""))
        except ValueError:
            raise AnswerError(f"{value!r} is not a number") from None
    else:
        raise AnswerError(f"{type(value).__name__} is not a number")
    if not math.isfinite(number):
        raise AnswerError(f"{value!r} is not a finite number")
    return number


def score_scalar(pred: Any, gold: Any, *, tolerance: float = SCALAR_TOLERANCE) -> float:
    """1 when ``pred`` is within ``tolerance`` of ``gold``, relative to ``|gold|`` (so a gold
    value of 0 needs an exact 0)."""
    try:
        p, g = as_number(pred), as_number(gold)
    except AnswerError:
        return 0.0
    return 1.0 if abs(p - g) <= tolerance * abs(g) else 0.0


def normalize_string(value: Any) -> str:
    """NFKC, case-folded, with runs of non-alphanumeric characters collapsed to one space."""
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    return " ".join(re.findall(r"[^\W_]+", text))


def score_string(pred: Any, gold: Any) -> float:
    if pred is None or isinstance(pred, (list, dict)):
        return 0.0
    return 1.0 if normalize_string(pred) == normalize_string(gold) else 0.0


# --------------------------------------------------------------------------- points and lines


def as_point(value: Any) -> Point:
    if isinstance(value, Mapping):
        if value.get("type") == "Point":
            return as_point(value.get("coordinates"))
        if "x" in value and "y" in value:
            return as_number(value["x"]), as_number(value["y"])
        raise AnswerError("a point object needs `x` and `y`")
    if isinstance(value, (list, tuple)) and len(value) in (2, 3):
        return as_number(value[0]), as_number(value[1])  # a third (z) coordinate is ignored
    raise AnswerError("a point is [x, y]")


def score_point(pred: Any, gold: Any, *, max_distance: float = POINT_MAX_DISTANCE) -> float:
    """1 when the points are at most ``max_distance`` (pixels) apart."""
    try:
        (px, py), (gx, gy) = as_point(pred), as_point(gold)
    except AnswerError:
        return 0.0
    return 1.0 if math.hypot(px - gx, py - gy) <= max_distance else 0.0


def as_line(value: Any) -> list[Point]:
    if isinstance(value, Mapping):
        if value.get("type") == "Feature":
            return as_line(value.get("geometry"))
        if value.get("type") == "LineString":
            return as_line(value.get("coordinates"))
        raise AnswerError("a line object is a GeoJSON LineString")
    if not isinstance(value, (list, tuple)) or len(value) < 2:
        raise AnswerError("a line is a list of at least two points")
    return [as_point(p) for p in value]


def line_length(points: Sequence[Point]) -> float:
    return sum(math.dist(a, b) for a, b in itertools.pairwise(points))


def score_line(
    pred: Any,
    gold: Any,
    *,
    max_distance: float = POINT_MAX_DISTANCE,
    tolerance: float = SCALAR_TOLERANCE,
) -> float:
    """The mean of the start-point, end-point and total-length scores."""
    try:
        p, g = as_line(pred), as_line(gold)
    except AnswerError:
        return 0.0
    return (
        score_point(p[0], g[0], max_distance=max_distance)
        + score_point(p[-1], g[-1], max_distance=max_distance)
        + score_scalar(line_length(p), line_length(g), tolerance=tolerance)
    ) / 3


# --------------------------------------------------------------------------- polygons


def _is_point_like(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in value)
    )


def as_region(value: Any) -> list[Ring]:
    """A polygonal region as rings oriented so that the region's winding number is 1: outer
    rings counter-clockwise, holes clockwise. Closing vertices are dropped."""
    if isinstance(value, Mapping):
        kind = value.get("type")
        if kind == "Feature":
            return as_region(value.get("geometry"))
        if kind == "Polygon":
            return as_region(value.get("coordinates"))
        if kind == "MultiPolygon":
            return [
                ring for polygon in value.get("coordinates") or [] for ring in as_region(polygon)
            ]
        raise AnswerError("a polygon object is a GeoJSON Polygon or MultiPolygon")
    if not isinstance(value, (list, tuple)) or not value:
        raise AnswerError("a polygon is a list of points or of rings")
    one_ring = isinstance(value[0], Mapping) or _is_point_like(value[0])
    rings = [value] if one_ring else list(value)  # one ring, or an outer ring and holes
    region = []
    for k, raw in enumerate(rings):
        ring = [as_point(p) for p in raw]
        if len(ring) > 1 and ring[0] == ring[-1]:
            ring.pop()
        if len(ring) < 3:
            raise AnswerError("a polygon ring needs at least three points")
        outer = k == 0
        if (signed_area(ring) > 0) != outer:
            ring.reverse()
        region.append(ring)
    return region


def signed_area(ring: Sequence[Point]) -> float:
    """Shoelace area: positive for a counter-clockwise ring."""
    return (
        sum(
            ax * by - bx * ay for (ax, ay), (bx, by) in zip(ring, [*ring[1:], ring[0]], strict=True)
        )
        / 2
    )


def region_area(region: Sequence[Ring]) -> float:
    return sum(signed_area(ring) for ring in region)


def _clip(subject: list[Point], clip: Sequence[Point]) -> list[Point]:
    """Sutherland-Hodgman: the part of convex ``subject`` inside convex CCW ``clip``."""
    output = subject
    for (ax, ay), (bx, by) in zip(clip, [*clip[1:], clip[0]], strict=True):
        if not output:
            break
        points, output = output, []

        def side(p: Point, ax: float = ax, ay: float = ay, bx: float = bx, by: float = by) -> float:
            return (bx - ax) * (p[1] - ay) - (by - ay) * (p[0] - ax)

        for current, following in zip(points, [*points[1:], points[0]], strict=True):
            here, there = side(current), side(following)
            if here >= 0:
                output.append(current)
            if (here >= 0) != (there >= 0):
                t = here / (here - there)
                output.append(
                    (
                        current[0] + t * (following[0] - current[0]),
                        current[1] + t * (following[1] - current[1]),
                    )
                )
    return output


def _fan(region: Sequence[Ring], origin: Point) -> list[tuple[float, list[Point]]]:
    """The region as signed triangles (origin, p_k, p_k+1): the signs times the triangles'
    indicator functions add up to the region's winding number, i.e. to its indicator."""
    triangles = []
    for ring in region:
        for a, b in zip(ring, [*ring[1:], ring[0]], strict=True):
            triangle = [origin, a, b]
            area = signed_area(triangle)
            if abs(area) > 1e-12:
                triangles.append(
                    (1.0 if area > 0 else -1.0, triangle if area > 0 else [origin, b, a])
                )
    return triangles


def intersection_area(a: Sequence[Ring], b: Sequence[Ring]) -> float:
    """The area of the intersection of two regions (as :func:`as_region` returns them).

    With fan triangles T_k (signs s_k) of ``a`` and U_l (signs t_l) of ``b`` from one origin,
    1_a = sum s_k 1_Tk and 1_b = sum t_l 1_Ul almost everywhere, so
    area(a & b) = sum_k sum_l s_k t_l area(T_k & U_l), each term an intersection of two convex
    triangles. Exact for simple polygons with holes, O(|a| |b|).
    """
    points = [p for ring in (*a, *b) for p in ring]
    if not points or not _boxes_overlap(a, b):
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    origin = ((min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2)  # keeps the numbers small
    total = 0.0
    for sign_a, triangle_a in _fan(a, origin):
        for sign_b, triangle_b in _fan(b, origin):
            clipped = _clip(triangle_a, triangle_b)
            if len(clipped) >= 3:
                total += sign_a * sign_b * signed_area(clipped)
    return max(0.0, total)


def _boxes_overlap(a: Sequence[Ring], b: Sequence[Ring]) -> bool:
    def box(region: Sequence[Ring]) -> tuple[float, float, float, float]:
        xs = [p[0] for ring in region for p in ring]
        ys = [p[1] for ring in region for p in ring]
        return min(xs), min(ys), max(xs), max(ys)

    if not a or not b:
        return False
    ax0, ay0, ax1, ay1 = box(a)
    bx0, by0, bx1, by1 = box(b)
    return ax0 < bx1 and bx0 < ax1 and ay0 < by1 and by0 < ay1


def polygon_iou(pred: Any, gold: Any) -> float:
    """Intersection over union of two polygons (0 when either has no area)."""
    a, b = as_region(pred), as_region(gold)
    area_a, area_b = region_area(a), region_area(b)
    if area_a <= 0 or area_b <= 0:
        return 0.0
    inter = intersection_area(a, b)
    return inter / (area_a + area_b - inter)


def score_polygon(pred: Any, gold: Any, *, threshold: float = IOU_THRESHOLD) -> float:
    try:
        iou = polygon_iou(pred, gold)
    except AnswerError:
        return 0.0
    return 1.0 if iou >= threshold else 0.0


# --------------------------------------------------------------------------- composites


def score_set(pred: Any, gold: Any) -> float:
    """F1 of the predicted elements against the gold ones (string-normalized)."""
    if not isinstance(pred, (list, tuple, set)) or not isinstance(gold, (list, tuple, set)):
        return 0.0
    p = {normalize_string(x) for x in pred}
    g = {normalize_string(x) for x in gold}
    if not p and not g:
        return 1.0
    hits = len(p & g)
    if hits == 0:
        return 0.0
    precision, recall = hits / len(p), hits / len(g)
    return 2 * precision * recall / (precision + recall)


def score_dict(pred: Any, gold: Any, **params: float) -> float:
    """The mean, over the union of keys, of each key's score (0 for a key one side lacks)."""
    if not isinstance(pred, Mapping) or not isinstance(gold, Mapping):
        return 0.0
    keys = set(pred) | set(gold)
    if not keys:
        return 1.0
    total = sum(
        score_answer(pred[k], gold[k], None, **params) for k in keys if k in pred and k in gold
    )
    return total / len(keys)


# --------------------------------------------------------------------------- dispatch


def infer_kind(gold: Any) -> str:
    """The kind a gold value most plausibly is. A convenience: give kinds explicitly where
    they are known (a list of points is a closed ring, i.e. a polygon, or else a line)."""
    if isinstance(gold, bool) or gold is None:
        return "string"
    if isinstance(gold, (int, float)):
        return "scalar"
    if isinstance(gold, str):
        return "string"
    if isinstance(gold, Mapping):
        kind = gold.get("type")
        if kind == "Feature" and isinstance(gold.get("geometry"), Mapping):
            return infer_kind(gold["geometry"])
        geometry = {
            "Point": "point",
            "LineString": "line",
            "Polygon": "polygon",
            "MultiPolygon": "polygon",
        }
        if isinstance(kind, str) and kind in geometry:
            return geometry[kind]
        if set(gold) == {"x", "y"}:
            return "point"
        return "dict"
    if isinstance(gold, (list, tuple)):
        if len(gold) == 2 and _is_point_like(gold):
            return "point"
        if gold and all(_is_point_like(p) for p in gold):
            return "polygon" if len(gold) > 3 and list(gold[0]) == list(gold[-1]) else "line"
        if gold and all(
            isinstance(r, (list, tuple)) and r and all(_is_point_like(p) for p in r) for r in gold
        ):
            return "polygon"  # rings
        return "set"
    return "string"


def score_answer(pred: Any, gold: Any, kind: str | None = None, **params: float) -> float:
    """Score one answer field; ``kind`` is one of :data:`KINDS` (inferred from ``gold`` when
    ``None``). ``params`` are the operators' parameters (``tolerance``, ``max_distance``,
    ``threshold``); each operator takes the ones it uses."""
    kind = kind or infer_kind(gold)
    tolerance = params.get("tolerance", SCALAR_TOLERANCE)
    max_distance = params.get("max_distance", POINT_MAX_DISTANCE)
    if kind == "scalar":
        return score_scalar(pred, gold, tolerance=tolerance)
    if kind == "string":
        return score_string(pred, gold)
    if kind == "point":
        return score_point(pred, gold, max_distance=max_distance)
    if kind == "line":
        return score_line(pred, gold, max_distance=max_distance, tolerance=tolerance)
    if kind == "polygon":
        return score_polygon(pred, gold, threshold=params.get("threshold", IOU_THRESHOLD))
    if kind == "set":
        return score_set(pred, gold)
    if kind == "dict":
        return score_dict(pred, gold, **params)
    raise ValueError(f"unknown answer kind {kind!r}; expected one of {', '.join(KINDS)}")


def score_answers(
    pred: Mapping[str, Any],
    gold: Mapping[str, Any],
    kinds: Mapping[str, str] | None = None,
    **params: float,
) -> dict[str, float]:
    """Per gold field, the score of the predicted field of the same name (0 when missing);
    ``kinds`` gives a field's kind (inferred for the others)."""
    kinds = kinds or {}
    return {
        field: score_answer(pred[field], value, kinds.get(field), **params)
        if isinstance(pred, Mapping) and field in pred
        else 0.0
        for field, value in gold.items()
    }
