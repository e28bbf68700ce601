"""plancheck.Guard per call, beside the per-call check agent developers write by hand.

    python bench/bench_guard.py

For each pool (the built-in DisasterBench pool, DORA's 108 tools, the MCP filesystem, GitHub,
memory and fetch servers' real ``tools/list`` captures merged into one 50-tool pool, and the
first two of them alone): ``Guard.propose`` of one valid call (CPU time, median of 25 samples
of 200 calls) beside a ``jsonschema`` Draft 2020-12 validator, built once per tool, validating
the same arguments, and ``fastjsonschema``'s compiled validator; 100 calls over the pool's
tools proposed and recorded by a fresh guard beside the same 100 validated; then the verdict at
calls 91-100 of a trajectory beside calls 1-10 (each call recorded with a 10 KB result);
100 calls with results of about 10 KB, provenance on and off, beside the jsonschema loop;
and the cold start of a fresh process (import plancheck, load the GitHub pool from its file,
first verdict), CPU and wall time, median of 15. Prints numbers and ratios, no pass or fail.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
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


def per_call(label: str, pool: Any, tools: list[tuple[str, dict[str, Any]]]) -> None:
    """``propose`` of one valid call of the first tool with required arguments; and 100 such
    calls over the pool's tools proposed and recorded, beside validating the same 100."""
    import fastjsonschema
    import jsonschema

    import plancheck

    name, schema = next((n, s) for n, s in tools if s.get("required"))
    arguments = _valid_arguments(schema)
    guard = plancheck.Guard(pool)
    call = {"name": name, "arguments": arguments}
    assert guard.propose(call).allowed, guard.propose(call).feedback

    validator = jsonschema.Draft202012Validator(schema)
    compiled = fastjsonschema.compile(schema)
    guard_us, jsonschema_us = _paired(lambda: guard.propose(call),  # (the trajectory grows:
                                      lambda: validator.validate(arguments))  # flat, see below)
    fast_us = _cpu(lambda: compiled(arguments))
    print(f"{label:<20} propose {guard_us:7.1f} µs | jsonschema {jsonschema_us:6.1f} µs "
          f"({guard_us / jsonschema_us:4.2f}x) | fastjsonschema {fast_us:5.1f} µs")

    calls = [(n, s, _valid_arguments(s)) for n, s in (tools * 100)[:100]]
    validators = {n: jsonschema.Draft202012Validator(s) for n, s, _ in calls}
    plancheck.Guard(pool).propose({"name": calls[0][0], "arguments": calls[0][2]})  # warm

    def loop_guard() -> None:
        fresh = plancheck.Guard(pool)
        for position, (tool, _, args) in enumerate(calls):
            verdict = fresh.propose({"name": tool, "arguments": args, "id": f"c{position}"})
            fresh.record(verdict.call_id, {"content": [{"type": "text", "text": "done"}]})

    def loop_jsonschema() -> None:
        for tool, _, args in calls:
            validators[tool].validate(args)

    guard_total, schema_total = _paired(loop_guard, loop_jsonschema, loops=3, samples=10)
    print(f"{'':<20} 100 calls proposed and recorded {guard_total / 1e3:6.2f} ms | "
          f"jsonschema loop {schema_total / 1e3:6.2f} ms ({guard_total / schema_total:4.2f}x)")


def flatness(pool: Any, tools: list[dict[str, Any]]) -> None:
    """The verdict at calls 91-100 of a trajectory beside calls 1-10 (each call recorded with a
    10 KB result), per call, median over 30 trajectories; the collector off while timing, as
    ``timeit`` has it (a collection falls on whichever call allocates last, not on the one
    that made the garbage)."""
    import gc

    import plancheck

    tool = next(t for t in tools if t["inputSchema"].get("required"))
    arguments = _valid_arguments(tool["inputSchema"])
    big = {"text": "x" * 10_000}
    firsts, lasts = [], []
    for _ in range(30):
        guard = plancheck.Guard(pool)
        spent = []
        gc.disable()
        try:
            for i in range(100):
                call = {"name": tool["name"], "arguments": arguments, "id": f"c{i}"}
                start = time.process_time()
                verdict = guard.propose(call)
                spent.append(time.process_time() - start)
                assert verdict.allowed
                guard.record(verdict.call_id, big)
        finally:
            gc.enable()
        firsts.append(sum(spent[:10]) / 10)
        lasts.append(sum(spent[90:]) / 10)
    first, last = statistics.median(firsts), statistics.median(lasts)
    print(f"calls 91-100 vs calls 1-10: {last * 1e6:.1f} µs vs {first * 1e6:.1f} µs "
          f"({last / first:.2f}x)")


def with_policies() -> None:
    """Issue 23's target: ``propose`` with the 20 rules of ``bench_policy.py`` beside none, on
    its 100-call GitHub trajectory (results of 10 KB, provenance on), call 1 and call 100."""
    import plancheck

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_policy import POLICY, trajectory

    github = json.loads(POOLS["mcp github"].read_text(encoding="utf-8"))
    calls = trajectory()
    medians = {}
    for label, policies in (("no rules", None), ("20 rules", POLICY)):
        first, last = [], []
        for _ in range(15):
            guard = plancheck.Guard(github, profile="default", policies=policies)
            for position, (tool, arguments, result) in enumerate(calls):
                call = {"name": tool, "arguments": arguments, "id": f"call_{position}"}
                start = time.process_time()
                verdict = guard.propose(call)
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


def long_results() -> None:
    """100 calls of ``bench_policy.py``'s GitHub trajectory (results of about 10 KB)
    proposed and recorded by a fresh guard, provenance on and off, beside the per-call
    ``jsonschema`` loop over the same arguments: what recording long results costs."""
    import jsonschema

    import plancheck

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_policy import trajectory

    github = json.loads(POOLS["mcp github"].read_text(encoding="utf-8"))
    schemas = {t["name"]: t["inputSchema"] for t in github["tools"]}
    calls = trajectory()
    validators = {tool: jsonschema.Draft202012Validator(schemas[tool]) for tool, _, _ in calls}

    def loop_guard(provenance: bool) -> None:
        guard = plancheck.Guard(github, provenance=provenance)
        for position, (tool, arguments, result) in enumerate(calls):
            verdict = guard.propose({"name": tool, "arguments": arguments,
                                     "id": f"call_{position}"})
            guard.record(verdict.call_id, result)

    def loop_jsonschema() -> None:
        for tool, arguments, _ in calls:
            validators[tool].validate(arguments)

    for provenance in (True, False):
        guard_total, schema_total = _paired(lambda on=provenance: loop_guard(on), loop_jsonschema,
                                            loops=3, samples=10)
        print(f"GitHub trajectory, 10 KB results, provenance {'on ' if provenance else 'off'}: "
              f"100 calls proposed and recorded {guard_total / 1e3:6.2f} ms | jsonschema loop "
              f"{schema_total / 1e3:6.2f} ms ({guard_total / schema_total:4.2f}x)")


def cold_start() -> None:
    """A fresh process: import plancheck, load the GitHub pool from its file, first verdict;
    its CPU time (user and system, from ``RUSAGE_CHILDREN``) and wall time, median of 15."""
    import resource

    code = ("import json, plancheck\n"
            f"pool = plancheck.load_toolset({str(POOLS['mcp github'])!r})\n"
            "name = next(iter(pool.tools))\n"
            "plancheck.Guard(pool).propose({'name': name, 'arguments': {}})\n")
    walls, cpus = [], []
    for _ in range(15):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    print(f"cold start (import, load the GitHub pool, first verdict): "
          f"{statistics.median(cpus) * 1e3:.0f} ms CPU, "
          f"{statistics.median(walls) * 1e3:.0f} ms wall")


def main() -> int:
    for label, (pool, tools) in _pools().items():
        per_call(label, pool, tools)
    github = json.loads(POOLS["mcp github"].read_text(encoding="utf-8"))
    flatness(github, github["tools"] if "tools" in github else github["result"]["tools"])
    with_policies()
    long_results()
    cold_start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
