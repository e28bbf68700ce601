"""``check --policy`` and ``plancheck.check(policies=...)``: violations with positions in the plan
and the policy file, exit codes, prefixes, budgets, configuration, and a guard-side monitor that
never imports z3."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import plancheck
from plancheck.cli import main
from plancheck.policy.loader import PolicyError

PLAN = [
    {"agent": "Precipitation_Nowcasting", "step": 0, "dependence": [-1],
     "dependence_content": None, "inputs": {"radar_echo_frames_path": "obs.npy"},
     "outputs": ["predicted_radar_echo_frames_path"]},
    {"agent": "precipitation_data_convert_tool", "step": 1, "dependence": [0],
     "dependence_content": {"0": ["predicted_radar_echo_frames_path"]},
     "inputs": {"radar_echo_frames_path": "<GENERATED>-0-<predicted_radar_echo_frames_path>"},
     "outputs": ["time_series_array_path"]},
    {"agent": "Flood_depth_prediction", "step": 2, "dependence": [1],
     "dependence_content": {"1": ["time_series_array_path"]},
     "inputs": {"region_topography_path": "dem.tif",
                "precipitation_data_path": "<GENERATED>-1-<time_series_array_path>"},
     "outputs": ["predicted_water_depths_path"]},
]

POLICY = """policy flood {
  require Precipitation_Nowcasting before Flood_depth_prediction
  forbid flow from Precipitation_Nowcasting to Flood_depth_prediction.precipitation_data_path
  require Flood_depth_prediction.region_topography_path matches ".*\\.tif"
  warn at most 2 family hydrology
  require Event_detection
}
"""


def _files(tmp_path: Path, plan: object = PLAN, policy: str = POLICY) -> tuple[str, str]:
    plan_path, policy_path = tmp_path / "plan.json", tmp_path / "p.wf"
    plan_path.write_text(json.dumps(plan, indent=2), encoding="utf-8")
    policy_path.write_text(policy, encoding="utf-8")
    return str(plan_path), str(policy_path)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", "--no-config", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_violation_is_a_finding_with_its_minimal_facts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan, policy = _files(tmp_path)
    code, out, _ = _run(capsys, plan, "--policy", policy, "--format", "json")
    assert code == 1
    found = {d["code"]: d for d in json.loads(out)["diagnostics"]}
    assert set(found) == {"PC805", "PC803", "PC806"}
    flow = found["PC805"]
    assert "through step 1 `precipitation_data_convert_tool`" in flow["message"]
    assert flow["data"]["line"] == 3 and flow["data"]["policy_file"] == policy
    # The minimal cause: step 0 is the source, step 1 reads it, step 2 reads step 1.
    assert flow["data"]["facts"] == [
        "step 0 calls `Precipitation_Nowcasting`",
        "`radar_echo_frames_path` of step 1 reads the result of step 0",
        "`precipitation_data_path` of step 2 reads the result of step 1",
        "step 2 calls `Flood_depth_prediction`"]
    assert found["PC803"]["severity"] == "warning" and found["PC803"]["data"]["step"] == 2
    assert found["PC806"]["data"]["step"] == -1


def test_a_require_that_a_prefix_can_still_meet_is_not_a_violation(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan, policy = _files(tmp_path)
    code, out, _ = _run(capsys, plan, "--policy", policy, "--prefix", "--format", "concise")
    assert code == 1 and "PC806" not in out and "PC805" in out


def test_a_plan_that_keeps_every_rule_passes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan, policy = _files(tmp_path, policy="policy ok {\n  require Precipitation_Nowcasting "
                          "before Flood_depth_prediction\n  at most 1 Flood_depth_prediction\n}\n")
    code, out, _ = _run(capsys, plan, "--policy", policy)
    assert code == 0, out


@pytest.mark.parametrize(("policy", "code", "where"), [
    ("policy p {\n  require Nowcasting before Flood_depth_prediction\n}\n", "PC811", "p.wf:2:11"),
    ("policy p {\n  require Flood_depth_prediction\n  at most 0 Flood_depth_prediction\n}\n",
     "PC813", "p.wf:2:3"),
    ("policy p {\n  require Flood_depth_prediction.region_topography_path == \"a\"\n"
     "  require Flood_depth_prediction.region_topography_path in [\"b\", \"c\"]\n}\n",
     "PC813", "p.wf:2:3"),
    ("policy p {\n  forbid\n}\n", "PC114", "p.wf:3:1"),
])
def test_a_policy_file_that_cannot_be_used_exits_2_naming_what_is_wrong(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], policy: str, code: str,
        where: str) -> None:
    plan, path = _files(tmp_path, policy=policy)
    status, out, err = _run(capsys, plan, "--policy", path)
    assert status == 2 and out == ""
    assert f"error[{code}]" in err and where.replace("p.wf", path) in err, err
    assert "cannot be used; nothing was checked" in err and "Traceback" not in err


def test_a_missing_policy_file_is_exit_2(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    plan, _ = _files(tmp_path)
    status, _, err = _run(capsys, plan, "--policy", str(tmp_path / "none.wf"))
    assert status == 2 and "PC001" in err and "no such file" in err


def test_a_check_past_its_budget_says_so(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    plan, policy = _files(tmp_path)
    status, out, _ = _run(capsys, plan, "--policy", policy, "--timeout-ms", "0",
                          "--format", "concise")
    assert status == 1 and "PC814" in out and "did not finish within 0 ms" in out


def test_the_configuration_names_the_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    plan, _ = _files(tmp_path)
    (tmp_path / "plancheck.toml").write_text('policy = "p.wf"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    status = main(["check", plan, "--format", "concise"])
    assert status == 1 and "PC805" in capsys.readouterr().out


def test_the_api_takes_policies_as_text_or_path_and_refuses_bad_ones(tmp_path: Path) -> None:
    _, policy = _files(tmp_path)
    by_path = plancheck.check(PLAN, policies=policy)
    by_text = plancheck.check(PLAN, policies=POLICY, prefix=True)
    assert {d.code for d in by_path.diagnostics} == {"PC805", "PC803", "PC806"}
    assert {d.code for d in by_text.diagnostics} == {"PC805", "PC803"}
    assert not by_path.ok
    with pytest.raises(PolicyError) as caught:
        plancheck.check(PLAN, policies="policy p { at most 1 Nope }")
    assert caught.value.diagnostics[0].code == "PC811"


def test_the_api_refuses_contradicting_policies_as_the_command_line_does() -> None:
    contradicting = ("policy p {\n  require Flood_depth_prediction\n"
                     "  at most 0 Flood_depth_prediction\n}\n")
    with pytest.raises(PolicyError) as caught:
        plancheck.check(PLAN, policies=contradicting)
    (found,) = caught.value.diagnostics
    assert found.code == "PC813" and found.span is not None and found.span.start_line == 2
    assert [label.message for label in found.labels if not label.primary] == ["with this rule"]
    with pytest.raises(PolicyError):
        plancheck.check_trajectory(PLAN, policies=contradicting)


def test_the_online_monitor_never_imports_z3() -> None:
    probe = (
        "import sys\n"
        "from plancheck.api import load_toolset\n"
        "from plancheck.policy.loader import parse_policies\n"
        "from plancheck.policy.monitor import PolicyMonitor\n"
        f"m = PolicyMonitor(parse_policies({POLICY!r}, load_toolset()))\n"
        "c = m.call('Precipitation_Nowcasting', {'radar_echo_frames_path': 'a.npy'})\n"
        "m.propose(c); m.accept(c); m.record(0, {'x': 'a long enough value'})\n"
        "from plancheck.policy.online import GuardPolicies\n"
        f"g = GuardPolicies({POLICY!r}, load_toolset())\n"
        "c, found = g.check('id', 'Event_detection', {}); g.accept(c); g.record('id', 1)\n"
        "print('z3' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"


def test_fix_with_a_policy_makes_the_fewest_edits_that_keep_every_rule(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan, policy = _files(tmp_path, policy=(
        "policy p {\n  require Flood_depth_prediction.region_topography_path in "
        "[\"dem.tif\", \"hires.tif\"]\n  forbid Flood_depth_prediction after "
        "precipitation_data_convert_tool\n  require precipitation_data_convert_tool."
        "radar_echo_frames_path != \"x\"\n}\n"))
    bad = json.loads(Path(plan).read_text())
    bad[2]["inputs"]["region_topography_path"] = "other.tif"
    Path(plan).write_text(json.dumps(bad), encoding="utf-8")
    code = main(["fix", plan, "--policy", policy])
    out, err = capsys.readouterr()
    assert code == 0, err
    repaired = json.loads(out)
    # Step 2 must go (it follows the conversion) rather than step 1, which step 2 reads; the
    # value change is then moot.
    assert [s["agent"] for s in repaired] == ["Precipitation_Nowcasting",
                                              "precipitation_data_convert_tool"]
    assert "policy: deleted step 2 (`Flood_depth_prediction`)" in err
    fixed = tmp_path / "fixed.json"
    fixed.write_text(out, encoding="utf-8")
    assert main(["check", "--no-config", str(fixed), "--policy", policy]) == 0


def test_fix_changes_a_number_to_the_nearest_value_a_rule_allows(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = [{"agent": "ras.threshold", "step": 0, "dependence": [-1],
                 "dependence_content": None,
                 "inputs": {"image_path": "a.tif", "threshold": 250, "op": ">"},
                 "outputs": []}]
    plan, policy = _files(tmp_path, document, 'policy p {\n  require "ras.threshold".threshold '
                          '< 100\n  require "ras.threshold".op in [">", "<"]\n}\n')
    code = main(["fix", plan, "--tools", "dora", "--policy", policy])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)[0]["inputs"]["threshold"] == 99
    assert "changed `threshold` of step 0 from 250 to 99" in err


def test_fix_says_when_no_edit_keeps_every_policy(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan, policy = _files(tmp_path, policy="policy p {\n  require Event_detection\n}\n")
    assert main(["fix", plan, "--policy", policy]) == 1
    assert "no deletion of steps or change of values satisfies every policy" in \
        capsys.readouterr().err


def test_a_policy_beside_its_toolset_in_one_file_checks_a_dsl_plan(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    both = tmp_path / "both.wf"
    both.write_text("toolset mini {\n  type Text \"text\"\n  tool fetch { in url: Text  out "
                    "body: Text }\n  tool send { in to: Text  in body: Text }\n}\npolicy mail "
                    "{\n  forbid flow from fetch to send.body\n}\n", encoding="utf-8")
    plan = tmp_path / "mini.wf"
    plan.write_text("plan uses mini {\n  step 0 = fetch(url = \"https://x\")\n  step 1 = "
                    "send(to = \"a@b\", body = step0.body)\n}\n", encoding="utf-8")
    code, out, _ = _run(capsys, str(plan), "--tools", str(both), "--policy", str(both),
                        "--format", "concise")
    assert code == 1
    assert f"{plan}:3:29: error[PC805] step 1 `send`: `body` holds a value returned by step 0 " \
        "`fetch`" in out


@pytest.mark.slow
def test_a_large_plan_is_decided_with_bounded_diagnostics_or_said_to_be_past_its_budget(
) -> None:
    from plancheck.policy.loader import parse_policies
    from plancheck.smt.policy_check import policy_diagnostics

    steps = [dict(PLAN[0], step=n) for n in range(600)]
    plan = plancheck.check(steps).plan
    assert plan is not None
    policies = parse_policies("policy p {\n  at most 300 Precipitation_Nowcasting per 400 "
                              "calls\n  require Flood_depth_prediction\n  forbid "
                              "Precipitation_Nowcasting.radar_echo_frames_path == \"obs.npy\"\n}\n",
                              plancheck.load_toolset())
    past = policy_diagnostics(plan, policies, timeout_ms=1)
    assert [d.code for d in past] == ["PC814"]
    found = policy_diagnostics(plan, policies, timeout_ms=600_000)
    codes = [d.code for d in found]
    assert codes.count("PC803") == 300 and codes.count("PC806") == 1
    assert codes.count("PC804") == 600
    assert "PC814" not in codes and "PC002" not in codes
    assert max(len(d.labels) for d in found) <= 1 + 5 + 12
    missing = next(d for d in found if d.code == "PC806")
    assert len(missing.data["facts"]) == 600 and "588 more facts" in missing.notes[1]
    # Explained: the first ten of each rule; a small core shrunk to a minimal one, a large one
    # (the 300 calls before a count's limit) reported as Z3 gives it.
    assert sum(d.data["minimal"] for d in found if d.code == "PC804") == 10
    assert sum(len(d.data["facts"]) == 2 for d in found if d.code == "PC804") == 10
    assert not any(d.data["minimal"] for d in found if d.code == "PC803")


def test_the_command_line_policy_wins_over_the_configured_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    plan, _ = _files(tmp_path)
    (tmp_path / "ok.wf").write_text("policy ok {\n  at most 5 Flood_depth_prediction\n}\n",
                                    encoding="utf-8")
    (tmp_path / "plancheck.toml").write_text('policy = "p.wf"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", plan, "--policy", str(tmp_path / "ok.wf")]) == 0
    capsys.readouterr()
    (tmp_path / "plancheck.toml").write_text("policy = 3\n", encoding="utf-8")
    assert main(["check", plan]) == 2
    assert "PC003" in capsys.readouterr().err
