"""The tool-pool formats plancheck reads, in the order they are tried: the built-in ones, one
module each in :mod:`plancheck.corpus.pools` (found there, ordered by their ``order``), then
on demand the plugins' (entry-point group ``plancheck.pool_formats``). Adding a format is a
module and a test file; see ``docs/adding-a-pool-format.md``."""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from plancheck.corpus.pool_format import PoolFormat
from plancheck.formats.plugins import builtin, load

__all__ = ["POOL_FORMATS", "pool_format_for_suffix", "pool_format_of", "pool_formats"]


def _ordered(formats: list[PoolFormat]) -> tuple[PoolFormat, ...]:
    return tuple(sorted(formats, key=lambda f: (f.order, f.name)))


POOL_FORMATS: Final[tuple[PoolFormat, ...]] = _ordered(
    builtin("plancheck.corpus.pools.*", "FORMAT"))


@cache
def pool_formats() -> tuple[PoolFormat, ...]:
    """Every format, the plugins' with the built-ins, in the order they are tried."""
    plugins = [f for _, f in load("plancheck.pool_formats", PoolFormat)]
    return _ordered([*POOL_FORMATS, *plugins]) if plugins else POOL_FORMATS


def pool_format_of(data: Any) -> PoolFormat | None:
    """The format a normalised JSON value is written in (``None``: none plancheck reads)."""
    for pool_format in pool_formats():
        if pool_format.sniff(data):
            return pool_format
    return None


def pool_format_for_suffix(suffix: str) -> PoolFormat | None:
    """The format that owns files with ``suffix`` (``".py"``), if one does."""
    suffix = suffix.lower()
    return next((f for f in pool_formats() if suffix in f.suffixes), None)
