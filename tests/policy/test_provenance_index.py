"""The provenance index finds exactly the flows its definition names: a value equal to a
recorded one, or (8 characters or more) a part of a recorded string or holding one. Lookups
read results as JSON text, a table of bits (grams, starts, strings and numbers) once results
are many and the texts of the newest one by one; an oracle that scans every recorded leaf
decides the same flows, in the same order, for copies at every offset, in ASCII and other
text, with escapes, JSON inside strings, tuples and shared parts, looked up between records.
What a lookup reads (``Provenance.searched`` and ``walked``) is counted, not timed."""

from __future__ import annotations

import json
import random
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancheck.policy.provenance import GRAM, MAX_SOURCES, Provenance, leaves
from plancheck.policy.provenance_read import LONG
from plancheck.policy.semantics import CONTAINED, EXACT, FlowIn

# Few letters, so that copies and near-copies are common; é and 💧 make some text non-ASCII.
ALPHABET = "ab/_ é💧"
texts = st.text(alphabet=ALPHABET, min_size=0, max_size=40)


def _key(value: Any) -> tuple[str, Any] | None:
    """Numbers compare as numbers (1 == 1.0); booleans, null and the empty string are no key."""
    if type(value) in (int, float):
        return ("n", float(value))
    return ("s", value) if type(value) is str and value != "" else None


def _oracle(recorded: list[tuple[int, Any]], arguments: dict[str, Any]) -> list[FlowIn]:
    """The definition, by scanning: every recorded value and every recorded string."""
    exact: dict[tuple[str, Any], list[tuple[int, Any]]] = {}
    strings: list[tuple[int, Any, str]] = []
    for index, result in recorded:
        for path, value in leaves(result):
            key = _key(value)
            if key is None:
                continue
            sources = exact.setdefault(key, [])
            if len(sources) < MAX_SOURCES:
                sources.append((index, path))
            if isinstance(value, str) and len(value) >= GRAM:
                strings.append((index, path, value))
    candidates: dict[tuple[Any, int], list[FlowIn]] = {}

    def add(flow: FlowIn) -> None:
        candidates.setdefault((flow.argument, flow.source), []).append(flow)

    for path, value in leaves(arguments):
        key = _key(value)
        if key is None:
            continue
        for index, source_path in exact.get(key, ()):
            add(FlowIn(path, index, source_path, EXACT))
        if not (isinstance(value, str) and len(value) >= GRAM):
            continue
        hits = [n for n, (_, _, text) in enumerate(strings) if value in text]
        for start in range(len(value) - GRAM + 1):
            for n, (_, _, text) in enumerate(strings):
                if n not in hits and text[:GRAM] == value[start:start + GRAM] and text in value:
                    hits.append(n)
        for n in hits:
            index, source_path, _ = strings[n]
            add(FlowIn(path, index, source_path, CONTAINED))
    # Per argument and source: an exact copy first, then the deepest path, then the first seen.
    return [min(flows, key=lambda f: (f.kind != EXACT, -len(f.source_path)))
            for flows in candidates.values()]


@st.composite
def _session(draw: st.DrawFn) -> tuple[list[Any], list[dict[str, Any]]]:
    """Results to record and, after each, the arguments of a call: copies of parts of what
    was recorded (at any offset and length), strings holding recorded ones, and others."""
    results: list[Any] = []
    calls: list[dict[str, Any]] = []
    pieces: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        strings = draw(st.lists(texts, min_size=1, max_size=3))
        pieces.extend(strings)
        shape = draw(st.sampled_from(["flat", "nested", "mcp", "json-text"]))
        if shape == "flat":
            results.append(strings[0])
        elif shape == "nested":
            results.append({"items": [{"name": s, "size": len(s)} for s in strings]})
        elif shape == "mcp":
            results.append({"content": [{"type": "text", "text": s} for s in strings]})
        else:
            results.append({"content": [{"type": "text",
                                         "text": '{"files": ["' + '", "'.join(strings) + '"]}'}]})
        calls.append(_arguments(draw, pieces, texts,
                                ("part", "whole", "around", "other", "number")))
    return results, calls


def _arguments(draw: st.DrawFn, pieces: list[str], filler: st.SearchStrategy[str],
               kinds: tuple[str, ...]) -> dict[str, Any]:
    """A call's arguments: each a part, the whole, or a string around one of ``pieces``, its
    length, another string or a recorded number (1.5), as ``kinds`` allow."""
    arguments: dict[str, Any] = {}
    for n in range(draw(st.integers(1, 3))):
        source = draw(st.sampled_from(pieces))
        how = draw(st.sampled_from(kinds))
        if how == "part" and source:
            start = draw(st.integers(0, len(source) - 1))
            arguments[f"a{n}"] = source[start:draw(st.integers(start, len(source)))]
        elif how == "around":
            arguments[f"a{n}"] = draw(filler) + source + draw(filler)
        elif how == "other":
            arguments[f"a{n}"] = draw(filler)
        elif how == "number":
            arguments[f"a{n}"] = len(source)
        elif how == "score":
            arguments[f"a{n}"] = 1.5
        else:
            arguments[f"a{n}"] = source
    return arguments


def _shown(flows: list[FlowIn]) -> list[tuple[Any, ...]]:
    return [(f.argument, f.source, f.source_path, f.kind) for f in flows]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_session())
def test_the_index_finds_the_flows_a_scan_of_every_recorded_string_finds(
        session: tuple[list[Any], list[dict[str, Any]]]) -> None:
    results, calls = session
    provenance = Provenance()
    recorded: list[tuple[int, Any]] = []
    for index, (result, arguments) in enumerate(zip(results, calls, strict=True)):
        provenance.record(index, result)
        recorded.append((index, result))
        # Looked up between records: the grid is built in parts, as a guard builds it.
        assert _shown(provenance.flows_into(arguments)) == _shown(_oracle(recorded, arguments))


def test_a_copy_at_each_offset_of_a_long_ascii_text_is_found() -> None:
    """Every offset modulo the grid's step, in a text longer than any hypothesis draws."""
    text = "".join(f"w{n:04d} " for n in range(2000))  # 12,000 characters
    provenance = Provenance()
    provenance.record(0, {"content": [{"type": "text", "text": text}]})
    for start in range(100, 140):
        for length in (GRAM, GRAM + 1, GRAM + 3, 15, 40):
            value = text[start:start + length]
            flows = provenance.flows_into({"q": value})
            assert [(f.source, f.kind) for f in flows] == [(0, CONTAINED)], (start, length)
    assert provenance.flows_into({"q": "w0000 w0002"}) == []


def test_strings_held_by_a_long_argument_are_found_in_order_of_where_it_holds_them() -> None:
    """A long argument (looked up by one search per recorded start when few are recorded, by
    its windows when many are) holds recorded strings: both find the same flows, ordered by
    where the argument holds each first."""
    filler = "".join(f"z{n:05d} " for n in range(3000))  # 21,000 characters
    value = filler + "second-recorded" + filler + "first-recorded/path" + filler
    for extra in (0, 40):  # few recorded starts, then many
        provenance = Provenance()
        provenance.record(0, {"path": "first-recorded/path"})
        provenance.record(1, ["second-recorded", "not-in-the-argument"])
        for n in range(extra):
            provenance.record(2 + n, {"other": f"unrelated-{n:04d}"})
        flows = provenance.flows_into({"body": value})
        assert [(f.source, f.source_path, f.kind) for f in flows] == [
            (1, (0,), CONTAINED), (0, ("path",), CONTAINED)], extra


# Results as tools return them, many of them (more than the lookups search one by one before
# the table of bits takes them), with what makes a JSON text hard to read: escapes, quotes, JSON
# inside strings, numbers, parts held twice, tuples (no JSON arrays to a walk).
texts_escaped = st.text(alphabet='ab/_ é💧"\\{}[]:,1', min_size=0, max_size=30)


@st.composite
def _long_session(draw: st.DrawFn) -> tuple[list[Any], list[dict[str, Any]]]:
    results: list[Any] = []
    calls: list[dict[str, Any]] = []
    pieces: list[str] = []
    for _ in range(draw(st.integers(1, 40))):
        strings = draw(st.lists(texts_escaped, min_size=1, max_size=4))
        pieces.extend(strings)
        shape = draw(st.sampled_from(["flat", "records", "mcp", "json-text", "tuple", "shared"]))
        if shape == "flat":
            results.append(strings[0])
        elif shape == "records":
            results.append({"items": [{"name": s, "size": len(s), "score": 1.5} for s in strings]})
        elif shape == "mcp":
            results.append({"content": [{"type": "text", "text": s} for s in strings]})
        elif shape == "json-text":
            results.append({"text": '{"files": ' + json.dumps(strings) + ', "n": 7}'})
        elif shape == "tuple":
            results.append([tuple(strings), {"kept": strings}])
        else:
            results.append({"twice": [strings, strings]})
        calls.append(_arguments(draw, pieces, texts_escaped,
                                ("part", "whole", "around", "number", "score"))
                     if draw(st.booleans()) else {})
    return results, calls


@pytest.mark.slow
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_long_session())
def test_the_table_of_bits_and_the_unlisted_results_find_what_the_scan_finds(
        session: tuple[list[Any], list[dict[str, Any]]]) -> None:
    """Lookups between records, as a guard makes them: results still searched one by one and
    results the table of bits names give the flows a scan of every recorded leaf gives."""
    results, calls = session
    provenance = Provenance(tail=3)  # (the table of bits takes results 3 at a time)
    recorded: list[tuple[int, Any]] = []
    for index, (result, arguments) in enumerate(zip(results, calls, strict=True)):
        provenance.record(index, result)
        recorded.append((index, result))
        if arguments:
            assert _shown(provenance.flows_into(arguments)) == _shown(
                _oracle(recorded, arguments))


def _varied(rng: random.Random, number: int) -> Any:
    """A 1-4 KB result of prose from few words (every common gram in every result), JSON
    records or a hex dump: what makes a lookup read more as results pile up, if it can."""
    words = ("the", "flood", "river", "gauge", "level", "rose", "and", "of", "station")
    kind = number % 3
    if kind == 0:
        return {"content": [{"type": "text", "text": " ".join(
            rng.choice(words) for _ in range(rng.randint(150, 600)))}]}
    if kind == 1:
        return {"items": [{"id": rng.getrandbits(40), "path": f"src/{rng.choice(words)}/"
                           f"{rng.choice(words)}_{rng.randrange(10**6)}.py"}
                          for _ in range(rng.randint(20, 60))]}
    return "\n".join(f"{offset:08x}  " + " ".join(f"{rng.getrandbits(8):02x}" for _ in range(16))
                     for offset in range(0, rng.randint(1000, 4000) // 3, 16))


def test_what_a_lookup_reads_does_not_grow_with_the_results_before_it() -> None:
    """The flatness of lookups, counted (not timed): after 40 results and after 400, a copy
    of a path from the last result, text holding it, a part of it, a short value and a number
    make the lookups search and walk about as many results: those that hold the values, and a
    few more that share a row of the table of bits. Common words in every result do not make
    every result a candidate, as lists of texts per gram did, nor does a short value (all
    results were searched for one)."""
    read: list[list[int]] = []
    for count in (40, 400):
        rng = random.Random(7)
        provenance = Provenance()
        for number in range(count):
            provenance.record(number, _varied(rng, number))
        last = _varied(rng, 1)
        provenance.record(count, last)
        path = last["items"][3]["path"]
        provenance.flows_into({"warm": "x"})  # (reading the results is not a lookup)
        read.append([])
        for arguments in ({"path": path}, {"body": f"see {path} and the river level"},
                          {"query": path[-12:]}, {"mode": "zz"}, {"n": 123456789}):
            before = provenance.searched + provenance.walked
            flows = provenance.flows_into(arguments)
            read[-1].append(provenance.searched + provenance.walked - before)
            if "mode" not in arguments and "n" not in arguments:
                assert count in {flow.source for flow in flows}, arguments
    assert all(late <= early + 3 for early, late in zip(*read, strict=True)), read


def test_a_result_holding_json_is_walked_once_for_the_strings_many_values_hold() -> None:
    """An MCP result whose text is a JSON document (its compact text holds escaped quotes, so
    it cannot be cut at them) and whose tag words values hold: walked once for all the values
    asked of it, not once a value (20 walks for 20 values before), with the oracle's flows."""
    words = [f"{word}_tag" for word in ("overnight", "district", "pressure", "shoreline")]
    records = [{"id": n, "tags": [words[n % 4], words[(n + 1) % 4]]} for n in range(40)]
    result = {"content": [{"type": "text", "text": json.dumps({"items": records})}]}
    provenance = Provenance()
    provenance.record(0, result)
    for n in range(20):
        arguments = {"query": f"find {words[n % 4]} near {words[(n + 2) % 4]} #{n}"}
        found = provenance.flows_into(arguments)
        assert found and _shown(found) == _shown(_oracle([(0, result)], arguments))
    assert provenance.walked == 1


def test_an_argument_past_the_long_text_limit_finds_what_the_scan_finds() -> None:
    """A string argument of ``LONG`` characters or more has its JSON text written into a
    buffer of its own: its flows are the scan's (equal to a result, holding one, held by one),
    with escapes and non-ASCII text, searched one by one and through the table of bits."""
    rng = random.Random(7)
    filler = "".join(rng.choice('ab/_ é💧"\\{}') for _ in range(LONG + 100))
    value = filler + "held-string-01" + filler[:500]
    results: list[Any] = [{"text": value}, ["held-string-01", "other value"],
                          {"text": "prefix " + value + " suffix"}, {"none": "nothing to see"}]
    arguments = {"body": value}
    for tail in (64, 1):
        provenance = Provenance(tail=tail)
        for index, result in enumerate(results):
            provenance.record(index, result)
        found = provenance.flows_into(arguments)
        assert _shown(found) == _shown(_oracle(list(enumerate(results)), arguments))
        assert sorted(flow.source for flow in found) == [0, 1, 2]


@pytest.mark.slow
def test_a_long_argument_is_looked_up_with_one_copy_of_its_text() -> None:
    """The lookups of a 2 MB argument allocate about its size once (its JSON text), not
    twice (its text with quotes, then a copy without them): the MCP proxy's memory bound is
    twice the largest message plus 80 MB. (What holds at 2 MB holds at 8: the copies are in
    proportion to the argument, and tracemalloc makes 8 MB take 11 s.)"""
    provenance = Provenance()
    for index in range(70):  # (into the table of bits)
        provenance.record(index, {"content": [{"type": "text", "text": f"note {index:03d} kept"}]})
    value = "".join(f"line {n:07d} of the report\n" for n in range(75_000))  # 2 MB
    tracemalloc.start()
    try:
        provenance.flows_into({"text": value})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(value) > LONG and peak < 1.3 * len(value), peak / len(value)
