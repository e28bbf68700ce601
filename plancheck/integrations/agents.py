"""plancheck in the OpenAI Agents SDK: tool guardrails that put each function-tool call to a
:class:`plancheck.Guard` before it runs, and record what it returned.

    from agents import Agent, function_tool
    from plancheck.integrations.agents import guard_tools

    tools = [read_note, write_note]                  # FunctionTools (@function_tool)
    guard = guard_tools(tools, policies="p.wf")      # the pool is the tools' own schemas
    agent = Agent(name="notes", tools=tools)

A refused call does not run: the model gets the Guard's feedback as the tool's result
(``reject_content``) and can repair the call. An allowed call runs with the arguments the
Guard judged (``guard_tools`` has each tool run them, re-encoded, in place of the model's JSON:
a reference the Guard resolved, ``{{steps.K.output.KEY}}`` with ``references="template"``,
runs as its value), and an output guardrail records its result, so later calls may refer to
it and policies on flows see it. Needs ``pip install 'plancheck[agents]'``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from plancheck.guard import Guard, Verdict

__all__ = ["guard_tools", "guardrails", "pool_of"]

_EXTRA = "the OpenAI Agents SDK guardrails need `pip install 'plancheck[agents]'`"


def pool_of(tools: Iterable[Any]) -> list[dict[str, Any]]:
    """The function tools as an OpenAI ``tools`` list (Responses shape), their JSON Schemas
    as the SDK made them."""
    return [{"type": "function", "name": tool.name, "description": tool.description or "",
             "parameters": tool.params_json_schema} for tool in tools]


def guardrails(guard: Guard) -> tuple[Any, Any]:
    """The input guardrail (a verdict before each call) and the output guardrail (records
    each result) of ``guard``, to attach to function tools by hand. A tool runs the model's
    own arguments then, so a call whose judged arguments differ from them (a reference the
    Guard resolved) is rejected: :func:`guard_tools` has the tools run the judged ones."""
    return _rails(guard, None)


def _rails(guard: Guard, judged: dict[str, str] | None) -> tuple[Any, Any]:
    """``judged``: where the input guardrail leaves each allowed call's judged arguments (as
    JSON, by call id) for its tool to run; None: the tool runs the model's."""
    try:
        from agents import (
            ToolGuardrailFunctionOutput,
            ToolInputGuardrail,
            ToolInputGuardrailData,
            ToolOutputGuardrail,
            ToolOutputGuardrailData,
        )
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(_EXTRA, name=error.name) from None

    def check_call(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        context = data.context
        verdict = guard.propose({"type": "function_call", "call_id": context.tool_call_id,
                                 "name": context.tool_name,
                                 "arguments": context.tool_arguments})
        assert isinstance(verdict, Verdict)  # (one call, one verdict)
        info = {"allowed": verdict.allowed,
                "codes": [d.code for d in verdict.diagnostics]}
        if not verdict.allowed:
            return ToolGuardrailFunctionOutput.reject_content(verdict.feedback,
                                                              output_info=info)
        if judged is not None:
            judged[context.tool_call_id] = json.dumps(verdict.arguments)
        elif verdict.arguments != _parsed(context.tool_arguments):
            return ToolGuardrailFunctionOutput.reject_content(
                f"Call {context.tool_call_id} to `{context.tool_name}` was not run: its "
                "arguments were judged with the values its references name, and this tool "
                "would run the text as written. Write the values themselves.",
                output_info={**info, "allowed": False})
        return ToolGuardrailFunctionOutput.allow(output_info=info)

    def record_result(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        if judged is not None:
            judged.pop(data.context.tool_call_id, None)
        guard.record(data.context.tool_call_id, data.output)
        return ToolGuardrailFunctionOutput.allow()

    return (ToolInputGuardrail(check_call, name="plancheck"),
            ToolOutputGuardrail(record_result, name="plancheck-record"))


def _parsed(arguments: str) -> Any:
    try:
        return json.loads(arguments or "{}")
    except ValueError:
        return None


def guard_tools(tools: Iterable[Any], *, guard: Guard | None = None, profile: str = "guard",
                policies: Any = None) -> Guard:
    """Attach plancheck's guardrails to each function tool of ``tools`` (after any they
    have), have each tool run the arguments the Guard judged, and return the Guard:
    ``guard``, or one built from the tools' own schemas."""
    tools = list(tools)
    if guard is None:
        guard = Guard(pool_of(tools), profile=profile, policies=policies)
    judged: dict[str, str] = {}
    check_call, record_result = _rails(guard, judged)
    for tool in tools:
        tool.tool_input_guardrails = [*(tool.tool_input_guardrails or []), check_call]
        tool.tool_output_guardrails = [*(tool.tool_output_guardrails or []), record_result]
        tool.on_invoke_tool = _RunningJudged(tool.on_invoke_tool, judged)
    return guard


class _RunningJudged:
    """A tool's ``on_invoke_tool`` given the arguments the Guard judged for the call, where
    the input guardrail left them (the model's, for a call it did not see: a resumed one,
    judged when it first ran). Attached again, it replaces itself rather than nest."""

    def __init__(self, invoke: Any, judged: dict[str, str]) -> None:
        self.invoke: Any = invoke.invoke if isinstance(invoke, _RunningJudged) else invoke
        self.judged = judged

    async def __call__(self, context: Any, arguments: str) -> Any:
        return await self.invoke(context, self.judged.get(context.tool_call_id, arguments))
