"""What a tool-pool format is to plancheck: a name, words for messages, a test of whether a JSON
value is written in it, a reader, and for a format that is not JSON the file suffixes it owns,
its parser and where its pointers are in the source. :mod:`.pool_registry` finds the formats,
one module each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plancheck.corpus.pool_builder import PoolBuilder
from plancheck.diagnostics.span import Span
from plancheck.records import FrozenRecord

__all__ = ["Parser", "PoolFormat", "SpanResolver"]

# Where a JSON pointer into a parsed value is in the source text (a resolved span).
SpanResolver = Callable[[str], Span]
# A pool file's text (and its name, for spans) to the value its `read` takes and, for a source
# that is not that value's JSON, where each pointer into the value is written.
Parser = Callable[[str, str], "tuple[Any, SpanResolver | None]"]


class PoolFormat(FrozenRecord):
    """One pool format.

    ``sniff`` says whether a (normalised) JSON value is written in it; the registry asks the
    formats in its order, so a format may assume the ones before it said no. ``read`` adds the
    value's tools, types and flows to a :class:`PoolBuilder`; a format without one (the
    DisasterBench manifest) is loaded by its own module, typed by another pool.
    ``outputs_are_fields``: a tool returns one JSON result whose fields its outputs name (MCP,
    OpenAI), unless the file carries plancheck's own toolset metadata. ``order``: the place in
    the registry. A format written in a language of its own owns the file ``suffixes``
    (``.py``): a file with one is read by its ``parse`` and then its ``read``, not sniffed."""

    __slots__ = _fields = ("name", "words", "sniff", "read", "outputs_are_fields", "order",
                           "suffixes", "parse")

    def __init__(self, name: str, words: str, sniff: Callable[[Any], bool],
                 read: Callable[[Any, PoolBuilder], None] | None = None, *,
                 outputs_are_fields: bool = False, order: int = 500,
                 suffixes: tuple[str, ...] = (), parse: Parser | None = None) -> None:
        self.name = name
        self.words = words  # "FILE holds <words>, not a plan"
        self.sniff = sniff
        self.read = read
        self.outputs_are_fields = outputs_are_fields
        self.order = order
        self.suffixes = suffixes
        self.parse = parse
