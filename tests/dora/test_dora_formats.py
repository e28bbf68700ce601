"""DORA's own formats, linted against the built-in DORA toolset (``--tools dora``).

The trajectories here are written the way DORA's released code writes them: gold steps
``{"call": "seg.flood", "args": {...}, "obs": {...}}`` with ``"<key> from trajectory[N].obs"``
references and ``tool.loop`` steps followed by their expansion (``dora/tools/analysis.py``),
and agent steps ``{"call": "seg_flood(pre_image_path, post_image_path)", ...}`` inside the run
records of ``dora/agent/runner.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import plancheck
from plancheck.api import check_trajectory
from plancheck.cli import main

GOLD: list[dict[str, Any]] = [
    {"call": "ras.grid_windows", "args": {"image_path": "post.tif", "n": 2},
     "obs": {"tool": "ras.grid_windows", "windows": [[0, 5, 0, 5]], "count": 4}},
    {"call": "seg.flood", "args": {"pre_image_path": "pre.tif", "post_image_path": "post.tif"},
     "obs": {"tool": "seg.flood", "mask_path": "/tmp/flood.png", "mask_value": 255}},
    {"call": "ras.area", "args": {"mask_path": "<mask_path> from trajectory[1].obs",
                                  "pixel_size_m": 0.5, "classes": [255]},
     "obs": {"tool": "ras.area", "area_m2": 120.5, "pixel_count": 482}},
    {"call": "tool.loop", "args": {
        "loop_over": "<windows> from trajectory[0].obs",
        "bind": {"x1": "x1", "x2": "x2"},
        "calls": [
            {"tool": "ras.clip", "args": {"image_path": "<mask_path> from trajectory[1].obs",
                                          "y1": "<item.y1>", "y2": "<item.y2>"}},
            {"tool": "ras.area", "args": {"mask_path": "<output_path> from step[0].obs",
                                          "pixel_size_m": 0.5}}]},
     "obs": {"tool": "tool.loop", "results": [], "iteration_count": 1}},
    {"call": "ras.clip", "args": {"image_path": "/tmp/flood.png", "x1": 0, "x2": 5, "y1": 0,
                                  "y2": 5}, "obs": {}},
    {"call": "ras.area", "args": {"mask_path": "/tmp/clip.png", "pixel_size_m": 0.5},
     "obs": {}},
    {"call": "calc.add", "args": {"a": "<area_m2> from trajectory[2].obs", "b": 1.0},
     "obs": {"sum": 121.5}},
]

AGENT = """{
  "question_id": "beirut_1_task0",
  "task_category": "t1_perception_and_assessment",
  "task_category_code": "T1",
  "sample_id": "beirut_1",
  "error": null,
  "trajectory": [
    {"call": "seg_flod(pre_image_path, post_image_path)",
     "args": {"pre_image_path": "/data/pre.tif", "post_image_path": "/data/post.tif"},
     "obs": {"text": "{}"}},
    {"call": "ras_area(mask_path)",
     "args": {"mask_path": "<mask_path> from trajectory[2].obs"}, "obs": null},
    {"call": "calc_mul(a, b)", "args": {"a": "<area_m2> from trajectory[1].obs", "b": 2},
     "obs": null}
  ],
  "final_answer": "<Answer>{\\"flooded_area_m2\\": 120}</Answer>"
}"""


def task(trajectory: Any = GOLD, **extra: Any) -> dict[str, Any]:
    return {"task_category": "t1_perception_and_assessment", "task_category_code": "T1",
            "question": "How large is the flooded area?", "tools": ["seg.flood", "ras.area"],
            "trajectory": trajectory, "final_answer": {"flooded_area_m2": 120.5},
            "eval_spec": {"flooded_area_m2": "scalar_continuous"},
            "answer_format": {"flooded_area_m2": "float"}, **extra}


def sample(sample_id: str = "beirut_1") -> dict[str, Any]:
    return {"sample_id": sample_id,
            "input_data": {"post_image": {"path": "post.tif", "pixel_size_m": 0.5}},
            "tasks": [task(), task(GOLD[:3])]}


def lint(tmp_path: Path, name: str, text: str, capsys: pytest.CaptureFixture[str]
         ) -> tuple[int, dict[str, Any]]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    code = main(["check", str(path), "--tools", "dora", "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def position(text: str, needle: str) -> tuple[int, int]:
    offset = text.index(needle)
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


# --------------------------------------------------------------------------- acceptance


def test_a_gold_trajectory_with_a_loop_checks_clean(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out = lint(tmp_path, "gold.json", json.dumps(GOLD, indent=1), capsys)
    assert (code, out["diagnostics"]) == (0, [])


def test_an_agent_trajectory_gets_all_three_errors_with_positions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = lint(tmp_path, "beirut_1_task0_trajectory.json", AGENT, capsys)
    assert code == 1
    found = {d["code"]: d for d in out["diagnostics"]}
    assert sorted(found) == ["PC201", "PC203", "PC207"]
    unknown, missing, forward = found["PC201"], found["PC203"], found["PC207"]
    assert (unknown["span"]["start_line"], unknown["span"]["start_col"]) == \
        position(AGENT, '"seg_flod(')
    assert unknown["data"]["suggestion"] == "seg.flood"
    assert unknown["data"]["fpof_category"] == "Tool Mismatch"
    assert missing["data"]["key"] == "pixel_size_m"
    assert (missing["span"]["start_line"], missing["span"]["start_col"]) == \
        position(AGENT, '"ras_area(')
    assert (forward["span"]["start_line"], forward["span"]["start_col"]) == \
        position(AGENT, '"<mask_path> from trajectory[2]')
    assert forward["data"]["fpof_type"] == "dependency_error"
    assert {d["record"] for d in out["diagnostics"]} == {"beirut_1_task0"}


def test_without_a_pool_dora_documents_get_doras_tools(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No `--tools` (and none configured): a DORA trajectory is checked against DORA's 108
    tools, a DisasterBench plan beside it against DisasterBench's; an explicit pool wins."""
    monkeypatch.chdir(tmp_path)  # no configuration file names a pool
    (tmp_path / "gold.json").write_text(json.dumps(GOLD, indent=1), encoding="utf-8")
    (tmp_path / "agent.json").write_text(AGENT, encoding="utf-8")
    flood = Path(plancheck.__file__).parents[1] / "examples" / "flood_plan.json"
    assert main(["check", "gold.json", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["diagnostics"] == []
    assert main(["check", "agent.json", str(flood), "--format", "json"]) == 1
    codes = {(Path(d["file"]).name, d["code"])
             for d in json.loads(capsys.readouterr().out)["diagnostics"]}
    assert {c for f, c in codes if f == "agent.json"} == {"PC201", "PC203", "PC207"}
    # DisasterBench's pool still: PC301 names its types, PC201 its look-alike tool.
    assert {c for f, c in codes if f == "flood_plan.json"} == {"PC301", "PC201", "PC401"}
    assert plancheck.check(tmp_path / "gold.json").diagnostics == []
    assert main(["check", "gold.json", "--tools", str(flood.parents[1] / "plancheck" / "corpus"
                                                      / "disasterbench.wf"), "-q"]) == 1
    capsys.readouterr()


@pytest.mark.parametrize("call", ["seg.flood", "seg_flood",
                                  "seg_flood(pre_image_path, post_image_path)"])
def test_dora_name_forms_are_one_tool(call: str) -> None:
    trajectory = [{"call": call, "args": {"pre_image_path": "a.tif", "post_image_path": "b.tif"}},
                  {"call": "ras_area(mask_path, pixel_size_m)",
                   "args": {"mask_path": "<mask_path> from trajectory[0].obs",
                            "pixel_size_m": 0.3}}]
    report = check_trajectory(trajectory, "dora")
    assert report.diagnostics == []


# --------------------------------------------------------------------------- documents


def records(tmp_path: Path) -> str:
    agent = json.loads(AGENT)
    first = {k: v for k, v in agent.items() if k != "final_answer"}
    first["predicted_answer"] = agent["final_answer"]
    second = dict(first, question_id="beirut_1_task1", trajectory=GOLD[:3],
                  predicted_answer='{"flooded_area_m2": 118}')
    failed = dict(first, question_id="beirut_2_task0", sample_id="beirut_2", trajectory=[],
                  predicted_answer="Error: boom", error="boom")
    return "\n".join(json.dumps(r) for r in (first, second, failed)) + "\n"


@pytest.mark.parametrize(("name", "make", "plans", "codes"), [
    ("task.json", lambda: json.dumps(task(), indent=1), 1, []),
    ("sample.json", lambda: json.dumps(sample(), indent=1), 2, []),
    ("t1_perception_and_assessment.json",
     lambda: json.dumps([sample(), sample("beirut_2")], indent=1), 4, []),
    ("completion.txt", lambda: "Calling:\n```json\n" + json.dumps(GOLD[:3]) + "\n```\n", 1, []),
    ("literal.txt", lambda: "Plan: " + repr(GOLD[:3]), 1, ["PC102"]),
    ("trajectories.jsonl", lambda: json.dumps(GOLD) + "\n" + json.dumps(GOLD[:2]) + "\n", 2,
     []),
])
def test_documents_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                            make: Any, plans: int, codes: list[str]) -> None:
    code, out = lint(tmp_path, name, make(), capsys)
    assert [d["code"] for d in out["diagnostics"]] == codes
    assert out["summary"]["plans"] == plans
    assert code == 0


def test_a_run_benchmark_jsonl_names_its_records(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out = lint(tmp_path, "benchmark.jsonl", records(tmp_path), capsys)
    assert code == 1
    by_record: dict[str, list[str]] = {}
    for d in out["diagnostics"]:
        by_record.setdefault(d["record"], []).append(d["code"])
    assert by_record == {"beirut_1_task0": ["PC201", "PC203", "PC207"],
                         "beirut_2_task0": ["PC112"]}
    failed = next(d for d in out["diagnostics"] if d["record"] == "beirut_2_task0")
    assert any("boom" in note for note in failed["notes"])


# --------------------------------------------------------------------------- loops and keys


def loop_step(calls: Any, **args: Any) -> dict[str, Any]:
    return {"call": "tool.loop",
            "args": {"loop_over": "<windows> from trajectory[0].obs", "calls": calls, **args}}


GRID = {"call": "ras.grid_windows", "args": {"image_path": "post.tif", "n": 2}}


@pytest.mark.parametrize(("trajectory", "expected"), [
    ([GRID, loop_step([{"tool": "ras.clp", "args": {"image_path": "a.tif"}}])], ["PC201"]),
    ([GRID, loop_step([{"tool": "ras.area", "args": {"mask_path": "<mask_path> from step[1]"
                                                                  ".obs", "pixel_size_m": 1}},
                       {"tool": "seg.vegetation", "args": {"image_path": "x.tif"}}])],
     ["PC207"]),
    ([GRID, loop_step([{"tool": "ras.area", "args": {"mask_path": "<item.path>"}}])],
     ["PC203"]),
    ([GRID, loop_step([{"tool": "ras.area", "args": {"mask_path": "<item.path>"}}],
                      bind={"pixel_size_m": "gsd"})], []),
    ([GRID, loop_step([{"tool": "functions.seg_vegetation", "args": {"image_path": "a.tif"}}])],
     []),
    ([GRID, loop_step([{"tool": "seg.vegetation", "args": {"image_path": "x.tif"}},
                       {"tool": "ras.area", "args": {"mask_path": "<mask_pth> from step[0].obs",
                                                     "pixel_size_m": 1}}])], ["PC208"]),
    ([GRID, loop_step("not calls")], ["PC108"]),
    # DORA's tool servers decode a JSON string given for a list or an object: no alarm.
    ([GRID, loop_step(json.dumps([{"tool": "seg.vegetation", "args": {"image_path": "a.tif"}}]),
                      bind='{"image_path": "path"}')], []),
    ([GRID, {"call": "ras.area", "args": {"mask_path": "<item.path>", "pixel_size_m": 1}}],
     ["PC205"]),
    ([GRID, {"call": "vis.bar_chart", "args": {"data": {"a": "<cnt> from trajectory[0].obs"}}}],
     ["PC208"]),
    ([GRID, {"call": "ras.area", "args": {"mask_path": "<count> from trajectory[0].obs",
                                          "pixel_size_m": 1}}], ["PC301"]),
    ([GRID, {"call": "ras.area", "args": {"mask_path": "a.png", "pixel_size_m": "big"}}],
     ["PC302"]),
])
def test_loop_and_reference_mistakes(trajectory: list[Any], expected: list[str]) -> None:
    report = check_trajectory(trajectory, "dora")
    assert [d.code for d in report.diagnostics] == expected


@pytest.mark.parametrize(("text", "code"), [
    ('{"question": "q", "trajectory": 5}', "PC105"),
    ('[{"args": {"a": 1}}, {"call": "calc.add", "args": {"a": 1, "b": 2}}]', "PC107"),
    ('[{"call": 7, "args": {}}]', "PC108"),
    ('[{"call": "calc.add", "args": [1, 2]}]', "PC108"),
    ('[{"call": "ras.area", "args": {"mask_path": "m.png", "pixel_size_m": NaN}}]', "PC302"),
])
def test_bad_input_is_a_diagnostic(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   text: str, code: str) -> None:
    _, out = lint(tmp_path, "bad.json", text, capsys)
    assert code in [d["code"] for d in out["diagnostics"]]


# --------------------------------------------------------------------------- no false alarms


def _literal(kind: str) -> Any:
    return {"String": "/data/x.tif", "Number": 0.5, "Integer": 3, "Boolean": True,
            "List": [1, 2], "Object": {"a": 1}}.get(kind, "x")


@st.composite
def gold_trajectories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Trajectories as DORA's gold ones are written: every required argument given, literals
    of the declared kind, references to keys an earlier call returns, of a fitting kind."""
    toolset = plancheck.load_toolset("dora")
    lattice = toolset.lattice
    names = sorted(n for n in toolset.tools if n not in ("tool.loop",))
    steps: list[dict[str, Any]] = []
    for position in range(draw(st.integers(1, 6))):
        tool = toolset.tools[draw(st.sampled_from(names))]
        args: dict[str, Any] = {}
        for param in tool.inputs:
            if not param.required and not draw(st.booleans()):
                continue
            producers = [(i, out.name) for i, step in enumerate(steps)
                         for out in toolset.tools[step["call"]].outputs
                         if lattice.compat(out, param.type).name == "OK"]
            refer: bool = draw(st.booleans())
            if producers and refer:
                index, key = draw(st.sampled_from(producers))
                args[param.name] = f"<{key}> from trajectory[{index}].obs"
            else:
                args[param.name] = _literal(param.type)
        steps.append({"call": tool.name, "args": args, "obs": {}})
        del position
    return steps


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold_trajectories())
def test_well_formed_trajectories_check_clean(trajectory: list[dict[str, Any]]) -> None:
    report = check_trajectory(trajectory, "dora")
    assert report.errors == [], [d.message for d in report.errors]


# --------------------------------------------------------------------------- batch scoring


def write_run(tmp_path: Path) -> tuple[Path, Path]:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "t1_perception_and_assessment.json").write_text(
        json.dumps([sample(), sample("beirut_2")]), encoding="utf-8")
    run = tmp_path / "run" / "t1_perception_and_assessment"
    run.mkdir(parents=True)
    (run / "benchmark.jsonl").write_text(records(tmp_path), encoding="utf-8")
    return tasks, tmp_path / "run"


def test_score_a_run_as_dora_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks, run = write_run(tmp_path)
    per_item = tmp_path / "items.jsonl"
    code = main(["score", "--gold", str(tasks / "t1_perception_and_assessment.json"),
                 str(run), "--per-item", str(per_item), "--format", "json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    gold = {"t1": json.loads((tasks / "t1_perception_and_assessment.json").read_text())}
    lines = (run / "t1_perception_and_assessment" / "benchmark.jsonl").read_text().splitlines()
    expected = plancheck.dora.evaluate_run(gold, {"t1": [json.loads(x) for x in lines]},
                                           polygon_roots=(str(tasks), str(run)))
    assert summary["dora_score"] == expected["dora_score"] == 0.5
    assert summary["dimensions"] == expected["dimensions"]
    assert summary["run_failures"] == {"t1": 1}
    assert summary["unanswered"] == {"t1": 1}
    items = [json.loads(x) for x in per_item.read_text().splitlines()]
    assert [(i["question_id"], i["status"], i["answer"]) for i in items] == [
        ("beirut_1_task0", "answered", 1.0), ("beirut_1_task1", "answered", 1.0),
        ("beirut_2_task0", "run_failure", 0.0), ("beirut_2_task1", "unanswered", 0.0)]
    assert items[0]["fpof"]["code"] == "PC201"
    assert items[0]["fpof"]["fpof_category"] == "Tool Mismatch"
    assert items[1]["fpof"] is None and items[1]["t_em"] == 1.0
    assert [i["t_ord"] for i in items] == [r["t_ord"] for r in expected["tasks"]["t1"]]


def test_report_renders_dora_table_and_gold_may_list_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks, run = write_run(tmp_path)
    per_item = tmp_path / "results" / "model" / "per_item.jsonl"
    per_item.parent.mkdir(parents=True)
    benchmark = run / "t1_perception_and_assessment" / "benchmark.jsonl"
    assert main(["score", "--gold", str(tasks), str(benchmark), "--per-item",
                 str(per_item)]) == 0
    table = capsys.readouterr().out
    assert "DORA Score: 0.500000" in table
    assert main(["report", str(tmp_path / "results")]) == 0
    report = capsys.readouterr().out
    assert table.strip() in report
    assert table.splitlines()[3].split()[:3] == ["t1", "4", "0.500000"]


def test_scoring_survives_bad_answers(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    tasks = tmp_path / "t2_spatial_relation_analysis.json"
    gold_task = task(final_answer={"zone": "flood.geojson", "n": 3.0},
                     eval_spec={"zone": "polygon_iou", "n": "scalar_count"})
    tasks.write_text(json.dumps([{"sample_id": "s", "tasks": [gold_task]}]), encoding="utf-8")
    run = tmp_path / "benchmark.jsonl"
    record = {"question_id": "s_task0", "sample_id": "s", "error": None,
              "trajectory": "not a list",
              "predicted_answer": {"zone": "/nowhere/pred.geojson", "n": math.nan}}
    run.write_text(json.dumps(record) + "\n{broken\n", encoding="utf-8")
    code = main(["score", "--gold", str(tasks), str(run), "--format", "json"])
    out = capsys.readouterr()
    assert code == 1  # the broken line is reported, not a traceback
    summary = json.loads(out.out)
    assert summary["malformed_records"] == 1
    assert summary["dimensions"]["t2"]["dim_score"] == 0.0
    assert "Traceback" not in out.err
    assert "plancheck: warning: polygon_iou: cannot locate gold polygon file" in out.err


def test_a_line_that_is_not_utf8_is_one_bad_record(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    tasks = tmp_path / "t1_perception_and_assessment.json"
    tasks.write_text(json.dumps([{"sample_id": "s", "tasks": [task(), task()]}]),
                     encoding="utf-8")
    run = tmp_path / "benchmark.jsonl"
    good = {"question_id": "s_task0", "sample_id": "s", "error": None, "trajectory": [],
            "predicted_answer": {"flooded_area_m2": 120.5}}
    run.write_bytes(json.dumps(good).encode() + b'\n{"question_id": "s_task1", "x": "caf\xe9"}\n')
    code = main(["score", "--gold", str(tasks), str(run), "--format", "json"])
    out = capsys.readouterr()
    assert code == 1  # reported, and the rest of the run scored
    summary = json.loads(out.out)
    assert summary["malformed_records"] == 1
    assert f"error[PC100]: {run}:2: the line is not UTF-8; skipped" in out.err
    assert "Traceback" not in out.err


def test_unreadable_gold_is_a_usage_error(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "t1.json"
    bad.write_text("[{\"tasks\": [", encoding="utf-8")
    code = main(["score", "--gold", str(bad), str(tmp_path)])
    assert code == 2
    assert "Traceback" not in capsys.readouterr().err


# --------------------------------------------------------------------------- robustness

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() |
                     st.text(max_size=12) | st.sampled_from(
                         ["<mask_path> from trajectory[0].obs", "<item.x>", "seg_flood(a)",
                          "<k> from step[3].obs", "tool.loop", "trajectory[9].obs"]),
                     lambda inner: st.lists(inner, max_size=4) |
                     st.dictionaries(st.sampled_from(["call", "args", "tool", "calls", "bind",
                                                      "loop_over", "mask_path", "trajectory",
                                                      "tasks", "question_id"]), inner,
                                     max_size=4), max_leaves=20)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.fixed_dictionaries({"call": _json, "args": _json}), max_size=4) | _json)
def test_any_value_is_read_without_an_internal_error(value: Any) -> None:
    report = check_trajectory(value, "dora")
    assert "PC002" not in [d.code for d in report.diagnostics]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_json, max_size=3))
def test_any_run_record_scores_or_is_reported(tmp_path_factory: Any, records: list[Any]
                                              ) -> None:
    root = tmp_path_factory.mktemp("run")
    tasks = root / "t1_perception_and_assessment.json"
    tasks.write_text(json.dumps([sample()]), encoding="utf-8")
    run = root / "benchmark.jsonl"
    run.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    try:
        code = main(["score", "--gold", str(tasks), str(run), "--format", "json"])
    except SystemExit as exit_:  # argparse only; never for these arguments
        raise AssertionError(exit_) from None
    assert code in (0, 1, 2)
