"""What a JSON value is, said before anything lowers it.

:func:`sniff` answers ``"tools"`` (tool definitions, not calls: a bare OpenAI/MCP ``tools``
array or an object holding one), ``"plan"`` (DisasterBench plan steps, bare or wrapped),
``"calls:SHAPE"`` (tool calls, by the shape of the first) or ``None`` (something else). The
checker asks it first, so a pool checked by mistake is one ``PC117``, not a plan's errors.
"""

from __future__ import annotations

from typing import Any

from plancheck.formats.records import PLAN_WRAPPER_KEYS
from plancheck.formats.shapes import find_calls, is_definition
from plancheck.ir.schema import PLAN_STEP_KEYS

__all__ = ["is_tool_definitions", "sniff"]


def _defines_a_tool(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    function = item.get("function")  # OpenAI chat: {"type": "function", "function": {...}}
    return is_definition(item) or (isinstance(function, dict) and is_definition(function))


def is_tool_definitions(value: Any) -> bool:
    """A non-empty list of tool definitions, bare or under ``tools``, and nothing else."""
    if isinstance(value, dict) and isinstance(value.get("tools"), list):
        value = value["tools"]
    return isinstance(value, list) and bool(value) and all(_defines_a_tool(i) for i in value)


def _is_plan(value: Any) -> bool:
    if isinstance(value, dict):
        value = next((value[k] for k in PLAN_WRAPPER_KEYS if isinstance(value.get(k), list)),
                     value)
    return isinstance(value, list) and any(
        isinstance(item, dict) and PLAN_STEP_KEYS.intersection(item) for item in value)


def sniff(value: Any) -> str | None:
    """What ``value`` is (see the module docstring)."""
    if is_tool_definitions(value):
        return "tools"
    if _is_plan(value):
        return "plan"
    calls = find_calls(value)
    return f"calls:{calls[0].shape}" if calls else None
