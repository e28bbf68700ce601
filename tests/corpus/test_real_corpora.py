"""Real tool pools and real plans that no one here wrote: TaskBench, BFCL, Seal-Tools, MCP.

The excerpts under ``tests/data/real/`` are byte-exact copies with their provenance in
``PROVENANCE.md``. For each corpus: the pool loads; the gold chains check with no error except
the defects of the data that the README lists (each asserted here by record and code); real
model outputs get their true errors; and the transcripts agent loops emit (OpenAI chat
``tool_calls``, Responses ``function_call``, Anthropic ``tool_use``) lint against a real MCP
pool with positions in the transcript.

Each class of false alarm the type semantics once raised on clean plans (untyped outputs,
nested references, output paths, ``default``/``null``, numeric strings, ``PC502`` on API-style
pools, kinds lost in a DSL export) has a case here that fails if it comes back.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import plancheck
from plancheck.cli import main

REAL = Path(__file__).parents[1] / "data" / "real"
TASKBENCH_POOL = REAL / "taskbench" / "tool_desc.json"
SEAL_POOL = REAL / "sealtools" / "tool.jsonl"
MEMORY_POOL = REAL / "mcp" / "server-memory.json"
BFCL_FILES = ("BFCL_v4_multiple", "BFCL_v4_live_parallel", "BFCL_v4_parallel_multiple",
              "BFCL_v4_live_simple")


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    """Run ``plancheck check ... --format json``; the exit code and the diagnostics."""
    code = main(["check", *args, "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out)["diagnostics"]


def found(diagnostics: list[dict[str, Any]], severity: str) -> list[tuple[str | None, str]]:
    return sorted((d["record"], d["code"]) for d in diagnostics if d["severity"] == severity)


def records(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- pools


@pytest.mark.parametrize(("pool", "tools"), [
    (TASKBENCH_POOL, 40), (SEAL_POOL, 104), (MEMORY_POOL, 9),
    (REAL / "mcp" / "server-filesystem.json", 14), (REAL / "mcp" / "server-github.json", 26),
    (REAL / "mcp" / "mcp-server-fetch.json", 1),
])
def test_real_pools_load(pool: Path, tools: int) -> None:
    toolset = plancheck.load_toolset(pool)
    assert len(toolset.tools) == tools


def test_seal_tools_responses_are_outputs() -> None:
    toolset = plancheck.load_toolset(SEAL_POOL)
    tool = toolset.tools["getConservationProjectDetails"]
    project_id = tool.input("project_id")
    assert tool.input_names == ("project_id",)
    assert project_id is not None and project_id.type == "Integer"
    assert tool.output_names[:2] == ("project_name", "organization")
    # A Seal-Tools response may be called `properties`; it is not read as a JSON Schema.
    assert plancheck.load_toolset(SEAL_POOL).tools["analyzeDNASequence"].output_names == (
        "properties",)


def test_toolset_lint_names_its_pools_as_other_commands_do(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`toolset lint --tools POOL`, as `check`, `show` and `export` name a pool, and a summary
    that counts toolsets (not "0 plans in 1 file")."""
    assert main(["toolset", "lint", "--tools", str(MEMORY_POOL)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "All checks passed (1 toolset)."
    assert main(["toolset", "lint", str(TASKBENCH_POOL), "--tools", str(MEMORY_POOL)]) == 0
    assert "(2 toolsets checked)" in capsys.readouterr().out


def test_a_walk_of_the_real_corpora_says_which_files_hold_no_plans(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`check tests/data/real`, as a user walks a data directory: every pool and every file of
    questions is one PC117 naming what it holds, never "expected a plan" or an error a line.
    (The two snapshots of one example call per tool are no pool --tools reads: PC105.)"""
    _, diagnostics = check(capsys, str(REAL))
    by_file: dict[str, Counter[str]] = {}
    for diagnostic in diagnostics:
        name = Path(diagnostic["file"]).relative_to(REAL).as_posix()
        by_file.setdefault(name, Counter())[diagnostic["code"]] += 1
    no_plans = {name for name, codes in by_file.items() if codes == Counter({"PC117": 1})}
    assert no_plans == {
        "bfcl/BFCL_v4_live_parallel.json", "bfcl/BFCL_v4_live_simple.json",
        "bfcl/BFCL_v4_multiple.json", "bfcl/BFCL_v4_parallel_multiple.json",
        "mcp/mcp-server-fetch.json", "mcp/server-filesystem.json", "mcp/server-github.json",
        "mcp/server-memory.json", "sealtools/tool.jsonl", "taskbench/tool_desc.json",
    }
    assert {name for name, codes in by_file.items() if "PC105" in codes} == {
        "mcp/server-filesystem-examples.json", "mcp/server-memory-examples.json"}
    assert not any("PC116" in codes for codes in by_file.values())
    messages = {Path(d["file"]).name: d["message"] for d in diagnostics if d["code"] == "PC117"}
    assert "holds tool definitions, one a line (a tool pool)" in messages["tool.jsonl"]
    assert "holds a TaskBench tool graph (a tool pool)" in messages["tool_desc.json"]
    assert "holds tasks (a question and the tools for it a line)" in \
        messages["BFCL_v4_multiple.json"]


def test_lint_flags_taskbench_case_variant_type(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["toolset", "lint", str(TASKBENCH_POOL), "--format", "json"]) == 0
    [finding] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert finding["code"] == "PC708" and finding["severity"] == "warning"
    assert "`Image`" in finding["message"] and "`image`" in finding["message"]
    assert "taken by no tool" in finding["notes"][0]
    assert finding["labels"][0]["span"]["start_line"] > 1  # the `Image` of `Image Search`


def test_lint_is_quiet_on_the_other_real_pools(capsys: pytest.CaptureFixture[str]) -> None:
    pools = [SEAL_POOL, *sorted((REAL / "mcp").glob("server-[a-z]*[ybh].json")),
             REAL / "mcp" / "mcp-server-fetch.json"]
    assert main(["toolset", "lint", *map(str, pools), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["diagnostics"] == []


def test_lint_warns_about_repeated_and_unused_definitions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memory = json.loads(MEMORY_POOL.read_text(encoding="utf-8"))
    tools = memory["tools"]
    pool = write(tmp_path / "pool.json", {"tools": [*tools, tools[0]]})
    assert len(plancheck.load_toolset(pool).tools) == 9  # the identical copy is dropped
    assert main(["toolset", "lint", str(pool), "--format", "json"]) == 0
    [repeated] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert repeated["code"] == "PC710" and repeated["severity"] == "warning"
    changed = dict(tools[0], description="something else")
    pool = write(tmp_path / "pool.json", {"tools": [*tools, changed]})
    assert main(["toolset", "lint", str(pool), "--format", "json"]) == 1
    assert [d["code"] for d in json.loads(capsys.readouterr().out)["diagnostics"]] == ["PC702"]
    dsl = tmp_path / "pool.wf"
    dsl.write_text('toolset t {\n  type A "a"\n  type B "unused"\n'
                   '  tool f {\n    in x: A\n  }\n}\n', encoding="utf-8")
    assert main(["toolset", "lint", str(dsl), "--format", "json"]) == 0
    [unused] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert unused["code"] == "PC709" and "`B`" in unused["message"]


# --------------------------------------------------------------------------- TaskBench


def test_taskbench_gold_chains(capsys: pytest.CaptureFixture[str]) -> None:
    gold = REAL / "taskbench" / "data_multimedia.excerpt.jsonl"
    code, diagnostics = check(capsys, "--tools", str(TASKBENCH_POOL), str(gold))
    # The one documented defect: `arguments` is a bare string, not a list (README table).
    assert found(diagnostics, "error") == [("17177733", "PC108")]
    assert code == 1
    warnings = found(diagnostics, "warning")
    assert len(warnings) / records(gold) < 0.1
    # Chains numbered from 1 (31416321, 12193318, 19642613, 16097613) and from 0 (67919417,
    # 19122651, 14067879) both bind every `<node-j>` to the call before.
    assert not any(d["code"] in ("PC206", "PC207", "PC208", "PC301") for d in diagnostics)


def test_taskbench_model_outputs_get_true_errors(capsys: pytest.CaptureFixture[str]) -> None:
    predictions = REAL / "taskbench" / "MiniMax-Text-01.excerpt.jsonl"
    code, diagnostics = check(capsys, "--tools", str(TASKBENCH_POOL), str(predictions))
    assert code == 1
    assert found(diagnostics, "error") == sorted([
        ("28095039", "PC301"),  # audio passed as the voiceover *text* of Video Voiceover
        ("46051366", "PC301"),  # an image search result passed as a URL to download
        ("11425996", "PC301"),  # an image passed as the text query of Image Search
        ("11425996", "PC301"),  # `Image` (the pool's case-variant type) into `image`
        ("31733796", "PC301"),  # transcribed text passed as a URL
        ("31733796", "PC202"),  # Text Downloader takes one argument, given two
        ("60932031", "PC202"),  # Text Expander takes one argument, given two
        ("60932031", "PC202"),  # Text-to-Audio takes one argument, given two
    ])
    assert found(diagnostics, "warning") == []
    too_many = next(d for d in diagnostics if d["code"] == "PC202")
    assert "passes 2 positional arguments" in too_many["message"]
    assert too_many["labels"][0]["span"]["start_line"] == 7  # the extra argument's line


def test_taskbench_references_can_be_turned_off(capsys: pytest.CaptureFixture[str]) -> None:
    predictions = REAL / "taskbench" / "MiniMax-Text-01.excerpt.jsonl"
    _, diagnostics = check(capsys, "--tools", str(TASKBENCH_POOL), "--reference-syntax",
                           "none", str(predictions))
    assert {d["code"] for d in diagnostics if d["severity"] == "error"} == {"PC202"}


# --------------------------------------------------------------------------- Seal-Tools

SEAL_DEFECTS = sorted([  # README: an output bound to an input it cannot be
    ("test_in_domain-difficult-225", "PC301"), ("test_in_domain-difficult-237", "PC301"),
    ("test_in_domain-difficult-237", "PC301"), ("test_in_domain-difficult-299", "PC301"),
    ("test_in_domain-difficult-334", "PC301"), ("test_in_domain-difficult-334", "PC301"),
    ("test_in_domain-difficult-520", "PC301"), ("test_in_domain-difficult-595", "PC301"),
    ("test_in_domain-difficult-602", "PC301"), ("test_in_domain-difficult-614", "PC301"),
    ("test_in_domain-difficult-648", "PC301"),
])


def test_seal_tools_gold_chains(capsys: pytest.CaptureFixture[str]) -> None:
    gold = REAL / "sealtools" / "test_in_domain.jsonl"
    code, diagnostics = check(capsys, "--tools", str(SEAL_POOL), str(gold))
    assert code == 1
    assert found(diagnostics, "error") == SEAL_DEFECTS
    defect = next(d for d in diagnostics if d["record"] == "test_in_domain-difficult-237")
    assert "`addTask.project_id` expects `Integer`" in defect["message"]
    assert "produces `message`, `String`" in defect["message"]  # API_call_0 is `message`


def test_seal_tools_gold_warnings_below_one_in_ten(capsys: pytest.CaptureFixture[str]) -> None:
    gold = REAL / "sealtools" / "test_in_domain.jsonl"
    _, diagnostics = check(capsys, "--tools", str(SEAL_POOL), str(gold))
    assert len(found(diagnostics, "warning")) / records(gold) < 0.1
    # Numbers written as strings ("40.7" for a float) are information; PC502 is not reported
    # on a pool whose outputs are fields of one response.
    assert {code for _, code in found(diagnostics, "info")} == {"PC305"}
    assert not any(d["code"] == "PC502" for d in diagnostics)
    # The three warnings left are real: an array where a float is wanted (twice), a word
    # where an amount is wanted.
    assert found(diagnostics, "warning") == [("test_in_domain-difficult-569", "PC302")] * 2 + [
        ("test_in_domain-difficult-595", "PC302")]


def test_strict_types_makes_numeric_strings_errors(capsys: pytest.CaptureFixture[str]) -> None:
    gold = REAL / "sealtools" / "test_in_domain.jsonl"
    code, diagnostics = check(capsys, "--tools", str(SEAL_POOL), "--strict-types", str(gold))
    numeric = [d for d in diagnostics if d["code"] == "PC305"]
    assert code == 1 and len(numeric) == 7 and {d["severity"] for d in numeric} == {"error"}
    assert "takes a number, written here as the string \"40.7\"" in numeric[0]["message"]


# --------------------------------------------------------------------------- BFCL


def bfcl_batch(tmp_path: Path, name: str, *, explicit_defaults: bool = False) -> Path:
    """Each question record (its own pool under `function`) joined with its possible answer;
    with ``explicit_defaults``, every may-be-omitted argument takes its stated default."""
    answers = {}
    for line in (REAL / "bfcl" / f"{name}.possible_answer.json").read_text().splitlines():
        answer = json.loads(line)
        answers[answer["id"]] = answer["ground_truth"]
    lines = []
    for line in (REAL / "bfcl" / f"{name}.json").read_text(encoding="utf-8").splitlines():
        question = json.loads(line)
        truth = answers[question["id"]]
        if explicit_defaults:
            truth = [{tool: {k: [v for v in options if v != ""] or options
                             for k, options in arguments.items()}}
                     for call in truth for tool, arguments in call.items()]
        lines.append(json.dumps({"id": question["id"], "function": question["function"],
                                 "ground_truth": truth}))
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("name", BFCL_FILES)
def test_bfcl_gold_calls_check_clean_against_their_own_pools(
        name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, diagnostics = check(capsys, str(bfcl_batch(tmp_path, name)))
    assert (code, diagnostics) == (0, [])


def test_bfcl_record_pools_are_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    batch = bfcl_batch(tmp_path, "BFCL_v4_multiple")
    text = batch.read_text(encoding="utf-8").replace('"triangle_properties.get": {',
                                                     '"triangle_properties.gets": {', 1)
    batch.write_text(text, encoding="utf-8")
    code, diagnostics = check(capsys, str(batch))
    assert code == 1 and found(diagnostics, "error") == [("multiple_0", "PC201")]
    assert diagnostics[0]["data"]["suggestion"] == "triangle_properties.get"


def test_bfcl_explicit_defaults_are_accepted(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _, diagnostics = check(capsys, str(bfcl_batch(tmp_path, "BFCL_v4_live_simple",
                                                  explicit_defaults=True)))
    # null or the default: "not given", a note where the schema refuses it (issue 31)
    assert [d["code"] for d in diagnostics if d["severity"] != "info"] == []


def test_defaults_and_null(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = write(tmp_path / "pool.json", [{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object", "required": ["city"], "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["c", "f"], "default": "kelvin"},
            "days": {"type": "integer", "minimum": 1}}}}}])
    calls = [{"name": "f", "arguments": {"city": "Oslo", "unit": "kelvin", "days": None}}]
    path = write(tmp_path / "calls.json", calls)
    # the schema refuses both (issue 31); as "not given" they are notes, not warnings
    code, notes = check(capsys, "--tools", str(pool), str(path))
    assert code == 0 and sorted((d["code"], d["severity"]) for d in notes) == [
        ("PC302", "info"), ("PC302", "info")]
    calls = [{"name": "f", "arguments": {"city": None, "unit": "k", "days": 0}}]
    write(path, calls)
    _, diagnostics = check(capsys, "--tools", str(pool), str(path))
    messages = sorted(d["message"] for d in diagnostics if d["code"] == "PC302")
    assert len(messages) == 3
    assert messages[0].endswith("`city` must be a string, found null")  # required: no default
    assert "`days` must be at least 1, found integer 0" in messages[1]
    assert "`unit` must be one of" in messages[2]


# --------------------------------------------------------------------------- MCP transcripts


def memory_calls() -> list[tuple[str, dict[str, Any]]]:
    examples = json.loads((REAL / "mcp" / "server-memory-examples.json").read_text())
    return [(name, tool["example_input"]) for name, tool in examples["tools"].items()]


def transcript(shape: str, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    if shape == "openai-chat":
        return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}
            for i, (name, arguments) in enumerate(calls)]}}]}
    if shape == "openai-responses":
        return {"output": [{"type": "function_call", "call_id": f"fc_{i}", "name": name,
                            "arguments": json.dumps(arguments)}
                           for i, (name, arguments) in enumerate(calls)]}
    return {"role": "assistant", "content": [{"type": "text", "text": "Updating the graph."}] + [
        {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": arguments}
        for i, (name, arguments) in enumerate(calls)]}


SHAPES = ("openai-chat", "openai-responses", "anthropic")


@pytest.mark.parametrize("shape", SHAPES)
def test_transcripts_of_real_example_calls_check_clean(
        shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "transcript.json", transcript(shape, memory_calls()))
    code, diagnostics = check(capsys, "--tools", str(MEMORY_POOL), str(path))
    assert (code, diagnostics) == (0, [])
    assert main(["check", "--tools", str(MEMORY_POOL), "--call-format", shape, str(path)]) == 0


@pytest.mark.parametrize("shape", SHAPES)
def test_transcript_errors_point_into_the_transcript(
        shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = memory_calls()
    calls[1] = ("create_relation", calls[1][1])  # a look-alike tool name
    calls[2] = (calls[2][0], {**calls[2][1], "observation": []})  # an unknown argument
    path = write(tmp_path / "transcript.json", transcript(shape, calls))
    code, diagnostics = check(capsys, "--tools", str(MEMORY_POOL), str(path))
    assert code == 1
    assert sorted(d["code"] for d in diagnostics) == ["PC201", "PC202"]
    lines = path.read_text(encoding="utf-8").splitlines()
    for diagnostic in diagnostics:
        span = diagnostic["labels"][0]["span"]
        text = lines[span["start_line"] - 1][span["start_col"] - 1:]
        if diagnostic["code"] == "PC201":
            assert diagnostic["data"]["suggestion"] == "create_relations"
            assert text.startswith('"create_relation"')
        elif shape == "anthropic":  # an inline object: the argument itself
            assert text.startswith(("[]", '"observation"'))
        else:  # arguments in a JSON string: the string that holds them
            assert text.startswith('"{')


def test_transcripts_through_the_python_api() -> None:
    value = transcript("anthropic", [("open_nodes", {"names": ["Acme_Corp"]}),
                                     ("open_node", {"names": ["Acme_Corp"]})])
    report = plancheck.check(value, MEMORY_POOL)
    assert [d.code for d in report.errors] == ["PC201"]


# --------------------------------------------------------------------------- reference syntaxes

SYNTAX_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    # syntax: (the reference, the calls' extra members)
    "taskbench": ("<node-0>", {}),
    "template": ("{{steps.0.output.entities}}", {}),
    "label": ("$found.entities$", {"label": "$found"}),
}


@pytest.mark.parametrize("syntax", SYNTAX_CASES)
def test_reference_syntaxes_bind_to_the_earlier_call(
        syntax: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reference, extra = SYNTAX_CASES[syntax]
    calls = [{"name": "search_nodes", "arguments": {"query": "Acme"}, **extra},
             {"name": "open_nodes", "arguments": {"names": reference}}]
    path = write(tmp_path / "calls.json", {"tool_calls": calls})
    # `search_nodes` makes `entities` and `relations`: `<node-0>` names neither (PC208).
    _, diagnostics = check(capsys, "--tools", str(MEMORY_POOL), "--ignore", "PC502", str(path))
    expected = ["PC208"] if syntax == "taskbench" else []
    assert [d["code"] for d in diagnostics] == expected
    calls[1]["arguments"]["names"] = reference.replace("0", "5").replace("found", "lost")
    write(path, {"tool_calls": calls})
    _, diagnostics = check(capsys, "--tools", str(MEMORY_POOL), "--ignore", "PC502", str(path))
    # No call 5, no call labelled `$lost` (whose text is then checked as the literal it is).
    assert [d["code"] for d in diagnostics] == (["PC206", "PC302"] if syntax == "label"
                                                else ["PC206"])


def test_numbering_base_is_read_from_the_references(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = [{"task": "Video-to-Audio", "arguments": ["example.mp4"]},
             {"task": "Audio Noise Reduction", "arguments": ["<node-1>"]},
             {"task": "Audio-to-Text", "arguments": ["<node-2>"]}]
    path = write(tmp_path / "one_based.json", {"task_nodes": nodes})
    assert check(capsys, "--tools", str(TASKBENCH_POOL), str(path)) == (0, [])
    nodes[2]["arguments"] = ["<node-0>"]  # mixing 0 with 1: counted from 0, so 1 is itself
    write(path, {"task_nodes": nodes})
    _, diagnostics = check(capsys, "--tools", str(TASKBENCH_POOL), str(path))
    assert [d["code"] for d in diagnostics] == ["PC207"]


def test_placeholders_are_warned_about(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    calls = [{"name": "search_nodes", "arguments": {"query": "Acme"}},
             {"name": "open_nodes", "arguments": {"names": ["<output of step 1>"]}},
             {"name": "search_nodes", "arguments": {"query": "<result from step 2>"}}]
    path = write(tmp_path / "calls.json", calls)
    _, diagnostics = check(capsys, "--tools", str(MEMORY_POOL), "--ignore", "PC502", str(path))
    assert [(d["code"], d["severity"]) for d in diagnostics] == [("PC209", "warning")] * 2
    lines = path.read_text(encoding="utf-8").splitlines()
    for diagnostic, written in zip(diagnostics, ("<output of step 1>", "<result from step 2>"),
                                   strict=True):
        span = diagnostic["labels"][0]["span"]
        assert lines[span["start_line"] - 1][span["start_col"] - 1:].startswith(f'"{written}"')


def test_raw_completion_with_fenced_tool_calls(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    calls = [{"name": "read_graph", "arguments": {}},
             {"name": "open_nodes", "arguments": {"names": "{{steps.0.output.entities}}"}}]
    path = tmp_path / "completion.txt"
    path.write_text("I will read the graph first.\n```json\n" + json.dumps(calls) + "\n```\n",
                    encoding="utf-8")
    code, diagnostics = check(capsys, "--tools", str(MEMORY_POOL), str(path))
    assert code == 0 and {d["code"] for d in diagnostics} <= {"PC103", "PC502"}


# --------------------------------------------------------------------------- false alarms

MEMORY_PLANS: dict[str, list[dict[str, Any]]] = {
    "output-path": [
        {"name": "read_graph", "arguments": {}},
        {"name": "open_nodes", "arguments": {"names": ["{{steps.0.output.entities[0].name}}"]}}],
    "nested-reference": [
        {"name": "search_nodes", "arguments": {"query": "Acme"}},
        {"name": "add_observations", "arguments": {"observations": [
            {"entityName": "Acme_Corp", "contents": "{{steps.0.output.entities}}"}]}}],
    "api-style-unused-output": [
        {"name": "search_nodes", "arguments": {"query": "Acme"}},
        {"name": "delete_entities", "arguments": {"entityNames": "{{steps.0.output.entities}}"}}],
}
FALSE_ALARMS = {  # case: (the code of the false alarm, its class)
    "output-path": ("PC208", "output paths: `x.items[0].name` through the output schema's "
                    "properties and items is PC208"),
    "nested-reference": ("PC302", "a reference nested in a list or object argument is checked "
                         "as a literal string (PC302)"),
    "api-style-unused-output": ("PC502", "PC502 fires on API-style tools whose outputs are "
                                "fields of one JSON response"),
}


@pytest.mark.parametrize("case", FALSE_ALARMS)
def test_no_false_alarm_on_real_pool(case: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "calls.json", MEMORY_PLANS[case])
    _, diagnostics = check(capsys, "--tools", str(MEMORY_POOL), str(path))
    assert [d["code"] for d in diagnostics if d["code"] == FALSE_ALARMS[case][0]] == []
    assert not [d for d in diagnostics if d["severity"] == "error"
                and d["code"] != FALSE_ALARMS[case][0]]


@pytest.mark.parametrize(("reference", "expected"), [
    # The place a path reads is typed by the output schema: a name is a string, not a list.
    ("{{steps.0.output.entities[0].name}}", ["PC301"]),
    ("{{steps.0.output.entities[0].observations}}", []),  # an array of strings: it fits
    ("{{steps.0.output.entities[0].nickname}}", ["PC208"]),  # the schema has no such field
    ("{{steps.0.output.entity[0].name}}", ["PC208"]),  # no such output
])
def test_output_paths_are_typed_by_the_output_schema(
        reference: str, expected: list[str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    calls = [{"name": "read_graph", "arguments": {}},
             {"name": "open_nodes", "arguments": {"names": reference}}]
    path = write(tmp_path / "calls.json", calls)
    _, diagnostics = check(capsys, "--tools", str(MEMORY_POOL), str(path))
    assert [d["code"] for d in diagnostics] == expected
    if expected == ["PC301"]:
        assert "`entities[0].name`, `String`" in diagnostics[0]["message"]
    if expected == ["PC208"] and "nickname" in reference:
        assert "`entities[0].nickname`" in diagnostics[0]["message"]


def test_nested_references_are_resolved(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A reference inside a list or object argument names a call like any other: a wrong one
    is reported where it is written, and the literal around it is still checked."""
    calls = [{"name": "search_nodes", "arguments": {"query": "Acme"}},
             {"name": "add_observations", "arguments": {"observations": [
                 {"entityName": "{{steps.3.output.entities}}", "contents": 7}]}}]
    path = write(tmp_path / "calls.json", calls)
    _, diagnostics = check(capsys, "--tools", str(MEMORY_POOL), str(path))
    assert sorted(d["code"] for d in diagnostics) == ["PC206", "PC302"]
    missing = next(d for d in diagnostics if d["code"] == "PC206")
    lines = path.read_text(encoding="utf-8").splitlines()
    span = missing["labels"][0]["span"]
    assert lines[span["start_line"] - 1][span["start_col"] - 1:].startswith(
        '"{{steps.3.output.entities}}"')
    wrong = next(d for d in diagnostics if d["code"] == "PC302")
    assert "contents" in wrong["message"] and "found integer 7" in wrong["message"]


@pytest.mark.parametrize(("place", "reference", "expected"), [
    # A name where a name goes, inside the list of observations: it fits.
    ("entityName", "{{steps.0.output.entities[0].name}}", []),
    # The list of entities where one entity's name goes.
    ("entityName", "{{steps.0.output.entities}}", ["PC301"]),
    # An array where an array of strings goes: kinds match (items are not compared, as
    # for a reference passed whole).
    ("contents", "{{steps.0.output.entities}}", []),
    ("contents", "{{steps.0.output.entities[0].observations}}", []),
    # A place the schema rules out (observations list no `note`) is the literal check's to
    # report, once; the reference in it is not typed.
    ("note", "{{steps.0.output.entities}}", ["PC302"]),
])
def test_nested_references_are_typed_by_the_place_they_fill(
        place: str, reference: str, expected: list[str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A reference inside a list or object argument is typed by the input schema's place
    (``observations[0].entityName`` is a string), as a reference passed whole is typed by the
    input's schema."""
    observation: dict[str, Any] = {"entityName": "Acme_Corp", "contents": ["founded 1999"]}
    observation[place] = reference
    calls = [{"name": "search_nodes", "arguments": {"query": "Acme"}},
             {"name": "add_observations", "arguments": {"observations": [observation]}}]
    path = write(tmp_path / "calls.json", calls)
    _, diagnostics = check(capsys, "--tools", str(MEMORY_POOL), str(path))
    assert [d["code"] for d in diagnostics if d["severity"] != "info"] == expected
    if expected == ["PC301"]:
        (found,) = diagnostics
        assert "`add_observations.observations[0].entityName` expects `String`" in found["message"]
        span = found["labels"][0]["span"]
        line = path.read_text(encoding="utf-8").splitlines()[span["start_line"] - 1]
        assert line[span["start_col"] - 1:].startswith(f'"{reference}"')
        # JSON value kinds are no types to convert between: no tool is offered as a bridge.
        assert not found["help"] and not found["fixes"]


def test_references_into_untyped_outputs(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    calls = [{"name": "search_repositories", "arguments": {"query": "plancheck"}},
             {"name": "get_file_contents", "arguments": {
                 "owner": "{{steps.0.output.owner}}", "repo": "plancheck", "path": "README.md"}}]
    path = write(tmp_path / "calls.json", calls)
    _, diagnostics = check(capsys, "--tools", str(REAL / "mcp" / "server-github.json"), str(path))
    assert [d["code"] for d in diagnostics] == []  # any key of an undeclared result


def test_untyped_output_into_typed_input(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    pool = json.loads(MEMORY_POOL.read_text(encoding="utf-8"))
    for tool in pool["tools"]:
        if tool["name"] == "search_nodes":  # as servers without typed results declare it
            tool["outputSchema"] = {"type": "object", "properties": {"entities": {}}}
    path = write(tmp_path / "calls.json", MEMORY_PLANS["api-style-unused-output"])
    _, diagnostics = check(capsys, "--tools", str(write(tmp_path / "pool.json", pool)),
                           "--ignore", "PC502", str(path))
    assert [d["code"] for d in diagnostics] == []  # untyped fits anywhere


def test_dsl_export_of_an_mcp_pool_keeps_kinds(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    exported = tmp_path / "memory.wf"
    assert main(["toolset", "export", "--to", "dsl", "--tools", str(MEMORY_POOL),
                 "-o", str(exported)]) == 0
    path = write(tmp_path / "transcript.json", transcript("anthropic", memory_calls()))
    _, diagnostics = check(capsys, "--tools", str(exported), str(path))
    assert [d["code"] for d in diagnostics] == []  # literals are checked by their JSON kind
    calls = memory_calls()
    calls[0] = (calls[0][0], {"entities": "Acme_Corp"})  # a string where an array is wanted
    calls[1] = (calls[1][0], {"relations": False})
    write(path, transcript("anthropic", calls))
    _, diagnostics = check(capsys, "--tools", str(exported), str(path))
    messages = [d["message"] for d in diagnostics if d["code"] == "PC302"]
    assert messages == ['step 0 `create_entities`: `entities` must be an array, found string '
                        '"Acme_Corp"', "step 1 `create_relations`: `relations` must be an "
                        "array, found false"]


# --------------------------------------------------------------------------- no tracebacks

_SETTINGS = settings(max_examples=80, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.floats(allow_nan=False),
                     st.sampled_from(["<node-0>", "<node-7>", "<node-1>.x", "API_call_0",
                                      "$v$", "$var_1.items[0]$", "{{steps.0.output.a}}",
                                      "{{steps.9}}", "<output of step 1>", "trajectory[0].obs",
                                      "<GENERATED>-0-<a>", "", "{", "[1,", "38.0", " -7 ",
                                      "{{steps.0.output.entities[0].name}}",
                                      "{{steps.0.output.entities[*].x[0]}}", "$v.a[1].b$"]))


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # (A named function: hypothesis reads a lambda's source to check that it recurses, and
    # misreads one written over several lines.)
    return st.one_of(st.lists(inner, max_size=3),
                     st.dictionaries(st.sampled_from(["a", "b", "#0"]), inner, max_size=3))


_values = st.recursive(_scalars, _containers, max_leaves=6)
_names = st.one_of(st.sampled_from(["open_nodes", "read_graph", "nope", ""]), _scalars)
_arguments = st.one_of(_values, _values.map(json.dumps))


@st.composite
def tool_call_documents(draw: st.DrawFn) -> Any:
    def call() -> Any:
        shape = draw(st.sampled_from(["chat", "responses", "anthropic", "generic", "keyed"]))
        name, arguments = draw(_names), draw(_arguments)
        if shape == "chat":
            return {"type": "function", "function": {"name": name, "arguments": arguments}}
        if shape == "responses":
            return {"type": "function_call", "name": name, "arguments": arguments}
        if shape == "anthropic":
            return {"type": "tool_use", "name": name, "input": arguments}
        if shape == "keyed":
            return {str(name): arguments}
        key = draw(st.sampled_from(["task", "api", "tool", "name"]))
        extra: dict[str, Any] = draw(st.sampled_from(
            [{}, {"responses": ["API_call_0"]}, {"label": "$v"}, {"label": 3}]))
        return {key: name, draw(st.sampled_from(["arguments", "parameters", "args"])): arguments,
                **extra}

    calls = [call() for _ in range(draw(st.integers(0, 4)))]
    wrapper = draw(st.sampled_from(["bare", "tool_calls", "task_nodes", "calling",
                                    "ground_truth", "messages", "output", "content", "result"]))
    if wrapper == "bare":
        return calls
    if wrapper == "messages":
        return {"messages": [{"role": "assistant", "tool_calls": calls},
                             {"role": "assistant", "content": calls}]}
    if wrapper == "result":
        return {"id": "x", "result": {"task_nodes": calls}}
    return {"id": "x", wrapper: calls}


@_SETTINGS
@given(document=tool_call_documents(), suffix=st.sampled_from([".json", ".jsonl", ".txt"]),
       call_format=st.sampled_from(["auto", "generic", "bfcl-answer", "openai-chat"]),
       syntax=st.sampled_from(["auto", "taskbench", "label", "none"]),
       pool=st.sampled_from([MEMORY_POOL, REAL / "mcp" / "server-github.json", SEAL_POOL]),
       strict=st.booleans())
def test_tool_call_inputs_never_crash(document: Any, suffix: str, call_format: str,
                                      syntax: str, pool: Path, strict: bool,
                                      tmp_path_factory: pytest.TempPathFactory,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / f"input{suffix}"
    text = json.dumps(document)
    path.write_text(text if suffix != ".txt" else f"Calling tools:\n```json\n{text}\n```",
                    encoding="utf-8")
    code = main(["check", str(path), "--tools", str(pool), "--format", "json",
                 "--call-format", call_format, "--reference-syntax", syntax,
                 *(["--strict-types"] if strict else [])])
    out, err = capsys.readouterr()
    assert code in (0, 1, 2) and "Traceback" not in out + err
    document_out = json.loads(out)
    assert not any(d["code"] == "PC002" for d in document_out["diagnostics"]), document_out
    assert Counter(d["code"] for d in document_out["diagnostics"])["PC002"] == 0
