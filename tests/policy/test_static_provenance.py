"""Provenance on the static path (issue 23): in a transcript that holds tool results (OpenAI
chat ``tool`` messages, Anthropic ``tool_result`` blocks), an argument that copies an earlier
result is an inferred flow from it: listed in ``report.flows`` and in ``--format json``,
followed by flow policies, type-checked as a warning (``PC306``; an explicit reference stays
an error), and turned off by ``provenance=False`` / ``--no-provenance``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.cli import main

FRAMES = "out/forecast_frames.npy"


def _openai(precipitation: str) -> dict[str, Any]:
    def call(call_id: str, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [{
            "id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}]}

    return {"messages": [
        {"role": "user", "content": "Forecast flooding for the delta."},
        call("call_1", "Precipitation_Nowcasting", {"radar_echo_frames_path": "radar.npy"}),
        {"role": "tool", "tool_call_id": "call_1",
         "content": json.dumps({"predicted_radar_echo_frames_path": FRAMES})},
        call("call_2", "Flood_depth_prediction", {"region_topography_path": "data/dem.tif",
                                                  "precipitation_data_path": precipitation}),
    ]}


def _anthropic(precipitation: str, result: Any = None) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Forecast flooding for the delta."},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Nowcasting first."},
            {"type": "tool_use", "id": "toolu_1", "name": "Precipitation_Nowcasting",
             "input": {"radar_echo_frames_path": "radar.npy"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1",
             "content": result if result is not None else json.dumps(
                 {"predicted_radar_echo_frames_path": FRAMES})}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_2", "name": "Flood_depth_prediction",
             "input": {"region_topography_path": "data/dem.tif",
                       "precipitation_data_path": precipitation}}]},
    ]


@pytest.mark.parametrize("transcript", [_openai(FRAMES), _anthropic(FRAMES)],
                         ids=["openai", "anthropic"])
def test_a_copied_result_is_an_inferred_flow_and_its_type_is_checked(transcript: Any) -> None:
    report = plancheck.check(transcript)
    assert [d.code for d in report.diagnostics] == ["PC306"]
    assert report.ok  # a warning: the value may equal the output by coincidence
    (flow,) = report.flows
    assert (flow["tool"], flow["to_tool"], flow["argument"]) == (
        "Precipitation_Nowcasting", "Flood_depth_prediction", "precipitation_data_path")
    assert flow["kind"] in ("exact", "contained")
    off = plancheck.check(transcript, provenance=False)
    assert off.diagnostics == [] and not off.flows


def test_the_command_line_lists_flows_and_can_turn_them_off(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(_openai(FRAMES)), encoding="utf-8")
    assert main(["check", "--format", "json", str(path)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [f["argument"] for p in document["plans"] for f in p["flows"]] == [
        "precipitation_data_path"]
    assert [d["code"] for d in document["diagnostics"]] == ["PC306"]
    assert main(["check", "--format", "json", "--no-provenance", str(path)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["diagnostics"] == []


def test_a_flow_policy_follows_an_inferred_flow(tmp_path: Path) -> None:
    policy = tmp_path / "p.wf"
    policy.write_text("policy taint {\n  forbid flow from Precipitation_Nowcasting\n"
                      "    to Flood_depth_prediction.precipitation_data_path\n}\n",
                      encoding="utf-8")
    report = plancheck.check(_openai(FRAMES), policies=policy)
    assert "PC805" in {d.code for d in report.diagnostics}
    assert not report.ok


def test_an_explicit_reference_wins_over_inference(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(_openai("{{steps.0.output.predicted_radar_echo_frames_path}}")),
                    encoding="utf-8")
    # A chat API's calls declare no reference syntax (issue 35): the loop that writes
    # templates there says so, and the template is then a reference.
    main(["check", "--format", "json", "--reference-syntax", "template", str(path)])
    codes = [d["code"] for d in json.loads(capsys.readouterr().out)["diagnostics"]]
    assert "PC301" in codes and "PC306" not in codes  # an error, as a reference is explicit
    main(["check", "--format", "json", str(path)])
    codes = [d["code"] for d in json.loads(capsys.readouterr().out)["diagnostics"]]
    assert "PC301" not in codes and "PC306" not in codes  # by default, text


def test_a_value_inside_a_text_result_is_a_flow_of_unknown_type() -> None:
    text = [{"type": "text", "text": f"Frames written to {FRAMES}"}]
    report = plancheck.check(_anthropic(FRAMES, text))
    (flow,) = report.flows
    assert flow["kind"] == "contained" and flow["from"] == "toolu_1"
    assert report.diagnostics == []  # no output key, so no type to hold it to


def test_a_value_that_equals_no_result_is_no_flow() -> None:
    report = plancheck.check(_openai("data/rain_series.nc"))
    assert report.flows == [] or all(f["kind"] == "explicit" for f in report.flows)
    assert "PC306" not in {d.code for d in report.diagnostics}
