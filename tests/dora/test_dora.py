"""DORA-style trajectories: the lint frontend (with positions) and the trajectory metrics.

The tool pool and trajectories are small ones written for these tests, in the shapes the DORA
paper describes (MCP tools with typed input and output schemas; gold trajectories whose
arguments refer to earlier results as ``"<key> from trajectory[N].obs"``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancheck.api import check_trajectory
from plancheck.cli import main
from plancheck.corpus.foreign import read_foreign
from plancheck.dora.paper_metrics import (
    METRICS,
    ToolCall,
    alignment,
    calls_from_steps,
    efficiency,
    mean_metrics,
    parameter_accuracy,
    tool_any_order,
    tool_exact_match,
    tool_in_order,
    trajectory_metrics,
)
from plancheck.dora.score import calls_from_trajectory, score_trajectory
from plancheck.formats.sniff import is_call_trajectory as looks_like_trajectory

POOL: dict[str, Any] = {"tools": [
    {"name": "seg.building_damage", "description": "Building damage classes from an image.",
     "inputSchema": {"type": "object", "properties": {
         "image_path": {"type": "string"}, "model": {"enum": ["hrnet", "segformer"]}},
         "required": ["image_path"]},
     "outputSchema": {"type": "object", "properties": {"mask_path": {"type": "string"}}}},
    {"name": "ras.area", "description": "Area of some classes of a mask.",
     "inputSchema": {"type": "object", "properties": {
         "mask_path": {"type": "string"},
         "class_ids": {"type": "array", "items": {"type": "integer"}},
         "gsd": {"type": "number", "exclusiveMinimum": 0}},
         "required": ["mask_path", "class_ids"]},
     "outputSchema": {"type": "object", "properties": {"area_m2": {"type": "number"}}}},
    {"name": "ras.vectorize", "description": "Polygons of a mask.",
     "inputSchema": {"type": "object", "properties": {"mask_path": {"type": "string"}},
                     "required": ["mask_path"]},
     "outputSchema": {"type": "object", "properties": {"geojson_path": {"type": "string"},
                                                       "count": {"type": "integer"}}}},
    {"name": "m.summarize", "description": "A report from facts.",
     "inputSchema": {"type": "object", "properties": {
         "title": {"type": "string"}, "facts": {"type": "array"}}, "required": ["title"]},
     "outputSchema": {"type": "object", "properties": {"report": {"type": "string"}}}},
]}


@pytest.fixture
def pool(tmp_path: Path) -> Path:
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(POOL), encoding="utf-8")
    return path


def lint(tmp_path: Path, pool: Path, text: str, capsys: pytest.CaptureFixture[str]
         ) -> tuple[int, list[dict[str, Any]]]:
    """Run ``plancheck check traj.json --tools pool.json --format json``."""
    path = tmp_path / "traj.json"
    path.write_text(text, encoding="utf-8")
    code = main(["check", str(path), "--tools", str(pool), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)["diagnostics"]


def position(text: str, needle: str) -> tuple[int, int]:
    """1-based line and column of the first occurrence of ``needle``."""
    offset = text.index(needle)
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def where(diagnostic: dict[str, Any]) -> tuple[int, int]:
    span = diagnostic["span"]
    return span["start_line"], span["start_col"]


# --------------------------------------------------------------------------- acceptance


ACCEPTANCE = """[
  {"tool": "seg.building_damage", "purpose": "find damaged buildings",
   "arguments": {"image_path": "post_event.tif"}},
  {"tool": "ras.area", "purpose": "measure them",
   "arguments": {"mask_path": "<mask_path> from trajectory[2].obs", "gsd": 0.5}},
  {"tool": "ras.vectorize", "arguments": {"mask_path": "<mask_path> from trajectory[0].obs"}}
]
"""


def test_forward_reference_and_missing_argument_are_reported_with_positions(
    tmp_path: Path, pool: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, diagnostics = lint(tmp_path, pool, ACCEPTANCE, capsys)
    assert code == 1
    errors = [d for d in diagnostics if d["severity"] == "error"]
    assert [d["code"] for d in errors] == ["PC203", "PC207"]
    missing, forward = errors
    assert missing["message"] == \
        "step 1 does not pass the required input `class_ids` of `ras.area`"
    assert where(missing) == position(ACCEPTANCE, '"ras.area"')
    assert missing["span"]["pointer"] == "/1/tool"
    assert forward["message"] == "step 1 uses a result of step 2, which comes later"
    assert where(forward) == position(ACCEPTANCE, '"<mask_path> from trajectory[2].obs"')
    assert forward["span"]["pointer"] == "/1/arguments/mask_path"
    assert forward["span"]["end_col"] - forward["span"]["start_col"] == \
        len('"<mask_path> from trajectory[2].obs"')


def test_trajectory_metrics_of_the_acceptance_trajectory_against_its_gold() -> None:
    predicted = json.loads(ACCEPTANCE)
    gold = [
        {"tool": "seg.building_damage", "arguments": {"image_path": "post_event.tif"}},
        {"tool": "ras.vectorize", "arguments": {"mask_path": "<mask_path> from trajectory[0].obs"}},
        {"tool": "ras.area", "arguments": {"mask_path": "<mask_path> from trajectory[0].obs",
                                           "class_ids": [2, 3], "gsd": 0.5}},
        {"tool": "m.summarize", "arguments": {"title": "Damage",
                                              "facts": ["<area_m2> from trajectory[2].obs"]}},
    ]
    # By hand. Gold tools: seg, vec, area, sum (4, all distinct); predicted: seg, area, vec.
    # Any-Order: {seg, area, vec} of 4 distinct gold tools -> 3/4.
    # In-Order: LCS(seg vec area sum, seg area vec) = 2 (seg + vec, or seg + area) -> 2/4.
    # Exact-Match: prefix "seg" only -> 1/4.
    # Parameter accuracy: of the maximal alignments, {seg-seg, vec-vec} has two argument-equal
    # pairs (the vectorize calls both read the mask of the paired first calls), while
    # {seg-seg, area-area} has one (the predicted area call lacks class_ids) -> 2/4.
    # Efficiency: 4 / max(3, 4) = 1.
    assert score_trajectory(predicted, gold, wording="paper") == {
        "tool_any_order": 0.75, "tool_in_order": 0.5, "tool_exact_match": 0.25,
        "parameter_accuracy": 0.5, "efficiency": 1.0}
    # DORA's code (the default) pairs steps by position: only step 0 keeps its tool, and it
    # earns its one argument -> par_acc 1/4 (DORA's evaluation.py gives the same numbers).
    assert score_trajectory(predicted, gold) == {
        "t_any": 0.75, "t_ord": 0.5, "t_em": 0.25, "par_acc": 0.25, "eff": 1.0}


# --------------------------------------------------------------------------- lint: each check


def codes_and_positions(tmp_path: Path, pool: Path, trajectory: Any,
                        capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str | None]]:
    text = json.dumps(trajectory, indent=1)
    _, diagnostics = lint(tmp_path, pool, text, capsys)
    for diagnostic in diagnostics:  # every span resolved to a real place in the file
        assert diagnostic["span"]["start_line"] >= 1
    return [(d["code"], d["span"]["pointer"]) for d in diagnostics]


def test_a_clean_trajectory_passes(tmp_path: Path, pool: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    trajectory = [
        {"name": "seg.building_damage", "args": {"image_path": "a.tif", "model": "hrnet"}},
        {"name": "ras.area", "args": {"mask_path": "<mask_path> from trajectory[0].obs",
                                      "class_ids": [1, 2], "gsd": 0.3}},
        {"name": "m.summarize", "args": {"title": "t", "facts": ["x"]}}]
    assert codes_and_positions(tmp_path, pool, trajectory, capsys) == []
    path = tmp_path / "clean.json"
    path.write_text(json.dumps(trajectory), encoding="utf-8")
    assert main(["check", str(path), "--tools", str(pool), "-q"]) == 0


def test_unknown_tools_arguments_outputs_and_calls(tmp_path: Path, pool: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    trajectory = [
        {"tool": "seg.building_damages", "arguments": {"image_path": "a.tif"}},
        {"tool": "seg.building_damage", "arguments": {"image": "a.tif"}},
        {"tool": "ras.vectorize", "arguments": {"mask_path": "<mask> from trajectory[1].obs"}},
        {"tool": "ras.vectorize", "arguments": {"mask_path": "<mask_path> from trajectory[7].obs"}},
        {"tool": "ras.vectorize", "arguments": {"mask_path": "<mask_path> from trajectory[4].obs"}},
    ]
    assert sorted(codes_and_positions(tmp_path, pool, trajectory, capsys)) == sorted([
        ("PC201", "/0/tool"),  # unknown tool (did you mean seg.building_damage?)
        ("PC202", "/1/arguments/image"),  # unknown argument (a warning: the pool's
        ("PC203", "/1/tool"),  # schema admits it), so `image_path` is missing (issue 31)
        ("PC208", "/2/arguments/mask_path"),  # call 1 has no output `mask`
        ("PC206", "/3/arguments/mask_path"),  # there is no call 7
        ("PC207", "/4/arguments/mask_path"),  # a call using its own result
    ])


def test_types_and_schemas_are_checked(tmp_path: Path, pool: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    trajectory = [
        {"tool": "seg.building_damage", "arguments": {"image_path": "a.tif", "model": "unet"}},
        {"tool": "ras.area", "arguments": {"mask_path": "<mask_path> from trajectory[0].obs",
                                           "class_ids": [1, "2"], "gsd": 0}},
        {"tool": "ras.vectorize", "arguments": {"mask_path": "<area_m2> from trajectory[1].obs"}},
    ]
    found = codes_and_positions(tmp_path, pool, trajectory, capsys)
    assert sorted(found) == sorted([
        ("PC302", "/0/arguments/model"),  # not one of the enum's values
        ("PC305", "/1/arguments/class_ids"),  # an item that is an integer in a string
        ("PC302", "/1/arguments/gsd"),  # exclusiveMinimum 0
        ("PC301", "/2/arguments/mask_path"),  # a number where a string is expected
    ])


def test_malformed_nested_and_whole_observation_references(
    tmp_path: Path, pool: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trajectory = [
        {"tool": "seg.building_damage", "arguments": {"image_path": "a.tif"}},
        {"tool": "m.summarize", "arguments": {
            "title": "see trajectory[0]",
            "facts": ["<mask_path> from trajectory[0].obs", "<x> from trajectory[3].obs",
                      {"later": "trajectory[1].obs.report"}]}},
        {"tool": "m.summarize", "arguments": {"title": "trajectory[0].obs",
                                              "facts": ["trajectory[-1].obs"]}},
    ]
    assert sorted(codes_and_positions(tmp_path, pool, trajectory, capsys)) == sorted([
        ("PC205", "/1/arguments/title"),
        ("PC206", "/1/arguments/facts/1"),
        ("PC207", "/1/arguments/facts/2/later"),
        ("PC206", "/2/arguments/facts/0"),
    ])


def test_nested_references_are_resolved_and_typed(
    tmp_path: Path, pool: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reference inside a list argument names an output the call returns (PC208 if not)
    and fills its place with the right type (the mask's path is no class id). The list around
    them is schema-checked with their places holes (it once drew a PC302: "an item that is not
    an integer" for the count)."""
    trajectory = [
        {"tool": "seg.building_damage", "arguments": {"image_path": "a.tif"}},
        {"tool": "ras.vectorize", "arguments": {"mask_path": "<mask_path> from trajectory[0].obs"}},
        {"tool": "ras.area", "arguments": {
            "mask_path": "<mask_path> from trajectory[0].obs",
            "class_ids": [2, "<count> from trajectory[1].obs",
                          "<mask_path> from trajectory[0].obs"]}},
        {"tool": "m.summarize", "arguments": {"title": "Damage", "facts": [
            "<area_m2> from trajectory[2].obs", {"polygons": "<geojson> from trajectory[1].obs"}]}},
    ]
    _, diagnostics = lint(tmp_path, pool, json.dumps(trajectory, indent=1), capsys)
    found = [(d["code"], d["span"]["pointer"]) for d in diagnostics]
    assert sorted(found) == [
        ("PC208", "/3/arguments/facts/1/polygons"),  # ras.vectorize returns no `geojson`
        ("PC301", "/2/arguments/class_ids/2"),  # a path where an integer goes
    ]
    wrong = next(d for d in diagnostics if d["code"] == "PC301")
    assert "`ras.area.class_ids[2]` expects `Integer`" in wrong["message"]


def test_malformed_calls_are_reported(tmp_path: Path, pool: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    trajectory = {"query": "How much damage?", "trajectory": [
        {"tool": "seg.building_damage", "arguments": {"image_path": "a.tif"}},
        {"tool": 7, "arguments": {}},
        {"purpose": "no tool", "arguments": {"x": 1}},
        {"tool": "ras.vectorize", "arguments": "not json"},
        {"tool": "ras.vectorize", "arguments": ["a"]},
    ], "answer": {"area": 10}}
    assert codes_and_positions(tmp_path, pool, trajectory, capsys) == [
        ("PC108", "/trajectory/1/tool"),
        ("PC107", "/trajectory/2"),
        ("PC108", "/trajectory/3/arguments"),
        ("PC108", "/trajectory/4/arguments"),
    ]


def test_openai_tool_calls_and_one_based_numbering(tmp_path: Path, pool: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    calls = [
        {"id": "c1", "type": "function", "function": {
            "name": "seg.building_damage", "arguments": json.dumps({"image_path": "a.tif"})}},
        {"id": "c2", "type": "function", "function": {
            "name": "ras.area",
            "arguments": json.dumps({"mask_path": "<mask_path> from trajectory[0].obs"})}},
    ]
    # Arguments in a JSON string all point at the string.
    assert codes_and_positions(tmp_path, pool, {"tool_calls": calls}, capsys) == [
        ("PC203", "/tool_calls/1/function/name")]
    numbered = [
        {"step": 1, "tool": "seg.building_damage", "arguments": {"image_path": "a.tif"}},
        {"step": 2, "tool": "ras.vectorize",
         "arguments": {"mask_path": "<mask_path> from trajectory[1].obs"}}]
    assert codes_and_positions(tmp_path, pool, numbered, capsys) == []


def test_empty_trajectory_and_invalid_json(tmp_path: Path, pool: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert [c for c, _ in codes_and_positions(tmp_path, pool, {"trajectory": []}, capsys)] \
        == ["PC112"]
    code, diagnostics = lint(tmp_path, pool, '[{"tool": "x", ', capsys)
    assert code == 1 and [d["code"] for d in diagnostics] == ["PC100"]


def test_check_trajectory_api(pool: Path) -> None:
    report = check_trajectory(ACCEPTANCE, pool, name="traj.json")
    assert [d.code for d in report.errors] == ["PC203", "PC207"]
    assert report.errors[1].span is not None and report.errors[1].span.start_line == 5
    toolset, _ = read_foreign(POOL)
    value_report = check_trajectory(json.loads(ACCEPTANCE), toolset)
    assert [d.code for d in value_report.errors] == ["PC203", "PC207"]
    assert check_trajectory("[1, 2", toolset).codes == ["PC100"]


def test_trajectories_are_told_apart_from_plans_and_pools() -> None:
    assert looks_like_trajectory([{"tool": "a", "arguments": {}}])
    assert looks_like_trajectory({"gold_trajectory": [{"name": "a", "args": {"x": 1}}]})
    plan_step = {"agent": "a", "step": 0, "dependence": [-1], "dependence_content": None,
                 "inputs": {}, "outputs": []}
    assert not looks_like_trajectory([plan_step])
    assert not looks_like_trajectory(POOL["tools"])  # MCP tools
    assert not looks_like_trajectory([{"type": "function", "name": "a", "parameters": {
        "type": "object", "properties": {}}}])  # OpenAI (Responses) tools
    assert not looks_like_trajectory([{"type": "function", "function": {
        "name": "a", "parameters": {"type": "object", "properties": {}}}}])
    assert not looks_like_trajectory([{"tool": "a"}])  # names only: could be anything
    assert not looks_like_trajectory([])


# --------------------------------------------------------------------------- metrics


def calls(*names: str) -> list[ToolCall]:
    return [ToolCall(name, {}) for name in names]


def test_tool_metrics_by_hand() -> None:
    gold = calls("A", "B", "C", "A")
    pred = calls("A", "C", "B", "D", "A", "E")
    assert tool_any_order(pred, gold) == 1.0  # A, B, C all called
    assert tool_in_order(pred, gold) == 3 / 4  # LCS: A C A (or A B A)
    assert tool_exact_match(pred, gold) == 1 / 4  # only the leading A agrees
    assert efficiency(pred, gold) == 4 / 6
    assert tool_any_order(calls("B"), gold) == 1 / 3
    assert tool_in_order(calls("C", "B", "A"), gold) == 2 / 4
    assert tool_exact_match(calls("A", "B", "C", "A", "X"), gold) == 1.0
    assert efficiency(calls("A"), gold) == 1.0  # fewer calls are not penalised here


def test_empty_trajectories() -> None:
    assert trajectory_metrics([], []) == dict.fromkeys(METRICS, 1.0)
    assert trajectory_metrics(calls("A"), []) == {
        "tool_any_order": 1.0, "tool_in_order": 1.0, "tool_exact_match": 1.0,
        "parameter_accuracy": 1.0, "efficiency": 0.0}
    assert trajectory_metrics([], calls("A", "B")) == {
        "tool_any_order": 0.0, "tool_in_order": 0.0, "tool_exact_match": 0.0,
        "parameter_accuracy": 0.0, "efficiency": 1.0}


def test_parameter_accuracy_by_hand() -> None:
    gold = [ToolCall("seg", {"image": "a.tif"}),
            ToolCall("area", {"mask": "<mask> from trajectory[0].obs", "ids": [1, 2]}),
            ToolCall("sum", {"x": "<area> from trajectory[1].obs"})]
    # An inserted step shifts every later number; references still match through the pairing.
    pred = [ToolCall("seg", {"image": "a.tif"}), ToolCall("noise", {}),
            ToolCall("area", {"mask": "<mask> from trajectory[0].obs", "ids": [1, 2]}),
            ToolCall("sum", {"x": "<area> from trajectory[2].obs"})]
    assert alignment(pred, gold) == [(0, 0), (1, 2), (2, 3)]
    assert parameter_accuracy(pred, gold) == 1.0
    # Reading the wrong call's output, a wrong value, and a missing argument: 0 of 3 right.
    wrong = [ToolCall("seg", {"image": "b.tif"}),
             ToolCall("area", {"mask": "<mask> from trajectory[0].obs", "ids": [1]}),
             ToolCall("sum", {"x": "<area> from trajectory[0].obs"})]
    assert parameter_accuracy(wrong, gold) == 0.0
    # JSON equality: 2 == 2.0 but true != 1.
    assert parameter_accuracy([ToolCall("f", {"n": 2.0})], [ToolCall("f", {"n": 2})]) == 1.0
    assert parameter_accuracy([ToolCall("f", {"n": True})], [ToolCall("f", {"n": 1})]) == 0.0
    # Conditioned on the correct tools: 1 of the 2 paired calls has the right arguments.
    half = [ToolCall("seg", {"image": "a.tif"}), ToolCall("sum", {"x": 1})]
    assert parameter_accuracy(half, gold) == 1 / 3
    assert parameter_accuracy(half, gold, conditional=True) == 1 / 2


def test_disasterbench_references_and_plans() -> None:
    plan = [{"agent": "A", "step": 0, "inputs": {"p": "x.tif"}},
            {"agent": "B", "step": 1, "inputs": {"q": "<GENERATED>-0-<out>"}}]
    gold = calls_from_steps(plan)
    assert gold == [ToolCall("A", {"p": "x.tif"}), ToolCall("B", {"q": "<GENERATED>-0-<out>"})]
    assert trajectory_metrics(gold, gold) == dict.fromkeys(METRICS, 1.0)
    assert parameter_accuracy([gold[0], ToolCall("B", {"q": "<GENERATED>-0-<other>"})],
                              gold) == 1 / 2


def test_score_trajectory_reads_numbering_and_shapes() -> None:
    one_based = [{"step": 1, "tool": "A", "arguments": {"p": 1}},
                 {"step": 2, "tool": "B", "arguments": {"q": "<o> from trajectory[1].obs"}}]
    zero_based = {"tool_calls": [
        {"type": "function", "function": {"name": "A", "arguments": '{"p": 1}'}},
        {"type": "function", "function": {
            "name": "B", "arguments": json.dumps({"q": "trajectory[0].obs.o"})}}]}
    assert calls_from_trajectory(one_based) == calls_from_trajectory(zero_based) == [
        ToolCall("A", {"p": 1}), ToolCall("B", {"q": "<o> from trajectory[0].obs"})]
    assert score_trajectory(zero_based, one_based, wording="paper") == \
        dict.fromkeys(METRICS, 1.0)
    assert score_trajectory(zero_based, one_based) == dict.fromkeys(
        ("t_any", "t_ord", "t_em", "par_acc", "eff"), 1.0)  # DORA's code, the default
    assert mean_metrics([dict.fromkeys(METRICS, 1.0), dict.fromkeys(METRICS, 0.0)]) == \
        dict.fromkeys(METRICS, 0.5)


names = st.lists(st.sampled_from("ABCDE"), max_size=8)


@given(names, names)
@settings(max_examples=300, deadline=None)
def test_metric_invariants(pred_names: list[str], gold_names: list[str]) -> None:
    pred = [ToolCall(n, {"k": i % 2}) for i, n in enumerate(pred_names)]
    gold = [ToolCall(n, {"k": i % 2}) for i, n in enumerate(gold_names)]
    metrics = trajectory_metrics(pred, gold)
    assert all(0.0 <= value <= 1.0 for value in metrics.values())
    # a common prefix is a common subsequence; equal arguments need equal tools
    assert metrics["tool_exact_match"] <= metrics["tool_in_order"]
    assert metrics["parameter_accuracy"] <= metrics["tool_in_order"]
    assert trajectory_metrics(gold, gold) == dict.fromkeys(METRICS, 1.0)
    if gold:
        assert metrics["efficiency"] > 0


def test_references_inside_arguments_written_as_a_json_string_point_at_the_string(
    tmp_path: Path, pool: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON string has no members a pointer could name: what is found inside it points at
    the string, nested or not (once a nested one pointed below it, at no place in the file)."""
    calls = [
        {"id": "c1", "type": "function", "function": {
            "name": "seg.building_damage", "arguments": json.dumps({"image_path": "a.tif"})}},
        {"id": "c2", "type": "function", "function": {
            "name": "m.summarize", "arguments": json.dumps({
                "title": "see trajectory[0]",
                "facts": ["see trajectory[0]", "<x> from trajectory[5].obs"]})}},
    ]
    found = codes_and_positions(tmp_path, pool, {"tool_calls": calls}, capsys)
    assert [f for f in found if f[0] in ("PC205", "PC206")] == [
        ("PC205", "/tool_calls/1/function/arguments"),
        ("PC205", "/tool_calls/1/function/arguments"),
        ("PC206", "/tool_calls/1/function/arguments")]


def test_every_exported_name_stays_what_it_names_after_every_submodule_is_imported() -> None:
    """An export named like its module (``aggregate`` in ``aggregate.py``) was replaced by the
    module as soon as anything imported that submodule: ``plancheck.dora.aggregate(...)``
    then raised "module is not callable"."""
    import importlib
    import pkgutil

    import plancheck.dora as dora_package

    for module in pkgutil.iter_modules(dora_package.__path__):
        importlib.import_module(f"plancheck.dora.{module.name}")
    for name in dora_package.__all__:
        exported = getattr(dora_package, name)
        assert not isinstance(exported, type(dora_package)), f"plancheck.dora.{name} is a module"
