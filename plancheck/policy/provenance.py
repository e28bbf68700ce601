"""Provenance: where a value in a call's arguments came from, when the model did not say.

Chat APIs and MCP pass values, not references: a model that sends the text it fetched writes
the text itself. After each result is recorded, a later argument is an *inferred flow* from
that result when

* it equals a string or a number the result holds (``exact``; booleans and null are too
  common to be evidence); or
* for strings of 8 characters or more, one holds the other: the argument is a part of a string
  of the result, or a string of the result (8 characters or more) is a part of the argument
  (``contained``).

Both lookups go through indexes built when a result is recorded (every value; every
8-character window of every string), so the cost of a call's inference depends on its
arguments, not on how many results came before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from plancheck.dsl.policy_ast import PathKey
from plancheck.policy.semantics import CONTAINED, EXACT, FlowIn, PolicyCall
from plancheck.records import replace

GRAM = 8  # the shortest string whose containment is evidence of a copy
MAX_SOURCES = 4  # sources kept per value: enough to name them, bounded in memory


def leaves(value: Any, path: tuple[PathKey, ...] = (), depth: int = 0
           ) -> list[tuple[tuple[PathKey, ...], Any]]:
    """Every scalar inside a JSON value with its path. A string that holds JSON (the text of an
    MCP result is often a JSON document) is read into as well."""
    found: list[tuple[tuple[PathKey, ...], Any]] = []
    _collect(value, path, depth, found)
    return found


def _collect(value: Any, path: tuple[PathKey, ...], depth: int,
             found: list[tuple[tuple[PathKey, ...], Any]]) -> None:
    # Into a list, not a chain of generators: a call's arguments are read on every verdict.
    if depth > 64:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if depth < 64 and _plain_scalar(item):  # most members: no call made for them
                found.append(((*path, str(key)), item))
            else:
                _collect(item, (*path, str(key)), depth + 1, found)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            if depth < 64 and _plain_scalar(item):
                found.append(((*path, position), item))
            else:
                _collect(item, (*path, position), depth + 1, found)
    else:
        found.append((path, value))
        if isinstance(value, str) and value[:1] in ("{", "[") and len(value) > 1:
            try:
                inner = json.loads(value)
            except (ValueError, RecursionError):
                return
            _collect(inner, path, depth + 1, found)


def _plain_scalar(value: Any) -> bool:
    """A scalar that is no JSON text to read into."""
    kind = type(value)
    if kind is str:
        return value[:1] not in ("{", "[") or len(value) < 2
    return kind is int or kind is float or kind is bool or value is None


def _key(value: Any) -> tuple[str, Any] | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return ("n", float(value))
    if isinstance(value, str) and value:
        return ("s", value)
    return None


class Provenance:
    """The values of the results recorded so far, indexed for the two lookups."""

    def __init__(self) -> None:
        self._exact: dict[tuple[str, Any], list[tuple[int, tuple[PathKey, ...]]]] = {}
        self._texts: list[tuple[int, tuple[PathKey, ...], str]] = []
        self._windows: dict[str, list[int]] = {}  # 8-character window -> texts holding it
        self._starts: dict[str, list[int]] = {}  # first 8 characters -> texts starting so

    @property
    def empty(self) -> bool:
        """Whether no value has been indexed (no result recorded, or none holding a value)."""
        return not self._exact

    def record(self, index: int, result: Any) -> None:
        """Index the result of call ``index``."""
        for path, value in leaves(result):
            key = _key(value)
            if key is None:
                continue
            sources = self._exact.setdefault(key, [])
            if len(sources) < MAX_SOURCES:
                sources.append((index, path))
            if isinstance(value, str) and len(value) >= GRAM:
                text_id = len(self._texts)
                self._texts.append((index, path, value))
                self._starts.setdefault(value[:GRAM], []).append(text_id)
                for window in {value[i:i + GRAM] for i in range(len(value) - GRAM + 1)}:
                    self._windows.setdefault(window, []).append(text_id)

    def flows_into(self, arguments: Mapping[str, Any]) -> list[FlowIn]:
        """The inferred flows into a call's arguments, one per (argument, source call): an
        exact copy before a contained one, and of those the deepest path in the result (the
        text inside a JSON document a result holds, rather than the document)."""
        found: dict[tuple[tuple[PathKey, ...], int], FlowIn] = {}

        def add(flow: FlowIn) -> None:
            known = found.get((flow.argument, flow.source))
            if known is None or (known.kind == flow.kind
                                 and len(flow.source_path) > len(known.source_path)):
                found[(flow.argument, flow.source)] = flow

        for path, value in leaves(arguments):
            key = _key(value)
            if key is None:
                continue
            for index, source_path in self._exact.get(key, ()):
                add(FlowIn(path, index, source_path, EXACT))
            if isinstance(value, str) and len(value) >= GRAM:
                for text_id in self._containing(value):
                    index, source_path, _ = self._texts[text_id]
                    add(FlowIn(path, index, source_path, CONTAINED))
        return list(found.values())

    def _containing(self, value: str) -> list[int]:
        """The recorded texts that hold ``value`` or that ``value`` holds."""
        hits: list[int] = []
        # Every text holding the value holds each of its windows: look up the rarest of three.
        ends = (0, (len(value) - GRAM) // 2, len(value) - GRAM)
        candidates = min((self._windows.get(value[i:i + GRAM], ()) for i in ends), key=len)
        for text_id in candidates:
            if value in self._texts[text_id][2]:
                hits.append(text_id)
        seen = set(hits)
        for start in range(len(value) - GRAM + 1):
            for text_id in self._starts.get(value[start:start + GRAM], ()):
                if text_id not in seen and self._texts[text_id][2] in value:
                    seen.add(text_id)
                    hits.append(text_id)
        return hits


def with_inferred(provenance: Provenance, arguments: Mapping[str, Any],
                  flows: tuple[FlowIn, ...]) -> tuple[FlowIn, ...]:
    """``flows`` (the explicit ones) and the flows ``provenance`` infers into ``arguments``,
    but none into an argument an explicit flow already reaches: a reference says where the
    value came from, and always wins over a guess."""
    if provenance.empty:  # no result recorded yet: nothing to infer from
        return flows
    explicit = {flow.argument[:1] for flow in flows}
    return flows + tuple(flow for flow in provenance.flows_into(arguments)
                         if flow.argument[:1] not in explicit)


def infer_flows(calls: list[PolicyCall], results: Mapping[int, Any]) -> list[PolicyCall]:
    """A whole trace with its inferred flows, as the guard would have inferred them call by
    call: each call's arguments looked up among the results of the calls before it
    (``results``: by position, for the calls that have one)."""
    provenance = Provenance()
    found = []
    for call in calls:
        flows = with_inferred(provenance, call.arguments, call.flows)
        found.append(call if len(flows) == len(call.flows)
                     else replace(call, flows=flows))
        if call.index in results:
            provenance.record(call.index, results[call.index])
    return found
