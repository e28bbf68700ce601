"""Provenance lookups take time linear in the argument's length (issue 33): after 100 recorded
URL results, one 130 KB argument holding "https://" 10,000 times took 15 s of CPU for one
verdict (34 s after 200), every recorded URL searched again at every repeat of its first 8
characters. Each run is a child under a CPU cap, so the old code fails here, not hangs."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.security.capped import last_json, run_capped

# CPU time against the size of the input: measured with no other test running.
pytestmark = [pytest.mark.alone, pytest.mark.slow]

POOL = {"tools": [
    {"name": "fetch", "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}},
    {"name": "post", "inputSchema": {"type": "object", "properties": {"body": {"type": "string"}}}},
]}


@pytest.mark.parametrize(("results", "repeats"), [(100, 10_000), (200, 20_000)])
def test_a_long_argument_after_many_urls_is_judged_promptly(results: int, repeats: int) -> None:
    code = (
        "import json, time, plancheck\n"
        f"guard = plancheck.Guard({POOL!r})\n"
        f"for i in range({results}):\n"
        "    v = guard.propose({'name': 'fetch', 'id': f'c{i}',"
        " 'arguments': {'url': f'https://example.com/page/{i}'}})\n"
        "    guard.record(v.call_id, {'url': f'https://example.com/page/{i}', 'ok': True})\n"
        # the URL of call 7 is copied in, once, at the end: the flow must still be found
        f"body = ('https://' + 'x' * 5) * {repeats} + 'https://example.com/page/7'\n"
        "start = time.process_time()\n"
        "v = guard.propose({'name': 'post', 'id': 'last', 'arguments': {'body': body}})\n"
        "spent = time.process_time() - start\n"
        "print(json.dumps([v.allowed, spent, len(body)]))\n")
    done = run_capped(code, cpu_seconds=30, timeout=120)
    allowed, spent, length = last_json(done)
    assert allowed and length > 13 * repeats
    assert spent < 0.1 + 10e-6 * length  # 1.4 s at 130 KB: a hundredth of the old cost


def test_the_copied_url_is_still_a_flow() -> None:
    from plancheck.policy.provenance import Provenance

    provenance = Provenance()
    for i in range(100):
        provenance.record(i, {"url": f"https://example.com/page/{i}"})
    body = ("https://" + "x" * 5) * 10_000 + "https://example.com/page/70"
    flows = provenance.flows_into({"body": body})
    assert sorted(flow.source for flow in flows) == [7, 70]
    assert json.dumps([f.kind for f in flows]) == '["contained", "contained"]'


def test_a_megabyte_argument_is_looked_up_at_the_speed_of_reading_it() -> None:
    """Every 8-character window of a long ASCII argument is met with the recorded starts in
    C (memoryview casts, set operations), not one Python step per character: CPU time of the
    lookup against a JSON round trip of the same argument, best of three, in this process (a
    ratio, so a loaded machine slows both). Measured: ~10x; the per-character loop 250x."""
    import random
    import time

    from plancheck.policy.provenance import Provenance

    rng = random.Random(5)
    provenance = Provenance()
    for i in range(100):
        provenance.record(i, {"url": f"https://example.com/page/{i}", "note": f"record {i}"})
    value = "".join(rng.choice("abcdefghij /:0123456789") for _ in range(2 << 20))
    value += " https://example.com/page/7"

    def best(run: Callable[[], object]) -> float:
        spent = []
        for _ in range(3):
            start = time.process_time()
            run()
            spent.append(time.process_time() - start)
        return min(spent)

    reading = best(lambda: json.loads(json.dumps({"text": value})))
    lookup = best(lambda: provenance.flows_into({"text": value}))
    assert [f.source for f in provenance.flows_into({"text": value})] == [7]
    assert lookup < 50 * reading, (lookup, reading)


SHARED = ("x = ['abcdefghij']\nfor _ in range(40):\n    x = [x, x]\n"  # 2**40 paths
          "guard = plancheck.Guard(" + repr(POOL) + ")\n")


def test_a_result_sharing_its_parts_is_recorded_promptly() -> None:
    """A result that holds one list at 2**40 paths (a Python value can) is read once per
    container: recording it, and the verdict after it, never walk every path."""
    code = ("import json, plancheck\n" + SHARED
            + "v = guard.propose({'name': 'fetch', 'id': 'c1', 'arguments': {'url': 'u'}})\n"
            "problems = guard.record('c1', {'r': x})\n"
            "v = guard.propose({'name': 'post', 'id': 'c2', 'arguments': {'body': 'abcdefghij'}})\n"
            "print(json.dumps([len(problems), v.allowed, [f['from'] for f in v.flows]]))\n")
    assert last_json(run_capped(code, cpu_seconds=20, timeout=60)) == [0, True, ["c1"]]


def test_arguments_sharing_their_parts_get_a_prompt_verdict() -> None:
    code = ("import json, plancheck\n" + SHARED
            + "v = guard.propose({'name': 'post', 'arguments': {'body': x}})\n"
            "print(json.dumps(v.allowed))\n")
    assert last_json(run_capped(code, cpu_seconds=10, timeout=30)) is False
