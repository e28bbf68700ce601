"""plancheck's tool guardrails in the OpenAI Agents SDK, run by the SDK's own Runner with its
scripted test model (no network): a refused call does not run and the model gets the feedback,
the repaired call runs, and results are recorded for later references."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

import plancheck
from plancheck.integrations.agents import guard_tools, guardrails, pool_of

RAN: list[tuple[str, dict[str, Any]]] = []


@function_tool
def read_note(name: str) -> dict[str, str]:
    """Read the note called `name`."""
    RAN.append(("read_note", {"name": name}))
    return {"text": f"note {name}"}


@function_tool
def write_note(name: str, text: str, priority: int = 1) -> str:
    """Write `text` to the note called `name`."""
    RAN.append(("write_note", {"name": name, "text": text, "priority": priority}))
    return f"wrote {name}"


INVOKE = {tool.name: tool.on_invoke_tool for tool in (read_note, write_note)}


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()
    for tool in (read_note, write_note):
        tool.tool_input_guardrails, tool.tool_output_guardrails = [], []
        tool.on_invoke_tool = INVOKE[tool.name]


def _feedback_sent(model: ScriptedModel, call_id: str) -> str:
    """The tool output the model saw for ``call_id`` in its later turns."""
    for call in model.calls:
        for item in call.input if isinstance(call.input, list) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output" and \
                    item.get("call_id") == call_id:
                return str(item.get("output"))
    raise AssertionError(f"no output for {call_id}")


def test_a_refused_call_does_not_run_and_the_model_repairs_it() -> None:
    guard = guard_tools([read_note, write_note])
    model = ScriptedModel([
        [function_call("read_note", {"name": "a"}, call_id="c1")],
        [function_call("write_note", {"name": "b", "text": "hi", "priority": "high"},
                       call_id="c2")],
        # The SDK's strict schema requires every parameter, defaulted ones too:
        [function_call("write_note", {"name": "b", "text": "{{steps.0.output.text}}"},
                       call_id="c3")],
        [function_call("write_note", {"name": "b", "text": "{{steps.0.output.text}}",
                                      "priority": 2}, call_id="c4")],
        [assistant_message("done")],
    ])
    agent = Agent(name="notes", model=model, tools=[read_note, write_note])
    result = Runner.run_sync(agent, "copy note a to b")
    assert result.final_output == "done"
    assert [name for name, _ in RAN] == ["read_note", "write_note"]  # c2 never ran
    assert RAN[1][1]["text"] == "{{steps.0.output.text}}"
    feedback = _feedback_sent(model, "c2")
    assert "Call c2 to `write_note` was not run" in feedback and "priority" in feedback
    assert "the required argument `priority` is missing" in _feedback_sent(model, "c3")
    assert [c["id"] for c in guard.trajectory()] == ["c1", "c4"]
    assert guard.trajectory()[0]["result"] == {"text": "note a"}  # recorded by the output rail


def test_a_policy_refuses_through_the_sdk(tmp_path: Any) -> None:
    policy = tmp_path / "p.wf"
    policy.write_text('policy ro "no writes after a read" {\n'
                      '  forbid write_note after read_note\n}\n', encoding="utf-8")
    guard_tools([read_note, write_note], policies=policy)
    model = ScriptedModel([
        [function_call("read_note", {"name": "a"}, call_id="c1")],
        [function_call("write_note", {"name": "b", "text": "x", "priority": 1},
                       call_id="c2")],
        [assistant_message("stopped")],
    ])
    Runner.run_sync(Agent(name="notes", model=model, tools=[read_note, write_note]), "go")
    assert [name for name, _ in RAN] == ["read_note"]
    assert "policy ro" in _feedback_sent(model, "c2")


def _copying_a_note_by_reference() -> ScriptedModel:
    """A model that reads note a, then writes its text to b by a template reference."""
    return ScriptedModel([
        [function_call("read_note", {"name": "a"}, call_id="c1")],
        [function_call("write_note", {"name": "b", "text": "{{steps.0.output.text}}",
                                      "priority": 2}, call_id="c2")],
        [assistant_message("done")],
    ])


def test_a_reference_the_guard_resolved_runs_as_its_value() -> None:
    """With ``references="template"`` the Guard judges ``{{steps.0.output.text}}`` as the
    value it names ("note a"): the tool runs that value, not the template's text (it ran the
    text, which the Guard had never judged)."""
    tools = [read_note, write_note]
    guard = guard_tools(tools, guard=plancheck.Guard(pool_of(tools), references="template"))
    model = _copying_a_note_by_reference()
    Runner.run_sync(Agent(name="notes", model=model, tools=tools), "copy note a to b")
    assert RAN == [("read_note", {"name": "a"}),
                   ("write_note", {"name": "b", "text": "note a", "priority": 2})]
    assert [c["arguments"] for c in guard.trajectory()][1]["text"] == "note a"


def test_rails_attached_by_hand_reject_a_call_whose_judged_arguments_differ() -> None:
    """Attached by hand, the tool runs the model's own arguments: a call the Guard judged
    with a reference resolved is rejected (not run), with a message saying why."""
    tools = [read_note, write_note]
    check_call, record_result = guardrails(plancheck.Guard(pool_of(tools),
                                                           references="template"))
    for tool in tools:
        tool.tool_input_guardrails, tool.tool_output_guardrails = [check_call], [record_result]
    model = _copying_a_note_by_reference()
    Runner.run_sync(Agent(name="notes", model=model, tools=tools), "copy note a to b")
    assert RAN == [("read_note", {"name": "a"})]
    assert "Write the values themselves" in _feedback_sent(model, "c2")


def test_without_the_sdk_the_extra_is_named() -> None:
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys; sys.modules['agents'] = None\n"  # as if the SDK were not installed
            "import plancheck\n"
            "from plancheck.integrations.agents import guardrails\n"
            "try:\n"
            "    pool = [{'type': 'function', 'name': 'f', 'parameters': {}}]\n"
            "    guardrails(plancheck.Guard(pool))\n"
            "except ModuleNotFoundError as error:\n"
            "    print(error)\n")
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False, cwd=root)
    assert "pip install 'plancheck[agents]'" in done.stdout, done.stderr
