"""plancheck in the OpenAI Agents SDK: tool guardrails that put each function-tool call to a
:class:`plancheck.Guard` before it runs, and record what it returned.

    from agents import Agent, function_tool
    from plancheck.integrations.agents import guard_tools

    tools = [read_note, write_note]                  # FunctionTools (@function_tool)
    guard = guard_tools(tools, policies="p.wf")      # the pool is the tools' own schemas
    agent = Agent(name="notes", tools=tools)

A refused call does not run: the model gets the Guard's feedback as the tool's result
(``reject_content``) and can repair the call. An allowed call runs, and an output guardrail
records its result, so later calls may refer to it (``{{steps.K.output.KEY}}``) and policies
on flows see it. Needs ``pip install 'plancheck[agents]'``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from plancheck.guard import Guard

__all__ = ["guard_tools", "guardrails", "pool_of"]

_EXTRA = "the OpenAI Agents SDK guardrails need `pip install 'plancheck[agents]'`"


def pool_of(tools: Iterable[Any]) -> list[dict[str, Any]]:
    """The function tools as an OpenAI ``tools`` list (Responses shape), their JSON Schemas
    as the SDK made them."""
    return [{"type": "function", "name": tool.name, "description": tool.description or "",
             "parameters": tool.params_json_schema} for tool in tools]


def guardrails(guard: Guard) -> tuple[Any, Any]:
    """The input guardrail (a verdict before each call) and the output guardrail (records
    each result) of ``guard``, to attach to function tools."""
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
        info = {"allowed": verdict.allowed,
                "codes": [d.code for d in verdict.diagnostics]}
        if verdict.allowed:
            return ToolGuardrailFunctionOutput.allow(output_info=info)
        return ToolGuardrailFunctionOutput.reject_content(verdict.feedback, output_info=info)

    def record_result(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        guard.record(data.context.tool_call_id, data.output)
        return ToolGuardrailFunctionOutput.allow()

    return (ToolInputGuardrail(check_call, name="plancheck"),
            ToolOutputGuardrail(record_result, name="plancheck-record"))


def guard_tools(tools: Iterable[Any], *, guard: Guard | None = None, profile: str = "guard",
                policies: Any = None) -> Guard:
    """Attach plancheck's guardrails to each function tool of ``tools`` (after any they
    have) and return the Guard: ``guard``, or one built from the tools' own schemas."""
    tools = list(tools)
    if guard is None:
        guard = Guard(pool_of(tools), profile=profile, policies=policies)
    check_call, record_result = guardrails(guard)
    for tool in tools:
        tool.tool_input_guardrails = [*(tool.tool_input_guardrails or []), check_call]
        tool.tool_output_guardrails = [*(tool.tool_output_guardrails or []), record_result]
    return guard
