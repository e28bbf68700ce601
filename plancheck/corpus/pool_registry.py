"""The tool-pool formats plancheck reads, in the order they are tried (one line each: adding a
format is a module in :mod:`plancheck.corpus.pools`, a line here and a test case; see
``docs/adding-a-pool-format.md``)."""

from __future__ import annotations

from typing import Any, Final

from plancheck.corpus.pool_format import PoolFormat
from plancheck.corpus.pools import gemini, manifest, mcp, openai, taskbench

__all__ = ["POOL_FORMATS", "pool_format_of"]

POOL_FORMATS: Final[tuple[PoolFormat, ...]] = (
    mcp.FORMAT,  # before OpenAI: an MCP tool may also say `parameters`
    openai.FORMAT,
    gemini.FORMAT,
    taskbench.FORMAT,
    manifest.FORMAT,
)


def pool_format_of(data: Any) -> PoolFormat | None:
    """The format a normalised JSON value is written in (``None``: none plancheck reads)."""
    for pool_format in POOL_FORMATS:
        if pool_format.sniff(data):
            return pool_format
    return None
