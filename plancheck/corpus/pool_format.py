"""What a tool-pool format is to plancheck: a name, words for messages, a test of whether a JSON
value is written in it, and a reader. :mod:`.pool_registry` lists the formats, one line each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plancheck.corpus.pool_builder import PoolBuilder
from plancheck.records import FrozenRecord

__all__ = ["PoolFormat"]


class PoolFormat(FrozenRecord):
    """One pool format.

    ``sniff`` says whether a (normalised) JSON value is written in it; the registry asks the
    formats in its order, so a format may assume the ones before it said no. ``read`` adds the
    value's tools, types and flows to a :class:`PoolBuilder`; a format without one (the
    DisasterBench manifest) is loaded by its own module, typed by another pool.
    ``outputs_are_fields``: a tool returns one JSON result whose fields its outputs name (MCP,
    OpenAI), unless the file carries plancheck's own toolset metadata."""

    __slots__ = _fields = ("name", "words", "sniff", "read", "outputs_are_fields")

    def __init__(self, name: str, words: str, sniff: Callable[[Any], bool],
                 read: Callable[[Any, PoolBuilder], None] | None = None, *,
                 outputs_are_fields: bool = False) -> None:
        self.name = name
        self.words = words  # "FILE holds <words>, not a plan"
        self.sniff = sniff
        self.read = read
        self.outputs_are_fields = outputs_are_fields
