"""Hypothesis strategies: well-formed, well-typed plans over the built-in tool pool."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from plancheck.corpus.builtin import builtin_toolset
from plancheck.dsl.ast import Toolset
from plancheck.typecheck.lattice import Compat

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
