"""Problems of a tool pool's own declarations that are not about types: flows that name a
tool the pool lacks (PC704) and tools that name an undeclared workflow family (PC707). One
implementation for every pool format: :meth:`~plancheck.ir.nodes.Toolset.problems` runs it
for DSL toolsets and imported pools alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plancheck.diagnostics.model import Diagnostic, make

if TYPE_CHECKING:
    from plancheck.ir.nodes import Toolset


def declaration_problems(toolset: Toolset) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for flow in toolset.flow_decls:
        missing = [n for n in (flow.source, flow.target) if n not in toolset.tools]
        if missing:
            found.append(make(
                "PC704", f"the flow {flow.source} -> {flow.target} names "
                + ", ".join(f"`{n}`" for n in missing) + ", which the pool lacks",
                primary=flow.span, label="no such tool",
                data={"flow": [flow.source, flow.target]}))
    if toolset.families:
        for tool in toolset.tools.values():
            if tool.family and tool.family not in toolset.families:
                found.append(make(
                    "PC707", f"tool `{tool.name}` names the undeclared family `{tool.family}`",
                    primary=tool.span, data={"tool": tool.name, "family": tool.family}))
    return found
