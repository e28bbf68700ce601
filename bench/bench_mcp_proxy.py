"""What ``plancheck mcp-proxy`` adds to a ``tools/call`` round trip.

    python bench/bench_mcp_proxy.py [--calls 300]

The MCP SDK's client calls the test server (``tests/support/mcp_notes_server.py``, the SDK's
MCPServer over stdio) directly and through the proxy, the two sessions interleaved a call at
a time; prints the median wall time of a round trip each way and the difference (the issue's
target: at most 2 ms).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, str(ROOT / "tests" / "support" / "mcp_notes_server.py")]
PROXY = [sys.executable, "-m", "plancheck", "mcp-proxy", "--", *SERVER]


async def measure(calls: int) -> tuple[list[float], list[float]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    direct_params = StdioServerParameters(command=SERVER[0], args=SERVER[1:], env=env)
    proxy_params = StdioServerParameters(command=PROXY[0], args=PROXY[1:], env=env)
    direct_times: list[float] = []
    proxy_times: list[float] = []
    async with stdio_client(direct_params) as (r1, w1), ClientSession(r1, w1) as direct, \
            stdio_client(proxy_params) as (r2, w2), ClientSession(r2, w2) as proxied:
        await direct.initialize()
        await proxied.initialize()
        for session in (direct, proxied):  # warm-up: the proxy reads the pool on its first call
            await session.call_tool("read_note", {"name": "warm"})
        for index in range(calls):
            for session, times in ((direct, direct_times), (proxied, proxy_times))[
                    :: 1 if index % 2 == 0 else -1]:
                start = time.perf_counter()
                result = await session.call_tool("read_note", {"name": f"n{index}"})
                times.append(time.perf_counter() - start)
                assert not result.is_error
    return direct_times, proxy_times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    direct, proxied = anyio.run(measure, args.calls)
    d, p = statistics.median(direct) * 1e3, statistics.median(proxied) * 1e3
    print(f"{args.calls} tools/call round trips each, interleaved: direct {d:.2f} ms, through "
          f"plancheck mcp-proxy {p:.2f} ms: +{p - d:.2f} ms a call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
