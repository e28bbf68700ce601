"""Which build of plancheck is running: its hot path compiled by mypyc, or plain Python.

``setup.py`` compiles the modules every scored prediction runs through when it can, and
records the hash of each compiled module's source in ``_build.json`` beside them. Python
imports a compiled module in preference to its source, so after a source is edited, an
editable install runs the old code until it is built again: :func:`build_info` reports such
modules as stale (``plancheck --version`` says so, and the test suite fails on them).
"""

from __future__ import annotations

import os
from importlib.machinery import EXTENSION_SUFFIXES

__all__ = ["BuildInfo", "build_info"]

# Paths are strings here: pathlib (with the URL parsing it imports) would add a good part of
# `plancheck --version`'s time in an installation that has not imported it already.
PACKAGE = os.path.dirname(os.path.realpath(__file__))
RECORD = "_build.json"  # {"compiler": ..., "sources": {module: sha256 of its source}}


class BuildInfo:
    """An immutable value. A plain class, not a dataclass or a named tuple: ``plancheck
    --version`` reads it, and importing dataclasses (with inspect) or typing would be most of
    that command's time."""

    __slots__ = ("compiled", "compiler", "stale")

    compiled: tuple[str, ...]  # modules Python imports from a compiled extension
    stale: tuple[str, ...]  # of those, the ones whose source changed since they were built
    compiler: str | None  # what compiled them (e.g. "mypyc 1.x"), when recorded

    def __init__(self, compiled: tuple[str, ...], stale: tuple[str, ...],
                 compiler: str | None) -> None:
        object.__setattr__(self, "compiled", compiled)
        object.__setattr__(self, "stale", stale)
        object.__setattr__(self, "compiler", compiler)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"BuildInfo is immutable: cannot set {name}")

    def _fields(self) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
        return self.compiled, self.stale, self.compiler

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BuildInfo) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (f"BuildInfo(compiled={self.compiled!r}, stale={self.stale!r}, "
                f"compiler={self.compiler!r})")

    @property
    def label(self) -> str:
        if not self.compiled:
            return "plain Python"
        label = f"hot path compiled by {self.compiler or 'mypyc'}, {len(self.compiled)} modules"
        if self.stale:
            label += (f"; STALE, built before their sources changed: {', '.join(self.stale)} "
                      "(install again)")
        return label


def build_info(package: str | os.PathLike[str] = PACKAGE) -> BuildInfo:
    """The running build, from the files of the package directory ``package`` (it reads and
    hashes them: not for hot paths)."""
    root = os.path.normpath(os.fspath(package))
    compiled = _compiled_modules(root)
    if not compiled:  # plain Python: no record to read, nothing to hash
        return BuildInfo((), (), None)
    import hashlib
    import json

    record: dict[str, object] = {}
    try:
        with open(os.path.join(root, RECORD), encoding="utf-8") as handle:
            loaded = json.loads(handle.read())
        if isinstance(loaded, dict):
            record = loaded
    except (OSError, ValueError):
        pass
    sources = record.get("sources")
    hashes = sources if isinstance(sources, dict) else {}
    stale: list[str] = []
    for module, source in compiled:
        with open(source, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        if hashes.get(module) != digest:
            stale.append(module)
    compiler = record.get("compiler")
    return BuildInfo(tuple(module for module, _source in compiled), tuple(stale),
                     compiler if isinstance(compiler, str) else None)


def _compiled_modules(root: str) -> list[tuple[str, str]]:
    """(module, source) of each source below the package directory ``root`` that has a
    compiled extension beside it, in the order ``sorted(Path(root).rglob("*.py"))`` gives.
    One directory listing per directory (``os.walk``, which like ``rglob`` does not enter
    linked directories) rather than a ``stat`` per source and suffix: ``--version`` runs
    this."""
    found: list[tuple[tuple[str, ...], str]] = []
    for directory, _dirs, files in os.walk(root):
        relative = os.path.relpath(directory, root)
        parts = (os.path.basename(root),) + (() if relative == os.curdir
                                             else tuple(relative.split(os.sep)))
        names = set(files)
        for name in files:
            if not name.endswith(".py"):
                continue
            stem = name[:-3]
            if any(stem + suffix in names and os.path.exists(os.path.join(directory, stem + suffix))
                   for suffix in EXTENSION_SUFFIXES):
                found.append(((*parts, name), os.path.join(directory, name)))
    found.sort()
    return [(".".join(parts)[:-3], source) for parts, source in found]
