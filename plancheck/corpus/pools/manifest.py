"""DisasterBench tool manifests ``{tool: {desc, input: {...}, output: {...}}}``. Their keys are
untyped, so :func:`plancheck.corpus.release.manifest_toolset` loads them, typed by another
pool; this module only recognises them."""

from __future__ import annotations

from typing import Any

from plancheck.corpus.pool_format import PoolFormat

__all__ = ["FORMAT"]


def sniff(data: Any) -> bool:
    return isinstance(data, dict) and bool(data) and all(
        isinstance(v, dict) and "input" in v and "output" in v for v in data.values())


FORMAT = PoolFormat("disasterbench-manifest", "a DisasterBench tool manifest", sniff,
                    order=500)
