"""Print plan IR as workflow DSL or as canonical JSON, and toolsets as DSL.

Canonical JSON is the H.3 schema with the release's key order (agent, step, dependence,
dependence_content, inputs, outputs). A plan that came from JSON keeps the dependencies it
declares; a DSL plan gets them derived from its references (the DSL does not write them).
"""

from __future__ import annotations

import json
import re
from typing import Any

from plancheck.dsl.policy_ast import PolicyDecl
from plancheck.ir.nodes import (
    Literal,
    MalformedReference,
    Plan,
    Reference,
    Step,
    Toolset,
    TypeDecl,
)
from plancheck.ir.references import format_reference

# Used with fullmatch: "^...$" with match took "A\n" for a name ("$" allows a final newline)
# and printed it bare, so the newline was lost on reading back.
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+(?:-[A-Za-z0-9_]++)*+")
KEYWORDS = frozenset({
    "toolset", "type", "tool", "flow", "family", "max_predecessors", "alias", "formats", "in",
    "out", "category", "doc", "plan", "uses", "step", "any", "true", "false", "null",
})
_LINE_LIMIT = 100


def is_identifier(text: str) -> bool:
    return bool(_IDENTIFIER.fullmatch(text)) and text not in KEYWORDS and not (
        text.startswith("step") and text[4:5].isdigit()
    )


def _name(text: str) -> str:
    return text if is_identifier(text) else json.dumps(text, ensure_ascii=False)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------- JSON


def reference_text(value: Reference | MalformedReference) -> str:
    if isinstance(value, MalformedReference):
        return value.raw
    if value.raw.startswith("<GENERATED>"):
        return value.raw
    return format_reference(value.step, value.key)


def step_dependence(step: Step) -> tuple[list[int], dict[str, list[str]] | None]:
    """The step's dependence fields: as declared, or derived from its references."""
    if step.declares_dependence and step.dependence is not None:
        content = None if step.dependence_content is None else {
            str(k): list(v) for k, v in step.dependence_content.items()
        }
        return list(step.dependence), content
    from plancheck.ir.references import derived_content

    content = derived_content(step)
    steps = sorted({int(k) for k in content}) if content else []
    return steps or [-1], content


def plan_to_json(plan: Plan, toolset: Toolset | None = None) -> list[dict[str, Any]]:
    """The plan as a JSON value in the canonical H.3 layout."""
    steps = []
    for step in plan.steps:
        dependence, content = step_dependence(step)
        inputs: dict[str, Any] = {}
        for argument in step.args:
            value = argument.value
            inputs[argument.name] = value.value if isinstance(value, Literal) else \
                reference_text(value)
        outputs = step.outputs
        if outputs is None:
            tool = toolset.tool(step.tool) if toolset and step.tool else None
            outputs = tool.output_names if tool else ()
        steps.append({
            "agent": step.tool,
            "step": step.index if step.index is not None else step.position,
            "dependence": dependence,
            "dependence_content": content,
            "inputs": inputs,
            "outputs": list(outputs),
        })
    return steps


def dump_json(value: Any, indent: int = 0) -> str:
    """Indented JSON that keeps short arrays and objects of scalars on one line."""
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, (list, dict)) or (len(flat) <= 72 and not _has_nested(value)):
        return flat
    pad, inner = "  " * indent, "  " * (indent + 1)
    if isinstance(value, list):
        items = [inner + dump_json(v, indent + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    members = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {dump_json(v, indent + 1)}"
               for k, v in value.items()]
    return "{\n" + ",\n".join(members) + "\n" + pad + "}"


def _has_nested(value: list[Any] | dict[str, Any]) -> bool:
    items = value.values() if isinstance(value, dict) else value
    return any(isinstance(v, dict) or (isinstance(v, list) and v) for v in items)


# --------------------------------------------------------------------------- DSL


def _value_text(argument_value: Literal | Reference | MalformedReference) -> str:
    if isinstance(argument_value, Reference):
        key = argument_value.key
        if _IDENTIFIER.fullmatch(key):
            return f"step{argument_value.step}.{key}"
        return f"step{argument_value.step}[{_json(key)}]"
    if isinstance(argument_value, MalformedReference):
        return _json(argument_value.raw)
    return _json(argument_value.value)


def step_to_dsl(step: Step, indent: str = "  ") -> str:
    tool = _name(step.tool or "")
    number = step.index if step.index is not None else step.position
    args = [f"{_name(a.name)} = {_value_text(a.value)}" for a in step.args]
    outputs = ""
    if step.outputs is not None:
        outputs = " -> [" + ", ".join(_name(k) for k in step.outputs) + "]"
    head = f"{indent}step {number} = {tool}("
    one_line = head + ", ".join(args) + ")" + outputs
    if len(one_line) <= _LINE_LIMIT or not args:
        return one_line
    inner = indent * 2
    body = "".join(f"{inner}{arg},\n" for arg in args)
    return f"{head}\n{body}{indent}){outputs}"


def plan_to_dsl(plan: Plan, *, name: str | None = None, toolset: str | None = None) -> str:
    title = name if name is not None else plan.name
    uses = toolset if toolset is not None else plan.toolset
    header = "plan"
    if title:
        header += " " + _json(title)
    if uses:
        header += f" uses {_name(uses)}"
    body = "\n".join(step_to_dsl(step) for step in plan.steps)
    return f"{header} {{\n{body}\n}}\n" if body else f"{header} {{\n}}\n"


def _doc(text: str) -> str:
    return f" {_json(text)}" if text else ""


def _type_to_dsl(decl: TypeDecl) -> str:
    line = f"  type {_name(decl.name)}"
    if decl.parents:
        line += " <: " + ", ".join(_name(p) for p in decl.parents)
    if decl.converts_to:
        line += " ~> " + ", ".join(_name(t) for t in decl.converts_to)
    if decl.formats:
        line += " formats " + ", ".join(_json(f) for f in decl.formats)
    return line + _doc(decl.doc)


def toolset_to_dsl(toolset: Toolset) -> str:
    """The toolset as DSL; a name that is not an identifier is written as a JSON string."""
    lines = [f"toolset {_name(toolset.name)}{_doc(toolset.description)} {{"]
    if toolset.max_predecessors is not None:
        lines.append(f"  max_predecessors {toolset.max_predecessors}")
    lines.extend(f"  family {_name(f.name)}{_doc(f.doc)}" for f in toolset.families.values())
    lines.extend(_type_to_dsl(decl) for decl in toolset.types.values())
    for tool in toolset.tools.values():
        lines.append(f"  tool {_name(tool.name)} {{")
        if tool.category:
            lines.append(f"    category {_json(tool.category)}")
        if tool.family:
            lines.append(f"    family {_name(tool.family)}")
        if tool.description:
            lines.append(f"    doc {_json(tool.description)}")
        for param in tool.inputs:
            optional = "" if param.required else "?"
            lines.append(f"    in {_name(param.name)}{optional}: {_name(param.type)}"
                         f"{_doc(param.doc)}")
        for param in tool.outputs:
            kind = "any " if param.polymorphic else ""
            lines.append(f"    out {_name(param.name)}: {kind}{_name(param.type)}"
                         f"{_doc(param.doc)}")
        lines.append("  }")
    lines.extend(f"  alias {_name(alias)} = {_name(target)}"
                 for alias, target in toolset.aliases.items())
    for source in sorted({s for s, _ in toolset.flows}):
        targets = sorted(t for s, t in toolset.flows if s == source)
        lines.append(f"  flow {_name(source)} -> " + ", ".join(_name(t) for t in targets))
    lines.append("}")
    return "\n".join(lines) + "\n"


def policy_to_dsl(policy: PolicyDecl) -> str:
    """A policy as DSL source: each rule on a line of its own, as it is written."""
    header = f"policy {_name(policy.name)}{_doc(policy.doc)} {{"
    lines = [header, *(f"  {rule}" for rule in policy.rules), "}"]
    return "\n".join(lines) + "\n"
