"""Provenance: where a value in a call's arguments came from, when the model did not say.

Chat APIs and MCP pass values, not references: a model that sends the text it fetched writes
the text itself. After each result is recorded, a later argument is an *inferred flow* from
that result when

* it equals a string or a number the result holds (``exact``; booleans and null are too
  common to be evidence); or
* for strings of 8 characters or more, one holds the other: the argument is a part of a string
  of the result, or a string of the result (8 characters or more) is a part of the argument
  (``contained``).

Both lookups go through indexes, so the cost of a call's inference depends on its arguments,
not on how many results came before. Values are indexed when a result is recorded, each
distinct string once. Strings are indexed by their 4-character grams at every fourth position,
and only when a call first passes a string long enough to need them: any copy of 8 characters
or more covers at least one such gram (two when it starts on the grid) whatever its offset, so
looking up the grams of the argument at its four offsets finds every string that may hold it,
and ``in`` decides. A string inside a JSON text that has no backslash is written there as it
is, so only the JSON text is gridded: a lookup reads the strings of a JSON text that holds the
value. A quarter of the grams, read from the encoded bytes of ASCII text in one step, make
indexing 10 KB cost a seventh to a fifteenth of indexing every 8-character window (the less
repetitive the text, the larger the gain); the flows found are the same. The other direction
(a recorded string inside the argument) meets every 8-character window of an ASCII argument
with the recorded strings' starts by memoryview casts and set operations: linear in the
argument, in C.
"""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Mapping
from typing import Any

from plancheck.dsl.policy_ast import PathKey
from plancheck.policy.semantics import CONTAINED, EXACT, FlowIn, PolicyCall
from plancheck.records import replace

GRAM = 8  # the shortest string whose containment is evidence of a copy
STEP = 4  # grams of this many characters at every STEP-th position: any GRAM-long copy covers one
MAX_SOURCES = 4  # sources kept per value: enough to name them, bounded in memory
FEW_STARTS = 16  # recorded ASCII starts a long argument is searched for one by one


def leaves(value: Any, path: tuple[PathKey, ...] = (), depth: int = 0
           ) -> list[tuple[tuple[PathKey, ...], Any]]:
    """Every scalar inside a JSON value with its path. A string that holds JSON (the text of an
    MCP result is often a JSON document) is read into as well. A container a Python value
    holds in several places is read at the first only: ``x = [x, x]`` forty times over is a
    value of 2**40 paths, which a walk of every path would never finish."""
    found: list[tuple[tuple[PathKey, ...], Any]] = []
    _collect(value, path, depth, found, set())
    return found


def _collect(value: Any, path: tuple[PathKey, ...], depth: int,
             found: list[tuple[tuple[PathKey, ...], Any]], seen: set[int]) -> None:
    # Into a list, not a chain of generators: a call's arguments are read on every verdict.
    if depth > 64:
        return
    if isinstance(value, Mapping | list):
        if id(value) in seen:
            return
        seen.add(id(value))
    if isinstance(value, Mapping):
        for key, item in value.items():
            if depth < 64 and _plain_scalar(item):  # most members: no call made for them
                found.append(((*path, str(key)), item))
            else:
                _collect(item, (*path, str(key)), depth + 1, found, seen)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            if depth < 64 and _plain_scalar(item):
                found.append(((*path, position), item))
            else:
                _collect(item, (*path, position), depth + 1, found, seen)
    else:
        found.append((path, value))
        if isinstance(value, str) and value[:1] in ("{", "[") and len(value) > 1:
            try:
                inner = json.loads(value)
            except (ValueError, RecursionError):
                return
            _collect(inner, path, depth + 1, found, seen)


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
        # Each distinct string of GRAM characters or more once, with where it was recorded
        # (a result often holds a text twice, as MCP's text and structuredContent): its grams
        # are indexed once, and a lookup reads its occurrences in recording order.
        self._texts: list[str] = []
        self._text_ids: dict[str, int] = {}
        self._where: list[list[tuple[int, int, tuple[PathKey, ...]]]] = []  # (seq, index, path)
        self._seq = 0
        # A gram (an int of the 4 bytes of an ASCII text, or a str for other text) -> the
        # texts holding it at a position that is a multiple of STEP.
        self._grams: dict[int | str, Any] = {}  # one text id, or a list of them
        self._gridded = 0  # the texts before this one have their grams in _grams
        # A JSON text without a backslash holds each string inside it as it is (no escape):
        # those strings are not gridded; a lookup that finds the document reads them.
        self._inside: dict[int, list[int]] = {}  # document -> the strings in it
        self._covered: set[int] = set()  # strings inside some document: never gridded
        self._starts: dict[str, list[int]] = {}  # first 8 characters -> texts starting so
        self._ascii_starts: dict[int, str] = {}  # those of ASCII, as ints of their 8 bytes

    @property
    def empty(self) -> bool:
        """Whether no value has been indexed (no result recorded, or none holding a value)."""
        return not self._exact

    def record(self, index: int, result: Any) -> None:
        """Index the result of call ``index``."""
        exact = self._exact
        document: tuple[PathKey, ...] | None = None  # the path of a JSON text read into
        inside: list[int] = []
        for path, value in leaves(result):
            # (the common types first, without a call: a result has thousands of leaves)
            kind = type(value)
            if kind is str:
                if not value:
                    continue
                key: tuple[str, Any] = ("s", value)
            elif kind is int or kind is float:
                key = ("n", float(value))
            else:
                other = _key(value)
                if other is None:
                    continue
                key = other
            sources = exact.get(key)
            if sources is None:
                exact[key] = [(index, path)]
            elif len(sources) < MAX_SOURCES:
                sources.append((index, path))
            if document is not None and (len(path) <= len(document)
                                         or path[:len(document)] != document):
                document = None  # (leaves lists a JSON text's values right after it)
            if isinstance(value, str) and len(value) >= GRAM:
                text_id = self._add_text(value, index, path)
                if document is not None:
                    if text_id >= self._gridded and text_id not in self._inside:
                        self._covered.add(text_id)
                    inside.append(text_id)
                elif value[0] in "{[" and "\\" not in value:
                    document = path
                    inside = self._inside.setdefault(text_id, [])

    def _add_text(self, value: str, index: int, path: tuple[PathKey, ...]) -> int:
        text_id = self._text_ids.get(value)
        if text_id is None:
            text_id = self._text_ids[value] = len(self._texts)
            self._texts.append(value)
            self._where.append([])
            start = value[:GRAM]
            self._starts.setdefault(start, []).append(text_id)
            if _CASTS and start.isascii():
                self._ascii_starts[int.from_bytes(start.encode("ascii"), sys.byteorder)] = start
        self._where[text_id].append((self._seq, index, path))
        self._seq += 1
        return text_id

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
                for index, source_path in self._containing(value):
                    add(FlowIn(path, index, source_path, CONTAINED))
        return list(found.values())

    def _containing(self, value: str) -> list[tuple[int, tuple[PathKey, ...]]]:
        """Where the recorded texts that hold ``value`` were recorded (in recording order),
        then where those that ``value`` holds were (by where ``value`` holds them first)."""
        self._grid()
        texts = self._texts
        where = self._where
        holders: set[int] = set()
        # (a document's strings are searched only when it holds the value; one of them may
        # be a document whose own strings are not gridded either)
        pending = [text_id for text_id in self._may_hold(value) if value in texts[text_id]]
        while pending:
            text_id = pending.pop()
            if text_id not in holders:
                holders.add(text_id)
                pending.extend(inner for inner in self._inside.get(text_id, ())
                               if value in texts[inner])
        found = sorted(seen for text_id in holders for seen in where[text_id])
        # Each distinct start of 8 characters is looked up once, and each text it starts is
        # searched for once, from there: the same texts in the same order as a search at every
        # position, without reading the texts of a start again at each of its repeats (a 130 KB
        # argument holding "https://" 10,000 times, after 100 recorded URLs, took 15 s).
        checked = set(holders)
        held: list[tuple[int, int, int, tuple[PathKey, ...]]] = []
        for at, start in self._starts_in(value):
            for text_id in self._starts[start]:
                if text_id not in checked:
                    checked.add(text_id)
                    text = texts[text_id]
                    if len(text) <= len(value) - at and value.find(text, at) >= 0:
                        held.extend((at, *seen) for seen in where[text_id])
        held.sort()
        return [(index, path) for _, index, path in found] + [
            (index, path) for _, _, index, path in held]

    def _starts_in(self, value: str) -> list[tuple[int, str]]:
        """The recorded starts of 8 characters that ``value`` holds, each with where it first
        does, in that order. For ASCII, every 8-byte window of the encoded bytes is read by
        eight memoryview casts and met with the starts by a set operation: no Python step per
        position (an 8 MB argument took two seconds a lookup)."""
        starts = self._starts
        if not starts:
            return []
        if _CASTS and value.isascii():
            ascii_starts = self._ascii_starts
            if len(ascii_starts) <= FEW_STARTS and len(value) >= FEW_STARTS * 1024:
                # (each start looked for in C: the argument read a few times over, far less
                # than a set operation per window; an 8 MB argument took 0.6 s by windows)
                searched = [(value.find(start), start) for start in ascii_starts.values()]
                return sorted(at_start for at_start in searched if at_start[0] >= 0)
            narrow = memoryview(value.encode("ascii"))
            recorded = ascii_starts.keys()
            held: set[int] = set()
            for shift in range(GRAM):
                usable = (len(narrow) - shift) // GRAM * GRAM
                if usable > 0:  # (keys & an iterable keeps only the hits: no set of windows)
                    held |= recorded & narrow[shift:shift + usable].cast("Q")
            return sorted((value.find(ascii_starts[key]), ascii_starts[key]) for key in held)
        found: list[tuple[int, str]] = []
        seen_starts: set[str] = set()
        for at in range(len(value) - GRAM + 1):
            window = value[at:at + GRAM]
            if window in seen_starts:
                continue
            seen_starts.add(window)
            if window in starts:
                found.append((at, window))
        return found

    def _may_hold(self, value: str) -> set[int]:
        """Every text that holds ``value``, and maybe others. A copy at offset t of a text
        starts on the grid t + j for the one j in 0..STEP-1 with (t + j) % STEP == 0; from there
        the grams of ``value`` at j, j + STEP, ... are grams of the text on its grid."""
        # (only the first grams are read: a lookup of a long value encodes its head alone)
        value = value[:5 * STEP]
        forms = _forms(value)
        candidates: set[int] = set()
        for j in range(STEP):
            common: set[int] | None = None
            for at in range(j, min(j + 3 * STEP, len(value) - STEP + 1), STEP):
                texts: set[int] = set()
                for key in _keys(value, forms, at):
                    held = self._grams.get(key)
                    if type(held) is int:
                        texts.add(held)
                    elif held is not None:
                        texts.update(held)
                common = texts if common is None else common & texts
                if not common:
                    break
            if common:
                candidates |= common
        return candidates

    def _grid(self) -> None:
        """Index the grams of the texts recorded since the last lookup, in recording order.
        A gram's texts are one id until a second text holds it: most grams of a text are new,
        and those go in with one ``dict.update``, no list and no Python step per gram."""
        index = self._grams
        covered = self._covered
        for text_id in range(self._gridded, len(self._texts)):
            if text_id in covered:
                continue
            grams = _grid_grams(self._texts[text_id])
            shared = index.keys() & grams  # (iterates the smaller of the two)
            for gram in shared:
                held = index[gram]
                if type(held) is int:
                    index[gram] = [held, text_id]
                else:
                    held.append(text_id)
            index.update(dict.fromkeys(grams.difference(shared) if shared else grams, text_id))
        self._gridded = len(self._texts)


# A text's grams are keyed by how the text is stored: an ASCII text by the 4 bytes of each gram
# as a C unsigned int, a text of the Basic Multilingual Plane by the 8 bytes of its UTF-16
# as an unsigned long long (both read by a memoryview cast, no slice per gram), any other text
# by the 4-character strings. A lookup tries each form the value can take; two forms of
# different grams meeting on one int only add a candidate, which ``in`` then rules out.
_CASTS = struct.calcsize("I") == STEP and struct.calcsize("Q") == 2 * STEP == GRAM


def _forms(value: str) -> tuple[bytes | None, bytes | None]:
    """``value`` as ASCII bytes and as UTF-16 bytes, where those have one unit per character."""
    if not _CASTS:
        return None, None
    wide = value.encode("utf-16-le", "surrogatepass")
    return (value.encode("ascii") if value.isascii() else None,
            wide if len(wide) == 2 * len(value) else None)


def _keys(value: str, forms: tuple[bytes | None, bytes | None], at: int) -> list[int | str]:
    narrow, wide = forms
    keys: list[int | str] = [value[at:at + STEP]]
    if narrow is not None:
        keys.append(int.from_bytes(narrow[at:at + STEP], sys.byteorder))
    if wide is not None:
        keys.append(int.from_bytes(wide[2 * at:2 * (at + STEP)], sys.byteorder))
    return keys


def _grid_grams(text: str) -> set[int] | set[str]:
    """The distinct grams of ``text`` at positions 0, STEP, 2 * STEP, ..."""
    if _CASTS and text.isascii():
        narrow = text.encode("ascii")
        return set(memoryview(narrow)[:len(narrow) - len(narrow) % STEP].cast("I"))
    wide = text.encode("utf-16-le", "surrogatepass")
    if _CASTS and len(wide) == 2 * len(text):
        return set(memoryview(wide)[:len(wide) - len(wide) % (2 * STEP)].cast("Q"))
    return {text[i:i + STEP] for i in range(0, len(text) - STEP + 1, STEP)}


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
