"""The guard as a FastMCP middleware: every ``tools/call`` a FastMCP server (or a FastMCP
proxy, ``fastmcp.server.create_proxy``) runs is first put to a :class:`plancheck.Guard`, on
whatever transport it is served (stdio, Streamable HTTP, SSE) and whichever protocol version
the client negotiated.

    from fastmcp import FastMCP
    from plancheck.integrations.mcp.fastmcp_guard import GuardMiddleware

    server = FastMCP("notes")
    server.add_middleware(GuardMiddleware(policies="policies.wf"))

A refused call never reaches the tool: it is answered with a tool result whose ``isError`` is
true and whose text is the guard's feedback. An allowed one runs with the arguments the guard
judged, and its result is recorded (for references between calls and for policies). The pool
is the server's own ``list_tools`` (read before the first call, and again when a call names a
tool the guard does not know, keeping the trajectory), or the one passed as ``tools``.

Needs FastMCP: ``pip install 'plancheck[fastmcp]'``.
"""

from __future__ import annotations

import asyncio
from typing import Any

try:
    from fastmcp.server.middleware import Middleware, MiddlewareContext
    from fastmcp.tools.base import ToolResult
    from mcp.types import TextContent
except ModuleNotFoundError as error:  # pragma: no cover - said by the message
    raise ModuleNotFoundError(
        "plancheck's FastMCP middleware needs FastMCP: pip install 'plancheck[fastmcp]'",
        name=error.name) from None

from plancheck.integrations.mcp.pool import use_pool

__all__ = ["GuardMiddleware"]


class GuardMiddleware(Middleware):
    """See the module docstring. ``policies``, ``profile``, ``tools``, ``references`` and
    ``keep_arguments`` are :class:`plancheck.Guard`'s (``plancheck mcp-proxy`` keeps no
    arguments: no one reads its guard's trajectory)."""

    def __init__(self, policies: Any = None, *, profile: str = "guard", tools: Any = None,
                 references: str | list[str] | None = None,
                 keep_arguments: bool = True) -> None:
        self.policies = policies
        self.profile = profile
        self.tools = tools
        self.references = references
        self.keep_arguments = keep_arguments
        self.guard: Any = None
        self._lock = asyncio.Lock()  # calls are decided in the order they come

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        params = context.message
        call = {"name": params.name, "arguments": dict(params.arguments or {})}
        async with self._lock:
            try:
                guard = await self._guard(context, params.name)
            except Exception as error:
                return _refusal("plancheck cannot check this call, so it was not run: "
                                f"{str(error) or type(error).__name__}")
            verdict = guard.propose(call)
            if not verdict.allowed:
                return _refusal(verdict.feedback)
        if isinstance(verdict.arguments, dict):  # what was judged is what runs
            context = context.copy(message=params.model_copy(
                update={"arguments": verdict.arguments}))
        result = await call_next(context)
        guard.record(verdict.call_id, _as_json(result))
        return result

    async def _guard(self, context: MiddlewareContext[Any], name: str) -> Any:
        from plancheck.guard import Guard

        if self.guard is not None and (self.tools is not None or
                                       name in self.guard.toolset.tools):
            return self.guard
        tools = self.tools if self.tools is not None else await _server_tools(context)
        if self.guard is None:
            self.guard = Guard(tools, profile=self.profile, policies=self.policies,
                               provenance=self.policies is not None,
                               references=self.references,
                               keep_arguments=self.keep_arguments)
        else:  # the server's tools changed: the trajectory is kept
            use_pool(self.guard, tools)
        return self.guard


async def _server_tools(context: MiddlewareContext[Any]) -> dict[str, Any]:
    fastmcp_context = context.fastmcp_context
    if fastmcp_context is None:
        raise RuntimeError("FastMCP gave the middleware no server to read the tools of")
    listed = await fastmcp_context.fastmcp.list_tools(run_middleware=False)
    return {"tools": [tool.to_mcp_tool().model_dump(by_alias=True, exclude_none=True,
                                                    mode="json") for tool in listed]}


def _refusal(text: str) -> Any:
    return ToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _as_json(result: Any) -> dict[str, Any]:
    """A FastMCP ToolResult as the MCP result the guard records."""
    content = [block.model_dump(by_alias=True, exclude_none=True, mode="json")
               for block in getattr(result, "content", None) or []]
    value: dict[str, Any] = {"content": content,
                             "isError": bool(getattr(result, "is_error", False))}
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        value["structuredContent"] = structured
    return value
