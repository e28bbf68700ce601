"""``polygon_iou`` answers: the largest polygons of two GeoJSON files, IoU >= 0.5.

Answers name files. A gold file holds the largest gold polygon; for a georeferenced scene it
is in world coordinates and carries the image's pixel grid as ``dora_grid`` (``{"transform":
[a, b, c, d, e, f], "crs": ...}``, GDAL's affine order). A predicted file without a ``crs`` is
then in pixel coordinates (column, row) and is moved onto the grid; one with a ``crs`` is
reprojected to the grid's CRS (pyproj, the ``dora`` extra). An empty gold file (no polygon)
means there is no such region: an empty answer (``""``, ``"none"``, ``"[]"``, ...) then scores 1.
Anything unreadable scores 0 with a :class:`PolygonWarning`, as in DORA.

Files are found as given, or under one of the roots, or -- for a run copied from another
machine -- by the longest trailing part of the path that exists under a root.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from plancheck.dora.errors import MissingExtraError

TAU_IOU = 0.5
EMPTY_ANSWERS = frozenset({"", "none", "null", "n/a", "na", "nan", "[]", "{}"})


class PolygonWarning(UserWarning):
    """A polygon answer's file is missing or unreadable (the field scores 0)."""


def resolve_polygon_path(path: str, roots: Sequence[str | Path] = ()) -> Path | None:
    if not path:
        return None
    if Path(path).is_file():
        return Path(path)
    # Drive letters ("C:") are dropped so a Windows path can match under a POSIX root.
    parts = [p for p in path.replace("\\", "/").split("/") if p and not p.endswith(":")]
    for start in range(len(parts)):
        for root in roots:
            candidate = Path(root).joinpath(*parts[start:])
            if candidate.is_file():
                return candidate
    return None


def _shapely() -> Any:
    try:
        import shapely.affinity
        import shapely.geometry
    except ImportError as error:
        raise MissingExtraError("shapely") from error
    return shapely


def _geometries(geojson: dict[str, Any]) -> list[Any]:
    kind = geojson.get("type")
    if kind == "FeatureCollection":
        return [feature.get("geometry") for feature in geojson.get("features", [])]
    return [geojson.get("geometry") if kind == "Feature" else geojson]


def largest_polygon(geojson: Any, grid: Any = None) -> Any:
    """The largest non-empty Polygon (also inside multi-geometries) of a GeoJSON object, in
    the world frame of ``grid`` when one is given; None when there is none."""
    shapely = _shapely()
    polygons = []
    for geometry in filter(None, _geometries(geojson)):
        shape = shapely.geometry.shape(geometry)
        polygons += [
            part
            for part in getattr(shape, "geoms", [shape])
            if part.geom_type == "Polygon" and not part.is_empty
        ]
    if not polygons:
        return None
    largest = max(polygons, key=lambda polygon: polygon.area)
    if grid is None:
        return largest
    crs = (geojson.get("crs") or {}).get("properties", {}).get("name")
    if crs is None:
        a, b, c, d, e, f = grid["transform"]
        return shapely.affinity.affine_transform(largest, [a, b, d, e, c, f])
    try:
        from pyproj import CRS, Transformer
    except ImportError as error:
        raise MissingExtraError("pyproj") from error
    source, target = CRS(crs), CRS(grid["crs"])
    if source != target:
        project = Transformer.from_crs(source, target, always_xy=True).transform
        largest = shapely.transform(largest, project, interleaved=False)
    return largest


def _warn(message: str) -> None:
    warnings.warn(message, PolygonWarning, stacklevel=3)


def _read_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def score_polygon_files(
    pred: Any, gold: Any, roots: Sequence[str | Path] = (), tau_iou: float = TAU_IOU
) -> float:
    """1 when the largest predicted polygon overlaps the largest gold one with IoU >= tau."""
    pred_path, gold_path = str(pred), str(gold)
    if pred_path == gold_path:
        return 1.0
    gold_file = resolve_polygon_path(gold_path, roots)
    if gold_file is None:
        _warn(f"polygon_iou: cannot locate gold polygon file: {gold_path}")
        return 0.0
    empty_answer = pred_path.strip().lower() in EMPTY_ANSWERS
    try:
        gold_json = _read_json(gold_file)
        gold_polygon = largest_polygon(gold_json)
        pred_file = None if empty_answer else resolve_polygon_path(pred_path, roots)
        if pred_file is None:
            if not empty_answer:
                _warn(f"polygon_iou: cannot locate pred polygon file: {pred_path}")
            return 1.0 if gold_polygon is None and empty_answer else 0.0
        pred_polygon = largest_polygon(_read_json(pred_file), gold_json.get("dora_grid"))
        if gold_polygon is None or pred_polygon is None:
            return 1.0 if gold_polygon is None and pred_polygon is None else 0.0
        # buffer(0) repairs self-intersecting rings before the overlay.
        gold_polygon, pred_polygon = gold_polygon.buffer(0), pred_polygon.buffer(0)
        union = gold_polygon.union(pred_polygon).area
        overlap = gold_polygon.intersection(pred_polygon).area
        return 1.0 if union > 0 and overlap / union >= tau_iou else 0.0
    except MissingExtraError:
        raise
    except Exception as error:  # DORA scores any unreadable polygon 0; so does plancheck
        _warn(f"polygon_iou error for {pred_path}: {error}")
        return 0.0
