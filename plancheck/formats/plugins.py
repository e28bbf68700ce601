"""Plugins: what other installed packages add to plancheck's registries, through entry points
(as flake8 and pytest load theirs), loaded on demand: the first time a registry of that kind is
asked for its whole contents, never at import.

======================== ================================================================
entry-point group        each entry point names
======================== ================================================================
plancheck.call_shapes    a :class:`plancheck.formats.shape.CallShape`
plancheck.pool_formats   a :class:`plancheck.corpus.pool_format.PoolFormat`
plancheck.rules          a :class:`plancheck.checks.rule.Rule` (an instance)
plancheck.output_formats a renderer ``(RenderContext) -> str``, by the format's name
======================== ================================================================

Finding none is the common case, and cheap: the installed distributions' ``entry_points.txt``
are looked at directly (a directory listing per ``sys.path`` entry); only when one declares a
``plancheck.`` group is :mod:`importlib.metadata` asked (tens of milliseconds to import).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import Any, Final

__all__ = ["GROUPS", "Choices", "PluginError", "builtin", "load"]

GROUPS: Final = ("plancheck.call_shapes", "plancheck.pool_formats", "plancheck.rules",
                 "plancheck.output_formats")


def builtin(modules: str, attribute: str, *, every: bool = True) -> list[Any]:
    """``attribute`` of each module matching ``modules`` (``"plancheck.some.package.*"``: the
    package's modules, in name order): how a registry finds its built-in entries, one module
    each, so that adding one is adding its module. ``every``: each module must have one (else
    the modules without are skipped). (``tests/test_layers.py`` reads the same pattern: those
    modules are reached.)"""
    package = importlib.import_module(modules.removesuffix(".*"))
    names = sorted(_module_names(package.__path__))
    found = [getattr(importlib.import_module(f"{package.__name__}.{name}"), attribute, None)
             for name in names]
    if every and None in found:
        raise AttributeError(f"{modules}: module {names[found.index(None)]} has no {attribute}")
    return [entry for entry in found if entry is not None]


def _module_names(paths: Iterable[str]) -> set[str]:
    """The names of the modules and packages in ``paths``, as ``pkgutil.iter_modules`` finds
    them (sources, bytecode and compiled extensions alike), without importing ``inspect``,
    which ``pkgutil`` does and a plain check has no other use for."""
    suffixes = sorted(importlib.machinery.all_suffixes(), key=len, reverse=True)
    names: set[str] = set()
    for path in paths:
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir():
                if entry.name.isidentifier() and any(
                        os.path.exists(os.path.join(entry.path, "__init__" + suffix))
                        for suffix in suffixes):
                    names.add(entry.name)
                continue
            stem = next((entry.name[:-len(suffix)] for suffix in suffixes
                         if entry.name.endswith(suffix)), "")
            if stem.isidentifier() and stem != "__init__":
                names.add(stem)
    return names


class Choices:
    """The names a command-line option takes: the built-in ones, and the plugins' asked for
    only when a name is not built in (or the list is shown), so that parsing the usual
    options loads no plugin. (What ``argparse`` needs of ``choices``: ``in`` and iteration.)"""

    __slots__ = ("_builtin", "_more")

    def __init__(self, names: Iterable[str], more: Callable[[], Iterable[str]]) -> None:
        self._builtin = tuple(names)
        self._more = more

    def __contains__(self, name: object) -> bool:
        return name in self._builtin or name in tuple(self._more())

    def __iter__(self) -> Iterator[str]:
        yield from self._builtin
        yield from (n for n in self._more() if n not in self._builtin)

    def __len__(self) -> int:
        return len(tuple(iter(self)))


class PluginError(Exception):
    """A plugin that cannot be loaded, or is not what its group holds."""


def load(group: str, kind: type) -> tuple[tuple[str, Any], ...]:
    """The (entry-point name, object) pairs of ``group``, each object an instance of ``kind``
    (loaded once per process). Raises :class:`PluginError` for a plugin that fails to load."""
    found = []
    for name, loaded in _loaded(group):
        if not isinstance(loaded, kind):
            raise PluginError(f"plugin `{name}` of {group} is a {type(loaded).__name__}, not a "
                              f"{kind.__name__}")
        found.append((name, loaded))
    return tuple(found)


@cache
def _loaded(group: str) -> tuple[tuple[str, Any], ...]:
    if group not in _declared():
        return ()
    from importlib.metadata import entry_points

    found = []
    for entry in entry_points(group=group):
        try:
            found.append((entry.name, entry.load()))
        except Exception as error:  # a plugin's own failure, named for its user
            raise PluginError(f"plugin `{entry.name}` of {group} ({entry.value}) failed to "
                              f"load: {type(error).__name__}: {error}") from error
    return tuple(found)


@cache
def _declared() -> frozenset[str]:
    """The plancheck groups some installed distribution declares entry points in."""
    groups: set[str] = set()
    for entry in dict.fromkeys(sys.path):
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(entry or ".", name, "entry_points.txt"),
                          encoding="utf-8") as file:
                    text = file.read()
            except OSError:
                continue
            if "[plancheck." in text:
                groups.update(g for g in GROUPS if f"[{g}]" in text)
    return frozenset(groups)
