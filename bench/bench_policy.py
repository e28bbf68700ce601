"""Policies, both ways: the static check of a whole plan (Z3) and the online monitor per call.

    python bench/bench_policy.py          # prints the numbers; exits 1 if a target is missed

Static (issue 23): a 100-step DisasterBench plan (the flood chain nowcast -> convert -> flood
depth -> traffic speed, 25 times, every value passed by reference) against 20 rules of every
kind, decided and explained by Z3 (``plancheck.smt.policy_check.policy_diagnostics``), median
of 7 runs after one warm-up, wall and CPU time (on a shared machine the CPU time is the one
that says what the check costs); target under 200 ms, always within ``--timeout-ms`` (2000).

Online: a 100-call trajectory over the GitHub MCP capture, every result 10 KB of text, with
provenance on, against the 20 rules of ``POLICY`` below. The cost of one call is the monitor's
``call`` (provenance inference) plus ``propose`` (every rule's verdict); ``accept`` and
``record`` run between calls, outside the timing. Medians over 30 trajectories of the cost of
call 1 and of call 100; target: call 100 at most 1.2x call 1 (flat in trajectory length).

The issue's other online target is relative to ``Guard.propose`` without policies; the guard
is not in this branch, so the per-call cost is also shown next to a ``jsonschema`` Draft
2020-12 validation of the same arguments (validator built once), the per-call check the guard
is held to (issue 22): "with rules" is that validation plus the monitor. That ratio is a proxy,
labelled as one.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

from plancheck.api import load_toolset
from plancheck.compiler.driver import check_in_memory
from plancheck.policy.loader import parse_policies
from plancheck.policy.monitor import PolicyMonitor
from plancheck.smt.policy_check import policy_diagnostics

ROOT = Path(__file__).resolve().parents[1]
GITHUB = ROOT / "tests" / "data" / "real" / "mcp" / "server-github.json"
STATIC_TARGET_MS = 200.0
FLAT_TARGET = 1.2

STATIC_POLICY = """policy bench_static {
  require Precipitation_Nowcasting before Flood_depth_prediction
  require precipitation_data_convert_tool before Flood_depth_prediction
  require Flood_depth_prediction before depth_speed_model
  forbid Precipitation_Nowcasting after Event_detection
  forbid GeoChat after Building_damage_assessment
  forbid Toponym_Detection after depth_speed_model
  at most 30 Flood_depth_prediction
  at most 2 family temporal_remote_sensing per 5 calls
  at most 2 GeoChat per 10 calls
  at most 100 family hydrology
  require Flood_depth_prediction.region_topography_path matches ".*\\.tif"
  require Precipitation_Nowcasting.radar_echo_frames_path != "bad.npy"
  require depth_speed_model.road_network_path in ["roads.shp", "roads2.shp"]
  forbid Flood_depth_prediction.region_topography_path == "forbidden.tif"
  require Precipitation_Nowcasting.radar_echo_frames_path matches "obs.*"
    unless Event_detection before
  forbid flow from Event_detection to Flood_depth_prediction.precipitation_data_path
  forbid flow from GeoChat to depth_speed_model.flood_depth_path
  forbid flow from Precipitation_Nowcasting.predicted_radar_echo_frames_path
    to depth_speed_model.road_network_path
  require depth_speed_model
  require Precipitation_Nowcasting
}
"""

POLICY = """policy bench_online {
  require get_file_contents before create_or_update_file
  require get_pull_request_status before merge_pull_request
  forbid merge_pull_request after create_pull_request_review
  forbid fork_repository after push_files
  at most 30 create_* per 50 calls
  at most 5 fork_repository
  at most 40 get_file_contents per 60 calls
  at most 90 list_* per 95 calls
  forbid create_branch.branch in ["main", "master"]
  require create_issue.title matches "[A-Z].*" unless get_issue before
  require list_issues.per_page <= 50
  require merge_pull_request.merge_method in ["squash", "rebase"]
  forbid push_files.message == ""
  require search_code.q != ""
  require get_file_contents.path matches "[^~]*"
  forbid flow from get_file_contents to create_issue.body
  forbid flow from search_code to add_issue_comment.body
  forbid flow from get_issue to push_files.message
  forbid flow from list_commits to create_pull_request.body
  require push_files
}
"""


def flood_plan(repeats: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []

    def add(agent: str, inputs: dict[str, str], outputs: list[str]) -> int:
        refs = [v for v in inputs.values() if v.startswith("<GENERATED>-")]
        content: dict[str, list[str]] = {}
        for ref in refs:
            number, key = ref[len("<GENERATED>-"):].split("-", 1)
            content.setdefault(number, []).append(key.strip("<>"))
        steps.append({"agent": agent, "step": len(steps),
                      "dependence": sorted(int(n) for n in content) or [-1],
                      "dependence_content": content or None, "inputs": inputs,
                      "outputs": outputs})
        return len(steps) - 1

    for _ in range(repeats):
        now = add("Precipitation_Nowcasting", {"radar_echo_frames_path": "obs.npy"},
                  ["predicted_radar_echo_frames_path"])
        series = add("precipitation_data_convert_tool", {
            "radar_echo_frames_path": f"<GENERATED>-{now}-<predicted_radar_echo_frames_path>"},
            ["time_series_array_path"])
        depth = add("Flood_depth_prediction", {
            "region_topography_path": "dem.tif",
            "precipitation_data_path": f"<GENERATED>-{series}-<time_series_array_path>"},
            ["predicted_water_depths_path"])
        add("depth_speed_model", {
            "flood_depth_path": f"<GENERATED>-{depth}-<predicted_water_depths_path>",
            "road_network_path": "roads.shp"}, ["traffic_speed_path"])
    return steps


def static_bench() -> tuple[float, float, int, bool]:
    pool = load_toolset(None)
    policies = parse_policies(STATIC_POLICY, pool)
    assert len(policies.rules) == 20
    plan = check_in_memory(flood_plan(25), pool).plan
    assert plan is not None and len(plan.steps) == 100
    policy_diagnostics(plan, policies, timeout_ms=2000)  # warm-up: z3's first solver
    times, cpu, found = [], [], []
    for _ in range(7):
        start, start_cpu = time.perf_counter(), time.process_time()
        found = policy_diagnostics(plan, policies, timeout_ms=2000)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    timed_out = any(d.code == "PC814" for d in found)
    return statistics.median(times), statistics.median(cpu), len(found), timed_out


def trajectory() -> list[tuple[str, dict[str, Any], Any]]:
    """100 calls cycling through read, search, issue and listing calls; results of 10 KB."""
    filler = ("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
              * 140)[:10_000]
    calls: list[tuple[str, dict[str, Any], Any]] = []
    for n in range(100):
        kind = n % 4
        if kind == 0:
            calls.append(("get_file_contents", {"owner": "acme", "repo": "site",
                                                "path": f"src/file_{n}.py"},
                          {"content": [{"type": "text", "text": f"file {n}: " + filler}]}))
        elif kind == 1:
            calls.append(("search_code", {"q": f"symbol_{n}"},
                          {"content": [{"type": "text", "text": f"hits {n}: " + filler}]}))
        elif kind == 2:
            calls.append(("create_issue", {"owner": "acme", "repo": "site",
                                           "title": f"Issue number {n}",
                                           "body": f"Found a problem in file_{n - 2}.py"},
                          {"content": [{"type": "text", "text": f"#{n} " + filler}]}))
        else:
            calls.append(("list_issues", {"owner": "acme", "repo": "site", "per_page": 30},
                          {"content": [{"type": "text", "text": f"issues {n}: " + filler}]}))
    return calls


def online_bench() -> dict[str, float]:
    pool = load_toolset(GITHUB)
    policies = parse_policies(POLICY, pool)
    assert len(policies.rules) == 20
    calls = trajectory()
    first: list[float] = []
    last: list[float] = []
    for _ in range(30):
        monitor = PolicyMonitor(policies)
        for position, (tool, arguments, result) in enumerate(calls):
            start = time.perf_counter_ns()
            call = monitor.call(tool, arguments, call_id=f"call_{position}")
            monitor.propose(call)
            spent = (time.perf_counter_ns() - start) / 1000
            if position == 0:
                first.append(spent)
            elif position == len(calls) - 1:
                last.append(spent)
            monitor.accept(call)
            monitor.record(call.index, result)
    numbers = {"call_1_us": statistics.median(first), "call_100_us": statistics.median(last)}
    try:
        import jsonschema  # type: ignore[import-untyped]
    except ImportError:
        return numbers
    tool, arguments, _ = calls[-1]
    schema = _schema(tool)
    validator = jsonschema.Draft202012Validator(schema)
    runs = []
    for _ in range(2000):
        start = time.perf_counter_ns()
        validator.is_valid(arguments)
        runs.append((time.perf_counter_ns() - start) / 1000)
    numbers["jsonschema_us"] = statistics.median(runs)
    return numbers


def _schema(tool: str) -> dict[str, Any]:
    import json

    data = json.loads(GITHUB.read_text(encoding="utf-8"))
    tools = data.get("tools", data) if isinstance(data, dict) else data
    for entry in tools if isinstance(tools, list) else []:
        if entry.get("name") == tool:
            schema: dict[str, Any] = entry.get("inputSchema", {})
            return schema
    return {}


def main() -> int:
    static_ms, static_cpu, found, timed_out = static_bench()
    print(f"static: 100 steps, 20 rules: {static_ms:.1f} ms median wall, {static_cpu:.1f} ms "
          f"CPU ({found} diagnostics, timed out: {timed_out}); target < "
          f"{STATIC_TARGET_MS:.0f} ms")
    online = online_bench()
    ratio = online["call_100_us"] / online["call_1_us"]
    print(f"online: 20 rules, provenance on, 10 KB results: call 1 {online['call_1_us']:.1f} "
          f"us, call 100 {online['call_100_us']:.1f} us (x{ratio:.2f}; target <= "
          f"{FLAT_TARGET})")
    if "jsonschema_us" in online:
        base = online["jsonschema_us"]
        proxy = (base + online["call_100_us"]) / base
        print(f"proxy: jsonschema validation of the same arguments {base:.1f} us; with the "
              f"monitor {base + online['call_100_us']:.1f} us (x{proxy:.2f})")
    missed = static_cpu >= STATIC_TARGET_MS or timed_out or ratio > FLAT_TARGET
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
