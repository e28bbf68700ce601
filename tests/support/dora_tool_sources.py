"""Read DORA's tool servers (``dora/tools/*.py``) with :mod:`ast`: each MCP tool's name, its
parameters, and the keys of the JSON object its body returns.

The tool servers are never imported (they need torch, rasterio, an MCP runtime); their source
is parsed. A tool's *returned keys* are the constant keys of every object its successful
``return json.dumps(...)`` statements build, followed through local variables (``result =
{...}``, ``result["k"] = ...``, ``result.update({...})``), ``{**other}`` spreads, conditional
expressions and module helpers that build or extend the object. The error path
(``json.dumps(_stub_result(...))``) is not a result. A tool that returns a JSON list has the
one key ``results`` (DORA reads ``<results> from trajectory[N].obs`` of a list as the list).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

SERVERS = ("analysis", "calculate", "model", "perception", "poi", "vis")
_ERROR_HELPERS = frozenset({"_stub_result"})
LIST_RESULT = "results"


@dataclass(frozen=True)
class SourceParam:
    name: str
    annotation: str  # as written (``str``, ``OptListInt``, ``Optional[float]``, ...)
    required: bool


@dataclass(frozen=True)
class SourceTool:
    name: str
    server: str
    function: str
    params: tuple[SourceParam, ...]
    returned_keys: frozenset[str]
    unresolved: bool = False  # some successful return builds an object this reader cannot see
    docstring_returns: tuple[tuple[str, str], ...] = field(default=())


def read_tools(tools_dir: Path) -> dict[str, SourceTool]:
    found: dict[str, SourceTool] = {}
    for server in SERVERS:
        source = (tools_dir / f"{server}.py").read_text(encoding="utf-8")
        module = ast.parse(source)
        helpers = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef)}
        for node in module.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            name, description = _tool_decorator(node)
            if name is None:
                continue
            reader = _Returns(helpers)
            keys = reader.function_keys(node)
            found[name] = SourceTool(name, server, node.name, _params(node),
                                     frozenset(keys), reader.unresolved,
                                     _documented_returns(description))
    return found


def _tool_decorator(node: ast.FunctionDef) -> tuple[str | None, str]:
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) and \
                decorator.func.attr == "tool":
            name = next((k.value for k in decorator.keywords if k.arg == "name"), None)
            description = next((k.value for k in decorator.keywords if k.arg == "description"),
                               None)
            text = description.value if isinstance(description, ast.Constant) and \
                isinstance(description.value, str) else ""
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                return name.value, text
            return node.name, text
    return None, ""


def _params(node: ast.FunctionDef) -> tuple[SourceParam, ...]:
    args = node.args.args
    defaults = [None] * (len(args) - len(node.args.defaults)) + list(node.args.defaults)
    return tuple(
        SourceParam(a.arg, ast.unparse(a.annotation) if a.annotation else "", d is None)
        for a, d in zip(args, defaults, strict=True))


def _documented_returns(description: str) -> tuple[tuple[str, str], ...]:
    """``- key (type): ...`` lines of the description's Returns section (types only)."""
    found = []
    section = False
    for line in description.splitlines():
        stripped = line.strip()
        if stripped.lower().startswith("returns"):
            section = True
            continue
        if section and stripped.startswith("- "):
            head = stripped[2:].split(":", 1)[0]
            key, _, kind = head.partition("(")
            found.append((key.strip(), kind.rstrip(")").strip()))
        elif section and stripped and not stripped.startswith("-") and stripped.endswith(":"):
            break
    return tuple(found)


class _Returns:
    def __init__(self, helpers: dict[str, ast.FunctionDef]) -> None:
        self.helpers = helpers
        self.unresolved = False

    def function_keys(self, node: ast.FunctionDef, depth: int = 0) -> set[str]:
        """Keys of what ``node`` returns: a JSON text (``json.dumps``), an object (FastMCP
        serialises it), or whatever a module helper it hands over to returns."""
        keys: set[str] = set()
        for ret in _own_returns(node):
            value = ret.value
            if value is None or (isinstance(value, ast.Constant) and value.value is None):
                continue
            if isinstance(value, ast.Call) and _called(value) == "dumps" and value.args:
                value = value.args[0]
            if isinstance(value, ast.Call) and _called(value) in _ERROR_HELPERS:
                continue
            helper = self.helpers.get(_called(value) or "") if isinstance(value, ast.Call) \
                else None
            if helper is not None and depth < 4 and _returns_text(helper):
                keys |= self.function_keys(helper, depth + 1)
            else:
                keys |= self.keys(value, node, depth=0)
        return keys

    def keys(self, expr: ast.expr, scope: ast.FunctionDef, depth: int) -> set[str]:
        if depth > 6:
            self.unresolved = True
            return set()
        if isinstance(expr, ast.Dict):
            found: set[str] = set()
            for key, value in zip(expr.keys, expr.values, strict=True):
                if key is None:
                    found |= self.keys(value, scope, depth + 1)
                elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                    found.add(key.value)
                else:
                    self.unresolved = True
            return found
        if isinstance(expr, (ast.List, ast.ListComp, ast.Tuple)):
            return {LIST_RESULT}
        if isinstance(expr, ast.IfExp):
            return self.keys(expr.body, scope, depth + 1) | self.keys(expr.orelse, scope,
                                                                       depth + 1)
        if isinstance(expr, ast.Name):
            return self.variable_keys(expr.id, scope, depth)
        if isinstance(expr, ast.Call):
            called = _called(expr)
            if called == "dict":
                found = {k.arg for k in expr.keywords if k.arg}
                for arg in expr.args:
                    found |= self.keys(arg, scope, depth + 1)
                return found
            helper = self.helpers.get(called or "")
            if helper is not None:
                return self.helper_keys(helper, expr, scope, depth)
        self.unresolved = True
        return set()

    def variable_keys(self, name: str, scope: ast.FunctionDef, depth: int) -> set[str]:
        found: set[str] = set()
        assigned = False
        for node in ast.walk(scope):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name) and target.id == name and \
                            node.value is not None:
                        assigned = True
                        found |= self.keys(node.value, scope, depth + 1)
                    elif isinstance(target, ast.Subscript) and _is_name(target.value, name):
                        key = target.slice
                        if isinstance(key, ast.Constant) and isinstance(key.value, str):
                            found.add(key.value)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    _is_name(node.func.value, name):
                if node.func.attr == "update":
                    found |= {k.arg for k in node.keywords if k.arg}
                    for arg in node.args:
                        found |= self.keys(arg, scope, depth + 1)
                elif node.func.attr == "setdefault" and node.args and \
                        isinstance(node.args[0], ast.Constant):
                    found.add(str(node.args[0].value))
        if not assigned:
            parameter = next((a for a in scope.args.args if a.arg == name), None)
            if parameter is None:
                self.unresolved = True
        return found

    def helper_keys(self, helper: ast.FunctionDef, call: ast.Call, caller: ast.FunctionDef,
                    depth: int) -> set[str]:
        params = [a.arg for a in helper.args.args]
        found: set[str] = set()
        for ret in _own_returns(helper):
            value = ret.value
            if value is None:
                continue
            if isinstance(value, ast.Name) and value.id in params:
                index = params.index(value.id)
                if index < len(call.args):
                    found |= self.keys(call.args[index], caller, depth + 1)
                found |= self.variable_keys(value.id, helper, depth + 1)
            elif isinstance(value, ast.Call) and _called(value) in _ERROR_HELPERS:
                continue
            else:
                found |= self.keys(value, helper, depth + 1)
        return found


def _returns_text(helper: ast.FunctionDef) -> bool:
    """Whether a helper returns a tool's whole answer (a ``json.dumps`` text) rather than
    building a part of it."""
    return any(isinstance(r.value, ast.Call) and _called(r.value) == "dumps"
               for r in _own_returns(helper))


def _own_returns(node: ast.FunctionDef) -> list[ast.Return]:
    """The return statements of ``node`` itself, not of functions defined inside it."""
    found: list[ast.Return] = []
    stack: list[ast.AST] = list(node.body)
    while stack:
        current = stack.pop()
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                ast.ClassDef)):
            continue
        if isinstance(current, ast.Return):
            found.append(current)
        stack.extend(ast.iter_child_nodes(current))
    return found


def _called(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _is_name(expr: ast.expr, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name
