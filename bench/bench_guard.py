"""plancheck.Guard per call, beside the per-call check agent developers write by hand.

    python bench/bench_guard.py

For each pool (the MCP filesystem and GitHub servers' real ``tools/list`` captures):
``Guard.propose`` of one valid call (CPU time, median of 25 samples of 200 calls) beside a
``jsonschema`` Draft 2020-12 validator, built once per tool, validating the same arguments,
and ``fastjsonschema``'s compiled validator; then the verdict at call 100 of a trajectory
beside the verdict at call 1 (each call recorded with a 10 KB result); and the cold start of
a fresh process (import plancheck, load the GitHub pool from its file, first verdict), median
of 7. Prints numbers and ratios, no pass or fail.
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


def _valid_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments that fill each required property with a value of its type."""
    samples = {"string": "a", "integer": 1, "number": 1.5, "boolean": True, "array": [],
               "object": {}}
    arguments: dict[str, Any] = {}
    for name in schema.get("required", []):
        kind = schema.get("properties", {}).get(name, {}).get("type", "string")
        kind = kind[0] if isinstance(kind, list) else kind
        arguments[name] = samples.get(kind, "a")
    return arguments


def per_call(label: str, pool: Any, tools: list[dict[str, Any]]) -> None:
    import fastjsonschema
    import jsonschema

    import plancheck

    tool = next(t for t in tools if t["inputSchema"].get("required"))
    arguments = _valid_arguments(tool["inputSchema"])
    guard = plancheck.Guard(pool)
    call = {"name": tool["name"], "arguments": arguments}
    assert guard.propose(call).allowed, guard.propose(call).feedback

    validator = jsonschema.Draft202012Validator(tool["inputSchema"])
    compiled = fastjsonschema.compile(tool["inputSchema"])
    guard_us = _cpu(lambda: guard.propose(call))  # (the trajectory grows: flat, see below)
    jsonschema_us = _cpu(lambda: validator.validate(arguments))
    fast_us = _cpu(lambda: compiled(arguments))
    print(f"{label:<16} propose {guard_us:7.1f} µs | jsonschema {jsonschema_us:6.1f} µs "
          f"({guard_us / jsonschema_us:4.2f}x) | fastjsonschema {fast_us:5.1f} µs")


def flatness(pool: Any, tools: list[dict[str, Any]]) -> None:
    import plancheck

    tool = next(t for t in tools if t["inputSchema"].get("required"))
    arguments = _valid_arguments(tool["inputSchema"])
    big = {"text": "x" * 10_000}
    firsts, hundredths = [], []
    for _ in range(15):
        guard = plancheck.Guard(pool)
        for i in range(100):
            call = {"name": tool["name"], "arguments": arguments, "id": f"c{i}"}
            start = time.process_time()
            verdict = guard.propose(call)
            spent = time.process_time() - start
            assert verdict.allowed
            guard.record(verdict.call_id, big)
            if i == 0:
                firsts.append(spent)
            elif i == 99:
                hundredths.append(spent)
    first, last = statistics.median(firsts), statistics.median(hundredths)
    print(f"call 100 vs call 1: {last * 1e6:.1f} µs vs {first * 1e6:.1f} µs "
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


def cold_start() -> None:
    code = ("import json, plancheck\n"
            f"pool = plancheck.load_toolset({str(POOLS['mcp github'])!r})\n"
            "name = next(iter(pool.tools))\n"
            "plancheck.Guard(pool).propose({'name': name, 'arguments': {}})\n")
    times = []
    for _ in range(7):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - start)
    print(f"cold start (import, load the GitHub pool, first verdict): "
          f"{statistics.median(times) * 1e3:.0f} ms wall")


def main() -> int:
    for label, path in POOLS.items():
        data = json.loads(path.read_text(encoding="utf-8"))
        tools = data["tools"] if "tools" in data else data["result"]["tools"]
        per_call(label, data, tools)
    github = json.loads(POOLS["mcp github"].read_text(encoding="utf-8"))
    flatness(github, github["tools"] if "tools" in github else github["result"]["tools"])
    with_policies()
    cold_start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
