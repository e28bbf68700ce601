"""Hypothesis strategies: well-formed, well-typed plans over the built-in tool pool."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st

from plancheck.corpus.builtin import builtin_toolset
from plancheck.ir.lattice import Compat
from plancheck.ir.nodes import Toolset

TOOLSET: Toolset = builtin_toolset()
TOOL_NAMES = sorted(TOOLSET.tools)

path_chars = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=12)


@st.composite
def literal_for(draw: st.DrawFn, type_name: str) -> str:
    """A path whose extension is one of the formats the type is stored in."""
    formats = sorted(TOOLSET.lattice.formats.get(type_name, frozenset())) or [".dat"]
    directory = draw(st.sampled_from(["data", "/data/inputs", "inputs/raw", "/tmp"]))
    return f"{directory}/{draw(path_chars)}{draw(st.sampled_from(formats))}"


@st.composite
def well_typed_plan(draw: st.DrawFn, max_steps: int = 6) -> list[dict[str, Any]]:
    """A plan that is well formed and well typed (references only to compatible outputs,
    all from at most one earlier step, as the pool allows)."""
    lattice = TOOLSET.lattice
    count = draw(st.integers(min_value=1, max_value=max_steps))
    plan: list[dict[str, Any]] = []
    for index in range(count):
        tool = TOOLSET.tools[draw(st.sampled_from(TOOL_NAMES))]
        predecessor = None
        if index and draw(st.booleans()):
            predecessor = draw(st.integers(min_value=0, max_value=index - 1))
        producer = TOOLSET.tools[plan[predecessor]["agent"]] if predecessor is not None else None
        inputs: dict[str, Any] = {}
        consumed: list[str] = []
        for param in tool.inputs:
            if not param.required and draw(st.booleans()):
                continue
            fitting = [o for o in producer.outputs
                       if lattice.compat(o, param.type) is Compat.OK] if producer else []
            if fitting and draw(st.booleans()):
                output = draw(st.sampled_from(fitting))
                inputs[param.name] = f"<GENERATED>-{predecessor}-<{output.name}>"
                if output.name not in consumed:
                    consumed.append(output.name)
            else:
                inputs[param.name] = draw(literal_for(param.type))
        plan.append({
            "agent": tool.name,
            "step": index,
            "dependence": [predecessor] if consumed else [-1],
            "dependence_content": {str(predecessor): consumed} if consumed else None,
            "inputs": inputs,
            "outputs": list(tool.output_names),
        })
    return plan


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)


# --------------------------------------------------------------------------- reorderings


def referenced_steps(step: dict[str, Any]) -> set[int]:
    """The step numbers a JSON step's inputs reference."""
    found = set()
    for value in step["inputs"].values():
        match = REFERENCE.match(value) if isinstance(value, str) else None
        if match:
            found.add(int(match.group(1)))
    return found


REFERENCE = re.compile(r"^<GENERATED>-(\d+)-<(.+)>$")


@st.composite
def renumbered(draw: st.DrawFn, plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same plan listed in another order that respects its references (independent steps
    and branches move freely), renumbered 0..n-1 with references and dependence fields
    rewritten to match."""
    needs = {step["step"]: referenced_steps(step) for step in plan}
    by_number = {step["step"]: step for step in plan}
    order: list[int] = []
    while len(order) < len(plan):
        ready = [n for n in needs if n not in order and needs[n] <= set(order)]
        order.append(draw(st.sampled_from(ready)))
    number = {old: new for new, old in enumerate(order)}

    def rewrite(value: Any) -> Any:
        match = REFERENCE.match(value) if isinstance(value, str) else None
        return f"<GENERATED>-{number[int(match.group(1))]}-<{match.group(2)}>" if match else value

    result = []
    for old in order:
        step = by_number[old]
        content = step["dependence_content"]
        result.append({
            "agent": step["agent"],
            "step": number[old],
            "dependence": sorted(number[d] for d in step["dependence"] if d != -1) or [-1],
            "dependence_content": None if content is None else {
                str(number[int(k)]): list(v) for k, v in content.items()},
            "inputs": {k: rewrite(v) for k, v in step["inputs"].items()},
            "outputs": list(step["outputs"]),
        })
    return result


@st.composite
def linked_plan(draw: st.DrawFn, max_steps: int = 6) -> list[dict[str, Any]]:
    """Like :func:`well_typed_plan`, but every step after the first consumes an earlier
    step's result when some tool can (so plans have the references properties are about)."""
    lattice = TOOLSET.lattice
    count = draw(st.integers(min_value=2, max_value=max_steps))
    plan: list[dict[str, Any]] = []
    for index in range(count):
        links = [
            (name, step["step"])
            for name in TOOL_NAMES
            for step in plan
            if any(lattice.compat(o, p.type) is Compat.OK
                   for o in TOOLSET.tools[step["agent"]].outputs
                   for p in TOOLSET.tools[name].inputs)
        ]
        predecessor = None
        if links:
            name, predecessor = draw(st.sampled_from(links))
        else:
            name = draw(st.sampled_from(TOOL_NAMES))
        tool = TOOLSET.tools[name]
        producer = TOOLSET.tools[plan[predecessor]["agent"]] if predecessor is not None else None
        inputs: dict[str, Any] = {}
        consumed: list[str] = []
        for param in tool.inputs:
            fitting = [o for o in producer.outputs
                       if lattice.compat(o, param.type) is Compat.OK] if producer else []
            if fitting and (not consumed or draw(st.booleans())):
                output = draw(st.sampled_from(fitting))
                inputs[param.name] = f"<GENERATED>-{predecessor}-<{output.name}>"
                if output.name not in consumed:
                    consumed.append(output.name)
            elif param.required or draw(st.booleans()):
                inputs[param.name] = draw(literal_for(param.type))
        plan.append({
            "agent": tool.name,
            "step": index,
            "dependence": [predecessor] if consumed else [-1],
            "dependence_content": {str(predecessor): consumed} if consumed else None,
            "inputs": inputs,
            "outputs": list(tool.output_names),
        })
    return plan
