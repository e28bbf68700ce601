"""A tool pool written as a Python module: its tools are the module's functions, typed by
their annotations, as an MCP server built with the official SDK's ``FastMCP`` defines them
(``@mcp.tool()`` on each; without any such decorator, every public top-level function).

```python
@mcp.tool()
def get_forecast(city: str, days: int = 3) -> str:
    '''Get the weather forecast for a city.'''
```

is the tool ``get_forecast``, described by its docstring, taking a required string ``city``
and an optional integer ``days``, and returning ``{"result": <a string>}`` (FastMCP wraps a
result that is no object so). The module is read, never run: only annotations written with
the builtins and :mod:`typing` (``list[str]``, ``Optional[int]``, ``int | None``,
``Literal["a", "b"]``, ``dict[str, Any]``) are understood; any other annotation admits any
value. Diagnostics point at the function, parameter or annotation they are about.
"""

from __future__ import annotations

import ast
from typing import Any

from plancheck.corpus.pool_builder import PoolBuilder
from plancheck.corpus.pool_format import PoolFormat, SpanResolver
from plancheck.corpus.pools import mcp
from plancheck.diagnostics.span import Span

__all__ = ["FORMAT"]

_SCALARS = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
            "bytes": "string"}
_ARRAYS = {"list", "List", "tuple", "Tuple", "set", "Set", "frozenset", "Sequence", "Iterable"}
_OBJECTS = {"dict", "Dict", "Mapping", "MutableMapping"}


def parse(text: str, file: str) -> tuple[Any, SpanResolver]:
    """The module's tools as an MCP ``tools/list`` result, and where each pointer into it is
    written in the module."""
    try:
        module = ast.parse(text, filename=file)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise ValueError(f"a Python module cannot be parsed ({error})") from None
    functions = [node for node in module.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    decorated = [f for f in functions if any(_is_tool_decorator(d) for d in f.decorator_list)]
    tools: list[dict[str, Any]] = []
    places: dict[str, ast.AST] = {}
    for function in decorated or [f for f in functions if not f.name.startswith("_")]:
        pointer = f"/tools/{len(tools)}"
        tools.append(_tool(function, pointer, places))
    return {"tools": tools}, _resolver(file, places)


def _is_tool_decorator(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Attribute) and target.attr == "tool") or \
        (isinstance(target, ast.Name) and target.id == "tool")


def _tool(function: ast.FunctionDef | ast.AsyncFunctionDef, pointer: str,
          places: dict[str, ast.AST]) -> dict[str, Any]:
    places[pointer] = function
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    named = [(a, d) for a, d in zip(positional, defaults, strict=True)
             if a.arg not in ("self", "cls", "ctx", "context")]
    named += list(zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True))
    properties, required = {}, []
    for argument, default in named:
        properties[argument.arg] = _schema(argument.annotation)
        places[f"{pointer}/inputSchema/properties/{argument.arg}"] = argument
        if default is None:
            required.append(argument.arg)
    tool: dict[str, Any] = {"name": function.name,
                            "inputSchema": {"type": "object", "properties": properties,
                                            "required": required}}
    doc = ast.get_docstring(function)
    if doc:
        tool["description"] = doc
    if function.returns is not None:
        places[f"{pointer}/outputSchema"] = function.returns
        returned = _schema(function.returns)
        if returned.get("type") != "null":
            tool["outputSchema"] = returned if returned.get("type") == "object" and \
                "properties" in returned else {"type": "object",
                                               "properties": {"result": returned},
                                               "required": ["result"]}
    return tool


def _schema(annotation: ast.expr | None) -> dict[str, Any]:
    """The JSON Schema of an annotation (``{}``, any value, when it is not understood)."""
    if annotation is None:
        return {}
    if isinstance(annotation, ast.Constant):
        if annotation.value is None:
            return {"type": "null"}
        if isinstance(annotation.value, str):  # a forward reference, written as text
            try:
                return _schema(ast.parse(annotation.value, mode="eval").body)
            except SyntaxError:
                return {}
        return {}
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _union([annotation.left, annotation.right])
    name = _name(annotation.value if isinstance(annotation, ast.Subscript) else annotation)
    arguments = _arguments(annotation) if isinstance(annotation, ast.Subscript) else []
    if name in _SCALARS and not arguments:
        return {"type": _SCALARS[name]}
    if name in _ARRAYS:
        items = _schema(arguments[0]) if arguments and name not in ("tuple", "Tuple") else {}
        return {"type": "array", "items": items} if items else {"type": "array"}
    if name in _OBJECTS:
        return {"type": "object"}
    if name == "Optional" and arguments:
        return _schema(arguments[0])
    if name == "Union":
        return _union(arguments)
    if name == "Literal" and arguments:
        values = [a.value for a in arguments if isinstance(a, ast.Constant)]
        kinds = {_SCALARS.get(type(v).__name__) for v in values}
        kind = kinds.pop() if len(kinds) == 1 else None
        return {"enum": values, **({"type": kind} if kind else {})}
    if name == "Annotated" and arguments:
        return _schema(arguments[0])
    return {}


def _union(members: list[ast.expr]) -> dict[str, Any]:
    schemas = [s for s in map(_schema, members) if s.get("type") != "null"]
    if len(schemas) == 1:
        return schemas[0]  # `X | None`: an optional X
    return {"anyOf": schemas} if schemas and all(schemas) else {}


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):  # typing.List, t.Optional
        return node.attr
    return ""


def _arguments(node: ast.Subscript) -> list[ast.expr]:
    inner = node.slice
    return list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]


def _resolver(file: str, places: dict[str, ast.AST]) -> SpanResolver:
    def span(pointer: str) -> Span:
        at = pointer
        while at and at not in places:  # below a known place: that place
            at = at.rsplit("/", 1)[0]
        node = places.get(at)
        if node is None:
            return Span(file, 1, 1, 1, 2, pointer)
        line, column = getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1
        end_line = getattr(node, "end_lineno", None) or line
        end_column = (getattr(node, "end_col_offset", None) or column) + 1
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            end_line, end_column = line, column + len("def ") + len(node.name)
        return Span(file, line, column, end_line, end_column, pointer)

    return span


def read(data: Any, builder: PoolBuilder) -> None:
    mcp.read(data, builder)


FORMAT = PoolFormat("python-module", "a Python module's tool functions", lambda _: False, read,
                    outputs_are_fields=True, order=600, suffixes=(".py",), parse=parse)
