"""What a file may describe, beside how large it may be (issue 25): within the 16M ``--max-size``
a plan could hold a million tiny steps, a step a million arguments, a pool a million tools, a
DSL file a million calls, and each took gigabytes and minutes (1.2M steps: 5 GB, 181 s). Past
10,000 steps or calls or 200,000 fields in one plan, 10,000 tools or 200,000 parameters in one
pool, the input is refused with ``PC006`` before it is lowered, in every command, under a 1 GB
cap; at the limit it is checked as before."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "flood_plan.json"
ONE_GB = 1 << 30
STEPS = 10_000


def _run(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ONE_GB, ONE_GB))

    return subprocess.run([sys.executable, "-m", "plancheck", *arguments], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False,
                          preexec_fn=cap, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _write(path: Path, value: Any) -> str:
    path.write_text(json.dumps(value), encoding="utf-8")
    return str(path)


def _tiny_steps(count: int) -> list[dict[str, Any]]:
    return [{"tool": "a"}] * count


def _calls(count: int) -> dict[str, Any]:
    call = {"id": "c", "type": "function", "function": {"name": "a", "arguments": "{}"}}
    return {"messages": [{"role": "assistant", "tool_calls": [call] * count}]}


# Built when a test asks (half a million entries: a second of every collection otherwise).
INPUTS: dict[str, Callable[[], Any]] = {
    "top-level array": lambda: _tiny_steps(STEPS + 1),
    "wrapped plan": lambda: {"plan": _tiny_steps(STEPS + 1)},
    "OpenAI tool calls": lambda: _calls(STEPS + 1),
    "DORA trajectory": lambda: {"trajectory": [{"call": "a", "args": {}, "obs": {}}]
                                * (STEPS + 1)},
    "arguments in a JSON string": lambda: [{"id": "c", "type": "function", "function": {
        "name": "a", "arguments": json.dumps({f"k{i}": 1 for i in range(200_001)})}}],
    "Responses arguments in a JSON string": lambda: [{
        "type": "function_call", "call_id": "c", "name": "a",
        "arguments": json.dumps({f"k{i}": 1 for i in range(200_001)})}],
    "arguments of one step": lambda: [{
        "agent": "Flood_depth_prediction", "step": 0, "dependence": [],
        "dependence_content": {}, "outputs": ["o"],
        "inputs": {f"a{i}": 1 for i in range(200_001)}}],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(INPUTS))
@pytest.mark.parametrize("command", [[], ["fmt", "--to", "dsl"], ["fix"],
                                     ["compile", "--to", "python"]],
                         ids=["check", "fmt", "fix", "compile"])
def test_a_plan_past_the_limits_is_refused_before_it_is_lowered(
        name: str, command: list[str], tmp_path: Path) -> None:
    path = _write(tmp_path / "plan.json", INPUTS[name]())
    started = time.monotonic()
    done = _run([*command, path], tmp_path)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "PC006" in said and "more than" in said and "nothing in it was checked" in said, said
    assert "internal error" not in said and "Traceback" not in said
    assert time.monotonic() - started < 60


@pytest.mark.slow
def test_a_plan_at_the_limit_is_checked(tmp_path: Path) -> None:
    steps = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    plan = [dict(step, step=i, dependence=[], dependence_content=None)
            for i, step in enumerate((steps * STEPS)[:STEPS])]
    path = _write(tmp_path / "plan.json", plan)
    done = _run([path, "--format", "json"], tmp_path)
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    codes = {d["code"] for d in found["diagnostics"]}
    assert "PC006" not in codes and codes, codes


@pytest.mark.slow
def test_a_batch_past_the_limit_says_to_write_jsonl(tmp_path: Path) -> None:
    record = {"task_id": 1, "plan": []}
    path = _write(tmp_path / "batch.json", [record] * (STEPS + 1))
    done = _run([path], tmp_path)
    assert done.returncode == 2 and "items in its top-level array" in done.stdout
    assert "JSONL" in done.stdout
    jsonl = tmp_path / "batch.jsonl"
    jsonl.write_text((json.dumps(record) + "\n") * (STEPS + 1), encoding="utf-8")
    done = _run([str(jsonl)], tmp_path)
    assert "PC006" not in done.stdout and f"{STEPS + 1} plans" in done.stdout, done.stdout


@pytest.mark.parametrize("pool", [
    {"tools": [{"name": f"t{i}", "inputSchema": {}} for i in range(STEPS + 1)]},
    {"tools": [{"name": "t", "inputSchema": {"type": "object", "properties": {
        f"p{i}": {"type": "string"} for i in range(200_001)}}}]},
], ids=["tools", "parameters"])
@pytest.mark.parametrize("command", [["check", str(EXAMPLE), "--tools"],
                                     ["toolset", "show", "--tools"]], ids=["check", "show"])
def test_a_pool_past_the_limits_is_refused(pool: dict[str, Any], command: list[str],
                                           tmp_path: Path) -> None:
    done = _run([*command, _write(tmp_path / "pool.json", pool)], tmp_path)
    said = done.stdout + done.stderr
    assert done.returncode == 2 and "PC006" in said and "more than" in said, said


def test_a_large_enum_is_no_parameter_count(tmp_path: Path) -> None:
    """A parameter with 300,000 allowed values is one parameter, as real pools have them."""
    pool = {"tools": [{"name": "pick", "inputSchema": {"type": "object", "properties": {
        "colour": {"type": "string", "enum": [f"c{i}" for i in range(300_000)]}}}}]}
    done = _run(["toolset", "show", "--tools", _write(tmp_path / "pool.json", pool)], tmp_path)
    assert done.returncode == 0 and "pick" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("source", [
    "plan uses disasterbench {\n" + "".join(f"  step {i} = A()\n" for i in range(20_001)) + "}\n",
    "plan uses disasterbench {\n  step 0 = A(x = [" + ",".join(["1"] * 200_002) + "]) -> [o]\n}\n",
], ids=["calls", "values"])
def test_dsl_source_past_the_limits_is_refused_before_it_is_parsed(source: str,
                                                                   tmp_path: Path) -> None:
    path = tmp_path / "plan.wf"
    path.write_text(source, encoding="utf-8")
    started = time.monotonic()
    done = _run([str(path)], tmp_path)
    assert done.returncode == 2 and "PC006" in done.stdout, done.stdout + done.stderr
    assert time.monotonic() - started < 30


def test_commas_and_parentheses_in_strings_and_comments_are_not_counted(tmp_path: Path) -> None:
    text = "(" * 30_000 + "," * 250_000
    source = (f"# {text}\nplan uses disasterbench {{\n  step 0 = "
              f"Weather_Degraded_Image_Restoration(weather_degraded_image_path = \"{text}\")"
              f" -> [restored_image_path]\n}}\n")
    path = tmp_path / "plan.wf"
    path.write_text(source, encoding="utf-8")
    done = _run([str(path)], tmp_path)
    assert "PC006" not in done.stdout and done.returncode == 0, done.stdout


def test_scoring_a_prediction_past_the_limits_scores_it(tmp_path: Path) -> None:
    steps = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"task_id": 1, "structured_plan": steps}) + "\n", "utf-8")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"task_id": 1, "plan": _tiny_steps(STEPS + 1)}) + "\n",
                           encoding="utf-8")
    done = _run(["score", "--gold", str(gold), str(predictions), "--format", "json"], tmp_path)
    said = done.stdout + done.stderr
    assert done.returncode in (0, 1) and "Traceback" not in said, said
    scored = json.loads(done.stdout)["files"][0]
    assert scored["predictions"] == 1 and scored["metrics"]["em"]["n"] == 1, done.stdout
