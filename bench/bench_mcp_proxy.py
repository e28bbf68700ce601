"""What ``plancheck mcp-proxy`` adds to a ``tools/call`` round trip, side by side with direct.

    python bench/bench_mcp_proxy.py [--calls 200] [--sizes 1,4,8] [--policy] [--fastmcp]

A byte-level client (one JSON-RPC line out, its answer back) calls the test server
(``tests/support/mcp_notes_server.py``, the MCP SDK's MCPServer over stdio) directly and
through the proxy, the two interleaved a call at a time: ``--calls`` small ``write_note``
calls, then a few with a ``text`` argument of each size in ``--sizes`` (MB). Prints the median
wall time of a round trip each way, the added time and the ratio, the proxy's CPU time per
call, and the proxy's peak memory (VmHWM) against the issue's bound (2x the largest message +
80 MB). Targets (issue 32): at most +1 ms a small call, at most 1.3x direct with 1-8 MB.
``--fastmcp`` measures, in place of ``plancheck mcp-proxy``, FastMCP's ``create_proxy`` over
stdio with plancheck's ``GuardMiddleware`` (what ``--url``/``--transport http|sse`` run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, str(ROOT / "tests" / "support" / "mcp_notes_server.py")]
FASTMCP_PROXY = """
import os, sys
from fastmcp.client.transports import StdioTransport
from fastmcp.server import create_proxy
from plancheck.integrations.mcp.fastmcp_guard import GuardMiddleware
proxy = create_proxy(StdioTransport(sys.argv[1], sys.argv[2:], env=dict(os.environ)))
proxy.add_middleware(GuardMiddleware(policies=os.environ.get("BENCH_POLICY")))
proxy.run(show_banner=False)
"""


class Peer:
    """A process spoken to one line at a time."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.ids = 0

    def ask(self, method: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.ids += 1
        data = json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method,
                           "params": params}).encode() + b"\n"
        start = time.perf_counter()
        self.process.stdin.write(data)
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"{method}: the process ended")
            reply = json.loads(line)
            if reply.get("id") == self.ids:
                return time.perf_counter() - start, reply

    def start(self) -> None:
        assert self.process.stdin is not None
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "0"}})
        self.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.process.stdin.flush()

    def cpu(self) -> float:
        with open(f"/proc/{self.process.pid}/stat", encoding="utf-8") as handle:
            fields = handle.read().rsplit(") ", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def peak_mb(self) -> float:
        with open(f"/proc/{self.process.pid}/status", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def _round(peers: list[tuple[Peer, list[float]]], index: int, params: dict[str, Any]) -> None:
    for peer, times in peers[:: 1 if index % 2 == 0 else -1]:
        elapsed, reply = peer.ask("tools/call", params)
        assert not reply.get("result", {}).get("isError"), reply
        times.append(elapsed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--large-calls", type=int, default=5)
    parser.add_argument("--sizes", default="1,4,8", help="MB, comma-separated")
    parser.add_argument("--fastmcp", action="store_true",
                        help="FastMCP's proxy with GuardMiddleware instead of mcp-proxy")
    parser.add_argument("--policy", action="store_true",
                        help="guard with a policy too (provenance on every call)")
    args = parser.parse_args()
    options: list[str] = []
    if args.policy:
        policy = Path(tempfile.mkdtemp()) / "p.wf"
        policy.write_text('policy p "x" {\n  forbid flow from read_note to write_note.name\n}\n',
                          encoding="utf-8")
        options = ["--policy", str(policy)]
        os.environ["BENCH_POLICY"] = str(policy)
    direct = Peer(SERVER)
    proxied = Peer([sys.executable, "-c", FASTMCP_PROXY, *SERVER] if args.fastmcp else
                   [sys.executable, "-m", "plancheck", "mcp-proxy", *options, "--", *SERVER])
    for peer in (direct, proxied):
        peer.start()
        peer.ask("tools/call", {"name": "write_note", "arguments": {"name": "w", "text": "w"}})
    rows = []
    d_times: list[float] = []
    p_times: list[float] = []
    cpu0 = proxied.cpu()
    for index in range(args.calls):
        _round([(direct, d_times), (proxied, p_times)], index,
               {"name": "write_note", "arguments": {"name": f"n{index}", "text": "hello"}})
    cpu_small = (proxied.cpu() - cpu0) / args.calls
    rows.append(("small", d_times, p_times, cpu_small))
    largest = 0
    for size in (int(s) for s in args.sizes.split(",") if s):
        text = "x" * (size << 20)
        largest = max(largest, len(text))
        d_times, p_times = [], []
        cpu0 = proxied.cpu()
        for index in range(args.large_calls):
            _round([(direct, d_times), (proxied, p_times)], index,
                   {"name": "write_note", "arguments": {"name": "big", "text": text}})
        rows.append((f"{size} MB", d_times, p_times,
                     (proxied.cpu() - cpu0) / args.large_calls))
    peak = proxied.peak_mb()
    direct.close()
    proxied.close()
    name = "FastMCP create_proxy + GuardMiddleware" if args.fastmcp else "plancheck mcp-proxy"
    print(f"{name}{' --policy' if args.policy else ''} vs direct "
          f"(median wall time of a tools/call round trip, interleaved):")
    for label, d, p, cpu in rows:
        dm, pm = statistics.median(d) * 1e3, statistics.median(p) * 1e3
        print(f"  {label:>6}: direct {dm:8.2f} ms, proxied {pm:8.2f} ms: +{pm - dm:6.2f} ms "
              f"({pm / dm:.2f}x); proxy CPU {cpu * 1e3:.2f} ms a call ({len(d)} calls)")
    bound = 2 * largest / 2**20 + 80
    print(f"  proxy peak memory {peak:.0f} MB (bound: 2 x {largest / 2**20:.0f} MB + 80 MB "
          f"= {bound:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
