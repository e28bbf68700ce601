"""Tool pools from other ecosystems: MCP, OpenAI function tools, TaskBench.

Each format loads, every export is a valid document of its format, exports load back into an
equivalent toolset, and -- the acceptance criterion -- a plan checked against the built-in pool,
against its MCP export and against its OpenAI exports gets the same diagnostics.
"""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

import plancheck
from plancheck.cli import main
from plancheck.corpus.builtin import builtin_toolset
from plancheck.corpus.export import export_toolset, to_dsl, to_mcp, to_openai
from plancheck.corpus.foreign import foreign_format, read_foreign
from plancheck.corpus.toolsets import ToolsetError, load_toolset
from plancheck.dsl.printer import toolset_to_dsl
from plancheck.ir.nodes import Toolset
from tests.strategies import TOOLSET, well_typed_plan

# --------------------------------------------------------------------------- small pools

MCP_POOL: dict[str, Any] = {"tools": [
    {"name": "seg.flood", "title": "Flood segmentation", "description": "Segment flood water.",
     "inputSchema": {"type": "object", "properties": {
         "image_path": {"type": "string", "description": "an optical image"},
         "threshold": {"type": "number", "minimum": 0, "maximum": 1},
         "bands": {"type": "array", "items": {"type": "integer"}, "minItems": 3},
         "mode": {"enum": ["fast", "accurate"]},
         "tile": {"type": ["integer", "null"]},
         "verbose": {"type": "boolean"}},
         "required": ["image_path", "threshold"]},
     "outputSchema": {"type": "object", "properties": {
         "mask_path": {"type": "string"}, "flooded_fraction": {"type": "number"},
         "stats": {"type": "object", "properties": {"pixels": {"type": "integer"}}}}},
     "annotations": {"readOnlyHint": True}},
    {"name": "ras.area", "description": "Area of a mask.",
     "inputSchema": {"type": "object", "properties": {"mask_path": {"type": "string"}},
                     "required": ["mask_path"]},
     "outputSchema": {"type": "object", "properties": {"area_m2": {"type": "number"}}}},
]}


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


def signature(toolset: Toolset, name: str) -> list[tuple[str, str, str, bool]]:
    tool = toolset.tools[name]
    return ([("in", p.name, p.type, p.required) for p in tool.inputs]
            + [("out", p.name, p.type, p.required) for p in tool.outputs])


# --------------------------------------------------------------------------- loading


def test_mcp_tools_list_result_loads_with_value_kinds(tmp_path: Path) -> None:
    toolset, diagnostics = load_toolset(write(tmp_path / "pool.json", MCP_POOL))
    assert diagnostics == []
    assert list(toolset.tools) == ["seg.flood", "ras.area"]
    assert signature(toolset, "seg.flood") == [
        ("in", "image_path", "String", True), ("in", "threshold", "Number", True),
        ("in", "bands", "List", False), ("in", "mode", "String", False),
        ("in", "tile", "Integer", False), ("in", "verbose", "Boolean", False),
        ("out", "mask_path", "String", True), ("out", "flooded_fraction", "Number", True),
        ("out", "stats", "Object", True)]
    tool = toolset.tools["seg.flood"]
    assert tool.description == "Segment flood water."
    assert tool.inputs[0].doc == "an optical image"
    assert toolset.lattice.is_subtype("Integer", "Number")
    assert not toolset.lattice.is_subtype("Number", "String")


@pytest.mark.parametrize("shape", ["jsonrpc", "bare-list", "snake-case"])
def test_mcp_variants_load_the_same_tools(shape: str) -> None:
    if shape == "jsonrpc":
        value: Any = {"jsonrpc": "2.0", "id": 1, "result": MCP_POOL}
    elif shape == "bare-list":
        value = MCP_POOL["tools"]
    else:
        value = [{"name": t["name"], "input_schema": t["inputSchema"],
                  "output_schema": t["outputSchema"]} for t in MCP_POOL["tools"]]
    assert foreign_format(value) == "mcp"
    toolset, diagnostics = read_foreign(value)
    assert diagnostics == []
    reference, _ = read_foreign(MCP_POOL)
    for name in reference.tools:
        assert signature(toolset, name) == signature(reference, name)


def test_openai_chat_and_responses_shapes_load(tmp_path: Path) -> None:
    parameters = {"type": "object", "properties": {
        "city": {"type": "string", "description": "a city"},
        "days": {"type": "integer", "minimum": 1}}, "required": ["city"]}
    chat = [{"type": "function", "function": {"name": "forecast", "description": "Weather.",
                                              "parameters": parameters}},
            {"type": "web_search"}]  # a built-in tool: not a function, skipped
    responses = [{"type": "function", "name": "forecast", "description": "Weather.",
                  "parameters": parameters, "strict": False}]
    request_body = {"model": "m", "messages": [], "tools": chat}
    for value in (chat, responses, request_body):
        assert foreign_format(value) == "openai"
        toolset, diagnostics = load_toolset(write(tmp_path / "tools.json", value))
        assert diagnostics == []
        assert signature(toolset, "forecast") == [("in", "city", "String", True),
                                                  ("in", "days", "Integer", False)]
        assert toolset.tools["forecast"].outputs == ()  # OpenAI tools declare no outputs


def test_taskbench_tool_and_graph_descriptions_load(tmp_path: Path) -> None:
    graph = {"nodes": [
        {"id": "Image-to-Text", "desc": "Caption an image.", "input-type": ["image"],
         "output-type": ["text"]},
        {"id": "Question Answering", "desc": "Answer from text.",
         "input-type": ["text", "text"], "output-type": ["text"]},
        {"id": "get_weather", "desc": "Weather for a day.", "parameters": [
            {"name": "location", "type": "string", "desc": "where"},
            {"name": "date", "type": "date", "desc": "when"}]}],
        "links": [{"source": "Image-to-Text", "target": "Question Answering", "type": "text"},
                  {"source": "Image-to-Text", "target": "Nowhere", "type": "text"}]}
    assert foreign_format(graph) == "taskbench"
    toolset, diagnostics = load_toolset(write(tmp_path / "graph_desc.json", graph))
    assert [d.code for d in diagnostics] == ["PC704"]  # the link to a missing node
    assert signature(toolset, "Question Answering") == [
        ("in", "text_1", "text", True), ("in", "text_2", "text", True),
        ("out", "text", "text", True)]
    assert signature(toolset, "get_weather") == [("in", "location", "String", True),
                                                 ("in", "date", "date", True)]
    assert toolset.flows == {("Image-to-Text", "Question Answering")}
    assert toolset.tools["get_weather"].inputs[1].doc == "when"


def test_unrecognised_and_malformed_pools_are_reported(tmp_path: Path) -> None:
    with pytest.raises(ToolsetError) as unknown:
        load_toolset(write(tmp_path / "x.json", {"hello": 1}))
    assert [d.code for d in unknown.value.diagnostics] == ["PC706"]
    broken = {"tools": [
        {"name": "a", "inputSchema": {"type": "array"}},
        {"name": "b", "inputSchema": {"type": "object", "properties": {
            "x": {"type": "string", "x-plancheck-type": "Undeclared"}}}},
        {"name": "b", "inputSchema": {"type": "object"}},
        {"description": "no name", "inputSchema": {"type": "object"}}]}
    with pytest.raises(ToolsetError) as bad:
        load_toolset(write(tmp_path / "bad.json", broken))
    assert sorted(d.code for d in bad.value.diagnostics) == ["PC701", "PC702", "PC706", "PC706"]


# --------------------------------------------------------------------------- exports

# The MCP Tool and tools/list result, transcribed from the MCP specification's schema.
_OBJECT_SCHEMA = {"type": "object", "required": ["type"], "properties": {
    "type": {"const": "object"}, "properties": {"type": "object"},
    "required": {"type": "array", "items": {"type": "string"}}}}
MCP_RESULT_SCHEMA = {
    "type": "object", "required": ["tools"],
    "properties": {
        "tools": {"type": "array", "items": {
            "type": "object", "required": ["name", "inputSchema"],
            "properties": {"name": {"type": "string"}, "title": {"type": "string"},
                           "description": {"type": "string"}, "inputSchema": _OBJECT_SCHEMA,
                           "outputSchema": _OBJECT_SCHEMA, "annotations": {"type": "object"},
                           "_meta": {"type": "object"}},
            "additionalProperties": False}},
        "nextCursor": {"type": "string"}, "_meta": {"type": "object"}},
    "additionalProperties": False,
}


def _check_json_schemas(value: Any) -> int:
    """Every inputSchema/outputSchema/parameters member below ``value`` is a valid schema."""
    found = 0
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("inputSchema", "outputSchema", "parameters"):
                jsonschema.Draft202012Validator.check_schema(item)
                found += 1
            found += _check_json_schemas(item)
    elif isinstance(value, list):
        found += sum(_check_json_schemas(item) for item in value)
    return found


@pytest.mark.parametrize("extensions", [True, False])
def test_mcp_export_is_a_valid_tools_list_result(extensions: bool) -> None:
    exported = to_mcp(builtin_toolset(), extensions=extensions)
    jsonschema.validate(exported, MCP_RESULT_SCHEMA)
    assert _check_json_schemas(exported) == 26 * 2  # every tool has inputs and outputs
    assert ("_meta" in exported) is extensions


@pytest.mark.parametrize("extensions", [True, False])
def test_openai_exports_validate_against_the_sdk_types(extensions: bool) -> None:
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.responses import FunctionTool

    chat = to_openai(builtin_toolset(), api="chat", extensions=extensions)
    responses = to_openai(builtin_toolset(), api="responses", extensions=extensions)
    chat_tools = chat["tools"] if isinstance(chat, dict) else chat
    response_tools = responses["tools"] if isinstance(responses, dict) else responses
    adapter = TypeAdapter(ChatCompletionFunctionToolParam)
    allowed_chat = set(ChatCompletionFunctionToolParam.__annotations__)
    allowed_function = {"name", "description", "parameters", "strict"}
    for tool in chat_tools:
        adapter.validate_python(tool)
        assert set(tool) <= allowed_chat and set(tool["function"]) <= allowed_function
    allowed_responses = set(FunctionTool.model_fields)
    for tool in response_tools:
        FunctionTool.model_validate(tool)
        assert set(tool) <= allowed_responses
    assert len(chat_tools) == len(response_tools) == 26
    assert _check_json_schemas(chat_tools) == 26


@pytest.mark.parametrize("target", ["mcp", "openai", "openai-responses", "dsl"])
def test_builtin_pool_round_trips_through_every_format(target: str, tmp_path: Path) -> None:
    builtin = builtin_toolset()
    path = tmp_path / ("pool.wf" if target == "dsl" else "pool.json")
    path.write_text(export_toolset(builtin, target), encoding="utf-8")
    loaded, diagnostics = load_toolset(path)
    assert diagnostics == []
    assert toolset_to_dsl(loaded) == toolset_to_dsl(builtin)
    assert loaded.flows == builtin.flows and loaded.max_predecessors == 1

    def params(toolset: Toolset) -> list[tuple[str, str, str, bool, str, bool, type]]:
        return [(t.name, p.name, p.type, p.required, p.doc, p.polymorphic, type(p))
                for t in toolset.tools.values() for p in (*t.inputs, *t.outputs)]

    assert params(loaded) == params(builtin)  # plain parameters again, not schema ones


@pytest.mark.parametrize("target", ["mcp", "openai", "openai-responses"])
def test_plain_exports_keep_names_kinds_and_required_flags(target: str, tmp_path: Path
                                                           ) -> None:
    path = write(tmp_path / "pool.json", json.loads(
        export_toolset(builtin_toolset(), target, extensions=False)))
    loaded, _ = load_toolset(path)
    for name, tool in builtin_toolset().tools.items():
        plain = loaded.tools[name]
        assert [(p.name, p.required, p.doc) for p in plain.inputs] == [
            (p.name, p.required, p.doc) for p in tool.inputs]
        assert {p.type for p in plain.inputs} == {"String"}
        assert plain.outputs == () or target == "mcp"


def test_foreign_schemas_survive_an_mcp_round_trip(tmp_path: Path) -> None:
    toolset, _ = load_toolset(write(tmp_path / "pool.json", MCP_POOL))
    again = to_mcp(toolset)
    for original, exported in zip(MCP_POOL["tools"], again["tools"], strict=True):
        assert exported["inputSchema"]["properties"] == original["inputSchema"]["properties"]
        assert exported["inputSchema"]["required"] == original["inputSchema"]["required"]
        assert exported["outputSchema"]["properties"] == original["outputSchema"]["properties"]
    # and the re-export loads into the same signatures
    reloaded, _ = load_toolset(write(tmp_path / "again.json", again))
    for name in toolset.tools:
        assert signature(reloaded, name) == signature(toolset, name)
    # schema parameters survive pickling (batch tools send toolsets to worker processes)
    clone = pickle.loads(pickle.dumps(toolset))
    assert clone.tools == toolset.tools
    report = plancheck.check([{"agent": "ras.area", "step": 0, "dependence": [-1],
                               "dependence_content": None, "inputs": {"mask_path": 3},
                               "outputs": ["area_m2"]}], clone)
    assert report.codes == ["PC302"]


def test_dsl_export_quotes_names_the_dsl_cannot_spell(tmp_path: Path) -> None:
    """Names that are not identifiers (`seg.flood`, the keyword `tool`) were refused (PC706);
    they are written as JSON strings, and the DSL reads them back."""
    toolset, _ = load_toolset(write(tmp_path / "pool.json", MCP_POOL))
    assert 'tool "seg.flood" {' in to_dsl(toolset)
    exported = tmp_path / "pool.wf"
    assert main(["toolset", "export", "--to", "dsl", "--tools", str(tmp_path / "pool.json"),
                 "-o", str(exported)]) == 0
    clone, _ = load_toolset(exported)
    assert toolset_to_dsl(clone) == to_dsl(toolset)
    assert {n: (t.input_names, t.output_names) for n, t in clone.tools.items()} == {
        n: (t.input_names, t.output_names) for n, t in toolset.tools.items()}
    dora = tmp_path / "dora.wf"
    assert main(["toolset", "export", "--to", "dsl", "--tools", "dora", "-o", str(dora)]) == 0
    assert 'family "tool"' in dora.read_text(encoding="utf-8")
    assert load_toolset(dora)[0].tools.keys() == load_toolset("dora")[0].tools.keys()


# --------------------------------------------------------------------------- acceptance: parity

_BINDABLE = {"", "x.tif", "notes.txt", 3, None, "<GENERATED>-0-<nothing>",
             "<GENERATED>-9-<high_resolution_image_path>", "<GENERATED>-1>"}


@st.composite
def mutated_plan(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A well-typed plan with up to three random defects (names, keys, references, literals,
    numbering, dependencies, missing fields)."""
    plan = copy.deepcopy(draw(well_typed_plan(max_steps=5)))
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        step = plan[draw(st.integers(min_value=0, max_value=len(plan) - 1))]
        defect = draw(st.sampled_from([
            "tool", "drop-input", "extra-input", "value", "reference", "rebind", "step",
            "dependence", "outputs", "drop-field"]))
        inputs = step.get("inputs", {})
        if defect == "tool":
            step["agent"] = draw(st.sampled_from(["Not_A_Tool", "geochat"])
                                 | st.sampled_from(sorted(TOOLSET.tools)))
        elif defect == "drop-input" and inputs:
            del inputs[draw(st.sampled_from(sorted(inputs)))]
        elif defect == "extra-input":
            inputs[draw(st.sampled_from(["image", "image_pth", "trigger", "mask_path"]))] = "a.png"
        elif defect == "value" and inputs:
            key = draw(st.sampled_from(sorted(inputs)))
            inputs[key] = draw(st.sampled_from(sorted(_BINDABLE, key=repr)))
        elif defect == "reference" and inputs:
            key = draw(st.sampled_from(sorted(inputs)))
            producer = draw(st.integers(min_value=0, max_value=len(plan)))
            output = draw(st.sampled_from(sorted({o for t in TOOLSET.tools.values()
                                                  for o in t.output_names})))
            inputs[key] = f"<GENERATED>-{producer}-<{output}>"
        elif defect == "rebind" and inputs and isinstance(step.get("step"), int) \
                and step["step"] > 0:
            # an output that exists, of a type that may not fit
            producer = draw(st.integers(min_value=0, max_value=step["step"] - 1))
            tool = TOOLSET.tools.get(plan[producer].get("agent", ""))
            if tool is not None:
                key = draw(st.sampled_from(sorted(inputs)))
                output = draw(st.sampled_from(tool.output_names))
                inputs[key] = f"<GENERATED>-{producer}-<{output}>"
        elif defect == "step":
            number = step.get("step")
            step["step"] = draw(st.sampled_from(
                [number + 1 if isinstance(number, int) else 7, "1", 0]))
        elif defect == "dependence":
            step["dependence"] = draw(st.sampled_from([[-1], [0], -1, [0, 1]]))
        elif defect == "outputs":
            step["outputs"] = [*step.get("outputs", [])[::-1], "extra"]
        elif defect == "drop-field":
            step.pop(draw(st.sampled_from(["dependence_content", "outputs", "inputs"])), None)
    return plan


@pytest.fixture(scope="module")
def exported_pools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Toolset]:
    directory = tmp_path_factory.mktemp("pools")
    pools = {"builtin": builtin_toolset()}
    for target in ("mcp", "openai", "openai-responses"):
        path = directory / f"{target}.json"
        path.write_text(export_toolset(builtin_toolset(), target), encoding="utf-8")
        pools[target] = load_toolset(path)[0]
    return pools


def _findings(plan: Any, toolset: Toolset) -> list[tuple[str, str, str | None]]:
    report = plancheck.check(plan, toolset)
    return [(d.code, d.message, d.span.pointer if d.span else None) for d in report.diagnostics]


@pytest.mark.slow
@given(st.one_of(well_typed_plan(), mutated_plan()))
@settings(max_examples=400, deadline=None)
def test_same_diagnostics_under_the_builtin_pool_and_its_exports(
    exported_pools: dict[str, Toolset], plan: list[dict[str, Any]]
) -> None:
    expected = _findings(plan, exported_pools["builtin"])
    for name in ("mcp", "openai", "openai-responses"):
        assert _findings(plan, exported_pools[name]) == expected, name


@pytest.mark.slow
def test_mutations_reach_many_codes(exported_pools: dict[str, Toolset]) -> None:
    """The parity property above is not vacuous: the mutated plans raise many codes."""
    codes: set[str] = set()

    @given(mutated_plan())
    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    def collect(plan: list[dict[str, Any]]) -> None:
        codes.update(code for code, _, _ in _findings(plan, exported_pools["mcp"]))

    collect()
    assert {"PC201", "PC202", "PC203", "PC206", "PC207", "PC208", "PC301", "PC302",
            "PC401"} <= codes


def test_gold_plans_get_the_same_diagnostics_under_every_export(
    exported_pools: dict[str, Toolset], gold_tasks: list[dict[str, Any]]
) -> None:
    differing = []
    for task in gold_tasks:
        expected = _findings(task["structured_plan"], exported_pools["builtin"])
        for name in ("mcp", "openai", "openai-responses"):
            if _findings(task["structured_plan"], exported_pools[name]) != expected:
                differing.append((task["task_id"], name))
    assert differing == []


def test_cli_check_agrees_under_an_exported_pool(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    plan = [{"agent": "Toponym_Detection", "step": 0, "dependence": [-1],
             "dependence_content": None, "inputs": {"sentence": "a.png"},
             "outputs": ["detected_toponyms_path"]},
            {"agent": "Event_detection", "step": 1, "dependence": [0],
             "dependence_content": {"0": ["detected_toponyms_path"]},
             "inputs": {"context": "<GENERATED>-0-<detected_toponyms_path>"},
             "outputs": ["event_type_path", "trigger_positions_path", "confidence_scores_path"]}]
    plan_path = write(tmp_path / "plan.json", plan)
    pool = tmp_path / "mcp.json"
    assert main(["toolset", "export", "--to", "mcp", "-o", str(pool)]) == 0
    capsys.readouterr()
    outputs = []
    for tools in ([], ["--tools", str(pool)]):
        code = main(["check", str(plan_path), "--format", "json", *tools])
        outputs.append((code, [(d["code"], d["message"]) for d in
                               json.loads(capsys.readouterr().out)["diagnostics"]]))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] == 1
    assert {"PC203", "PC301", "PC302"} <= {code for code, _ in outputs[0][1]}


# --------------------------------------------------------------------------- schema literals


def test_literals_are_checked_against_parameter_schemas(tmp_path: Path) -> None:
    """The tool's published schema decides, whole (issue 31: each message names the path)."""
    pool = write(tmp_path / "pool.json", MCP_POOL)
    toolset, _ = load_toolset(pool)

    def literal_problems(**inputs: Any) -> list[str]:
        plan = [{"agent": "seg.flood", "step": 0, "dependence": [-1],
                 "dependence_content": None, "inputs": {"image_path": "a.tif",
                                                        "threshold": 0.5, **inputs},
                 "outputs": ["mask_path", "flooded_fraction", "stats"]}]
        return [d.message for d in plancheck.check(plan, toolset).diagnostics
                if d.code == "PC302"]

    assert literal_problems() == []
    assert literal_problems(bands=[1, 2, 3], mode="fast", tile=None, verbose=False) == []
    assert literal_problems(tile=4.0) == []  # an integral number is an integer
    assert literal_problems(threshold=1.5) == [
        "step 0 `seg.flood`: argument `threshold` must be at most 1, found number 1.5"]
    assert literal_problems(threshold="0.5") == []  # a number in a string: PC305, info
    assert literal_problems(threshold="half") == [
        'step 0 `seg.flood`: argument `threshold` must be a number, found string "half"']
    assert literal_problems(mode="slow") == [
        'step 0 `seg.flood`: argument `mode` must be one of "fast", "accurate", found string '
        '"slow"']
    assert literal_problems(bands=[1, 2]) == [
        "step 0 `seg.flood`: argument `bands` must have at least 3 items, found 2"]
    assert literal_problems(bands=[1, 2, "x"]) == [
        'step 0 `seg.flood`: argument `bands[2]` must be an integer, found string "x"']
    assert literal_problems(verbose=1) == [
        "step 0 `seg.flood`: argument `verbose` must be a boolean, found integer 1"]


def test_toolset_cli_show_and_lint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = write(tmp_path / "pool.json", MCP_POOL)
    assert main(["toolset", "show", "--tools", str(pool)]) == 0
    shown = capsys.readouterr().out
    assert "seg.flood" in shown and "in  threshold: Number" in shown and "in  mode?: String" \
        in shown
    assert main(["toolset", "show", "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["tools"]) == 26
    assert main(["toolset", "lint", str(pool)]) == 0
    capsys.readouterr()
    bad = write(tmp_path / "bad.json", {"tools": [
        {"name": "a", "inputSchema": {"type": "object", "properties": {
            "x": {"type": "string", "x-plancheck-type": "Missing"}}}}]})
    assert main(["toolset", "lint", str(bad), "--format", "json"]) == 1
    [finding] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert finding["code"] == "PC701"
    assert finding["labels"][0]["span"]["start_line"] > 1  # points into the file
    assert main(["toolset", "lint", str(tmp_path / "missing.json")]) == 2
    assert main(["toolset"]) == 2


def test_export_writes_a_file_and_reports_unwritable_paths(tmp_path: Path) -> None:
    target = tmp_path / "tools.json"
    assert main(["toolset", "export", "--to", "openai-responses", "-o", str(target)]) == 0
    assert foreign_format(json.loads(target.read_text())) == "openai"
    assert main(["toolset", "export", "--to", "mcp", "-o",
                 str(tmp_path / "no" / "such" / "dir" / "x.json")]) == 2
