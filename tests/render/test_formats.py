"""Output formats of ``plancheck check``: text, concise, json, jsonl, sarif, github; --statistics
and --output.

The SARIF log is validated against the official SARIF 2.1.0 JSON schema, shipped verbatim as
``tests/data/sarif-schema-2.1.0.json``: the OASIS errata01 schema (``id``
https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json),
taken from the OASIS TC repository oasis-tcs/sarif-spec, file
``sarif-2.1/schema/sarif-schema-2.1.0.json`` at commit e0583813964ec43cea53b6b531b402866095ed1f
(sha256 c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancheck.cli import main
from plancheck.diagnostics.codes import CODES
from plancheck.render.registry import FORMATS
from tests.strategies import well_typed_plan
from tests.support.samples import FOG_CHAIN

SCHEMA_PATH = Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"

GOOD = FOG_CHAIN


def damaged_plan() -> list[dict[str, Any]]:
    """Several findings, among them machine-applicable fixes of every shape: replace a value
    (PC401), delete a member (PC111), rename a member (PC202, PC104)."""
    plan = copy.deepcopy(GOOD)
    plan[0]["comment"] = "an extra field"  # PC111: delete
    plan[1]["dependence"] = [-1]  # PC401: replace dependence and dependence_content
    plan[1]["dependence_content"] = None
    plan[1]["inputs"] = {"image_pth": "<GENERATED>-0-<restored_image_path>"}  # PC202: rename
    plan.append({"agent_name": "GeoChat", "step": 2, "dependence": [-1],  # PC104: alias
                 "dependence_content": None,
                 "inputs": {"image_path": "/d/a.png", "user_query_path": "/d/q.txt"},
                 "outputs": ["contextual_description_path"]})
    plan.append({"agent": "Depth_Speed_Model", "step": 3, "dependence": [-1],  # PC201
                 "dependence_content": None, "inputs": {}, "outputs": []})
    return plan


@pytest.fixture
def plan_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # artifact URIs are relative to the working directory
    path = tmp_path / "plans" / "damaged.json"
    path.parent.mkdir()
    path.write_text(json.dumps(damaged_plan(), indent=2), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", "--no-config", *args])
    out, err = capsys.readouterr()
    return code, out, err


def json_document(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    code, out, _ = run(capsys, str(path), "--format", "json")
    assert code == 1
    document: dict[str, Any] = json.loads(out)
    return document


# --------------------------------------------------------------------------- every format


@pytest.mark.parametrize("format_name", list(FORMATS))
def test_every_format_reports_the_same_findings(
    format_name: str, plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each format names the same (code, line, column) triples as the JSON document."""
    expected = {(d["code"], d["span"]["start_line"], d["span"]["start_col"])
                for d in json_document(capsys, plan_file)["diagnostics"]}
    assert {"PC104", "PC111", "PC201", "PC202", "PC401"} <= {code for code, _, _ in expected}
    code, out, err = run(capsys, "plans/damaged.json", "--format", format_name)
    assert code == 1 and err == ""
    found: set[tuple[str, int, int]] = set()
    if format_name == "text":
        for match in re.finditer(r"^\w+\[(PC\d+)\]: .*\n\s+--> plans/damaged\.json:(\d+):(\d+)",
                                 out, re.MULTILINE):
            found.add((match[1], int(match[2]), int(match[3])))
    elif format_name == "concise":
        lines = out.splitlines()
        assert lines[-1].startswith("Found ")
        for line in lines[:-1]:
            match = re.fullmatch(r"plans/damaged\.json:(\d+):(\d+): \w+\[(PC\d+)\] .+", line)
            assert match, line
            found.add((match[3], int(match[1]), int(match[2])))
    elif format_name == "json":
        found = expected if json.loads(out)["diagnostics"] else set()
    elif format_name == "jsonl":
        for line in out.splitlines():
            item = json.loads(line)
            found.add((item["code"], item["span"]["start_line"], item["span"]["start_col"]))
    elif format_name == "sarif":
        for result in json.loads(out)["runs"][0]["results"]:
            region = result["locations"][0]["physicalLocation"]["region"]
            found.add((result["ruleId"], region["startLine"], region["startColumn"]))
    elif format_name == "github":
        for line in out.splitlines():
            match = re.fullmatch(r"::(error|warning|notice) file=plans/damaged\.json,line=(\d+),"
                                 r"col=(\d+),endLine=\d+,endColumn=\d+,title=(PC\d+) [a-z-]+::.+",
                                 line)
            assert match, line
            found.add((match[4], int(match[2]), int(match[3])))
    else:  # a new format must get a test here
        pytest.fail(f"no test for format {format_name}")
    assert found == expected


@pytest.mark.parametrize("format_name", list(FORMATS))
def test_clean_input_in_every_format(format_name: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "good.json"
    path.write_text(json.dumps(GOOD))
    code, out, _ = run(capsys, str(path), "--format", format_name)
    assert code == 0
    if format_name in ("jsonl", "github"):
        assert out == ""
    elif format_name == "sarif":
        assert json.loads(out)["runs"][0]["results"] == []
    elif format_name == "json":
        assert json.loads(out)["diagnostics"] == []
    else:
        assert out.strip() == "All checks passed (1 plan in 1 file)."


# --------------------------------------------------------------------------- SARIF


def sarif_validator() -> Any:
    raw = SCHEMA_PATH.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256, "the shipped schema was altered"
    schema = json.loads(raw)
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


def sarif_of(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    _, out, _ = run(capsys, *args, "--format", "sarif")
    log: dict[str, Any] = json.loads(out)
    return log


def test_sarif_validates_against_the_official_schema(
    plan_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    validator = sarif_validator()
    batch = tmp_path / "batch.jsonl"
    bad = copy.deepcopy(GOOD)
    bad[0]["agent"] = "Nope"
    batch.write_text("\n".join([json.dumps({"id": "a", "task_id": 7, "plan": bad}),
                                json.dumps({"task_id": 8, "completion": "no plan here"}),
                                "{not json"]) + "\n")
    dsl = tmp_path / "plan.wf"
    dsl.write_text("this is not a workflow\n")
    broken = tmp_path / "broken.json"
    broken.write_text('[{"agent": }]')
    log = sarif_of(capsys, "plans/damaged.json", str(batch), str(dsl), str(broken),
                   str(tmp_path / "gone"))
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    codes = {r["ruleId"] for r in log["runs"][0]["results"]}
    assert {"PC001", "PC100", "PC101", "PC116", "PC201", "PC401"} <= codes
    # The validator is not vacuous: a log missing a result's message is rejected.
    broken = copy.deepcopy(log)
    del broken["runs"][0]["results"][0]["message"]
    assert list(validator.iter_errors(broken))


def test_sarif_rules_describe_every_code(plan_file: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    run_ = sarif_of(capsys, "plans/damaged.json")["runs"][0]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "plancheck" and driver["version"]
    rules = driver["rules"]
    assert [rule["id"] for rule in rules] == list(CODES)
    for rule in rules:
        info = CODES[rule["id"]]
        assert rule["shortDescription"]["text"] == info.summary
        assert rule["fullDescription"]["text"] == info.explanation
        assert info.explanation in rule["help"]["text"] and rule["name"]
    for result in run_["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note")


def test_sarif_locations_match_the_json_spans(plan_file: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    diagnostics = json_document(capsys, plan_file)["diagnostics"]
    log = sarif_of(capsys, "plans/damaged.json")
    run_ = log["runs"][0]
    assert run_["columnKind"] == "unicodeCodePoints"
    base = run_["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base == Path.cwd().resolve().as_uri() + "/"
    assert len(run_["results"]) == len(diagnostics)
    for result, diagnostic in zip(run_["results"], diagnostics, strict=True):
        assert result["ruleId"] == diagnostic["code"]
        assert result["message"]["text"].startswith(diagnostic["message"])
        location = result["locations"][0]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": "plans/damaged.json",
                                                "uriBaseId": "%SRCROOT%"}
        span = diagnostic["span"]
        assert physical["region"] == {"startLine": span["start_line"],
                                      "startColumn": span["start_col"],
                                      "endLine": span["end_line"], "endColumn": span["end_col"]}
        assert location["logicalLocations"][0]["fullyQualifiedName"] == span["pointer"]
        secondary = [label for label in diagnostic["labels"] if not label["primary"]]
        related = result.get("relatedLocations", [])
        assert [r["physicalLocation"]["region"]["startLine"] for r in related] == \
            [label["span"]["start_line"] for label in secondary]
        assert [r.get("message", {}).get("text", "") for r in related] == \
            [label["message"] for label in secondary]


def test_sarif_logical_location_names_the_record(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    bad = copy.deepcopy(GOOD)
    bad[1]["agent"] = "Nope"
    batch = tmp_path / "batch.jsonl"
    batch.write_text(json.dumps({"id": "task-9", "task_id": 9, "plan": bad}) + "\n")
    (result,) = [r for r in sarif_of(capsys, str(batch))["runs"][0]["results"]
                 if r["ruleId"] == "PC201"]
    logical = result["locations"][0]["logicalLocations"][0]
    assert logical == {"name": "task-9", "fullyQualifiedName": "/plan/1/agent", "kind": "value"}
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 1


# --------------------------------------------------------------------------- SARIF fixes


def apply_pointer_edits(document: Any, edits: list[dict[str, Any]]) -> Any:
    """The JSON-level meaning of a suggestion's edits (independent of plancheck's code)."""
    result = copy.deepcopy(document)
    for edit in edits:
        *parents, leaf = [t.replace("~1", "/").replace("~0", "~")
                          for t in edit["pointer"].split("/")[1:]]
        holder = result
        for token in parents:
            holder = holder[int(token)] if isinstance(holder, list) else holder[token]
        index: Any = int(leaf) if isinstance(holder, list) else leaf
        if edit["delete"]:
            del holder[index]
        else:
            holder[index] = edit["value"]
    return result


def apply_sarif_fix(text: str, fix: dict[str, Any]) -> str:
    """Apply a SARIF fix the way a SARIF consumer does: by lines and (code point) columns."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    (change,) = fix["artifactChanges"]
    replacements = sorted(
        ((offset(r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
          offset(r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"]),
          r["insertedContent"]["text"]) for r in change["replacements"]),
        reverse=True,
    )
    for start, end, inserted in replacements:
        text = text[:start] + inserted + text[end:]
    return text


def check_fixes(text: str, diagnostics: list[dict[str, Any]],
                results: list[dict[str, Any]]) -> int:
    """Every SARIF fix, applied to the file, gives exactly the document its edits describe.
    Returns how many fixes were checked."""
    document = json.loads(text)
    checked = 0
    for diagnostic, result in zip(diagnostics, results, strict=True):
        applicable = [f for f in diagnostic["fixes"] if f["applicability"] == "machine-applicable"
                      and f["edits"]]
        fixes = result.get("fixes", [])
        assert len(fixes) <= len(applicable)
        for fix in fixes:
            (suggestion,) = [f for f in applicable if f["message"] == fix["description"]["text"]]
            assert json.loads(apply_sarif_fix(text, fix)) == \
                apply_pointer_edits(document, suggestion["edits"])
            checked += 1
    return checked


def test_sarif_fixes_rewrite_the_file_correctly(plan_file: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    diagnostics = json_document(capsys, plan_file)["diagnostics"]
    results = sarif_of(capsys, "plans/damaged.json")["runs"][0]["results"]
    text = plan_file.read_text()
    assert check_fixes(text, diagnostics, results) >= 4
    fixed_codes = {r["ruleId"] for r in results if r.get("fixes")}
    assert {"PC104", "PC111", "PC202", "PC401"} <= fixed_codes
    # A rename rewrites only the key, in place.
    (rename,) = [r for r in results if r["ruleId"] == "PC202"]
    (replacement,) = rename["fixes"][0]["artifactChanges"][0]["replacements"]
    assert replacement["insertedContent"]["text"] == '"image_path"'
    # Suggestions that are not machine-applicable never become SARIF fixes.
    (unknown_tool,) = [r for r in results if r["ruleId"] == "PC201"]
    assert "fixes" not in unknown_tool


def test_sarif_fixes_for_plans_inside_completions(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A plan quoted verbatim in a completion gets fixes at its place in the file; damaged JSON
    is repaired before checking, so its pointers address no text of the file and its
    suggestions must not become (wrong) SARIF fixes."""
    plan = copy.deepcopy(GOOD)
    plan[1]["dependence"] = [-1]
    layout = json.dumps(plan, indent=2)
    verbatim = tmp_path / "verbatim.txt"
    verbatim.write_text(f"Sure! Here is the plan:\n{layout}\nGood luck.\n")
    diagnostics = json_document(capsys, verbatim)["diagnostics"]
    results = sarif_of(capsys, str(verbatim))["runs"][0]["results"]
    assert {"PC103", "PC401"} <= {r["ruleId"] for r in results}
    assert check_fixes_in_completion(verbatim.read_text(), layout, diagnostics, results) == 1

    one_step = [{**GOOD[0], "dependence": [0]}]
    repaired = tmp_path / "repaired.txt"
    repaired.write_text("Here is the plan:\n" + json.dumps(one_step, indent=2).replace(
        '"restored_image_path"\n', '"restored_image_path",\n'))
    results = sarif_of(capsys, str(repaired))["runs"][0]["results"]
    assert {"PC102", "PC401"} <= {r["ruleId"] for r in results}
    assert not any("fixes" in r for r in results)


def check_fixes_in_completion(text: str, plan_text: str, diagnostics: list[dict[str, Any]],
                              results: list[dict[str, Any]]) -> int:
    start = text.index(plan_text)
    checked = 0
    for diagnostic, result in zip(diagnostics, results, strict=True):
        for fix in result.get("fixes", []):
            (suggestion,) = [f for f in diagnostic["fixes"]
                             if f["message"] == fix["description"]["text"]]
            fixed = apply_sarif_fix(text, fix)
            assert fixed[:start] == text[:start] and fixed.endswith("\nGood luck.\n")
            assert json.loads(fixed[start:-len("\nGood luck.\n")]) == \
                apply_pointer_edits(json.loads(plan_text), suggestion["edits"])
            checked += 1
    return checked


def test_sarif_of_a_long_plan_takes_time_linear_in_its_steps(
        plan_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each fix is mapped onto the text of the step it edits, not of the whole plan: a plan of
    1,000 steps with a fix in every other step took two minutes (a source map, a copy and two
    parses of the whole plan per fix); 1,500 steps take about a second."""
    plan: list[dict[str, Any]] = []
    for first in range(0, 1_500, 2):
        restore, detect = copy.deepcopy(GOOD)
        restore["step"], detect["step"] = first, first + 1
        detect["dependence"], detect["dependence_content"] = [-1], None  # PC401, with a fix
        detect["inputs"]["image_path"] = f"<GENERATED>-{first}-<restored_image_path>"
        plan += (restore, detect)
    text = json.dumps(plan, indent=2)
    plan_file.write_text(text, encoding="utf-8")
    started = time.process_time()
    code, out, _ = run(capsys, str(plan_file), "--format", "sarif")
    spent = time.process_time() - started
    assert code == 1
    results = out and json.loads(out)["runs"][0]["results"]
    fixed = [at for at, result in enumerate(results) if result.get("fixes")]
    assert len(fixed) == 750
    assert spent < 20, spent
    diagnostics = json_document(capsys, plan_file)["diagnostics"]
    sample = [fixed[0], fixed[375], fixed[-1]]  # the first, a middle and the last fix: exact
    assert check_fixes(text, [diagnostics[i] for i in sample],
                       [results[i] for i in sample]) == 3


@st.composite
def plan_with_fixable_damage(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    plan = draw(well_typed_plan(max_steps=4))
    step = draw(st.integers(min_value=0, max_value=len(plan) - 1))
    kinds = draw(st.sets(st.sampled_from(["extra", "extras", "alias", "dependence", "outputs",
                                          "rename"]), min_size=1))
    target = plan[step]
    if "extra" in kinds:
        target["note"] = "x"
    if "extras" in kinds:
        target["a"], target["b"] = 1, [2]
    if "dependence" in kinds:
        target["dependence"] = [step + 5]
    if "outputs" in kinds:
        target["outputs"] = [*target["outputs"], "surplus_path"]
    if "rename" in kinds and target["inputs"]:
        key = sorted(target["inputs"])[0]
        target["inputs"][key[:-1] + "X"] = target["inputs"].pop(key)
    if "alias" in kinds:
        target["agent_name"] = target.pop("agent")
    indent = draw(st.sampled_from([None, 0, 1, 2, 4, "\t"]))
    separators = draw(st.sampled_from([None, (",", ":"), (" ,  ", " :  ")]))
    return json.dumps(plan, indent=indent, separators=separators), plan


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan_with_fixable_damage())
def test_sarif_fixes_are_exact_on_any_layout(case: tuple[str, list[dict[str, Any]]]) -> None:
    text, _ = case
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "plan.json"
        path.write_text(text, encoding="utf-8")
        outputs = {}
        for format_name in ("json", "sarif"):
            out = Path(directory) / f"out.{format_name}"
            main(["check", "--no-config", str(path), "--format", format_name, "-o", str(out)])
            outputs[format_name] = json.loads(out.read_text())
    diagnostics = outputs["json"]["diagnostics"]
    results = outputs["sarif"]["runs"][0]["results"]
    check_fixes(text, diagnostics, results)
    # Replacing a value in place (dependence, outputs) is always mappable.
    for diagnostic, result in zip(diagnostics, results, strict=True):
        if diagnostic["code"] in ("PC401", "PC204"):
            assert result.get("fixes"), diagnostic["message"]


# --------------------------------------------------------------------------- github, jsonl


def test_github_annotations_escape_properties_and_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = copy.deepcopy(GOOD)
    plan[1]["agent"] = "Foggy_Object_Detection"  # has a help line: a multi-line message
    path = tmp_path / "odd, name: 100%.json"
    path.write_text(json.dumps(plan, indent=2))
    monkeypatch.chdir(tmp_path)  # an absolute path in the checkout is made relative to it
    code, out, _ = run(capsys, str(path), "--format", "github")
    (line,) = out.splitlines()
    assert code == 1
    assert line.startswith("::error file=odd%2C name%3A 100%25.json,line=")
    assert ",title=PC201 unknown-tool::unknown tool `Foggy_Object_Detection`" in line
    assert "%0Ahelp: did you mean `Foggy_Scenario_Object_Detection`?" in line
    assert "\n" not in line and "\r" not in line


def test_warnings_and_notes_become_warning_and_notice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = copy.deepcopy(GOOD)
    plan[0]["inputs"]["weather_degraded_image_path"] = "notes.txt"  # PC302 warning
    path = tmp_path / "completion.txt"
    path.write_text("Here is the plan:\n" + json.dumps(plan))  # PC103 note (extracted)
    code, out, _ = run(capsys, str(path), "--format", "github")
    kinds = {line.split(" ", 1)[0] for line in out.splitlines()}
    assert code == 0 and kinds == {"::warning", "::notice"}
    code, out, _ = run(capsys, str(path), "--format", "sarif")
    levels = {r["ruleId"]: r["level"] for r in json.loads(out)["runs"][0]["results"]}
    assert levels == {"PC103": "note", "PC302": "warning"}


# --------------------------------------------------------------------------- statistics, output


def test_statistics_count_each_code(plan_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    by_code = json_document(capsys, plan_file)["summary"]["by_code"]
    code, out, _ = run(capsys, "plans/damaged.json", "--statistics")
    assert code == 1
    rows = [line.split() for line in out.splitlines()]
    assert {row[1]: int(row[0]) for row in rows} == by_code
    assert [int(row[0]) for row in rows] == sorted((int(row[0]) for row in rows), reverse=True)
    fixable = {row[1] for row in rows if row[-1] == "[*]"}
    assert {"PC401", "PC111"} <= fixable and "PC201" not in fixable
    code, out, _ = run(capsys, "plans/damaged.json", "--statistics", "--format", "json")
    assert {row["code"]: row["count"] for row in json.loads(out)} == by_code


def test_output_file_gets_the_report_and_stdout_the_statistics(
    plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = plan_file.parent.parent / "report.sarif"
    code, out, _ = run(capsys, "plans/damaged.json", "--format", "sarif", "--output",
                       str(target), "--statistics")
    assert code == 1
    log = json.loads(target.read_text())
    assert {r["ruleId"] for r in log["runs"][0]["results"]} == \
        {line.split()[1] for line in out.splitlines()}
    assert sarif_validator().is_valid(log)
    assert [p.name for p in target.parent.iterdir() if p.name.startswith(".")] == []


def test_output_replaces_atomically_and_interrupts_leave_nothing(
    plan_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = plan_file.parent / "report.json"
    target.write_text("previous report\n")
    os.chmod(target, 0o640)

    def interrupted(_fd: int) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", interrupted)
        code, _, err = run(capsys, "plans/damaged.json", "--format", "json", "-o", str(target))
    assert code == 130 and "interrupted" in err
    assert target.read_text() == "previous report\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["damaged.json", "report.json"]
    code, out, _ = run(capsys, "plans/damaged.json", "--format", "json", "-o", str(target))
    assert code == 1 and out == ""
    assert json.loads(target.read_text())["summary"]["errors"] >= 3
    assert target.stat().st_mode & 0o777 == 0o640  # an existing report keeps its permissions


def test_output_to_a_missing_directory_is_an_io_error(
    plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "plans/damaged.json", "-o", "no/such/dir/report.txt")
    assert code == 2 and out == ""
    assert "error[PC001]: cannot write no/such/dir/report.txt" in err


def test_quiet_concise_prints_only_the_summary(plan_file: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "plans/damaged.json", "--format", "concise", "-q")
    assert code == 1 and len(out.splitlines()) == 1 and out.startswith("Found ")
