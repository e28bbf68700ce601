"""DORA's typed final-answer scoring, as its released ``evaluation.py`` computes it.

A task's ``eval_spec`` maps each answer field to a type; every field scores in [0, 1] and the
task scores the mean of its fields (``None`` when every field is ``ignore``: DORA's NaN).

====================  ==================================================================
type                  score
====================  ==================================================================
scalar_count          1 if ``|p - g| <= 1 + 0.2 |g|``
scalar_continuous     the same; a field named like a ratio (``percentage``, ``*_pct``,
                      ``*_ratio``, ``*_share``) is scored as ``ratio_pct`` instead
ratio_pct             ``|p - g| <= 0.2 |g|`` with a trailing ``%`` dropped, the prediction
                      also tried x100 or /100 when it and the gold differ in form (a
                      fraction is ``|x| <= 1.5``)
exact_match           canonical strings equal (:func:`~plancheck.dora.normalize.canonical_exact`)
set_f1                F1 of the normalised element sets (a string is split at commas)
scalar_dict           mean over the *gold* keys (keys normalised): ``*_id`` exact, latitude /
                      longitude within 20 pixels of GSD in degrees, |gold| <= 1.5 as a ratio,
                      else the scalar rule
ranking_kendall       Kendall's tau over the common items, mapped to [0, 1]
point_pixel           paired ``*_row``/``*_col`` fields: Euclidean distance <= 20 px
point_haversine       paired ``*_lat``/``*_lon`` fields: haversine distance <= 20 x GSD
                      metres (20 m without a GSD); one field holding both coordinates is
                      scored alone
polygon_iou           IoU of the largest polygons of two GeoJSON files >= 0.5
                      (:mod:`plancheck.dora.polygons`)
ignore                not scored
anything else         exact_match
====================  ==================================================================
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from plancheck.dora.errors import DoraInputError
from plancheck.dora.normalize import canonical_exact, normalize_key, normalize_text

TAU_R = 0.2
TAU_A = 1.0
TAU_PX = 20.0
TAU_GEO_PX = 20.0
TAU_GEO_FALLBACK_M = 20.0
EARTH_RADIUS_M = 6_371_000
METRES_PER_DEGREE = 111_320.0
# A value this small (in absolute terms) is read as a fraction, a larger one as a percentage.
FRACTION_LIMIT = 1.5

# \Z, not $: a name ending in "pct\n" does not end with "pct".
_RATIO_NAME = re.compile(r"percentage|_pct|pct\Z|_ratio|ratio\Z|_share|share\Z")
_GEO_KEY = re.compile(r"(^|_)(lat|latitude|lon|lng|longitude)$")
_GEO_SUFFIXES = (("_latitude", "lat"), ("_longitude", "lon"), ("_lat", "lat"), ("_lon", "lon"))
_PIXEL_SUFFIXES = (("_row", "row"), ("_col", "col"))
_PIXEL_KEYS = (("pixel_row", "pixel_col"), ("row", "col"), ("r", "c"), ("y", "x"))
_GEO_KEYS = (("latitude", "longitude"), ("lat", "lon"), ("lat", "lng"), ("y", "x"))


def _within(pred: float, gold: float, tau_r: float, tau_a: float) -> bool:
    return abs(pred - gold) <= tau_a + tau_r * abs(gold)


def score_scalar(pred: Any, gold: Any, tau_r: float = TAU_R, tau_a: float = TAU_A) -> float:
    """1 when the values are equal, both NaN, or within ``tau_a + tau_r |gold|``."""
    if pred == gold:
        return 1.0
    try:
        p, g = float(pred), float(gold)
    except (TypeError, ValueError):
        return 0.0
    if math.isnan(p) and math.isnan(g):
        return 1.0
    return 1.0 if _within(p, g, tau_r, tau_a) else 0.0


def score_ratio_value(pred: float, gold: float, tau_r: float = TAU_R, tau_a: float = 0.0) -> float:
    """A ratio given as a fraction or a percentage: the raw value, and when the two differ in
    form the prediction rescaled to the gold's form; the better score counts (so a genuine
    ratio of 1.6 is not read as a percentage)."""
    best = score_scalar(pred, gold, tau_r, tau_a)
    gold_fraction, pred_fraction = abs(gold) <= FRACTION_LIMIT, abs(pred) <= FRACTION_LIMIT
    if gold_fraction != pred_fraction:
        rescaled = pred / 100.0 if gold_fraction else pred * 100.0
        best = max(best, score_scalar(rescaled, gold, tau_r, tau_a))
    return best


def _ratio_number(value: Any) -> float:
    if isinstance(value, str):
        value = value.strip().rstrip("%").strip()
    return float(value)


def score_ratio(pred: Any, gold: Any) -> float:
    """``ratio_pct``: ``%`` signs dropped, fraction or percentage, no absolute tolerance."""
    if pred is not None and gold is not None:
        try:
            p, g = _ratio_number(pred), _ratio_number(gold)
        except (TypeError, ValueError):
            pass
        else:
            return score_ratio_value(p, g)
    return score_scalar(pred, gold, tau_a=0.0)


def score_exact(pred: Any, gold: Any) -> float:
    return 1.0 if canonical_exact(pred) == canonical_exact(gold) else 0.0


def _string_set(value: Any) -> set[str]:
    if isinstance(value, (list, tuple, set)):
        return {normalize_text(item) for item in value}
    if isinstance(value, str):
        return {normalize_text(item) for item in value.split(",") if item.strip()}
    return set()


def score_set_f1(pred: Any, gold: Any) -> float:
    predicted, wanted = _string_set(pred), _string_set(gold)
    if not predicted and not wanted:
        return 1.0
    if not predicted or not wanted:
        return 0.0
    hits = len(predicted & wanted)
    precision, recall = hits / len(predicted), hits / len(wanted)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _geo_tolerance_m(gsd_m: float | None) -> float:
    return TAU_GEO_PX * gsd_m if gsd_m else TAU_GEO_FALLBACK_M


def _dict_value_score(key: str, pred: Any, gold: Any, gsd_m: float | None) -> float:
    if key == "id" or key.endswith(("_id", "osmid")):
        return score_exact(pred, gold)
    try:
        g, p = float(gold), float(pred)
    except (TypeError, ValueError):
        return score_scalar(pred, gold)
    if _GEO_KEY.search(key):
        try:
            return 1.0 if abs(p - g) <= _geo_tolerance_m(gsd_m) / METRES_PER_DEGREE else 0.0
        except (TypeError, ValueError):
            # A GSD that is not a number: DORA's tolerance fails inside its guard, and the
            # scalar rule scores the value instead.
            return score_scalar(pred, gold)
    return score_ratio_value(p, g, TAU_R, 0.0 if abs(g) <= FRACTION_LIMIT else TAU_A)


def score_scalar_dict(pred: Any, gold: Any, gsd_m: float | None = None) -> float:
    """Mean over the gold's (normalised) keys; keys only the prediction has do not count."""
    if not isinstance(gold, dict) or not isinstance(pred, dict):
        return 0.0
    wanted = {normalize_key(k): v for k, v in gold.items()}
    given = {normalize_key(k): v for k, v in pred.items()}
    if not wanted:
        return 1.0
    total = 0.0
    for key, value in wanted.items():
        if key in given:
            total += _dict_value_score(key, given[key], value, gsd_m)
    return total / len(wanted)


def haversine_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi, dlambda = phi2 - phi1, math.radians(lon2) - math.radians(lon1)
    a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlambda / 2) ** 2
    return EARTH_RADIUS_M * 2 * math.asin(math.sqrt(min(a, 1.0)))


def _coordinates(value: Any, pixel: bool) -> tuple[float, float] | None:
    """Two coordinates from ``[a, b]`` or an object with a known pair of keys."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        try:
            return float(value[0]), float(value[1])
        except (TypeError, ValueError):
            return None
    if isinstance(value, dict):
        for first, second in _PIXEL_KEYS if pixel else _GEO_KEYS:
            if first in value and second in value:
                try:
                    return float(value[first]), float(value[second])
                except (TypeError, ValueError):
                    continue
    return None


def score_point(pred: Any, gold: Any, kind: str, gsd_m: float | None = None) -> float:
    """One field holding a whole point (``point_pixel`` or ``point_haversine``)."""
    pixel = kind == "point_pixel"
    g, p = _coordinates(gold, pixel), _coordinates(pred, pixel)
    if g is None or p is None:
        return 1.0 if pred == gold else score_scalar(pred, gold)
    if pixel:
        return 1.0 if math.sqrt((p[0] - g[0]) ** 2 + (p[1] - g[1]) ** 2) <= TAU_PX else 0.0
    return 1.0 if haversine_m(p[0], p[1], g[0], g[1]) <= _geo_tolerance_m(gsd_m) else 0.0


def score_ranking(pred: Any, gold: Any) -> float:
    """Kendall's tau between the two orders of the gold items the prediction ranks, in [0, 1]
    (fewer than two such items: 1 when both rank the same set)."""
    if not isinstance(gold, list) or not isinstance(pred, list):
        return 0.0
    gold_rank = {item: i for i, item in enumerate(gold)}
    pred_rank = {item: i for i, item in enumerate(pred)}
    common = [item for item in gold if item in pred_rank]
    if len(common) < 2:
        return 1.0 if set(pred) == set(gold) else 0.0
    concordant = total = 0
    for i, a in enumerate(common):
        for b in common[i + 1 :]:
            total += 1
            if (gold_rank[a] - gold_rank[b]) * (pred_rank[a] - pred_rank[b]) > 0:
                concordant += 1
    return ((2 * concordant - total) / total + 1.0) / 2.0


def point_pairs(eval_spec: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Point fields split over two answer fields, by base name: ``{"type": "geo"|"pixel",
    "lat"/"lon" or "row"/"col": field}``. A base keeps the type its first field gave it."""
    pairs: dict[str, dict[str, str]] = {}
    for field, kind in eval_spec.items():
        suffixes: Sequence[tuple[str, str]]
        if kind == "point_haversine":
            suffixes, pair_type = _GEO_SUFFIXES, "geo"
        elif kind == "point_pixel":
            suffixes, pair_type = _PIXEL_SUFFIXES, "pixel"
        else:
            continue
        for suffix, role in suffixes:
            if field.endswith(suffix):
                pairs.setdefault(field[: -len(suffix)], {"type": pair_type})[role] = field
                break
    return pairs


def _value(answer: Any, field: str, side: str, default: Any = None) -> Any:
    """``answer[field]`` (``default`` when absent); an answer that is not an object cannot be
    read, but only fails when a field is read from it, as in DORA."""
    if not isinstance(answer, dict):
        raise DoraInputError(f"the {side} answer must be an object, not {_kind(answer)}")
    return answer.get(field, default)


def _pair_score(info: Mapping[str, str], pred: Any, gold: Any, gsd_m: float | None) -> float:
    geo = info["type"] == "geo"
    first, second = ("lat", "lon") if geo else ("row", "col")
    try:
        p1 = float(_value(pred, info[first], "predicted", 0))
        p2 = float(_value(pred, info[second], "predicted", 0))
        g1 = float(_value(gold, info[first], "gold", 0))
        g2 = float(_value(gold, info[second], "gold", 0))
        if geo:
            return 1.0 if haversine_m(p1, p2, g1, g2) <= _geo_tolerance_m(gsd_m) else 0.0
        return 1.0 if math.sqrt((p1 - g1) ** 2 + (p2 - g2) ** 2) <= TAU_PX else 0.0
    except DoraInputError:
        raise
    except (TypeError, ValueError):
        return 0.0


def _field_score(
    field: str,
    kind: Any,
    pred: Any,
    gold: Any,
    gsd_m: float | None,
    polygon_roots: Sequence[str | Path],
) -> float:
    if kind in ("scalar_continuous", "scalar_count"):
        # DORA reads the field's name for both kinds: a key without ``lower`` raises there.
        name = field.lower()
        if kind == "scalar_continuous" and _RATIO_NAME.search(name):
            return score_ratio(pred, gold)
        return score_scalar(pred, gold)
    if kind == "ratio_pct":
        return score_ratio(pred, gold)
    if kind == "scalar_dict":
        return score_scalar_dict(pred, gold, gsd_m)
    if kind == "set_f1":
        return score_set_f1(pred, gold)
    if kind == "polygon_iou":
        from plancheck.dora.polygons import score_polygon_files

        return score_polygon_files(pred, gold, polygon_roots)
    if kind == "ranking_kendall":
        return score_ranking(pred, gold)
    if kind in ("point_haversine", "point_pixel"):
        return score_point(pred, gold, kind, gsd_m)
    return score_exact(pred, gold)


def score_fields(
    pred: Any,
    gold: Any,
    eval_spec: Mapping[str, Any],
    gsd_m: float | None = None,
    polygon_roots: Sequence[str | Path] = (),
) -> dict[str, float]:
    """Each scored field's score, in DORA's order: the fields of ``eval_spec`` not ignored and
    not half of a point pair, then one ``<base>__point_geo`` / ``<base>__point_px`` per
    complete pair."""
    pairs = point_pairs(eval_spec)
    in_pairs = {field for info in pairs.values() for role, field in info.items() if role != "type"}
    scores: dict[str, float] = {}
    for field, kind in eval_spec.items():
        if kind == "ignore" or field in in_pairs:
            continue
        pred_value, gold_value = _value(pred, field, "predicted"), _value(gold, field, "gold")
        scores[field] = _field_score(field, kind, pred_value, gold_value, gsd_m, polygon_roots)
    for base, info in pairs.items():
        if info["type"] == "geo" and "lat" in info and "lon" in info:
            scores[f"{base}__point_geo"] = _pair_score(info, pred, gold, gsd_m)
        elif info["type"] == "pixel" and "row" in info and "col" in info:
            scores[f"{base}__point_px"] = _pair_score(info, pred, gold, gsd_m)
    return scores


def as_prediction(predicted_answer: Any) -> dict[str, Any]:
    """The answer object DORA scores for a run record's ``predicted_answer``: an object as
    is, nothing as ``{}``, anything else parsed as text (see
    :func:`plancheck.dora.predictions.parse_prediction`), ``{"_raw": text}`` when no object
    can be read from it."""
    from plancheck.dora.predictions import parse_prediction

    if isinstance(predicted_answer, dict):
        return predicted_answer
    if predicted_answer is None:
        return {}
    text = str(predicted_answer)
    parsed = parse_prediction(text)
    return parsed if isinstance(parsed, dict) else {"_raw": text}


def score_answer(
    predicted_answer: Any,
    final_answer: Any,
    eval_spec: Any,
    gsd_m: float | None = None,
    polygon_roots: Sequence[str | Path] = (),
) -> dict[str, Any]:
    """DORA's score of one task's answer: ``{"score": mean of the fields or None,
    "fields": {field: score}}``.

    ``predicted_answer`` is what a run record holds (an object, or model text with the
    answer object in it); ``final_answer`` and ``eval_spec`` are the gold task's; ``gsd_m`` is
    the scene's ground sample distance; polygon files are looked up under ``polygon_roots``.
    Raises :class:`DoraInputError` where DORA's evaluator raises.
    """
    if not isinstance(eval_spec, dict):
        raise DoraInputError(f"the eval_spec must be an object, not {_kind(eval_spec)}")
    try:
        fields = score_fields(
            as_prediction(predicted_answer), final_answer, eval_spec, gsd_m, polygon_roots
        )
    except DoraInputError:
        raise
    except (TypeError, ValueError, AttributeError, OverflowError, RecursionError, OSError) as error:
        raise DoraInputError(f"DORA cannot score this answer: {error}") from error
    score = sum(fields.values()) / len(fields) if fields else None
    return {"score": score, "fields": fields}


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
