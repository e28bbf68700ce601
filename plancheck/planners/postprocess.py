"""The reference planners' post-processing, reproduced (``--postprocess reference``).

Before scoring, the DisasterBench reference planners rewrite the model's plan: they rebuild
``dependence`` and ``dependence_content`` from the ``<GENERATED>-k-<key>`` references, fill
missing ``outputs`` from the tool manifest, fix a reference to a one-output step that names the
wrong key, and (DP, ReAct) ask the model once more to reformat a plan that is still not in the
canonical shape. The paper's published numbers include all of this; plancheck's default
(``--postprocess none``) scores what the model wrote.

Each method has its own variant, as in the reference:

* ``dp``: keep object steps that name a tool, coerce numeric strings, sort by ``step``,
  then fill and rebuild;
* ``cot``: fill and rebuild only;
* ``react``: keep object steps, sort by ``step`` and renumber them 0, 1, 2, ..., then fill
  and rebuild;
* ``tot`` and ``rap``: no post-processing.

The rewriting is applied to the answer as the evaluator reads it (its extraction and
normalisation), so it differs from the reference only for answers that use alias field names
(``agent_name``, ``step_index``, ...), which the reference rewrites before canonicalising them.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from plancheck.ir.references import format_reference

POSTPROCESS_CHOICES = ("none", "reference")
METHODS_WITH_POSTPROCESS = ("dp", "cot", "react")
METHODS_WITH_FORMAT_RETRY = ("dp", "react")

# A reference as planners write it, angle brackets around the key optional.
LENIENT_REFERENCE_RE = re.compile(r"^<GENERATED>-(\d+)-<?([^<>]+)>?$")
_UNSORTED = 10**9


def _step_rank(step: dict[str, Any]) -> int:
    value = step.get("step")
    return value if isinstance(value, int) and not isinstance(value, bool) else _UNSORTED


def _is_int_text(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lstrip("-").isdigit()


def _coerce_dp_fields(step: dict[str, Any]) -> None:
    if _is_int_text(step.get("step")):
        step["step"] = int(step["step"].strip())
    dependence = step.get("dependence")
    if isinstance(dependence, int | float) and not isinstance(dependence, bool) \
            and int(dependence) == dependence:
        step["dependence"] = [int(dependence)]
    elif isinstance(dependence, list) and len(dependence) == 1 and _is_int_text(dependence[0]):
        step["dependence"] = [int(dependence[0].strip())]
    if not isinstance(step.get("inputs"), dict):
        step["inputs"] = {}


def _fill_outputs(plan: list[Any], outputs_by_tool: dict[str, list[str]]) -> dict[Any, list[str]]:
    """Fill empty ``outputs`` from the manifest; return each step number's outputs."""
    produced: dict[Any, list[str]] = {}
    for step in plan:
        if not isinstance(step, dict) or not isinstance(step.get("step"), int):
            continue
        outputs = step.get("outputs")
        if not isinstance(outputs, list) or not outputs:
            tool = step.get("agent")
            known = outputs_by_tool.get(tool, []) if isinstance(tool, str) else []
            if known:
                step["outputs"] = list(known)
        outputs = step.get("outputs")
        produced[step["step"]] = outputs if isinstance(outputs, list) else []
    return produced


def _rebuild_dependence(plan: list[Any], produced: dict[Any, list[str]]) -> None:
    for step in plan:
        if not isinstance(step, dict):
            continue
        inputs = step.get("inputs")
        if not isinstance(inputs, dict):
            inputs = step["inputs"] = {}
        predecessor: int | None = None
        consumed: list[str] = []
        for name, value in list(inputs.items()):
            match = LENIENT_REFERENCE_RE.match(value.strip()) if isinstance(value, str) else None
            if match is None:
                continue
            source, key = int(match.group(1)), match.group(2).strip()
            outputs = produced.get(source, [])
            if outputs and key not in outputs and len(outputs) == 1:
                key = outputs[0]  # the producer has one output: that is the one meant
            inputs[name] = format_reference(source, key)
            if predecessor is None:
                predecessor = source
            if key not in consumed:
                consumed.append(key)
        if predecessor is None:
            step["dependence"] = [-1]
            step["dependence_content"] = None
        else:
            step["dependence"] = [predecessor]
            step["dependence_content"] = {str(predecessor): consumed}


def postprocess(method: str, answer: list[Any], outputs_by_tool: dict[str, list[str]]
                ) -> list[Any]:
    """The reference's rewriting of ``answer`` for ``method`` (a new list; input untouched)."""
    if method not in METHODS_WITH_POSTPROCESS:
        return copy.deepcopy(answer)
    plan = copy.deepcopy(answer)
    if method == "dp":
        plan = [s for s in plan if isinstance(s, dict)]
        plan = [s for s in plan if isinstance(s.get("agent"), str) and s["agent"].strip()]
        if not plan:
            return copy.deepcopy(answer)
        for step in plan:
            _coerce_dp_fields(step)
        plan.sort(key=_step_rank)
    elif method == "react":
        plan = [s for s in plan if isinstance(s, dict)]
        if not plan:
            return copy.deepcopy(answer)
        plan.sort(key=_step_rank)
        for index, step in enumerate(plan):
            step["step"] = index
    produced = _fill_outputs(plan, outputs_by_tool)
    _rebuild_dependence(plan, produced)
    return plan


def is_canonical(plan: Any) -> bool:
    """The reference's test of a plan it will not ask the model to reformat."""
    if not isinstance(plan, list) or not plan:
        return False
    for step in plan:
        if not isinstance(step, dict):
            return False
        if not isinstance(step.get("step"), int) or not isinstance(step.get("inputs"), dict):
            return False
        if not isinstance(step.get("agent"), str) or not step["agent"]:
            return False
        if not isinstance(step.get("outputs"), list):
            return False
        dependence = step.get("dependence")
        if not (isinstance(dependence, list) and len(dependence) == 1
                and isinstance(dependence[0], int)):
            return False
        content = step.get("dependence_content")
        if content is not None and not isinstance(content, dict):
            return False
    return True
