"""A guard's pool, changed under it: what an MCP server's ``notifications/tools/list_changed``
asks for."""

from __future__ import annotations

from typing import Any

__all__ = ["use_pool"]


def use_pool(guard: Any, tools: Any) -> None:
    """The guard checks calls against ``tools`` from now on; what it accepted before (the
    trajectory, the policies' state, provenance) is kept: a policy cannot be escaped by
    making the server announce new tools."""
    from plancheck.corpus.pool_values import toolset_from

    guard.toolset = toolset_from(tools)
