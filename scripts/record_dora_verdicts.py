#!/usr/bin/env python3
"""Record DORA's own evaluator's verdicts on generated scoring cases.

Imports ``dora/evaluation.py`` from a copy of DORA's released code (``--reference``, default
``../shared/dora-reference``) at run time -- its ``.paths`` module, not released, is stubbed in a
temporary directory -- and runs it on cases generated here from ``--seed``:

* ``trajectory``: ``compute_trajectory_metrics(pred, gold)``;
* ``answer``: a run record's ``predicted_answer`` turned into an answer object as
  ``load_predictions`` does, then ``score_task_answer`` (every eval_spec type, point pairs,
  polygon files with and without ``crs`` / ``dora_grid``);
* ``parse``: ``_parse_string_prediction(text)``;
* ``dimension``: ``evaluate_dimension(gold_samples, pred_samples)``;
* ``run``: task files and run records written to a temporary directory, ``run_evaluation``,
  and the ``DORA`` line of ``format_results_table``.

Each line of ``tests/data/dora_verdicts.jsonl.gz`` holds a case's inputs and DORA's verdict
(``{"error": exception name}`` where DORA raises); the first line is a header.
``tests/dora/test_dora_parity.py`` replays every case through ``plancheck.dora``. Inputs are
round-tripped through JSON before DORA sees them, so both sides score identical values.

Usage::

    python scripts/record_dora_verdicts.py --seed 12
    coverage run --branch --include='*/dora/evaluation.py' scripts/record_dora_verdicts.py \\
        --out /tmp/v.jsonl.gz && coverage report -m
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import math
import os
import random
import sys
import tempfile
import types
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.dora_cases import ROOT, with_root, write_files  # noqa: E402

DEFAULT_REFERENCE = REPO.parent / "shared" / "dora-reference"
REFERENCE_ENV = "PLANCHECK_DORA_REFERENCE"
DEFAULT_OUT = REPO / "tests" / "data" / "dora_verdicts.jsonl.gz"
PACKAGE = "_dora_reference"
COUNTS = {
    "trajectory": 1300,
    "answer": 1700,
    "polygon": 400,
    "parse": 300,
    "dimension": 250,
    "run": 150,
}

Json = Any


# --------------------------------------------------------------------------- DORA itself


def load_dora(reference: Path, stub_dir: Path) -> types.ModuleType:
    """DORA's ``evaluation`` module, imported from ``reference`` as a package whose
    ``paths`` module is a stub in ``stub_dir`` (nothing is copied from the reference)."""
    source = reference / "dora"
    if not (source / "evaluation.py").is_file():
        raise SystemExit(f"{source / 'evaluation.py'} not found: is --reference DORA's code?")
    (stub_dir / "paths.py").write_text(
        f"from pathlib import Path\nIMAGES_DIR = Path({str(stub_dir / 'images')!r})\n"
        f"TASKS_DIR = Path({str(stub_dir / 'tasks')!r})\n",
        encoding="utf-8",
    )
    package = types.ModuleType(PACKAGE)
    package.__path__ = [str(stub_dir), str(source)]
    sys.modules[PACKAGE] = package
    import importlib

    return importlib.import_module(f"{PACKAGE}.evaluation")


def _quietly(call: Callable[[], Any]) -> Any:
    """DORA's result, or ``{"error": name}`` when it raises (its prints and warnings muted)."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            return call()
        except Exception as error:
            return {"error": type(error).__name__}


def _nan_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def as_answer_object(dora: types.ModuleType, answer: Any) -> Any:
    """What ``load_predictions`` makes of a record's ``predicted_answer``."""
    if isinstance(answer, dict):
        return answer
    if answer is None:
        return {}
    parsed = dora._parse_string_prediction(str(answer))
    return parsed if isinstance(parsed, dict) else {"_raw": str(answer)}


def verdict(dora: types.ModuleType, kind: str, case: dict[str, Any], root: Path) -> Any:
    data = with_root(case, root)
    if kind == "trajectory":
        return _quietly(lambda: dora.compute_trajectory_metrics(data["pred"], data["gold"]))
    if kind == "parse":
        return _quietly(lambda: {"value": dora._parse_string_prediction(data["text"])})
    if kind in ("answer", "polygon"):

        def answer() -> Any:
            pred = as_answer_object(dora, data["pred"])
            score, fields = dora.score_task_answer(
                pred, data["gold"], data["spec"], gsd_m=data["gsd"], polygon_roots=(root,)
            )
            return {"score": _nan_none(score), "fields": fields}

        return _quietly(answer)
    if kind == "dimension":
        return _quietly(
            lambda: dora.evaluate_dimension(data["gold"], data["pred"], polygon_roots=(root,))
        )
    if kind == "run":
        return _quietly(lambda: run_verdict(dora, data, root))
    raise ValueError(kind)


def run_verdict(dora: types.ModuleType, data: dict[str, Any], root: Path) -> Any:
    tasks_dir, run_dir = root / "tasks", root / "run"
    for dim, samples in data["gold"].items():
        tasks_dir.mkdir(parents=True, exist_ok=True)
        (tasks_dir / f"{dora.TASKS[dim]}.json").write_text(json.dumps(samples), "utf-8")
    records = data["records"]
    for dim, lines in (records or {}).items():
        folder = run_dir / dora.TASKS[dim]
        folder.mkdir(parents=True, exist_ok=True)
        text = "".join(
            json.dumps(r) + "\n" + ("\n" if i % 3 == 1 else "") for i, r in enumerate(lines)
        )
        (folder / "benchmark.jsonl").write_text(text, "utf-8")
    run_dir.mkdir(parents=True, exist_ok=True)
    result = dora.run_evaluation(tasks_dir, None if records is None else run_dir)
    try:
        table = dora.format_results_table(result)
        row = next(line for line in table.splitlines() if line.startswith("DORA "))
        dora_row: list[float] | None = [float(x) for x in row.split()[1:]]
    except (KeyError, StopIteration):
        dora_row = None
    return {"dora_score": result["dora_score"], "full": result["full"], "table_row": dora_row}


# --------------------------------------------------------------------------- vocabulary

TOOLS = [
    "seg.building_damage",
    "seg.road_extraction",
    "det.vehicle",
    "calc.area",
    "calc.distance",
    "poi.search_nearby",
    "vis.overlay",
    "analysis.flood_extent",
]
WORDS = ["flood", "Minor_Damage", "minor damage", "Destroyed", "ﬁre", "Phase 2", "t1", "road"]
PATHS = [
    "/data/images/pre_event.tif",
    "/data/images/post_event.tif",
    "./out/mask_3fa9c2d1_flood.png",
    "./out/mask_a1b2c3d4e5_flood.png",
    "C:\\runs\\out\\buildings_9f8e7d6c.geojson",
    "~/scratch/roads.json",
    "../shared/poi.csv",
    "D:results",
    "/tmp/run1/seg_00ff00aa_bb11cc22.png",
    "/tmp/run2/seg.png",
]


def spelled(rng: random.Random, tool: str) -> str:
    """A spelling of ``tool`` that DORA's name normalisation may or may not unify."""
    if "." not in tool:
        return tool
    head, tail = tool.split(".", 1)
    return rng.choice(
        [
            tool,
            tool,
            f"{head}_{tail}",
            f"{tool}(image_path=...)",
            f" {tool} ",
            f"{head}_{tail}(x)",
            tool.upper(),
            f"{head}-{tail}",
        ]
    )


def number(rng: random.Random) -> Json:
    return rng.choice(
        [
            rng.randint(0, 50),
            rng.randint(100, 5000),
            round(rng.uniform(0, 1), 4),
            round(rng.uniform(-10, 10), 3),
            0,
            1.5,
            float("nan"),
        ]
    )


def near(rng: random.Random, gold: float, tau_r: float, tau_a: float) -> float:
    """A value around the tolerance edge of ``gold`` (just inside or just outside) or far."""
    if isinstance(gold, float) and math.isnan(gold):
        return rng.choice([gold, 1.0])
    edge = tau_a + tau_r * abs(gold)
    factor = rng.choice([0.0, 0.5, 0.999999, 1.000001, 1.5, 3.0, -0.999999, -1.000001])
    return gold + factor * edge


# --------------------------------------------------------------------------- trajectories


def reference_to(rng: random.Random, step: int) -> str:
    key = rng.choice(["mask_path", "results", "area_m2", "geojson_path"])
    return rng.choice(
        [
            f"<{key}> from trajectory[{step}].obs",
            f"<{key}>  from  trajectory[{step}].obs\n",
            f"<{key}> from trajectory[{step}].obs.{key}",
            f"{key} from trajectory[{step}]",
        ]
    )


def arg_value(rng: random.Random, index: int, produced: list[str]) -> Json:
    kind = rng.randrange(10)
    if kind == 0:
        return number(rng)
    if kind == 1:
        return rng.choice(WORDS)
    if kind in (2, 3):
        return rng.choice(produced) if produced and rng.random() < 0.6 else rng.choice(PATHS)
    if kind == 4 and index > 0:
        return reference_to(rng, rng.randrange(index))
    if kind == 5:
        return rng.choice([True, False])
    if kind == 6:
        return [rng.choice(PATHS), number(rng)][: rng.randint(0, 2)]
    if kind == 7:
        return {"classes": rng.choice(WORDS), "thr": number(rng)}
    if kind == 8:
        return None
    return rng.choice(["hrnet", "segformer", "EPSG:4326", ""])


def observation(rng: random.Random, index: int) -> tuple[Json, list[str]]:
    path = f"/tmp/run/step{index}_{rng.choice(['mask', 'out'])}_{rng.randrange(16**8):08x}.png"
    body = {"tool": "x", "mask_path": path, "n": rng.randint(0, 9)}
    form = rng.randrange(7)
    if form == 0:
        return body, [path]
    if form == 1:
        return [{"type": "text", "text": json.dumps(body)}], [path]
    if form == 2:
        return [json.dumps(body)], [path]
    if form == 3:
        return [{"text": "not json"}, "also not json", 7], []
    if form == 4:
        return {"text": json.dumps([path])}, []
    if form == 5:
        return json.dumps(body), [path]
    return None, []


def gold_trajectory(rng: random.Random) -> list[Json]:
    steps: list[Json] = []
    produced: list[str] = []
    for index in range(rng.choice([0, 1, 1, 2, 3, 3, 4, 5, 6])):
        tool = rng.choice(TOOLS)
        args = {
            name: arg_value(rng, index, produced)
            for name in rng.sample(
                ["image_path", "mask_path", "threshold", "classes", "k"], rng.randint(0, 3)
            )
        }
        if rng.random() < 0.2:
            args["output_path"] = f"/tmp/run/out_{index}.geojson"
            produced.append(args["output_path"])
        obs, paths = observation(rng, index)
        produced += paths
        step: dict[str, Json] = {"call": tool, "args": args}
        if obs is not None:
            step["obs"] = obs
        if rng.random() < 0.1:
            steps.append(
                {
                    "call": rng.choice(
                        ["tool.loop", "tool_loop(bind=x, calls=[...])", "tool.reduce"]
                    ),
                    "args": {"over": "items"},
                }
            )
        steps.append(step)
    return steps


def mutate_value(rng: random.Random, value: Json, produced: list[str]) -> Json:
    if isinstance(value, bool):
        return rng.choice([value, not value, int(value), str(value)])
    if isinstance(value, (int, float)):
        return rng.choice([near(rng, float(value), 0.2, 1.0), str(value), None, value])
    if isinstance(value, str):
        if " from trajectory[" in value:
            return rng.choice([rng.choice(PATHS), None, 3, value])
        if value in PATHS or value.startswith("/tmp/"):
            choices = [
                value,
                value.replace("3fa9c2d1", "0badc0de"),
                "/elsewhere/" + value.replace("\\", "/").rsplit("/", 1)[-1],
                rng.choice(PATHS),
                "relative_name",
            ]
            if produced:
                choices.append(rng.choice(produced))
            return rng.choice(choices)
        return rng.choice([value, value.upper(), value.replace("_", " "), value + "!", "other"])
    if isinstance(value, list):
        return rng.choice(
            [value, value[::-1], [*value, 1], [mutate_value(rng, v, produced) for v in value]]
        )
    if isinstance(value, dict):
        return rng.choice(
            [
                value,
                {**value, "extra": 1},
                {k: mutate_value(rng, v, produced) for k, v in value.items()},
            ]
        )
    return rng.choice([value, "None", 0])


def mutate_trajectory(rng: random.Random, gold: list[Json]) -> Json:
    pred = json.loads(json.dumps(gold))
    produced = [
        str(v)
        for step in pred
        if isinstance(step, dict)
        for v in (step.get("args") or {}).values()
        if isinstance(v, str) and v.startswith("/tmp/")
    ]
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        op = rng.randrange(12)
        if op == 0 and pred:
            pred.pop(rng.randrange(len(pred)))
        elif op == 1:
            pred.insert(
                rng.randint(0, len(pred)),
                {"call": rng.choice(TOOLS), "args": {"image_path": rng.choice(PATHS)}},
            )
        elif op == 2 and len(pred) > 1:
            i, j = rng.sample(range(len(pred)), 2)
            pred[i], pred[j] = pred[j], pred[i]
        elif op == 3 and pred:
            step = pred[rng.randrange(len(pred))]
            if isinstance(step, dict) and isinstance(step.get("call"), str) and "." in step["call"]:
                step["call"] = spelled(rng, step["call"].split("(")[0].strip())
        elif op in (4, 5, 6) and pred:
            step = pred[rng.randrange(len(pred))]
            if isinstance(step, dict) and isinstance(step.get("args"), dict) and step["args"]:
                key = rng.choice(list(step["args"]))
                if rng.random() < 0.15:
                    del step["args"][key]
                else:
                    step["args"][key] = mutate_value(rng, step["args"][key], produced)
        elif op == 7 and pred:
            step = pred[rng.randrange(len(pred))]
            if isinstance(step, dict):
                step["args"] = rng.choice(
                    [
                        None,
                        "image_path=x",
                        [],
                        {
                            **(step["args"] if isinstance(step.get("args"), dict) else {}),
                            "extra": 2,
                        },
                    ]
                )
        elif op == 8:
            pred.insert(
                rng.randint(0, len(pred)),
                rng.choice(
                    [
                        {"call": "tool.loop", "args": {}},
                        {"call": "tool_reduce(op=sum)"},
                        {"call": ""},
                        {"args": {"a": 1}},
                        {"call": None},
                        {"call": 0},
                        "seg.building_damage",
                        None,
                        {"call": "(orphan)"},
                    ]
                ),
            )
        elif op == 9 and pred:
            step = pred[rng.randrange(len(pred))]
            if isinstance(step, dict):
                step["call"] = rng.choice(TOOLS)
        elif op == 10 and pred:
            step = pred[rng.randrange(len(pred))]
            if isinstance(step, dict):
                step["obs"], _ = observation(rng, rng.randrange(5))
        elif op == 11:
            pred = pred + pred[: rng.randint(0, 2)]
    return pred


def crafted_trajectory(rng: random.Random) -> dict[str, Json]:
    """A produced file consumed by the next step, named differently in the prediction: every
    rule of DORA's path-role matching (same producing step, same tool at the producing index,
    basename, hash-free stem, and producers beyond the other trajectory's end)."""
    gold_hash, pred_hash = f"{rng.randrange(16**8):08x}", f"{rng.randrange(16**8):08x}"
    gold_mask = f"/tmp/gold/mask_{gold_hash}_flood.png"
    pred_mask = rng.choice(
        [
            f"/tmp/pred/mask_{pred_hash}_flood.png",
            f"/other/mask_{gold_hash}_flood.png",
            f"/tmp/pred/other_{pred_hash}.png",
            gold_mask,
            "./mask.png",
        ]
    )
    first = rng.choice(TOOLS)
    gold: list[Json] = [
        {"call": first, "args": {"image_path": PATHS[0]}, "obs": {"mask_path": gold_mask}},
        {"call": "calc.area", "args": {"mask_path": gold_mask, "opts": {}}},
    ]
    pred_obs = rng.choice(
        [{"mask_path": pred_mask}, [{"text": json.dumps({"mask_path": pred_mask})}], None, {"n": 1}]
    )
    pred: list[Json] = [
        {
            "call": rng.choice([first, first, rng.choice(TOOLS)]),
            "args": {"image_path": rng.choice(PATHS)},
        },
        {
            "call": "calc_area",
            "args": {
                "mask_path": rng.choice([pred_mask, pred_mask, gold_mask, PATHS[1]]),
                "opts": rng.choice([{}, {}, {"a": 1}, []]),
            },
        },
    ]
    if pred_obs is not None:
        pred[0]["obs"] = pred_obs
    if rng.random() < 0.5:
        gold[1]["args"]["source"] = reference_to(rng, 0)
        resolved: Json = rng.choice(
            [None, pred_mask, 0, False, "", [], "<mask_path> from trajectory[0].obs"]
        )
        if rng.random() < 0.9:
            pred[1]["args"]["source"] = resolved
    if rng.random() < 0.3:
        gold.append({"call": "vis.overlay", "args": {"output_path": gold_mask}})
    if rng.random() < 0.3:
        pred.append({"call": "vis.overlay", "args": {"output_path": pred_mask}})
    if rng.random() < 0.2:
        gold[1]["args"]["mask_path"] = "/data/raw/other_scene.tif"  # a raw input in the gold
    if rng.random() < 0.15:
        gold[1]["args"] = rng.choice([None, [], "mask_path=x"])
    return {"pred": pred, "gold": gold}


def trajectory_case(rng: random.Random) -> dict[str, Json]:
    if rng.random() < 0.15:
        return crafted_trajectory(rng)
    gold: Json = gold_trajectory(rng)
    roll = rng.random()
    if roll < 0.04:
        pred: Json = rng.choice([None, 5, "seg.building_damage", {"call": "x"}, [], [[]]])
    elif roll < 0.07:
        pred = [{"call": rng.choice([5, ["seg.x"], True, {"n": 1}]), "args": {}}]
    elif roll < 0.10:
        gold, pred = rng.choice([[], [{"call": ""}], [{"call": "tool.loop"}]]), gold
    elif roll < 0.13:
        pred = [
            {
                "call": s["call"],
                "args": {
                    k: (10**400 if isinstance(v, (int, float)) else v) for k, v in s["args"].items()
                },
            }
            if isinstance(s, dict) and "args" in s
            else s
            for s in gold
        ]
    elif roll < 0.2:
        pred = json.loads(json.dumps(gold))
    else:
        pred = mutate_trajectory(rng, gold)
    if rng.random() < 0.03:
        gold = rng.choice([None, {"steps": gold}, "gold"])
    return {"pred": pred, "gold": gold}


# --------------------------------------------------------------------------- answers

PCT_NAMES = [
    "flooded_percentage",
    "damage_pct",
    "roadpct",
    "road_ratio",
    "detour_ratio",
    "area_share",
    "marketshare",
]
SCALAR_NAMES = ["building_count", "total_area_m2", "mean_depth", "n_vehicles"]
EXACT_ALIASES: list[list[Json]] = [
    ["Phase 2", "phase_2", "p2", "P 2", "phase2", "p_2"],
    ["T1", "phase t1", "t_1", "Phase_T1", "t 1"],
    [True, "yes", "True", "TRUE", "y", 1],
    [False, "no", "false", 0, "No."],
    [5.0, "5", 5, "5.0", "5.00", "five"],
    ["Minor_Damage", "minor damage", "minor_damage", "MINOR_DAMAGE"],
    ["ﬁre", "fire", "Fire!", " FIRE "],
    [None, "", "null", "none"],
    [float("nan"), "nan", "NaN"],
    [[1, 2], "[1, 2]", "1 2"],
]
DICT_KEYS = [
    "phase_2",
    "Phase 2",
    "p2",
    "T_1",
    "t1",
    "Buildings",
    "building",
    "rank_1",
    "1",
    "flood-area",
    "Flood Area",
    "osm_id",
    "id",
    "road_osmid",
    "center_lat",
    "center_lon",
    "latitude",
    "lng",
    "glass",
    "class",
    "phase_t1",
    "Phase T2",
]
SET_ITEMS = ["hospital", "School", "fire station", "fire_station", "Shelter", "bridge", "road"]


def tolerance_pair(rng: random.Random, tau_r: float, tau_a: float) -> tuple[Json, Json]:
    gold = number(rng)
    if isinstance(gold, float) and math.isnan(gold) and rng.random() < 0.5:
        return gold, rng.choice([gold, "nan", None])
    pred: Json = near(rng, gold, tau_r, tau_a)
    form = rng.randrange(8)
    if form == 0:
        pred = str(pred)
    elif form == 1:
        pred = rng.choice([None, "abc", [pred], True, {"v": pred}, "", "inf", 10**400])
    elif form == 2:
        gold = rng.choice([str(gold), None, "n/a", 10**400]) if rng.random() < 0.5 else gold
    return pred, gold


def ratio_pair(rng: random.Random) -> tuple[Json, Json]:
    gold: Json = rng.choice([0.55, 0.1944, 55.0, 1.6, 1.5, 150.0, 0.0, 12.5, 1.0])
    raw = near(rng, gold, 0.2, 0.0)
    pred: Json = rng.choice([raw, raw * 100, raw / 100, raw])
    form = rng.randrange(9)
    if form == 0:
        pred = f"{pred}%"
    elif form == 1:
        pred = f" {pred} % "
    elif form == 2:
        gold = f"{gold}%"
    elif form == 3:
        pred = rng.choice([None, "abc%", [pred], "", True, 10**400])
    elif form == 4:
        gold = rng.choice([None, "x", float("nan")])
    return pred, gold


def dict_pair(rng: random.Random) -> tuple[Json, Json]:
    keys = rng.sample(DICT_KEYS, rng.randint(0, 4))
    gold: dict[str, Json] = {}
    for key in keys:
        if "lat" in key or "lon" in key or "lng" in key:
            gold[key] = round(rng.uniform(-60, 60), 6)
        elif "id" in key:
            gold[key] = rng.choice([12345, "w123", 7.0])
        else:
            gold[key] = rng.choice([number(rng), 0.35, 35, rng.choice(WORDS)])
    pred: dict[str, Json] = {}
    for key, value in gold.items():
        if rng.random() < 0.15:
            continue
        name = rng.choice(
            [key, key.upper(), key.replace("_", " "), key + "s", key.replace("2", "_2")]
        )
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if "lat" in key or "lon" in key or "lng" in key:
                value = value + rng.choice(
                    [0.0, 0.0001, 0.0003, 0.0004, 0.01, edge_degrees(rng, 111_320.0)]
                )
            elif isinstance(value, float) and abs(value) <= 1.5 and rng.random() < 0.3:
                value = value * 100
            else:
                value = near(rng, float(value), 0.2, 1.0 if abs(value) > 1.5 else 0.0)
            if rng.random() < 0.1:
                value = str(value)
        elif rng.random() < 0.3:
            value = rng.choice([str(value).lower(), "other", None])
        pred[name] = value
    if rng.random() < 0.2:
        pred["extra_stat"] = 3
    roll = rng.random()
    if roll < 0.05:
        return rng.choice([None, [1, 2], "x"]), gold
    if roll < 0.08:
        return pred, rng.choice([None, [1], "x", {}])
    if roll < 0.1:
        return {"n": 10**400}, {"n": 3}
    return pred, gold


def ranking_pair(rng: random.Random) -> tuple[Json, Json]:
    items = rng.sample(["a", "b", "c", "d", "e", 1, 2.0, True], rng.randint(0, 5))
    pred = items[:]
    op = rng.randrange(8)
    if op == 0:
        rng.shuffle(pred)
    elif op == 1:
        pred = pred[::-1]
    elif op == 2:
        pred = pred[: rng.randint(0, len(pred))]
    elif op == 3:
        pred = [*pred, "zz"]
    elif op == 4 and pred:
        pred = [*pred, pred[0]]
    elif op == 5:
        return rng.choice([None, "a,b", {"a": 1}]), items
    elif op == 6:
        return [["a"], ["b"]], items if items else [["a"]]
    if rng.random() < 0.1 and items:
        items = [*items, items[0]]
    return pred, items


HAVERSINE_M_PER_DEGREE = 6_371_000 * math.pi / 180
THRESHOLDS_M = [6.0, 10.0, 20.0, 60.0, 200.0]


def edge_degrees(rng: random.Random, metres_per_degree: float) -> float:
    """A latitude offset just inside or just outside one of the distance thresholds."""
    return rng.choice(THRESHOLDS_M) / metres_per_degree * rng.choice([0.997, 1.003])


def point_case(
    rng: random.Random, spec: dict[str, Json], pred: dict[str, Json], gold: dict[str, Json]
) -> None:
    """Fields of one point: a pair of fields or one field holding both coordinates."""
    geo = rng.random() < 0.5
    base = rng.choice(["epicenter", "shelter", "p", "site_a"])
    if geo:
        lat, lon = round(rng.uniform(-70, 70), 6), round(rng.uniform(-170, 170), 6)
        dlat = rng.choice(
            [
                0.0,
                0.0001,
                0.00017,
                0.00019,
                0.0003,
                0.001,
                0.01,
                edge_degrees(rng, HAVERSINE_M_PER_DEGREE),
            ]
        )
        p_lat, p_lon = lat + dlat * rng.choice([1, -1]), lon + rng.choice([0.0, 0.0001])
    else:
        lat, lon = float(rng.randint(0, 1024)), float(rng.randint(0, 1024))
        d = rng.choice([0.0, 10.0, 19.9, 20.0, 20.1, 35.0])
        p_lat, p_lon = lat + d, lon
    etype = "point_haversine" if geo else "point_pixel"
    if rng.random() < 0.6:
        first, second = (
            rng.choice([("_lat", "_lon"), ("_latitude", "_longitude"), ("_lat", "_longitude")])
            if geo
            else ("_row", "_col")
        )
        spec[base + first], spec[base + second] = etype, etype
        gold[base + first], gold[base + second] = lat, lon
        forms: list[Json] = [p_lat, str(p_lat), None, "north", 10**400, float("inf")]
        value = forms[0] if rng.random() < 0.7 else rng.choice(forms)
        if rng.random() > 0.1:
            pred[base + first] = value
        if rng.random() > 0.1:
            pred[base + second] = p_lon
        if rng.random() < 0.1:
            del spec[base + second]  # half a pair: scored nowhere
        if rng.random() < 0.05:
            spec[base + "_row"] = "point_pixel"  # a pixel half under a geo base
        if rng.random() < 0.05:
            spec[f"{base}__point_{'geo' if geo else 'px'}"] = "exact_match"
        return
    field = base + rng.choice(["", "_location", "_px", "_lat_lon"])
    spec[field] = etype
    keys = rng.choice(
        [("latitude", "longitude"), ("lat", "lon"), ("lat", "lng"), ("y", "x")]
        if geo
        else [("pixel_row", "pixel_col"), ("row", "col"), ("r", "c"), ("y", "x")]
    )
    gold[field] = rng.choice([{keys[0]: lat, keys[1]: lon}, [lat, lon]])
    pform = rng.randrange(9)
    if pform == 0:
        pred[field] = [p_lat, p_lon]
    elif pform == 1:
        pred[field] = {keys[0]: p_lat, keys[1]: p_lon}
    elif pform == 2:
        pred[field] = {"lat": str(p_lat), "lon": p_lon, "row": p_lat, "col": p_lon}
    elif pform == 3:
        pred[field] = rng.choice(
            [None, "somewhere", [1, 2, 3], {"a": 1}, [None, 1], {keys[0]: "x", keys[1]: 1}]
        )
    elif pform == 4:
        pred[field] = gold[field]
    elif pform == 5:
        pred[field] = [float("inf"), 0.0] if geo else [1e200, 0.0]
    elif pform == 6:
        gold[field] = rng.choice(["12,34", 5, None])
        pred[field] = rng.choice(["12,34", 5.5, 7, None])
    elif pform == 7:
        pred[field] = {keys[0]: p_lat, keys[1]: p_lon, "extra": 1}
    else:
        pred[field] = {keys[0]: rng.choice(["x", None, [1]]), keys[1]: p_lon}
        if rng.random() < 0.5:
            gold[field] = {keys[0]: "north", keys[1]: lon}


# --------------------------------------------------------------------------- polygons

GRID: dict[str, Any] = {
    "transform": [0.5, 0.0, 500000.0, 0.0, -0.5, 4000000.0],
    "crs": "EPSG:32633",
}


def rectangle(x: float, y: float, w: float, h: float) -> list[list[float]]:
    return [[x, y], [x + w, y], [x + w, y + h], [x, y + h], [x, y]]


def polygon_geometry(ring: list[list[float]]) -> dict[str, Json]:
    return {"type": "Polygon", "coordinates": [ring]}


def to_world(ring: list[list[float]]) -> list[list[float]]:
    a, b, c, d, e, f = GRID["transform"]
    return [[a * x + b * y + c, d * x + e * y + f] for x, y in ring]


def wrap(rng: random.Random, geometries: list[dict[str, Json]]) -> dict[str, Json]:
    form = rng.randrange(4)
    if form == 0 and len(geometries) == 1:
        return geometries[0]
    if form == 1 and len(geometries) == 1:
        return {"type": "Feature", "properties": {}, "geometry": geometries[0]}
    if form == 2:
        return {"type": "GeometryCollection", "geometries": geometries}
    return {
        "type": "FeatureCollection",
        "features": [{"type": "Feature", "properties": {}, "geometry": g} for g in geometries],
    }


def polygon_case(
    rng: random.Random,
    spec: dict[str, Json],
    pred: dict[str, Json],
    gold: dict[str, Json],
    files: dict[str, Json],
    georeferenced: bool | None = None,
) -> tuple[str, str, str]:
    field = rng.choice(["flood_extent", "damaged_area_polygon", "largest_burn_scar"])
    spec[field] = "polygon_iou"
    n = len(files)
    gold_name, pred_name = f"gold_polygons/g{n}.geojson", f"out/pred_{n}.geojson"
    x, y = rng.uniform(0, 500), rng.uniform(0, 500)
    w, h = rng.uniform(20, 200), rng.uniform(20, 200)
    gold_ring = rectangle(x, y, w, h)
    target = rng.choice([1.0, 0.8, 0.55, 0.51, 0.49, 0.45, 0.2, 0.0])
    shift = w * (1 - target) / (1 + target) if target > 0 else w * 2
    pred_ring = rectangle(x + shift, y, w, h)
    decoy = rectangle(x + 1000, y + 1000, 5, 5)
    if georeferenced is None:
        georeferenced = rng.random() < 0.5
    gold_json: Json
    if georeferenced:
        gold_json = wrap(rng, [polygon_geometry(to_world(gold_ring))])
        gold_json["dora_grid"] = rng.choice(
            [GRID, GRID, {"transform": GRID["transform"]}, {"crs": GRID["crs"]}]
        )
    else:
        gold_json = wrap(rng, [polygon_geometry(gold_ring)])
    gold_kind = rng.randrange(12)
    if gold_kind == 0:
        gold_json = {
            "type": "FeatureCollection",
            "features": [],
            **({"dora_grid": GRID} if georeferenced else {}),
        }
    elif gold_kind == 1:
        files[gold_name] = {"text": "{not json"}
    elif gold_kind == 2:
        gold_json = rng.choice([[1, 2], None, {"type": "Feature", "geometry": None}])
    if gold_name not in files:
        files[gold_name] = {"json": gold_json}
    pred_geoms = [polygon_geometry(pred_ring), polygon_geometry(decoy)]
    pred_kind = (
        rng.choice([0, 1, 0, 1, 8, 8, 9])
        if georeferenced and rng.random() < 0.4
        else rng.randrange(14)
    )
    pred_json: Json
    if pred_kind == 0 and georeferenced:
        pred_json = {
            **wrap(rng, [polygon_geometry(to_world(pred_ring))]),
            "crs": {
                "type": "name",
                "properties": {"name": rng.choice(["EPSG:32633", "urn:ogc:def:crs:EPSG::32633"])},
            },
        }
    elif pred_kind == 1 and georeferenced:
        from pyproj import Transformer

        project = Transformer.from_crs("EPSG:32633", "EPSG:4326", always_xy=True).transform
        ring = [list(project(px, py)) for px, py in to_world(pred_ring)]
        pred_json = {
            **wrap(rng, [polygon_geometry(ring)]),
            "crs": {
                "type": "name",
                "properties": {"name": rng.choice(["EPSG:4326", "urn:ogc:def:crs:OGC:1.3:CRS84"])},
            },
        }
    elif pred_kind == 2:
        pred_json = {
            **wrap(rng, pred_geoms),
            "crs": rng.choice(
                ["EPSG:4326", {"properties": {"name": "EPSG:99999"}}, {"type": "name"}]
            ),
        }
    elif pred_kind == 3:
        pred_json = {"type": "MultiPolygon", "coordinates": [[pred_ring], [decoy]]}
    elif pred_kind == 4:
        pred_json = {
            "type": "FeatureCollection",
            "features": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [1, 2]}}],
        }
    elif pred_kind == 5:
        bowtie = [[x, y], [x + w, y + h], [x + w, y], [x, y + h], [x, y]]
        px = x + shift
        # A small self-crossing loop on the left edge: the overlay fails unless repaired.
        looped = [
            [px, y],
            [px + w, y],
            [px + w, y + h],
            [px, y + h],
            [px, y + 1],
            [px - 1, y + 2],
            [px - 1, y + 1],
            [px, y + 2],
            [px, y],
        ]
        pred_json = wrap(rng, [polygon_geometry(rng.choice([bowtie, looped, looped]))])
    elif pred_kind == 6:
        pred_json = {"type": "Polygon", "coordinates": "garbage"}
    elif pred_kind == 7:
        pred_json = {
            "type": "FeatureCollection",
            "features": [{"type": "Feature", "geometry": None}, "oops"],
        }
    else:
        pred_json = wrap(rng, pred_geoms if rng.random() < 0.5 else pred_geoms[:1])
    files[pred_name] = {"json": pred_json}
    gold[field] = rng.choice(
        [
            gold_name,
            gold_name,
            f"{ROOT}/{gold_name}",
            f"/other/machine/data/{gold_name}",
            f"C:\\data\\{gold_name.replace('/', chr(92))}",
            "gold_polygons/missing.geojson",
            "",
        ]
    )
    pred[field] = rng.choice(
        [
            pred_name,
            pred_name,
            f"{ROOT}/{pred_name}",
            f"/home/agent/runs/x/{pred_name}",
            "missing/pred.geojson",
            "",
            "None",
            " N/A ",
            "[]",
            None,
            5,
            gold[field],
        ]
    )
    return field, gold_name, pred_name


# --------------------------------------------------------------------------- answer cases

ANSWER_TYPES = [
    "scalar_count",
    "scalar_continuous",
    "pct_named",
    "ratio_pct",
    "exact_match",
    "set_f1",
    "scalar_dict",
    "ranking_kendall",
    "point",
    "polygon_iou",
    "polygon_iou",
    "ignore",
    "unknown",
]


def answer_fields(
    rng: random.Random,
    kind: str,
    spec: dict[str, Json],
    pred: dict[str, Json],
    gold: dict[str, Json],
    files: dict[str, Json],
) -> None:
    if kind in ("scalar_count", "scalar_continuous"):
        name = rng.choice(SCALAR_NAMES)
        spec[name] = kind
        pred[name], gold[name] = tolerance_pair(rng, 0.2, 1.0)
    elif kind == "pct_named":
        name = rng.choice(PCT_NAMES)
        spec[name] = rng.choice(["scalar_continuous", "scalar_continuous", "scalar_count"])
        pred[name], gold[name] = (
            ratio_pair(rng) if rng.random() < 0.7 else tolerance_pair(rng, 0.2, 0.0)
        )
    elif kind == "ratio_pct":
        name = rng.choice(["ratio", "flooded_fraction", "share_of_roads"])
        spec[name] = "ratio_pct"
        pred[name], gold[name] = ratio_pair(rng)
    elif kind in ("exact_match", "unknown"):
        name = rng.choice(["damage_level", "phase", "is_accessible", "category"])
        spec[name] = (
            "exact_match"
            if kind == "exact_match"
            else rng.choice(["categorical", "string", 7, None, ["x"]])
        )
        group = rng.choice(EXACT_ALIASES)
        gold[name], pred[name] = (
            rng.choice(group),
            rng.choice(group if rng.random() < 0.8 else rng.choice(EXACT_ALIASES)),
        )
    elif kind == "set_f1":
        name = rng.choice(["facilities", "affected_classes"])
        spec[name] = "set_f1"
        g = rng.sample(SET_ITEMS, rng.randint(0, 4))
        p = [item for item in g if rng.random() < 0.7] + rng.sample(SET_ITEMS, rng.randint(0, 2))
        gold[name] = rng.choice([g, g, ", ".join(g), g, None])
        pred[name] = rng.choice([p, p, ",".join(p) + ",", p, set_garbage(rng)])
    elif kind == "scalar_dict":
        name = rng.choice(["per_phase_area", "counts_by_class", "center"])
        spec[name] = "scalar_dict"
        pred[name], gold[name] = dict_pair(rng)
    elif kind == "ranking_kendall":
        name = rng.choice(["priority_order", "ranking"])
        spec[name] = "ranking_kendall"
        pred[name], gold[name] = ranking_pair(rng)
    elif kind == "point":
        point_case(rng, spec, pred, gold)
    elif kind == "polygon_iou":
        polygon_case(rng, spec, pred, gold, files)
    elif kind == "ignore":
        name = rng.choice(["notes", "explanation", "building_count"])
        spec[name] = "ignore"
        gold[name], pred[name] = "x", rng.choice(["y", None, 3])


def set_garbage(rng: random.Random) -> Json:
    return rng.choice([None, 5, {"a": 1}, "", " , ", [1, None, True]])


def render_prediction(rng: random.Random, pred: dict[str, Json]) -> Json:
    """The record's ``predicted_answer``: the object, or model text holding it."""
    body = json.dumps(pred)
    form = rng.randrange(14)
    if form < 7:
        return pred
    if form == 7:
        return f"<Answer>{body}</Answer>"
    if form == 8:
        return f"Reasoning...\n<answer>\n```json\n{body}\n```\n</answer>"
    if form == 9:
        return f"The answer is {body} as computed."
    if form == 10:
        return rng.choice([None, "", "   ", 42, [body], "no answer"])
    if form == 11:
        return f"{{broken {body}"
    if form == 12:
        return body
    return f"```\n{body}\n```"


def answer_case(rng: random.Random) -> dict[str, Json]:
    spec: dict[str, Json] = {}
    pred: dict[str, Json] = {}
    gold: dict[str, Json] = {}
    files: dict[str, Json] = {}
    for _ in range(rng.choice([0, 1, 1, 1, 2, 3, 4])):
        answer_fields(rng, rng.choice(ANSWER_TYPES), spec, pred, gold, files)
    gsd = rng.choice([None, None, 0.5, 3.0, 10.0, 0])
    rendered = render_prediction(rng, pred)
    roll = rng.random()
    spec_value: Json = spec
    gold_value: Json = gold
    if roll < 0.02:
        spec_value = rng.choice([None, [], "scalar"])
    elif roll < 0.04:
        gold_value = rng.choice([None, [gold], "gold"])
    case = {"pred": rendered, "gold": gold_value, "spec": spec_value, "gsd": gsd}
    if files:
        case["files"] = files
    return case


def polygon_answer_case(rng: random.Random) -> dict[str, Json]:
    """An answer of polygon fields only, half of them on a georeferenced gold grid."""
    spec: dict[str, Json] = {}
    pred: dict[str, Json] = {}
    gold: dict[str, Json] = {}
    files: dict[str, Json] = {}
    for _ in range(rng.choice([1, 1, 2])):
        field, gold_name, pred_name = polygon_case(
            rng, spec, pred, gold, files, georeferenced=rng.random() < 0.6
        )
        if rng.random() < 0.6:  # both files found: the geometry decides
            gold[field] = rng.choice([gold_name, f"{ROOT}/{gold_name}"])
            pred[field] = rng.choice([pred_name, f"/home/agent/runs/x/{pred_name}"])
    if rng.random() < 0.5:
        return {"pred": pred, "gold": gold, "spec": spec, "gsd": None, "files": files}
    return {
        "pred": render_prediction(rng, pred),
        "gold": gold,
        "spec": spec,
        "gsd": None,
        "files": files,
    }


# --------------------------------------------------------------------------- parsing


def parse_case(rng: random.Random) -> dict[str, Json]:
    obj = {"count": rng.randint(0, 9), "label": rng.choice(WORDS)}
    body = json.dumps(obj)
    templates = [
        "{b}",
        "<Answer>{b}</Answer>",
        "<ANSWER>  {b}  </answer>",
        "```json\n{b}\n```",
        "```JSON{b}```",
        "```\n{b}\n```",
        "prose {b} more prose",
        "first {{bad}} then {b}",
        "}} stray {b}",
        '{{"a": {{"b": 1}}}} and {b}',
        "[1, 2, 3]",
        '"just a string"',
        "no braces here",
        "<Answer></Answer>",
        "<Answer>  </Answer> {b}",
        '{{"s": "}}"}}',
        '{{"n": NaN, "i": Infinity}}',
        "{{unclosed",
        "}}{{{b}",
        "}}}} {{ {b}",
        "```json\n[{b}]\n```",
        "text ```json\n{b}\n``` and <Answer>{b}</Answer>",
        "",
        "   ",
        "{b}{b}",
        '{{"big": 1' + "0" * 5000 + "}}",
    ]
    text: Json = rng.choice(templates).format(b=body)
    if rng.random() < 0.04:
        text = rng.choice([None, 5, ["x"]])
    return {"text": text}


# --------------------------------------------------------------------------- samples and runs


def gold_task(rng: random.Random, files: dict[str, Json]) -> dict[str, Json]:
    spec: dict[str, Json] = {}
    pred: dict[str, Json] = {}
    gold: dict[str, Json] = {}
    for _ in range(rng.choice([0, 1, 2, 3])):
        kind = rng.choice(
            [k for k in ANSWER_TYPES if k != "polygon_iou"] + ["polygon_iou"] * (rng.random() < 0.2)
        )
        answer_fields(rng, kind, spec, pred, gold, files)
    traj = gold_trajectory(rng)
    return {
        "task_category": "t",
        "task_category_code": "x",
        "question": "q?",
        "final_answer": gold,
        "eval_spec": spec,
        "trajectory": traj,
        "_pred": {"final_answer": pred, "trajectory": mutate_trajectory(rng, traj)},
    }


def input_data(rng: random.Random) -> Json:
    gsd = rng.choice([0.3, 0.5, 3.0])
    form = rng.randrange(8)
    if form == 0:
        return {"pre_image": {"path": "a.tif", "pixel_size_m": gsd}}
    if form == 1:
        return {"pre_image": "a.png", "post_image": {"pixel_size_m": str(gsd)}}
    if form == 2:
        return {"temporal_images": {"2020": {"path": "x"}, "2021": {"pixel_size_m": gsd}}}
    if form == 3:
        return {"temporal_images": ["x"]}
    if form == 4:
        return {}
    if form == 5 and rng.random() < 0.3:
        return rng.choice([None, {"pre_image": {"pixel_size_m": "abc"}}])
    return {"post_image": {"pixel_size_m": gsd}}


def gold_samples(rng: random.Random, files: dict[str, Json], count: int) -> list[Json]:
    samples = []
    for index in range(count):
        sample: dict[str, Json] = {
            "sample_id": rng.choice([f"S{index}", f"S{index}", "", None])
            if rng.random() < 0.1
            else f"S{index}",
            "input_data": input_data(rng),
            "tasks": [gold_task(rng, files) for _ in range(rng.choice([0, 1, 1, 2, 3]))],
        }
        if rng.random() < 0.05:
            del sample["sample_id"]
        samples.append(sample)
    return samples


def split_predictions(samples: list[Json]) -> tuple[list[Json], list[Json]]:
    """The gold samples without their hidden predictions, and the predictions as samples."""
    gold, pred = [], []
    for sample in samples:
        tasks = sample["tasks"]
        gold.append(
            {**sample, "tasks": [{k: v for k, v in t.items() if k != "_pred"} for t in tasks]}
        )
        pred.append(
            {"sample_id": sample.get("sample_id", ""), "tasks": [t["_pred"] for t in tasks]}
        )
    return gold, pred


def dimension_case(rng: random.Random) -> dict[str, Json]:
    files: dict[str, Json] = {}
    gold, pred = split_predictions(gold_samples(rng, files, rng.randint(0, 4)))
    op = rng.randrange(8)
    pred_value: Json = pred
    if op == 0:
        pred_value = None  # sanity mode
    elif op == 1:
        pred_value = pred[::-1]
    elif op == 2:
        pred_value = pred[: rng.randint(0, len(pred))]
    elif op == 3:
        pred_value = [{**p, "sample_id": ""} for p in pred]
    elif op == 4 and pred:
        pred_value = [*pred, {"sample_id": "unknown", "tasks": []}]
    elif op == 5 and pred and pred[0]["tasks"]:
        pred[0]["tasks"][0] = rng.choice(
            [{}, {"final_answer": "text answer"}, {"trajectory": None}]
        )
    case: dict[str, Json] = {"gold": gold, "pred": pred_value}
    if files:
        case["files"] = files
    return case


def records_for(rng: random.Random, gold: list[Json], pred: list[Json]) -> list[Json]:
    records = []
    for sample, answers in zip(gold, pred, strict=True):
        sid = sample.get("sample_id", "")
        for index, task in enumerate(answers["tasks"]):
            if rng.random() < 0.1:
                continue
            record: dict[str, Json] = {"question_id": f"{sid}_task{index}"}
            form = rng.randrange(10)
            if form == 0:
                record = {"question_id": f"other_task{index}", "sample_id": sid}
            elif form == 1:
                record = {"question_id": f"{sid}_taskX", "sample_id": sid} if index == 0 else record
            elif form == 2 and index == 0:
                record = {"question_id": str(sid)}
            answer = task["final_answer"]
            placement = rng.randrange(5)
            if placement == 0:
                record["final_answer"] = answer
            elif placement == 1:
                record["predicted_answer"] = render_prediction(rng, answer)
            elif placement != 2:
                record["predicted_answer"] = answer
            if rng.random() < 0.8:
                record["trajectory"] = task["trajectory"]
            records.append(record)
    if rng.random() < 0.1:
        records.append({"question_id": "nobody_task0", "predicted_answer": {"x": 1}})
    if records and rng.random() < 0.1:
        records.append({**records[0], "predicted_answer": {"overwritten": True}})
    rng.shuffle(records)
    return records


def run_case(rng: random.Random) -> dict[str, Json]:
    files: dict[str, Json] = {}
    gold: dict[str, Json] = {}
    records: dict[str, Json] = {}
    for dim in ("t1", "t2", "t3", "t4", "t5"):
        if rng.random() < 0.25:
            continue
        samples, pred = split_predictions(gold_samples(rng, files, rng.randint(0, 3)))
        gold[dim] = samples
        if rng.random() < 0.9:
            records[dim] = records_for(rng, samples, pred)
    if rng.random() < 0.05:
        gold, records = {}, {}
    moved = {f"tasks/{k}": v for k, v in files.items()}
    case: dict[str, Json] = {"gold": gold, "records": None if rng.random() < 0.1 else records}
    if moved:
        case["files"] = moved
    return case


GENERATORS: dict[str, Callable[[random.Random], dict[str, Json]]] = {
    "trajectory": trajectory_case,
    "answer": answer_case,
    "polygon": polygon_answer_case,
    "parse": parse_case,
    "dimension": dimension_case,
    "run": run_case,
}


def generate(seed: int, counts: dict[str, int]) -> Iterator[tuple[str, str, dict[str, Json]]]:
    for kind, count in counts.items():
        rng = random.Random(f"{seed}:{kind}")
        for index in range(count):
            # The JSON round trip makes the inputs exactly what a replay reads back.
            yield f"{kind}-{index}", kind, json.loads(json.dumps(GENERATORS[kind](rng)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--reference",
        type=Path,
        default=Path(os.environ.get(REFERENCE_ENV, DEFAULT_REFERENCE)),
        help=f"DORA's released code (default: ${REFERENCE_ENV} or {DEFAULT_REFERENCE})",
    )
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every case count")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    counts = {kind: max(1, round(n * args.scale)) for kind, n in COUNTS.items()}
    lines = [
        json.dumps({"seed": args.seed, "counts": counts, "reference": "dora/evaluation.py@2b24be7"})
    ]
    outcomes: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="dora-verdicts-") as scratch:
        base = Path(scratch)
        (base / "stub").mkdir()
        dora = load_dora(args.reference.expanduser().resolve(), base / "stub")
        cwd = base / "cwd"
        cwd.mkdir()
        previous = Path.cwd()
        os.chdir(cwd)  # relative polygon paths must resolve under the roots only
        try:
            for case_id, kind, case in generate(args.seed, counts):
                root = Path(tempfile.mkdtemp(dir=base))
                write_files(case.get("files", {}), root)
                expected = verdict(dora, kind, case, root)
                outcomes[f"{kind}:{'error' if 'error' in expected else 'ok'}"] += 1
                lines.append(
                    json.dumps({"id": case_id, "kind": kind, "input": case, "expected": expected})
                )
        finally:
            os.chdir(previous)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with (
        args.out.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed,
    ):
        packed.write(("\n".join(lines) + "\n").encode("utf-8"))
    print(f"wrote {len(lines) - 1} cases to {args.out}: {dict(sorted(outcomes.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
