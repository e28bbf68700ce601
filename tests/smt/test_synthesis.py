"""Synthesis of type-correct workflows (`plancheck synth`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import plancheck
from plancheck.cli import main
from plancheck.smt.synthesis import SynthesisError, synthesize
from tests.strategies import TOOLSET

FLOOD_INPUTS = ["data/radar.npy:RadarEchoSequence", "dem.tif:Topography", "roads.shp"]


def test_flood_workflow_is_found_shortest_first() -> None:
    plans = list(synthesize(FLOOD_INPUTS, "depth_speed_model", TOOLSET, max_steps=4, limit=5))
    assert [[s["agent"] for s in p] for p in plans] == [
        ["precipitation_data_convert_tool", "Flood_depth_prediction", "depth_speed_model"],
        ["Precipitation_Nowcasting", "precipitation_data_convert_tool",
         "Flood_depth_prediction", "depth_speed_model"],
    ]


TYPES_WITH_FORMATS = sorted(t for t in TOOLSET.types if TOOLSET.lattice.formats.get(t))


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(sorted(TOOLSET.types)), min_size=1, max_size=3),
       st.sampled_from(sorted(TOOLSET.tools) + sorted(TOOLSET.types)),
       st.integers(min_value=1, max_value=3))
def test_results_check_clean_and_are_deterministic(types: list[str], goal: str,
                                                   steps: int) -> None:
    inputs = [f"in{i}:{t}" for i, t in enumerate(types)]
    first = list(synthesize(inputs, goal, TOOLSET, max_steps=steps, limit=4))
    again = list(synthesize(inputs, goal, TOOLSET, max_steps=steps, limit=4))
    assert first == again
    assert len(first) <= 4
    lengths = [len(p) for p in first]
    assert lengths == sorted(lengths)
    for plan in first:
        assert 1 <= len(plan) <= steps
        report = plancheck.check(plan, TOOLSET)
        assert report.ok, [d.message for d in report.errors]
        last = TOOLSET.tools[plan[-1]["agent"]]
        if goal in TOOLSET.tools:
            assert last.name == goal
        else:
            assert any(TOOLSET.lattice.is_subtype(o.type, goal) or o.polymorphic
                       for o in last.outputs)
        _assert_one_predecessor(plan)


def _assert_one_predecessor(plan: list[dict[str, Any]]) -> None:
    for step in plan:
        assert len([d for d in step["dependence"] if d != -1]) <= 1


def test_unknown_goal_and_untyped_input() -> None:
    with pytest.raises(SynthesisError, match="did you mean `GeoChat`"):
        list(synthesize(["q.txt"], "Geochat2", TOOLSET))
    with pytest.raises(SynthesisError, match="has no type"):
        list(synthesize(["noextension"], "GeoChat", TOOLSET))


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["synth", "--goal", "depth_speed_model", "--max-steps", "4"]
    for item in FLOOD_INPUTS:
        args += ["--input", item]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(plancheck.check(json.loads(x), TOOLSET).ok for x in lines)
    assert main([*args, "--format", "dsl", "--limit", "1"]) == 0
    assert 'plan "workflow 1" uses disasterbench' in capsys.readouterr().out
    assert main(["synth", "--input", "q.txt:TextQuery", "--goal", "depth_speed_model"]) == 1
    assert main(["synth", "--input", "x:NoSuchType", "--goal", "GeoChat"]) == 2
    assert main(["synth", "--input", "q.txt", "--goal", "GeoChat", "--max-steps", "0"]) == 2
    capsys.readouterr()
