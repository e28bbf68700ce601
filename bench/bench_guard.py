"""plancheck.Guard per call, beside the per-call check agent developers write by hand.

    python bench/bench_guard.py [--quick]

Traffic as agents see it: each call's arguments fill the tool's required inputs (a path or a
name sometimes copied from an earlier result, as a model does) and each result is 1-10 KB of
varied content, prose, JSON records or hex dumps, seeded (never one repeated character: that
made the provenance index's cost look flat). On five pools (the built-in DisasterBench pool,
DORA's 108 tools, the MCP filesystem, GitHub, memory and fetch servers' real ``tools/list``
captures merged into one 50-tool pool, and the first two of them alone), in one run, CPU time:

* issue 31's targets: ``propose`` p50 per tool beside a ``jsonschema`` validator built once
  per tool validating the same arguments (target <= 1.0x for every tool); 100 calls proposed
  and recorded with provenance on beside the same 100 validated (target <= 1.5x); the
  verdict at calls 91-100 beside calls 2-11 of such a trajectory (target <= 1.2x). A verdict
  that needs no flow infers none until its ``flows`` are read, so each of the last two is
  measured twice: as a loop that never reads them runs, and reading every verdict's flows
  (with the flows provenance inferred per call: a copied value held by more of the results
  recorded so far is a flow from each of them, work no index can save);
* ``fastjsonschema``'s compiled validator beside, per pool; issue 23's 20 policy rules;
  ``propose`` of one call in each shape loops send; the cold start of a fresh process.

Prints numbers and ratios, no pass or fail.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "data" / "real" / "mcp"
POOLS = {"mcp filesystem": REAL / "server-filesystem.json",
         "mcp github": REAL / "server-github.json"}


def _cpu(run: Any, loops: int = 200, samples: int = 25) -> float:
    """Median CPU µs of one ``run()``."""
    measured = []
    for _ in range(samples):
        start = time.process_time()
        for _ in range(loops):
            run()
        measured.append((time.process_time() - start) / loops * 1e6)
    return statistics.median(measured)


def _paired(first: Any, second: Any, loops: int = 200, samples: int = 25
            ) -> tuple[float, float]:
    """Median CPU µs of one ``first()`` and of one ``second()``, their samples taken in turn
    (the side sampled first alternating): on a shared machine whose speed drifts by tens of
    percent over seconds, the drift falls on both alike."""
    measured: tuple[list[float], list[float]] = ([], [])
    runs = (first, second)
    for sample in range(samples):
        for side in ((0, 1) if sample % 2 == 0 else (1, 0)):
            run = runs[side]
            start = time.process_time()
            for _ in range(loops):
                run()
            measured[side].append((time.process_time() - start) / loops * 1e6)
    return statistics.median(measured[0]), statistics.median(measured[1])


def _valid_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments that fill each required property with a value its schema accepts."""
    arguments: dict[str, Any] = {}
    for name in schema.get("required", []):
        arguments[name] = _sample(schema.get("properties", {}).get(name, {}))
    return arguments


def _sample(schema: dict[str, Any]) -> Any:
    samples = {"string": "a", "integer": 1, "number": 1.5, "boolean": True, "object": {}}
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type", "string")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "array":
        return [_sample(schema.get("items", {}))]
    if kind == "object":
        return _valid_arguments(schema)
    if kind in ("integer", "number") and "minimum" in schema:
        return schema["minimum"]
    return samples.get(kind, "a")


def _pools() -> dict[str, tuple[Any, list[tuple[str, dict[str, Any]]]]]:
    """Each pool the targets name, as the guard is given it, with (tool, JSON Schema) pairs:
    the built-in DisasterBench pool and DORA's 108 tools (the schemas the guard validates
    against), and a 50-tool MCP pool (the filesystem, GitHub, memory and fetch servers'
    ``tools/list`` captures, merged as one agent's servers)."""
    import plancheck
    from plancheck.ir.schema_validation import tool_schema_text

    found: dict[str, tuple[Any, list[tuple[str, dict[str, Any]]]]] = {}
    for label, spec in (("built-in (26 tools)", None), ("DORA (108 tools)", "dora")):
        toolset = plancheck.load_toolset(spec)
        found[label] = (toolset, [(t.name, json.loads(tool_schema_text(t)))
                                  for t in toolset.tools.values()])
    servers = {}
    pairs = []
    for name in ("server-filesystem", "server-github", "server-memory", "mcp-server-fetch"):
        data = json.loads((REAL / f"{name}.json").read_text(encoding="utf-8"))
        tools = data["tools"] if "tools" in data else data["result"]["tools"]
        servers[name] = data
        pairs.extend((t["name"], t["inputSchema"]) for t in tools)
    found[f"MCP ({len(pairs)} tools)"] = (servers, pairs)
    for label, path in POOLS.items():
        data = json.loads(path.read_text(encoding="utf-8"))
        tools = data["tools"] if "tools" in data else data["result"]["tools"]
        found[label] = (data, [(t["name"], t["inputSchema"]) for t in tools])
    return found


_WORDS = ("flood", "river", "gauge", "station", "level", "rose", "metres", "overnight",
          "warning", "issued", "district", "north", "bank", "sandbags", "evacuation", "route",
          "closed", "bridge", "rain", "forecast", "the", "a", "of", "and", "to", "in", "was",
          "after", "report", "file", "commit", "branch", "merge", "request", "review", "test",
          "failed", "passed", "build", "deploy", "server", "config", "value", "returned")


def _result(rng: random.Random, size: int) -> Any:
    """About ``size`` bytes of what tools return: prose, JSON records or a hex dump."""
    kind = rng.randrange(3)
    if kind == 0:
        words = []
        while sum(len(w) + 1 for w in words) < size:
            sentence = [rng.choice(_WORDS) for _ in range(rng.randint(6, 18))]
            words.extend([*sentence[:-1], sentence[-1] + "."])
        return {"content": [{"type": "text", "text": " ".join(words).capitalize()}]}
    if kind == 1:
        records = []
        while len(json.dumps(records)) < size:
            records.append({"id": rng.getrandbits(48), "name": f"{rng.choice(_WORDS)}_"
                            f"{rng.randrange(10**6)}", "path": f"src/{rng.choice(_WORDS)}/"
                            f"{rng.choice(_WORDS)}_{rng.randrange(999)}.py",
                            "score": round(rng.random() * 100, 3),
                            "tags": rng.sample(_WORDS, 3)})
        return {"content": [{"type": "text", "text": json.dumps({"items": records})}],
                "structuredContent": {"items": records}}
    lines = [f"{offset:08x}  " + " ".join(f"{rng.getrandbits(8):02x}" for _ in range(16))
             for offset in range(0, size // 3, 16)]
    return {"content": [{"type": "text", "text": "\n".join(lines)}]}


def _traffic(tools: list[tuple[str, dict[str, Any]]], count: int, seed: int
             ) -> list[tuple[str, dict[str, Any], Any]]:
    """``count`` calls over the pool's tools (valid arguments; now and then a string argument
    copied from an earlier result, as a model copies a path) with varied 1-10 KB results."""
    rng = random.Random(seed)
    usable = [(n, s) for n, s in tools if s.get("properties") is not None]
    calls: list[tuple[str, dict[str, Any], Any]] = []
    for position in range(count):
        name, schema = usable[(position * 7) % len(usable)]
        arguments = _valid_arguments(schema)
        texts = [k for k, v in arguments.items() if isinstance(v, str)
                 and not schema.get("properties", {}).get(k, {}).get("enum")]
        if texts and calls and rng.random() < 0.3:
            earlier = json.dumps(calls[rng.randrange(len(calls))][2])
            start = rng.randrange(max(1, len(earlier) - 40))
            arguments[texts[0]] = earlier[start:start + rng.randint(8, 30)].strip('"\\ ')
        calls.append((name, arguments, _result(rng, rng.randint(1_000, 10_000))))
    return calls


def _validators(tools: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    import jsonschema

    found = {}
    for name, schema in tools:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        found[name] = cls(schema)
    return found


def per_tool(label: str, pool: Any, tools: list[tuple[str, dict[str, Any]]],
             samples: int) -> None:
    """Issue 31's target: ``propose`` p50 of each tool's valid call beside ``jsonschema``
    validating the same arguments (each median over ``samples`` samples of 50 calls)."""
    import plancheck

    validators = _validators(tools)
    guard = plancheck.Guard(pool, provenance=True)
    ratios = []
    guard_all, schema_all = [], []
    ids = iter(range(10**9))  # (ids used once in the whole run: a repeated one is refused)
    for name, schema in tools:
        arguments = _valid_arguments(schema)
        validator = validators[name]
        if not validator.is_valid(arguments):
            continue  # (a schema whose valid arguments this sampler cannot write)
        first = guard.propose({"name": name, "arguments": arguments})
        if not first.allowed:
            print(f"  ! {name}: {first.feedback}")
            continue
        # The calls made before the timing, as a model's reply holds them: what is timed is
        # the guard's reading and deciding, not the making of a dict and an id.
        made = iter([{"name": name, "arguments": arguments, "id": f"p{next(ids)}"}
                     for _ in range(50 * samples)])
        guard_us, schema_us = _paired(
            lambda m=made: guard.propose(next(m)),
            lambda v=validator, a=arguments: v.validate(a), loops=50, samples=samples)
        last = guard.propose({"name": name, "arguments": arguments, "id": f"p{next(ids)}"})
        assert last.allowed, last.feedback  # (the valid call's verdict was timed)
        ratios.append((guard_us / schema_us, name))
        guard_all.append(guard_us)
        schema_all.append(schema_us)
    worst = max(ratios)
    over = sum(1 for r, _ in ratios if r > 1.0)
    print(f"{label:<20} propose p50 per tool: median {statistics.median(guard_all):6.1f} µs | "
          f"jsonschema {statistics.median(schema_all):6.1f} µs; ratio median "
          f"{statistics.median(r for r, _ in ratios):4.2f}x, worst {worst[0]:4.2f}x "
          f"(`{worst[1]}`), {over} of {len(ratios)} tools over 1.0x")


def hundred_calls(label: str, pool: Any, tools: list[tuple[str, dict[str, Any]]],
                  samples: int) -> None:
    """Issue 31's target: 100 calls of varied traffic proposed and recorded by a fresh guard
    (provenance on, the default) beside the per-call ``jsonschema`` loop over the same
    arguments; and ``fastjsonschema`` compiled, for scale."""
    import fastjsonschema

    import plancheck

    calls = _traffic(tools, 100, seed=31)
    validators = _validators(tools)
    compiled = {n: fastjsonschema.compile(s, use_formats=False) for n, s in tools}
    plancheck.Guard(pool).propose({"name": calls[0][0], "arguments": calls[0][1]})  # warm

    def loop_guard(provenance: bool = True, read_flows: bool = False) -> None:
        fresh = plancheck.Guard(pool, provenance=provenance)
        for position, (tool, args, result) in enumerate(calls):
            verdict = fresh.propose({"name": tool, "arguments": args, "id": f"c{position}"})
            if read_flows:
                assert isinstance(verdict, plancheck.Verdict)
                verdict.flows  # noqa: B018 (what a loop that logs each call's flows reads)
            fresh.record(verdict.call_id, result)

    def loop_jsonschema() -> None:
        for tool, args, _ in calls:
            validators[tool].validate(args)

    guard_total, schema_total = _paired(loop_guard, loop_jsonschema, loops=2, samples=samples)
    bare_total, schema_again = _paired(lambda: loop_guard(False), loop_jsonschema, loops=2,
                                       samples=samples)
    read_total, schema_third = _paired(lambda: loop_guard(read_flows=True), loop_jsonschema,
                                       loops=2, samples=samples)
    fast_total = _cpu(lambda: [compiled[t](a) for t, a, _ in calls], loops=2, samples=samples)
    print(f"{'':<20} 100 calls proposed and recorded {guard_total / 1e3:6.2f} ms | "
          f"jsonschema loop {schema_total / 1e3:6.2f} ms ({guard_total / schema_total:4.2f}x) "
          f"| provenance off {bare_total / 1e3:6.2f} ms ({bare_total / schema_again:4.2f}x) "
          f"| fastjsonschema {fast_total / 1e3:5.2f} ms")
    print(f"{'':<20} the same, each verdict's flows read {read_total / 1e3:6.2f} ms "
          f"({read_total / schema_third:4.2f}x the jsonschema loop)")


def flatness(label: str, pool: Any, tools: list[tuple[str, dict[str, Any]]],
             trajectories: int) -> None:
    """Issue 31's target: the verdict at calls 91-100 of a trajectory of varied traffic beside
    calls 2-11 (call 1 pays for first uses), per call, median over ``trajectories`` seeded
    trajectories; the collector off while timing, as ``timeit`` has it."""
    import gc

    import plancheck

    flows = [0, 0]  # inferred flows in calls 2-11, in calls 91-100
    medians = []
    for read_flows in (False, True):
        firsts, lasts = [], []
        for seed in range(trajectories):
            calls = _traffic(tools, 100, seed=seed)
            guard = plancheck.Guard(pool)
            spent = []
            gc.disable()
            try:
                for position, (tool, arguments, result) in enumerate(calls):
                    call = {"name": tool, "arguments": arguments, "id": f"c{position}"}
                    start = time.process_time()
                    verdict = guard.propose(call)
                    assert isinstance(verdict, plancheck.Verdict)
                    if read_flows:
                        found = len(verdict.flows)
                    spent.append(time.process_time() - start)
                    guard.record(verdict.call_id, result)
                    if read_flows and (1 <= position <= 10 or position >= 90):
                        flows[position >= 90] += found
            finally:
                gc.enable()
            firsts.append(sum(spent[1:11]) / 10)
            lasts.append(sum(spent[90:]) / 10)
        medians.append((statistics.median(firsts), statistics.median(lasts)))
    per_call = [found / (10 * trajectories) for found in flows]
    (first, last), (read_first, read_last) = medians
    print(f"{'':<20} calls 91-100 vs calls 2-11: {last * 1e6:.1f} µs vs {first * 1e6:.1f} µs "
          f"({last / first:.2f}x); each verdict's flows read: {read_last * 1e6:.1f} µs vs "
          f"{read_first * 1e6:.1f} µs ({read_last / read_first:.2f}x), inferred flows per call "
          f"{per_call[1]:.1f} vs {per_call[0]:.1f}")


def with_policies() -> None:
    """Issue 23's target: ``propose`` with the 20 rules of ``bench_policy.py`` beside none, on
    its 100-call GitHub trajectory (results of 10 KB, provenance on), call 1 and call 100.
    The rules hold a flow rule, so each call's flows are inferred as it is proposed; without
    rules the verdict's flows are read in the timed part, so both infer the same flows."""
    import plancheck

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_policy import POLICY, trajectory

    github = json.loads(POOLS["mcp github"].read_text(encoding="utf-8"))
    calls = trajectory()
    medians = {}
    for label, policies in (("no rules", None), ("20 rules", POLICY)):  # (flows read)
        first, last = [], []
        for _ in range(15):
            guard = plancheck.Guard(github, profile="default", policies=policies)
            for position, (tool, arguments, result) in enumerate(calls):
                call = {"name": tool, "arguments": arguments, "id": f"call_{position}"}
                start = time.process_time()
                verdict = guard.propose(call)
                assert isinstance(verdict, plancheck.Verdict)
                verdict.flows  # noqa: B018 (inferred as proposed when a rule reads them)
                spent = time.process_time() - start
                guard.record(verdict.call_id, result)
                if position == 0:
                    first.append(spent)
                elif position == len(calls) - 1:
                    last.append(spent)
        medians[label] = (statistics.median(first), statistics.median(last))
        print(f"{label:<9} call 1 {medians[label][0] * 1e6:7.1f} µs, call 100 "
              f"{medians[label][1] * 1e6:7.1f} µs "
              f"({medians[label][1] / medians[label][0]:.2f}x)")
    print(f"20 rules vs none at call 100: "
          f"{medians['20 rules'][1] / medians['no rules'][1]:.2f}x")


def shapes() -> None:
    """``propose`` of one call written in each shape loops send (a bare ``{name, arguments,
    id}``, an OpenAI ``tool_calls`` item, an Anthropic ``tool_use`` block), provenance off, on
    the MCP filesystem pool: what reading a shape (and asking whether the object reads as two
    calls, PC122) adds to a verdict."""
    import plancheck

    pool = plancheck.load_toolset(POOLS["mcp filesystem"])
    guard = plancheck.Guard(pool, provenance=False)
    arguments = {"path": "notes.txt"}
    written: dict[str, Callable[[int], dict[str, Any]]] = {
        "bare": lambda i: {"id": f"b{i}", "name": "read_text_file", "arguments": arguments},
        "openai": lambda i: {"id": f"o{i}", "type": "function", "function": {
            "name": "read_text_file", "arguments": json.dumps(arguments)}},
        "anthropic": lambda i: {"type": "tool_use", "id": f"a{i}", "name": "read_text_file",
                                "input": arguments},
    }
    line = []
    for label, make in written.items():
        runs = []
        for sample in range(15):
            calls = [make(sample * 1000 + i) for i in range(300)]
            start = time.process_time()
            for call in calls:
                guard.propose(call)
            runs.append((time.process_time() - start) / len(calls) * 1e6)
        line.append(f"{label} {statistics.median(runs):.1f} µs")
    print("propose by shape (mcp filesystem, provenance off): " + ", ".join(line))


def cold_start() -> None:
    """A fresh process: import plancheck, load the GitHub pool from its file, first verdict;
    its CPU time (user and system, from ``RUSAGE_CHILDREN``) and wall time, median of 15."""
    import resource

    code = ("import json, plancheck\n"
            f"pool = plancheck.load_toolset({str(POOLS['mcp github'])!r})\n"
            "name = next(iter(pool.tools))\n"
            "plancheck.Guard(pool).propose({'name': name, 'arguments': {}})\n")
    # As an installed plancheck starts: from its cached bytecode (a PYTHONDONTWRITEBYTECODE
    # inherited from the shell would make every run compile the sources again), warmed once.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    walls, cpus = [], []
    for _ in range(15):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    print(f"cold start (import, load the GitHub pool, first verdict): "
          f"{statistics.median(cpus) * 1e3:.0f} ms CPU, "
          f"{statistics.median(walls) * 1e3:.0f} ms wall")


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    for label, (pool, tools) in _pools().items():
        per_tool(label, pool, tools, samples=5 if quick else 11)
        hundred_calls(label, pool, tools, samples=5 if quick else 10)
        flatness(label, pool, tools, trajectories=5 if quick else 15)
    shapes()
    if not quick:
        with_policies()
        cold_start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
