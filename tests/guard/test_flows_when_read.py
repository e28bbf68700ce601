"""A verdict's inferred flows are found when they are read, unless the verdict needs them.

A guard whose verdicts no flow changes (no flow rule, no request check, no output whose type
a copied value could have wrongly, no feedback that names the flows) records results without
reading them and infers a call's flows only when ``verdict.flows`` is read: from the results
recorded before the call was proposed, never from later ones. Whenever they are read, they are
the flows a guard that infers them at once (a flow rule's) gives."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import plancheck

POOL_FILE = Path(__file__).resolve().parents[1] / "data" / "real" / "mcp" / "server-filesystem.json"
POOL: dict[str, Any] = json.loads(POOL_FILE.read_text(encoding="utf-8"))
# A flow rule (so each call's flows are inferred as it is proposed) that never fires: no call
# below is to directory_tree.
EAGER = "policy eager {\n  forbid flow from directory_tree to write_file.content\n}\n"


def _propose(guard: plancheck.Guard, call: dict[str, Any]) -> plancheck.Verdict:
    verdict = guard.propose(call)
    assert isinstance(verdict, plancheck.Verdict)
    return verdict


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def _traffic(seed: int) -> list[tuple[str, dict[str, Any], Any]]:
    """Calls of an agent editing files: paths and lines copied from earlier results, and
    results that echo earlier arguments (so a result recorded after a call holds its value)."""
    rng = random.Random(seed)
    names = [f"/work/notes/{word}_{rng.randrange(100)}.md"
             for word in ("flood", "gauge", "levels", "report", "bridge", "sandbags")]
    calls: list[tuple[str, dict[str, Any], Any]] = [
        ("list_directory", {"path": "/work/notes"},
         _text("\n".join(f"[FILE] {name.rsplit('/', 1)[1]}" for name in names)))]
    lines: list[str] = []
    for position in range(1, 24):
        path = rng.choice(names)
        kind = rng.randrange(3)
        if kind == 0:
            line = f"River level at {path.rsplit('/', 1)[1]} rose {rng.randrange(90)} cm"
            lines.append(line)
            calls.append(("read_text_file", {"path": path}, _text("\n".join(lines[-3:]))))
        elif kind == 1 and lines:
            calls.append(("write_file", {"path": path, "content": rng.choice(lines)},
                          _text(f"Successfully wrote to {path}")))
        else:
            calls.append(("search_files", {"path": "/work/notes", "pattern": str(position)},
                          _text("\n".join(rng.sample(names, 2)))))
    return calls


def _run(traffic: list[tuple[str, dict[str, Any], Any]], *, read: str,
         policies: str | None = None) -> list[list[dict[str, Any]]]:
    """The flows of each call, read right after it is proposed (``now``) or once the whole
    trajectory is recorded (``end``)."""
    guard = plancheck.Guard(POOL, policies=policies)
    verdicts = []
    flows: list[list[dict[str, Any]]] = []
    for position, (tool, arguments, result) in enumerate(traffic):
        verdict = _propose(guard, {"name": tool, "arguments": arguments, "id": f"c{position}"})
        assert verdict.allowed, verdict.feedback
        if read == "now":
            flows.append(verdict.flows)
        verdicts.append(verdict)
        guard.record(verdict.call_id, result)
    return flows if read == "now" else [verdict.flows for verdict in verdicts]


def test_flows_read_late_come_from_the_results_before_the_call_as_flows_found_at_once() -> None:
    kinds: set[str] = set()
    late_sources = 0
    for seed in range(6):
        traffic = _traffic(seed)
        eager = _run(traffic, read="now", policies=EAGER)
        assert _run(traffic, read="now") == eager
        assert _run(traffic, read="end") == eager
        kinds |= {flow["kind"] for flows in eager for flow in flows}
        # Some value of a call is held by a result recorded after it (an echo of the path):
        # flows read late must not name it.
        late_sources += sum(
            1 for position, (_, arguments, _) in enumerate(traffic)
            for later in traffic[position + 1:]
            if any(isinstance(value, str) and value in json.dumps(later[2])
                   for value in arguments.values()))
    assert kinds == {"exact", "contained"}
    assert late_sources > 0


class _CountedResult(Mapping[str, Any]):
    """A result whose values read are counted (a mapping the guard takes as it is)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data
        self.reads = 0

    def __getitem__(self, key: str) -> Any:
        value = self._data[key]
        self.reads += 1
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def test_a_result_is_read_only_once_a_flow_is_asked_for() -> None:
    guard = plancheck.Guard(POOL)
    first = _propose(guard, {"name": "read_text_file", "arguments": {"path": "/w/a.md"},
                           "id": "first"})
    result = _CountedResult({"text": "the gauge at the north bridge read 4.2 m"})
    assert guard.record(first.call_id, result) == []
    second = _propose(guard, {"name": "write_file", "id": "second", "arguments": {
        "path": "/w/b.md", "content": "gauge at the north bridge"}})
    assert second.allowed and result.reads == 0
    assert second.flows == [{"argument": "content", "from": "first", "tool": "read_text_file",
                             "path": "text", "kind": "contained"}]
    assert result.reads > 0
    # A loop that reads flows will read them again: later results are read as recorded.
    later = _CountedResult({"text": "sandbags stacked along the north bank"})
    assert guard.record(second.call_id, later) == [] and later.reads > 0


def test_a_verdict_with_feedback_names_its_flows_at_once() -> None:
    policy = "policy counted {\n  warn at most 1 write_file per 3 calls\n}\n"
    guard = plancheck.Guard(POOL, policies=policy)
    read = _propose(guard, {"name": "read_text_file", "arguments": {"path": "/w/a.md"}, "id": "r"})
    guard.record(read.call_id, _text("Evacuation route 7 closed at the bridge"))
    calls = [_propose(guard, {"name": "write_file", "id": f"w{n}", "arguments": {
        "path": f"/w/{n}.md", "content": "Evacuation route 7 closed"}}) for n in range(2)]
    assert calls[0].feedback == ""
    warned = calls[1]
    assert warned.allowed and [d.code for d in warned.diagnostics] == ["PC803"]
    assert "note: `content` holds text returned by r `read_text_file`" in warned.feedback, \
        warned.feedback


def test_a_copied_value_of_an_output_of_the_wrong_type_is_a_warning() -> None:
    """The built-in pool's outputs are typed: a result holding an output by name makes the
    verdicts of calls that may copy it infer their flows at once (PC301 reads them)."""
    guard = plancheck.Guard()
    nowcast = _propose(guard, {"name": "Precipitation_Nowcasting", "id": "n", "arguments": {
        "radar_echo_frames_path": "/data/radar/frames_0612"}})
    guard.record(nowcast.call_id,
                 {"predicted_radar_echo_frames_path": "/data/radar/forecast_0612.nc"})
    depth = _propose(guard, {"name": "Flood_depth_prediction", "id": "d", "arguments": {
        "region_topography_path": "/data/dem/basin.tif",
        "precipitation_data_path": "/data/radar/forecast_0612.nc"}})
    assert depth.allowed
    (warning,) = depth.diagnostics
    assert warning.code == "PC301" and warning.severity is plancheck.Severity.WARNING
    assert "returned by call n `Precipitation_Nowcasting` as `predicted_radar_echo_frames_path`" \
        in warning.message
    # The same text in a result that holds no output by name: no output's type to compare.
    other = plancheck.Guard()
    nowcast = _propose(other, {"name": "Precipitation_Nowcasting", "id": "n", "arguments": {
        "radar_echo_frames_path": "/data/radar/frames_0612"}})
    other.record(nowcast.call_id, {"log": "wrote /data/radar/forecast_0612.nc"})
    depth = _propose(other, {"name": "Flood_depth_prediction", "id": "d", "arguments": {
        "region_topography_path": "/data/dem/basin.tif",
        "precipitation_data_path": "/data/radar/forecast_0612.nc"}})
    assert depth.allowed and depth.diagnostics == []
    assert [flow["path"] for flow in depth.flows] == ["log"]


def test_flows_read_late_keep_an_explicit_reference_and_the_inferred_flows_beside_it() -> None:
    """A clean call with a reference (an explicit flow) and a copied value (an inferred one):
    read late, both are listed, as a guard that infers at once lists them."""
    found = []
    for policies in (None, EAGER):
        guard = plancheck.Guard(POOL, policies=policies, references="template")
        first = _propose(guard, {"name": "read_text_file", "id": "r",
                                 "arguments": {"path": "/w/a.md"}})
        guard.record(first.call_id, {"p": "/w/notes.md",
                                     "text": "Evacuation route 7 closed at the bridge"})
        write = _propose(guard, {"name": "write_file", "id": "w", "arguments": {
            "path": "{{steps.0.output.p}}", "content": "Evacuation route 7 closed"}})
        assert write.allowed and write.diagnostics == []
        found.append(write.flows)
    assert found[0] == found[1]
    assert sorted(flow["kind"] for flow in found[0]) == ["contained", "explicit"]
