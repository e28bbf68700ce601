"""Which build of plancheck is running: its hot path compiled by mypyc, or plain Python.

``setup.py`` compiles the modules every scored prediction runs through when it can, and
records the hash of each compiled module's source in ``_build.json`` beside them. Python
imports a compiled module in preference to its source, so after a source is edited, an
editable install runs the old code until it is built again: :func:`build_info` reports such
modules as stale (``plancheck --version`` says so, and the test suite fails on them).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

__all__ = ["BuildInfo", "build_info"]

PACKAGE = Path(__file__).resolve().parent
RECORD = "_build.json"  # {"compiler": ..., "sources": {module: sha256 of its source}}


@dataclass(frozen=True)
class BuildInfo:
    compiled: tuple[str, ...]  # modules Python imports from a compiled extension
    stale: tuple[str, ...]  # of those, the ones whose source changed since they were built
    compiler: str | None  # what compiled them (e.g. "mypyc 1.x"), when recorded

    @property
    def label(self) -> str:
        if not self.compiled:
            return "plain Python"
        label = f"hot path compiled by {self.compiler or 'mypyc'}, {len(self.compiled)} modules"
        if self.stale:
            label += (f"; STALE, built before their sources changed: {', '.join(self.stale)} "
                      "(install again)")
        return label


def build_info(package: Path = PACKAGE) -> BuildInfo:
    """The running build, from the files of the package directory ``package`` (it reads and
    hashes them: not for hot paths)."""
    record: dict[str, object] = {}
    try:
        loaded = json.loads((package / RECORD).read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            record = loaded
    except (OSError, ValueError):
        pass
    sources = record.get("sources")
    hashes = sources if isinstance(sources, dict) else {}
    compiled: list[str] = []
    stale: list[str] = []
    for source in sorted(package.rglob("*.py")):
        stem = source.with_suffix("")
        if not any(stem.with_name(stem.name + suffix).exists() for suffix in EXTENSION_SUFFIXES):
            continue
        module = ".".join(source.relative_to(package.parent).with_suffix("").parts)
        compiled.append(module)
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
        if hashes.get(module) != digest:
            stale.append(module)
    compiler = record.get("compiler")
    return BuildInfo(tuple(compiled), tuple(stale), compiler if isinstance(compiler, str) else None)
