"""Tool pools written in other ecosystems' formats, sniffed from their JSON shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plancheck.compiler.diagnostics import Diagnostic
from plancheck.dsl.ast import Toolset


def foreign_toolset(data: Any, path: Path, *, typed_from: Toolset | None = None
                    ) -> tuple[Toolset, list[Diagnostic]]:
    """A toolset from a DisasterBench-style manifest ``{tool: {desc, input, output}}``."""
    from plancheck.compiler.diagnostics import make
    from plancheck.corpus.release import manifest_toolset
    from plancheck.corpus.toolsets import ToolsetError

    if isinstance(data, dict) and data and all(
        isinstance(v, dict) and "input" in v and "output" in v for v in data.values()
    ):
        return manifest_toolset(data, name=path.stem, file=str(path), typed_from=typed_from)
    raise ToolsetError([make("PC706", f"{path} is not a tool manifest this version reads",
                             data={"path": str(path)})])
