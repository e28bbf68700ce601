"""Run directories in the layout DORA's runner writes, generated from a seed, for the
differential test of ``plancheck score`` against DORA's ``scripts/evaluate.py``.

Gold samples and predictions come from ``scripts/record_dora_verdicts.py`` (every eval_spec
type, polygons, point pairs); around them this module writes what runs really hold: success
records as the runner writes them (``ensure_ascii=False``), error records (``"error"`` set and
``predicted_answer`` ``"Error: ..."``, sometimes holding JSON), a resumed success after an
error and an error after a success, duplicate records, ``sample_id`` written as a float or a
list, empty and missing ``benchmark.jsonl`` files, stray ``.json`` files in the tasks
directory, answers holding U+2028 and U+0085 (escaped: DORA's ``splitlines`` would split a raw
one; see :func:`raw_separator`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import math
import random
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

from tests.support.dora_cases import write_files

REPO = Path(__file__).resolve().parents[2]
TASK_FILES = {
    "t1": "t1_perception_and_assessment",
    "t2": "t2_spatial_relation_analysis",
    "t3": "t3_operational_planning",
    "t4": "t4_multi_temporal_reasoning",
    "t5": "t5_multi_modal_report_synthesis",
}


def _generators() -> Any:
    name = "_record_dora_verdicts"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, REPO / "scripts" / "record_dora_verdicts.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _record(rng: random.Random, sid: Any, index: int, task: dict[str, Any],
            gen: Any) -> dict[str, Any]:
    """One success record as DORA's runner writes it."""
    record: dict[str, Any] = {
        "question_id": f"{sid}_task{index}",
        "task_scoped_question_id": f"t::{sid}_task{index}",
        "sample_id": sid,
        "predicted_answer": gen.render_prediction(rng, task["final_answer"])
        if rng.random() < 0.4 else task["final_answer"],
        "error": None,
        "trajectory": task["trajectory"] if rng.random() < 0.85 else [],
        "elapsed_time": 1.5,
    }
    if rng.random() < 0.01:  # raw in the file (ensure_ascii=False): DORA cannot read it
        record["predicted_answer"] = f"Total: {rng.randint(0, 9)}\u2028rows\u0085done"
    return record


def _error(sid: Any, index: int, rng: random.Random) -> dict[str, Any]:
    message = rng.choice(["question_timeout after 600s", '{"area_m2": 12.5}',
                          "tool failed: {\"mask_path\": \"x.png\"}"])
    record: dict[str, Any] = {"question_id": f"{sid}_task{index}", "sample_id": sid,
                              "predicted_answer": f"Error: {message}", "error": message,
                              "trajectory": []}
    if rng.random() < 0.3:
        del record["predicted_answer"]
    return record


def _odd_sample_id(rng: random.Random, sid: Any) -> Any:
    return rng.choice([sid, sid, "", 7.0, 0.0, [], None])


def write_run(seed: int, root: Path) -> tuple[Path, Path]:
    """Write a tasks directory and a run directory under ``root``; return both."""
    gen = _generators()
    rng = random.Random(f"run-dir:{seed}")
    tasks_dir, run_dir = root / "tasks", root / "run"
    tasks_dir.mkdir(parents=True)
    run_dir.mkdir()
    files: dict[str, Any] = {}
    for stem in TASK_FILES.values():
        if rng.random() < 0.15:
            continue
        samples, preds = gen.split_predictions(gen.gold_samples(rng, files, rng.randint(1, 3)))
        while not any(s["tasks"] for s in samples) and rng.random() < 0.9:
            # a dimension without tasks stops DORA's table: rarely
            samples, preds = gen.split_predictions(gen.gold_samples(rng, files, 2))
        (tasks_dir / f"{stem}.json").write_text(json.dumps(samples), encoding="utf-8")
        if rng.random() < 0.1:  # a stray copy beside the five task files
            (tasks_dir / f"{stem}_v0.json").write_text(json.dumps(samples[:1]), "utf-8")
        shape = rng.random()
        if shape < 0.08:
            continue  # no benchmark.jsonl for this dimension
        folder = run_dir / stem
        folder.mkdir()
        if shape < 0.14:
            (folder / "benchmark.jsonl").write_text("", encoding="utf-8")
            continue
        records = []
        for sample, pred in zip(samples, preds, strict=True):
            sid = sample.get("sample_id", "")
            for index, task in enumerate(pred["tasks"]):
                kind = rng.random()
                if kind < 0.08:
                    continue  # unanswered
                if kind < 0.2:
                    records.append(_error(sid, index, rng))
                    if rng.random() < 0.5:  # resumed: a success after the error
                        records.append(_record(rng, sid, index, task, gen))
                    continue
                record = _record(rng, sid, index, task, gen)
                if rng.random() < 0.08:
                    record["sample_id"] = _odd_sample_id(rng, sid)
                records.append(record)
                if rng.random() < 0.06:
                    records.append(_error(sid, index, rng))  # an error after a success
                if rng.random() < 0.05:
                    records.append(dict(record))  # a duplicate
        if rng.random() < 0.05:
            records.append({"question_id": "nobody_task0", "predicted_answer": {"x": 1}})
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        (folder / "benchmark.jsonl").write_text(text, encoding="utf-8")
    if files:
        write_files({f"tasks/{k}": v for k, v in files.items()}, root)
    return tasks_dir, run_dir


def raw_separator(run_dir: Path) -> bool:
    """Whether a record of ``run_dir`` holds a raw U+2028 or U+0085 (DORA's reader splits the
    line there and cannot score the run)."""
    return any(ch in path.read_text(encoding="utf-8") for path in run_dir.glob("*/benchmark.jsonl")
               for ch in ("\u2028", "\u0085"))


# DORA's script, run once per directory in one child process.
DRIVER = '''
import contextlib, io, json, runpy, sys, types, warnings
from pathlib import Path
reference, stub = Path(sys.argv[1]), Path(sys.argv[2])
(stub / "paths.py").write_text("from pathlib import Path\\nIMAGES_DIR = Path('images')\\n"
                               "TASKS_DIR = Path('tasks')\\n")
package = types.ModuleType("dora")
package.__path__ = [str(stub), str(reference / "dora")]
sys.modules["dora"] = package
verdicts = []
for tasks, run, out in json.load(sys.stdin):
    sys.argv = ["evaluate.py", "--run", run, "--tasks-dir", tasks, "--output", out]
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            runpy.run_path(str(reference / "scripts" / "evaluate.py"), run_name="__main__")
        verdicts.append(None)
    except BaseException as error:
        verdicts.append(type(error).__name__)
print(json.dumps(verdicts))
'''


def dora_verdicts(reference: Path, jobs: list[list[str]], stub: Path) -> list[str | None]:
    stub.mkdir()
    done = subprocess.run([sys.executable, "-c", DRIVER, str(reference), str(stub)],
                          input=json.dumps(jobs), capture_output=True, text=True,
                          timeout=600, check=True)
    verdicts: list[str | None] = json.loads(done.stdout)
    return verdicts


def run_plancheck(arguments: list[str]) -> tuple[int, str, str]:
    from plancheck.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(arguments)
    return code, out.getvalue(), err.getvalue()


def _none_for_nan(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def _nan_free(value: Any) -> Any:
    """``value`` with DORA's NaN as None (NaN equals nothing, itself included)."""
    if isinstance(value, dict):
        return {k: _nan_free(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nan_free(v) for v in value]
    return _none_for_nan(value)


def _table_rows(table: str, width: int | None = None) -> list[str]:
    """The table's lines, each cut to DORA's columns (plancheck adds a Failed column)."""
    lines = [line.rstrip() for line in table.splitlines()]
    if width is None:
        return lines
    return [line[:width].rstrip() for line in lines]

def differences(index: int, tasks: Path, run: Path, eval_json: Path, per_item: Path
                ) -> list[str]:
    """Where ``plancheck score`` (and ``plancheck report`` on its per-item lines) differs from
    what DORA's ``scripts/evaluate.py`` wrote to ``eval_json`` for the same run."""
    found: list[str] = []
    where = f"run {index} ({run})"
    code, out, err = run_plancheck(["score", "--gold", str(tasks), str(run),
                                    "--format", "json", "--per-item", str(per_item)])
    if code not in (0, 1):
        return [f"{where}: exit {code}: {err}"]
    dora = json.loads(eval_json.read_text(encoding="utf-8"))
    ours = json.loads(out)
    if ours["dora_score"] != dora["dora_score"]:
        found.append(f"{where}: DORA score {ours['dora_score']} != {dora['dora_score']}")
    lines = [json.loads(line) for line in per_item.read_text(encoding="utf-8").splitlines()]
    for dim, result in dora["full"].items():
        mine = ours["dimensions"].get(dim)
        wanted = {k: v for k, v in result.items() if k != "tasks"}
        if mine is None or {k: mine.get(k) for k in wanted} != wanted:
            found.append(f"{where} {dim}: {mine} != {wanted}")
        items = [line for line in lines if line.get("category") == dim and "task_idx" in line]
        expected = [(t["sample_id"], t["task_idx"], _none_for_nan(t["task_score"]),
                     t["field_scores"], t["t_any"], t["t_ord"], t["t_em"], t["par_acc"],
                     t["eff"]) for t in result["tasks"]]
        actual = [(i["sample_id"], i["task_idx"], i.get("answer"), i.get("fields"),
                   i["t_any"], i["t_ord"], i["t_em"], i["par_acc"], i["eff"]) for i in items]
        if actual != expected:
            found.append(f"{where} {dim} tasks: {actual} != {expected}")
    from plancheck.dora import evaluate_run  # the Python API reads the run alike

    with warnings.catch_warnings():  # (unreadable polygons score 0 with a warning, as in DORA)
        warnings.simplefilter("ignore")
        api = evaluate_run(tasks, run, polygon_roots=[tasks, run])
    if _nan_free(api["dimensions"]) != _nan_free(dora["dimensions"]) or \
            api["dora_score"] != dora["dora_score"] or \
            _nan_free(api["tasks"]) != _nan_free({d: r["tasks"] for d, r in dora["full"].items()}):
        found.append(f"{where}: evaluate_run differs from DORA")
    table = dora["summary_table"]
    width = max(len(line) for line in table.splitlines())
    _, text, _ = run_plancheck(["score", "--gold", str(tasks), str(run)])
    if _table_rows(text, width) != _table_rows(table):
        found.append(f"{where} table:\n{text}\n!=\n{table}")
    _, report, _ = run_plancheck(["report", str(per_item)])
    rows = _table_rows(report, width)
    rows = rows[next((i for i, r in enumerate(rows) if r.startswith("---")), 0):]
    if rows[:len(_table_rows(table))] != _table_rows(table):  # (after the file's name)
        found.append(f"{where} report table:\n{report}\n!=\n{table}")
    # plancheck's own columns (Failed) too: report and score agree on every count.
    whole = _table_rows(report)
    whole = whole[next((i for i, r in enumerate(whole) if r.startswith("---")), 0):]
    if whole[:len(_table_rows(text))] != _table_rows(text):
        found.append(f"{where} report and score differ:\n{report}\n!=\n{text}")
    return found


def dora_reference() -> Path:
    """DORA's released code (its scripts/evaluate.py present); a test fails without it when
    CI's variables say the data is there, and skips otherwise."""
    import os

    import pytest

    from plancheck.corpus.paths import DATA_ENV, DORA_REFERENCE_ENV, dora_reference_dir

    reference = dora_reference_dir()
    if (reference / "scripts" / "evaluate.py").is_file():
        return reference
    message = f"DORA's released code not found at {reference}"
    if os.environ.get(DATA_ENV) or os.environ.get(DORA_REFERENCE_ENV):
        pytest.fail(f"{message} (set {DORA_REFERENCE_ENV})")
    pytest.skip(f"{message}; set {DORA_REFERENCE_ENV}")
