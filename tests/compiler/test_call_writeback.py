"""``plancheck fix`` writes a repaired plan back in the shape its calls were read in (issue
35: OpenAI calls came back as DisasterBench steps)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.compiler.call_writeback import write_back

POOL = {"tools": [{"name": "get_weather", "description": "weather",
                   "inputSchema": {"type": "object",
                                   "properties": {"city": {"type": "string"}},
                                   "required": ["city"]}}]}
OPENAI = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function",
     "function": {"name": "get_wether", "arguments": json.dumps({"city": "Paris"})}}]}
ANTHROPIC = [{"role": "user", "content": "Weather?"},
             {"role": "assistant", "content": [
                 {"type": "text", "text": "Looking."},
                 {"type": "tool_use", "id": "toolu_1", "name": "get_wether",
                  "input": {"city": "Paris"}}]}]
GEMINI = {"candidates": [{"content": {"role": "model", "parts": [
    {"functionCall": {"id": "g1", "name": "get_wether", "args": {"city": "Paris"}}}]}}]}


def _fix(tmp_path: Path, document: Any, *extra: str) -> subprocess.CompletedProcess[str]:
    path, pool = tmp_path / "calls.json", tmp_path / "pool.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    pool.write_text(json.dumps(POOL), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "plancheck", "fix", "--tools", str(pool),
                           *extra, str(path)], capture_output=True, text=True, check=False,
                          timeout=120)


@pytest.mark.parametrize(("document", "name_at"), [
    (OPENAI, ("tool_calls", 0, "function", "name")),
    (ANTHROPIC, (1, "content", 1, "name")),
    (GEMINI, ("candidates", 0, "content", "parts", 0, "functionCall", "name")),
], ids=["openai", "anthropic", "gemini"])
def test_repaired_calls_keep_their_shape(document: Any, name_at: tuple[Any, ...],
                                         tmp_path: Path) -> None:
    run = _fix(tmp_path, document)
    assert run.returncode == 0, run.stderr
    repaired = json.loads(run.stdout)
    expected = json.loads(json.dumps(document))
    target = expected
    for key in name_at[:-1]:
        target = target[key]
    target[name_at[-1]] = "get_weather"
    assert repaired == expected  # the name fixed, everything else (ids, text, JSON text) kept


def test_in_place_rewrites_the_calls(tmp_path: Path) -> None:
    run = _fix(tmp_path, OPENAI, "--in-place")
    assert run.returncode == 0, run.stderr
    fixed = json.loads((tmp_path / "calls.json").read_text(encoding="utf-8"))
    assert fixed["tool_calls"][0]["function"]["name"] == "get_weather"
    assert plancheck.check(fixed, plancheck.load_toolset(POOL)).ok


def test_a_repair_of_another_length_gives_calls_in_the_first_shape() -> None:
    plan = plancheck.check(OPENAI, plancheck.load_toolset(POOL)).plan
    assert plan is not None
    steps = [{"agent": "get_weather", "inputs": {"city": "Paris"}},
             {"agent": "get_weather", "inputs": {"city": "Rome"}}]
    written = write_back(OPENAI, plan, steps)
    assert written == [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
        {"type": "function", "function": {"name": "get_weather",
                                          "arguments": '{"city": "Rome"}'}}]


def test_a_plan_of_steps_is_not_calls() -> None:
    steps = [{"agent": "RGB_GeoImage_Classifier", "step": 0, "dependence": [-1],
              "dependence_content": None, "inputs": {"image_path": "/d/a.png"},
              "outputs": ["predicted_category_path"]}]
    plan = plancheck.check(steps).plan
    assert plan is not None and write_back(steps, plan, steps) is None
