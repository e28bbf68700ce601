"""Raw completions, wrappers, aliases, repairs and the DSL all lower into the same IR."""

from __future__ import annotations

import json

import plancheck
from plancheck.ir.nodes import Reference

PLAN = [
    {"agent": "Precipitation_Nowcasting", "step": 0, "dependence": [-1],
     "dependence_content": None, "inputs": {"radar_echo_frames_path": "data/radar.npy"},
     "outputs": ["predicted_radar_echo_frames_path"]},
    {"agent": "precipitation_data_convert_tool", "step": 1, "dependence": [0],
     "dependence_content": {"0": ["predicted_radar_echo_frames_path"]},
     "inputs": {"radar_echo_frames_path": "<GENERATED>-0-<predicted_radar_echo_frames_path>"},
     "outputs": ["time_series_array_path"]},
]
COMPACT = json.dumps(PLAN)


def codes(report: plancheck.Report) -> list[str]:
    return [d.code for d in report.diagnostics]


def test_plain_json_is_clean() -> None:
    report = plancheck.check(COMPACT)
    assert report.ok and codes(report) == []
    assert report.plan is not None and isinstance(report.plan.steps[1].args[0].value, Reference)


def test_marker_sentence_and_reasoning() -> None:
    text = ("Let's think step by step. First we forecast [rain], then convert it.\n"
            f"The structured task plan is: {COMPACT}")
    report = plancheck.check(text)
    assert report.ok and codes(report) == ["PC103"]
    assert "marker" in report.diagnostics[0].message


def test_code_fence() -> None:
    report = plancheck.check(f"Here you go:\n```json\n{json.dumps(PLAN, indent=2)}\n```\n")
    assert report.ok and codes(report) == ["PC103"]
    span = report.diagnostics[0].span
    assert span is not None and span.start_line == 3  # the plan starts on the fence's next line


def test_wrapper_object() -> None:
    report = plancheck.check(json.dumps({"reasoning": "x", "structured_plan": PLAN}))
    assert report.ok and codes(report) == ["PC103"]


def test_alias_keys_are_info_unless_strict() -> None:
    aliased = [dict(step) for step in PLAN]
    aliased[0]["agent_name"] = aliased[0].pop("agent")
    aliased[1]["step_index"] = aliased[1].pop("step")
    report = plancheck.check(json.dumps(aliased))
    assert report.ok and codes(report) == ["PC104", "PC104"]
    strict = plancheck.check(json.dumps(aliased), strict=True)
    assert {"PC107", "PC111"} <= set(codes(strict)) and not strict.ok


def test_doubled_braces_and_trailing_commas_are_repaired() -> None:
    doubled = COMPACT.replace("{", "{{").replace("}", "}}")
    report = plancheck.check("The structured task plan is: " + doubled)
    assert report.ok and "PC121" in codes(report)
    trailing = json.dumps(PLAN, indent=2).replace("]\n  }", "],\n  }")
    report = plancheck.check("Plan:\n" + trailing)
    assert report.ok and "PC102" in codes(report)
    strict = plancheck.check("Plan:\n" + trailing, strict=True)
    assert codes(strict) == ["PC100"] and not strict.ok


def test_no_plan_in_text() -> None:
    assert codes(plancheck.check("I cannot help with that.")) == ["PC101"]
    assert codes(plancheck.check("")) == ["PC101"]


def test_shape_errors_are_reported_once_each() -> None:
    report = plancheck.check(json.dumps({"steps": []}))
    assert codes(report) == ["PC105"]
    report = plancheck.check(json.dumps([1, {"agent": "GeoChat"}]))
    assert codes(report) == ["PC106", "PC107"]
    bad = [dict(PLAN[0], step="0", dependence=-1, extra="x")]
    report = plancheck.check(json.dumps(bad))
    assert sorted(codes(report)) == ["PC108", "PC111", "PC113"]


def test_dependence_disagreement_is_reported_with_a_fix() -> None:
    wrong = json.loads(COMPACT)
    wrong[1]["dependence"] = [-1]
    report = plancheck.check(json.dumps(wrong))
    (diagnostic,) = report.errors
    assert diagnostic.code == "PC401"
    (fix,) = diagnostic.suggestions
    assert fix.machine_applicable and fix.edits[0].value == [0]


def test_dsl_plan_checks_the_same() -> None:
    dsl = """plan "rain" uses disasterbench {
      step 0 = Precipitation_Nowcasting(radar_echo_frames_path = "data/radar.npy")
      step 1 = precipitation_data_convert_tool(
        radar_echo_frames_path = step0.predicted_radar_echo_frames_path)
      step 2 = Flood_depth_prediction(region_topography_path = "dem.tif",
        precipitation_data_path = step0.predicted_radar_echo_frames_path)
    }"""
    report = plancheck.check(dsl, name="rain.wf")
    assert [d.code for d in report.errors] == ["PC301"]
    span = report.errors[0].span
    assert span is not None and span.start_line == 6


def test_dsl_syntax_error_has_position() -> None:
    report = plancheck.check('plan { step 0 = GeoChat(image_path = ) }', name="bad.wf")
    (diagnostic,) = report.diagnostics
    assert diagnostic.code == "PC114" and diagnostic.span is not None
    assert diagnostic.span.start_col == 38


def test_trailing_comma_in_a_text_completion_repairs_the_whole_plan() -> None:
    pretty = json.dumps(PLAN, indent=2)
    cut = pretty.index("]\n  },") + 1
    text = "Here it is:\n" + pretty[:cut] + "," + pretty[cut:]  # `],` before the step's `}`
    report = plancheck.check(text, name="answer.txt")
    assert report.plan is not None and len(report.plan.steps) == 2
    assert "PC102" in codes(report) and report.ok
