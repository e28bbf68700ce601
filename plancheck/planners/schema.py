"""Compile a toolset to a JSON Schema for structured output (``plancheck plan --schema``).

The schema describes one object ``{"reasoning": "...", "structured_plan": [step, ...]}`` (an
object, because providers require one at the top level; both the DisasterBench evaluator and
plancheck unwrap ``structured_plan``). Each step is one of the toolset's tools: the ``agent`` is
that tool's name (so the union of steps is an enum of tool names), ``inputs`` is an object with
exactly that tool's input keys, each a user-supplied value or a reference
``<GENERATED>-k-<key>`` to an output key some tool produces, and ``outputs`` lists that tool's
output keys. What a schema cannot say (which earlier step, whether the types fit) is left to the
checker.
"""

from __future__ import annotations

import re
from typing import Any

from plancheck.ir.nodes import Toolset

SCHEMA_NAME = "structured_plan"


def _reference_pattern(output_keys: list[str]) -> str:
    """A user value (not starting with ``<``) or a reference to one of ``output_keys``."""
    keys = "|".join(re.escape(k) for k in output_keys)
    return f"^(<GENERATED>-[0-9]+-<({keys})>|[^<].*)$"


def step_schema(toolset: Toolset, tool_name: str, output_keys: list[str]) -> dict[str, Any]:
    tool = toolset.tools[tool_name]
    value = {"type": "string", "pattern": _reference_pattern(output_keys)}
    return {
        "type": "object",
        "properties": {
            "agent": {"type": "string", "enum": [tool.name]},
            "step": {"type": "integer", "minimum": 0},
            "dependence": {
                "type": "array",
                "items": {"type": "integer", "minimum": -1},
                "minItems": 1,
                "maxItems": max(1, toolset.max_predecessors or 1),
            },
            "dependence_content": {
                "anyOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "additionalProperties": {
                            "type": "array",
                            "items": {"type": "string", "enum": output_keys},
                        },
                    },
                ]
            },
            "inputs": {
                "type": "object",
                "properties": {p.name: dict(value) for p in tool.inputs},
                "required": [p.name for p in tool.inputs if p.required],
                "additionalProperties": False,
            },
            "outputs": {
                "type": "array",
                "items": {"type": "string", "enum": list(tool.output_names)},
            },
        },
        "required": ["agent", "step", "dependence", "dependence_content", "inputs", "outputs"],
        "additionalProperties": False,
    }


def plan_schema(toolset: Toolset) -> dict[str, Any]:
    """The JSON Schema of an answer: ``{"reasoning"?: str, "structured_plan": [step, ...]}``."""
    output_keys = sorted({key for tool in toolset.tools.values() for key in tool.output_names})
    steps = [step_schema(toolset, name, output_keys) for name in sorted(toolset.tools)]
    return {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "structured_plan": {"type": "array", "minItems": 1, "items": {"anyOf": steps}},
        },
        "required": ["structured_plan"],
        "additionalProperties": False,
    }


def response_format(toolset: Toolset) -> dict[str, Any]:
    """The ``response_format`` for chat completions (non-strict: ``dependence_content`` has
    keys that depend on the plan, which strict mode cannot express)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "schema": plan_schema(toolset), "strict": False},
    }
