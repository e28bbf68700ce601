"""Provenance: where a value in a call's arguments came from, when the model did not say.

Chat APIs and MCP pass values, not references: a model that sends the text it fetched writes
the text itself. After each result is recorded, a later argument is an *inferred flow* from
that result when

* it equals a string or a number the result holds (``exact``; booleans and null are too
  common to be evidence); or
* for strings of 8 characters or more, one holds the other: the argument is a part of a string
  of the result, or a string of the result (8 characters or more) is a part of the argument
  (``contained``).

A result is read when it is recorded (or, recorded with ``read=False``, by the first lookup
after), at C speed (:mod:`.provenance_read`): its compact JSON text (msgspec), the first 8
bytes of each of its strings, and its strings and numbers (the text split at its quotes). Once
64 results or 64 KB of text wait, they go into a table of bits (:mod:`.provenance_bits`,
numpy: a row per hash of a 4-byte gram of the text, of a start, of a string or number; a bit
per result); until then a lookup searches their texts one by one, in C.
A lookup reads a few rows whatever came before, searches the JSON text of each result they
name, and walks a result for the paths of its leaves only when its text holds the value,
skipping every part whose text does not: the cost of a call's inference depends on its
arguments and on the results that hold them, not on how many results were recorded.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import Any

from plancheck.policy.provenance_read import (
    START,
    Path,
    Reading,
    Text,
    argument_text,
    leaves,
    matching,
    number_key,
    read,
    string_starts,
)
from plancheck.policy.semantics import CONTAINED, EXACT, FlowIn, PolicyCall

__all__ = ["GRAM", "MAX_SOURCES", "Provenance", "infer_flows", "leaves", "with_inferred"]

GRAM = 8  # the shortest string whose containment is evidence of a copy
MAX_SOURCES = 4  # leaves an exact value is traced to: enough to name them, bounded in time
FEW_STARTS = 16  # recorded starts a long argument is searched for one by one
# Results read but not yet in the table of bits: a lookup searches each one's texts, in C.
TAIL, TAIL_BYTES = 64, 64 * 1024
MAX_KEPT = 4096  # walks of a result kept (the paths of what a lookup matched in it)
KEPT_RESULTS = 256  # results whose strings' paths are kept all at once
PRUNED_WALKS = 3  # walks of a result for one string each before one walk for all of them

Found = dict[tuple[Path, int], list[FlowIn]]


class Provenance:
    """The results recorded so far, indexed for the two lookups as lookups need them."""

    def __init__(self, *, tail: int = TAIL) -> None:
        """``tail``: how many results are searched one by one before they go into the table
        of bits (64 KB of text sends them sooner)."""
        self._tail = tail
        self._results: list[Reading] = []  # by number (the order of recording)
        self._calls: list[int] = []  # number -> the call whose result it is
        self._read = 0  # results before this one are read (those after are not yet)
        self._tail_bytes = 0  # of the texts of the results read but not in the table
        self._started = 0  # results before this one have their strings' starts found
        self._unlisted: list[list[int]] = []  # the starts of the results not in the table
        self._textless: list[int] = []  # results holding a string their texts do not
        # The table of bits (:mod:`.provenance_bits`, numpy), once results are many, and how
        # many results are in it.
        self._table: Any = None
        self._listed = 0
        self._starts: set[int] = set()  # the first 8 bytes of the strings, as ints
        self._answers: dict[tuple[Any, ...], list[tuple[Path, Any]]] = {}
        self._walks: dict[int, int] = {}  # result -> its walks for one string so far
        self._strings_at: dict[int, dict[str, list[tuple[Path, Any]]]] = {}  # and for all
        # result -> its strings of 8 characters or more by their first 8 (_long_strings_in)
        self._heads_at: dict[int, dict[str, list[tuple[int, Path, str]]]] = {}
        # value -> (the results not in the table searched for it: those before this one, and
        # of those the ones that may hold it)
        self._unlisted_holders: dict[tuple[Any, ...], tuple[int, list[int]]] = {}
        # Results whose leaves a lookup walked (each once per value), and results a lookup
        # searched the texts of: what lookups cost, whatever the speed of the machine.
        self.walked = 0
        self.searched = 0
        self._before = 0  # the lookup under way reads the results before this one only

    @property
    def empty(self) -> bool:
        """Whether no result has been recorded."""
        return not self._results

    @property
    def count(self) -> int:
        """How many results have been recorded (a lookup may be limited to the first ones)."""
        return len(self._results)

    def record(self, index: int, result: Any, *, read: bool = True) -> None:
        """The result of call ``index`` (it must not change after). With ``read``, it is read
        now, as its JSON text (and, once results are many, added to the table of bits): an
        agent records a result while the model writes its next call, and a verdict that needs
        the flows is what the next call waits for. Without, it is read by the first lookup
        (a guard whose verdicts need no flow asks only when its flows are read). The paths of
        its leaves are found only when a lookup matches them."""
        self._results.append(Reading(result))
        self._calls.append(index)
        if read:
            self._index()
            self._find_starts()
            if self._listed < len(self._results):
                self._results[-1].scalars()  # (for the lookups of numbers until listed)

    def flows_into(self, arguments: Mapping[str, Any], before: int | None = None
                   ) -> list[FlowIn]:
        """The inferred flows into a call's arguments, one per (argument, source call): an
        exact copy before a contained one, and of those the deepest path in the result (the
        text inside a JSON document a result holds, rather than the document). ``before``:
        only from the results recorded first, that many (those there were when the call was
        proposed, for flows asked later)."""
        self._index()
        self._before = len(self._results) if before is None else before
        found: Found = {}
        for path, value in leaves(arguments):
            if isinstance(value, str):
                if value:
                    text = argument_text(value)
                    self._exact_string(path, value, text, found)
                    if len(value) >= GRAM:
                        self._holding(path, value, text, found)
                        self._held(path, value, text, found)
            elif isinstance(value, int | float) and not isinstance(value, bool):
                key = number_key(value)
                if key is not None:
                    self._exact_number(path, key, found)
        return [min(flows, key=_rank) for flows in found.values()]

    # ------------------------------------------------------------------------ lookups

    def _exact_string(self, path: Path, value: str, text: Text | None, found: Found) -> None:
        """The first MAX_SOURCES leaves equal to ``value``, in recording order."""
        def match(leaf: Any) -> bool:
            return isinstance(leaf, str) and leaf == value

        question = ("s", value)
        if text is None:  # (a lone surrogate: no JSON text to look for)
            self._exact(path, question, list(range(len(self._results))), None, match, found)
            return
        if len(text) >= 1024:  # (its grams name the results that may hold it: no hash of MBs)
            self._exact(path, question, [number for number in self._may_hold(text)
                                         if self._holds(number, text)], text, match, found)
            return
        needle = b'"' + text + b'"'
        self._exact(path, question, self._holding_scalar(
            question, hash(text), lambda number: self._holds(number, needle)), needle, match,
            found)

    def _exact_number(self, path: Path, key: float, found: Found) -> None:
        def match(leaf: Any) -> bool:
            return (isinstance(leaf, int | float) and not isinstance(leaf, bool)
                    and number_key(leaf) == key)

        question = ("n", key)
        self._exact(path, question, self._holding_scalar(
            question, hash(key), lambda number: key in self._results[number].scalars()[1]),
            None, match, found)

    def _holding_scalar(self, question: tuple[Any, ...], mark: int,
                        may_hold: Callable[[int], bool]) -> list[int]:
        """The results that may hold a string or a number (``mark``: its hash): those the
        table of bits names, and those not in it yet that ``may_hold`` says may (asked once
        per result and value: the same values come back call after call)."""
        listed = self._listed
        searched, holding = self._unlisted_holders.get(question, (listed, []))
        holding = [number for number in holding if number >= listed]
        holding.extend(number for number in range(max(searched, listed), len(self._results))
                       if may_hold(number))
        if len(self._unlisted_holders) >= MAX_KEPT:
            self._unlisted_holders.clear()
        self._unlisted_holders[question] = (len(self._results), holding)
        return (self._table.holding_scalar(mark) if self._table else []) + holding

    def _exact(self, path: Path, question: tuple[Any, ...], numbers: list[int],
               needle: Text | None, match: Callable[[Any], bool], found: Found) -> None:
        left = MAX_SOURCES
        for number in numbers:
            if number >= self._before:
                continue
            for source_path, _ in self._matching(number, question, match, needle)[:left]:
                _add(found, FlowIn(path, self._calls[number], source_path, EXACT))
                left -= 1
            if left <= 0:
                break

    def _holding(self, path: Path, value: str, text: Text | None, found: Found) -> None:
        """The strings of 8 characters or more that hold ``value``, in recording order."""
        if text is None:
            numbers = list(range(len(self._results)))
        else:
            numbers = self._may_hold(text)
            if self._textless:
                numbers = sorted({*numbers, *self._textless})
        for number in numbers:
            if number >= self._before or (text is not None and self._results[number].whole
                                          and not self._holds(number, text)):
                continue
            for source_path, _ in self._matching(
                    number, ("c", value),
                    lambda leaf: isinstance(leaf, str) and len(leaf) >= GRAM and value in leaf,
                    text):
                _add(found, FlowIn(path, self._calls[number], source_path, CONTAINED))

    def _held(self, path: Path, value: str, text: Text | None, found: Found) -> None:
        """The strings of 8 characters or more that ``value`` holds, by where it first holds
        their first 8 characters, then in recording order."""
        if text is None:
            numbers = list(range(len(self._results)))
            heads: list[bytes] = []
        else:
            self._find_starts()
            starts = self._starts_in(text)
            if not starts:
                return
            heads = [b'"' + start.to_bytes(START, sys.byteorder) for start in starts]
            numbers = (self._table.holding_start(starts) if self._table else []) + [
                number for number in range(self._listed, len(self._results))
                if any(head in text for text in self._results[number].texts
                       for head in heads)]
        held: list[tuple[int, int, int, Path]] = []
        for number in numbers:
            if number >= self._before:
                continue
            reading = self._results[number]
            strings = None if text is None or reading.dropped else _strings_held(
                reading.texts, heads, value, text)
            if strings is not None and len({string[:GRAM] for string in strings}) == len(
                    strings):
                # The paths of each string's copies, which later lookups of it share; ordered
                # by where the value holds each string's start, which no two share (else the
                # order of the leaves of both in the result would be needed: the walk below).
                for string in strings:
                    at = value.find(string[:GRAM])
                    for order, (source_path, _) in enumerate(self._matching(
                            number, ("s", string), _equal_to(string),
                            b'"' + strings[string] + b'"')):
                        held.append((at, number, order, source_path))
                continue
            for order, source_path, leaf in self._long_strings_in(number, value):
                held.append((value.find(leaf[:GRAM]), number, order, source_path))
        for _, number, _, source_path in sorted(held):
            _add(found, FlowIn(path, self._calls[number], source_path, CONTAINED))

    def _may_hold(self, needle: Text) -> list[int]:
        """The results that may hold ``needle`` (8 bytes or more): those the table names, and
        those not in it yet."""
        return (self._table.holding_copy(needle) if self._table else []) + list(
            range(self._listed, len(self._results)))

    def _holds(self, number: int, needle: Text) -> bool:
        self.searched += 1
        reading = self._results[number]
        return reading.dropped or any(needle in text for text in reading.texts)

    def _matching(self, number: int, question: tuple[Any, ...], match: Callable[[Any], bool],
                  needle: Text | None) -> list[tuple[Path, Any]]:
        """The leaves of result ``number`` that ``match`` accepts, with their paths
        (``question`` names ``match``: the answer is kept, as the same values come back call
        after call); the parts whose JSON text lacks ``needle`` skipped, in a plain result
        (another may hold a part many times over, whose text would be too long to write)."""
        key = (number, *question)
        leaves_found = self._answers.get(key)
        if leaves_found is None:
            if len(self._answers) >= MAX_KEPT:
                self._answers.clear()
                self._strings_at.clear()
            if question[0] == "s":
                leaves_found = self._answers[key] = self._copies(number, question[1], match,
                                                                 needle)
            else:
                self.walked += 1
                reading = self._results[number]
                leaves_found = self._answers[key] = matching(
                    reading.value, match, needle if reading.plain else None)
        return leaves_found

    def _copies(self, number: int, string: str, match: Callable[[Any], bool],
                needle: Text | None) -> list[tuple[Path, Any]]:
        """The leaves of result ``number`` equal to ``string``: by a walk for it (skipping
        the parts whose text lacks it) the first PRUNED_WALKS times; then by one walk of all
        its leaves, kept by string (a result a copied value is found in is often asked again:
        a JSON result's tag words, for one). A walk of all the leaves of a result of JSON
        records costs what tens of walks for one string do, so it waits until the result has
        been asked that often."""
        strings = self._strings_at.get(number)
        if strings is None:
            walks = self._walks.get(number, 0)
            if walks < PRUNED_WALKS:
                self._walks[number] = walks + 1
                self.walked += 1
                reading = self._results[number]
                return matching(reading.value, match, needle if reading.plain else None)
            self.walked += 1
            if len(self._strings_at) >= KEPT_RESULTS:
                self._strings_at.clear()
            strings = self._strings_at[number] = {}
            for path, leaf in leaves(self._results[number].value):
                if isinstance(leaf, str):
                    strings.setdefault(leaf, []).append((path, leaf))
        return strings.get(string, [])

    def _long_strings_in(self, number: int, value: str) -> list[tuple[int, Path, str]]:
        """The strings of 8 characters or more of result ``number`` that ``value`` holds
        without being held by it, each with its place among the result's leaves and its path,
        in the order of the leaves. The result is walked once, its long strings kept by their
        first 8 characters (for a result whose text cannot be cut at its quotes: one whose
        strings hold JSON, as an MCP text of records does, would be walked again for every
        value asked of it)."""
        heads = self._heads_at.get(number)
        if heads is None:
            self.walked += 1
            if len(self._heads_at) >= KEPT_RESULTS:
                self._heads_at.clear()
            heads = self._heads_at[number] = {}
            for order, (path, leaf) in enumerate(leaves(self._results[number].value)):
                if isinstance(leaf, str) and len(leaf) >= GRAM:
                    heads.setdefault(leaf[:GRAM], []).append((order, path, leaf))
        windows = len(value) - GRAM + 1
        keys = heads.keys() & {value[at:at + GRAM] for at in range(windows)} \
            if windows <= len(heads) else [head for head in heads if head in value]
        return sorted(entry for key in keys for entry in heads[key]
                      if entry[2] in value and value not in entry[2])

    def _starts_in(self, text: Text) -> list[int]:
        """The recorded starts (8 bytes) that ``text`` holds. Every 8-byte window of the text
        is read by eight memoryview casts and met with the starts by a set operation: no
        Python step per position (an 8 MB argument took two seconds a lookup)."""
        starts = self._starts
        if len(text) < 8 * START:  # (a short text: its few windows one by one)
            return sorted(starts.intersection(int.from_bytes(text[at:at + START], sys.byteorder)
                                              for at in range(len(text) - START + 1)))
        if len(starts) <= FEW_STARTS and len(text) >= FEW_STARTS * 1024:
            # (each start looked for in C: the argument read a few times over, far less
            # than a set operation per window; an 8 MB argument took 0.6 s by windows)
            return [start for start in starts
                    if text.find(start.to_bytes(START, sys.byteorder)) >= 0]
        view = memoryview(text)
        held: set[int] = set()
        for shift in range(START):
            usable = (len(view) - shift) // START * START
            if usable > 0:  # (intersection with an iterable keeps only the hits)
                held |= starts.intersection(view[shift:shift + usable].cast("Q"))
        return sorted(held)

    # ------------------------------------------------------------------------ indexing

    def _index(self) -> None:
        """Read the results recorded since the last lookup, in recording order (their JSON
        texts); once they are many, add them to the table of bits in one go. Until then a
        lookup searches the texts of each."""
        for number in range(self._read, len(self._results)):
            reading = self._results[number] = read(self._results[number].value)
            self._tail_bytes += sum(map(len, reading.texts))
            if not reading.whole:
                self._textless.append(number)
        self._read = len(self._results)
        if self._read - self._listed >= self._tail or self._tail_bytes >= TAIL_BYTES:
            self._list()

    def _list(self) -> None:
        """Add the results not in the table of bits to it, in one go."""
        if self._table is None:
            # (numpy, imported only now: a short session never pays for it)
            from plancheck.policy.provenance_bits import Bits

            self._table = Bits()
        self._find_starts()
        tail = self._results[self._listed:]
        self._table.add([reading.texts for reading in tail],
                        [reading.scalars() for reading in tail], self._unlisted)
        for reading in tail:
            reading.listed()
        self._listed = len(self._results)
        self._unlisted = []
        self._tail_bytes = 0

    def _find_starts(self) -> None:
        """The starts of the strings of the results read since this last ran (as a lookup
        of a string an argument may hold needs them, or the table)."""
        for number in range(self._started, self._read):
            starts = string_starts(self._results[number])
            self._starts.update(starts)
            self._unlisted.append(starts)
        self._started = self._read


def _strings_held(texts: list[bytes], heads: list[bytes], value: str, needle: Text
                  ) -> dict[str, bytes] | None:
    """The strings of 8 characters or more of JSON ``texts`` that start with one of ``heads``
    (an opening quote and 8 bytes) and lie inside ``value`` (whose JSON text is ``needle``)
    without holding it, each with its JSON text; None when a text cannot be cut at its quotes
    (it holds an escaped quote)."""
    found: dict[str, bytes] = {}
    for text in texts:
        if b'\\"' in text:
            return None
        for head in heads:
            at = text.find(head)
            while at >= 0:
                end = text.find(b'"', at + len(head))
                if end < 0:
                    return None
                piece = text[at + 1:end]
                if piece in needle:
                    string = json.loads(b'"' + piece + b'"') if b"\\" in piece else \
                        piece.decode()
                    if len(string) >= GRAM and string in value and value not in string:
                        found[string] = piece
                at = text.find(head, at + 1)
    return found


def _equal_to(string: str) -> Callable[[Any], bool]:
    return lambda leaf: isinstance(leaf, str) and leaf == string


def _add(found: dict[tuple[Path, int], list[FlowIn]], flow: FlowIn) -> None:
    found.setdefault((flow.argument, flow.source), []).append(flow)


def _rank(flow: FlowIn) -> tuple[bool, int]:
    """Per argument and source: an exact copy first, then the deepest path, then the first."""
    return flow.kind != EXACT, -len(flow.source_path)


def with_inferred(provenance: Provenance, arguments: Mapping[str, Any],
                  flows: tuple[FlowIn, ...], before: int | None = None
                  ) -> tuple[FlowIn, ...]:
    """``flows`` (the explicit ones) and the flows ``provenance`` infers into ``arguments``
    (from the first ``before`` results recorded: all by default), but none into an argument
    an explicit flow already reaches: a reference says where the value came from, and always
    wins over a guess."""
    if provenance.empty or before == 0:  # no result recorded yet: nothing to infer from
        return flows
    explicit = {flow.argument[:1] for flow in flows}
    return flows + tuple(flow for flow in provenance.flows_into(arguments, before)
                         if flow.argument[:1] not in explicit)


def infer_flows(calls: list[PolicyCall], results: Mapping[int, Any]) -> list[PolicyCall]:
    """A whole trace with its inferred flows, as the guard would have inferred them call by
    call: each call's arguments looked up among the results of the calls before it
    (``results``: by position, for the calls that have one)."""
    provenance = Provenance()
    found = []
    for call in calls:
        flows = with_inferred(provenance, call.arguments, call.flows)
        found.append(call if len(flows) == len(call.flows) else call.but(flows=flows))
        if call.index in results:
            provenance.record(call.index, results[call.index])
    return found
