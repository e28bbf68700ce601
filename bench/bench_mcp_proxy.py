"""What ``plancheck mcp-proxy`` adds to a ``tools/call`` round trip, side by side with direct.

    python bench/bench_mcp_proxy.py [--calls 200] [--sizes 1,4,8] [--policy] [--fastmcp]
                                    [--compare OTHER_TREE]

A byte-level client (one JSON-RPC line out, its answer back) calls the test server
(``tests/support/mcp_notes_server.py``, the MCP SDK's MCPServer over stdio) directly and
through the proxy, the two interleaved a call at a time: ``--calls`` small ``write_note``
calls, then ``--large-calls`` with a ``text`` argument of each size in ``--sizes`` (MB).
Prints the median wall time of a round trip each way, the added time and the ratio, the CPU
time per call of the proxy and of the server behind it, and the proxy's peak memory (VmHWM)
against the issue's bound (2x the largest message + 80 MB). Targets (issue 32): at most +1 ms
a small call, at most 1.3x direct with 1-8 MB.
``--fastmcp`` measures, in place of ``plancheck mcp-proxy``, FastMCP's ``create_proxy`` over
stdio with plancheck's ``GuardMiddleware`` (what ``--url``/``--transport http|sse`` run).
``--compare OTHER_TREE`` adds, interleaved with the two, ``mcp-proxy`` as another checkout of
plancheck runs it (say the main branch's, against a change).
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
proxy.add_middleware(GuardMiddleware(policies=os.environ.get("BENCH_POLICY"), keep_arguments=False))
proxy.run(show_banner=False)
"""


def _cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
        fields = handle.read().rsplit(") ", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Peer:
    """A process spoken to one line at a time."""

    def __init__(self, command: list[str], tree: Path = ROOT) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        env={**os.environ, "PYTHONPATH": str(tree)},
                                        cwd=tree)  # (python -m reads the current directory first)
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
        return _cpu(self.process.pid)

    def server_cpu(self) -> float:
        """The CPU time of the MCP server: this process's, or its child's for a proxy."""
        with open(f"/proc/{self.process.pid}/task/{self.process.pid}/children",
                  encoding="utf-8") as handle:
            children = handle.read().split()
        return _cpu(int(children[0])) if children else self.cpu()

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


class Leg:
    """One way of reaching the server, and what its calls took."""

    def __init__(self, label: str, peer: Peer) -> None:
        self.label = label
        self.peer = peer
        self.times: list[float] = []
        self.cpu0 = self.server0 = 0.0

    def begin(self) -> None:
        self.times = []
        self.cpu0, self.server0 = self.peer.cpu(), self.peer.server_cpu()

    def cpu_per_call(self) -> tuple[float, float]:
        """This leg's CPU time a call (the proxy's, or the server's when direct), and its
        server's."""
        return ((self.peer.cpu() - self.cpu0) / len(self.times),
                (self.peer.server_cpu() - self.server0) / len(self.times))


def _measure(legs: list[Leg], count: int,
             params: Any) -> list[tuple[list[float], tuple[float, float]]]:
    """``count`` rounds of one call on every leg, in an order that turns each round."""
    for leg in legs:
        leg.begin()
    for index in range(count):
        for leg in legs[index % len(legs):] + legs[:index % len(legs)]:
            elapsed, reply = leg.peer.ask("tools/call", params(index))
            assert not reply.get("result", {}).get("isError"), reply
            leg.times.append(elapsed)
    return [(leg.times, leg.cpu_per_call()) for leg in legs]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--large-calls", type=int, default=5)
    parser.add_argument("--sizes", default="1,4,8", help="MB, comma-separated")
    parser.add_argument("--fastmcp", action="store_true",
                        help="FastMCP's proxy with GuardMiddleware instead of mcp-proxy")
    parser.add_argument("--policy", action="store_true",
                        help="guard with a policy too (provenance on every call)")
    parser.add_argument("--compare", type=Path, metavar="OTHER_TREE",
                        help="also mcp-proxy as the plancheck checkout OTHER_TREE runs it")
    args = parser.parse_args()
    options: list[str] = []
    if args.policy:
        policy = Path(tempfile.mkdtemp()) / "p.wf"
        policy.write_text('policy p "x" {\n  forbid flow from read_note to write_note.name\n}\n',
                          encoding="utf-8")
        options = ["--policy", str(policy)]
        os.environ["BENCH_POLICY"] = str(policy)
    proxy = [sys.executable, "-m", "plancheck", "mcp-proxy", *options, "--", *SERVER]
    name = "FastMCP create_proxy + GuardMiddleware" if args.fastmcp else "plancheck mcp-proxy"
    legs = [Leg("direct", Peer(SERVER)),
            Leg("proxied", Peer([sys.executable, "-c", FASTMCP_PROXY, *SERVER]
                                if args.fastmcp else proxy))]
    if args.compare is not None:
        legs.append(Leg(f"{args.compare}", Peer(proxy, args.compare.resolve())))
    for leg in legs:
        leg.peer.start()
        leg.peer.ask("tools/call", {"name": "write_note", "arguments": {"name": "w", "text": "w"}})
    rows = [("small", _measure(legs, args.calls, lambda index: {
        "name": "write_note", "arguments": {"name": f"n{index}", "text": "hello"}}))]
    largest = 0
    for size in (int(s) for s in args.sizes.split(",") if s):
        text = "x" * (size << 20)
        largest = max(largest, len(text))
        rows.append((f"{size} MB", _measure(legs, args.large_calls, lambda _index, text=text: {
            "name": "write_note", "arguments": {"name": "big", "text": text}})))
    peaks = [leg.peer.peak_mb() for leg in legs[1:]]
    for leg in legs:
        leg.peer.close()
    print(f"{name}{' --policy' if args.policy else ''} vs direct "
          f"(median wall time of a tools/call round trip, interleaved):")
    for label, measured in rows:
        (direct, (server, _)), *proxied = measured
        dm = statistics.median(direct) * 1e3
        print(f"  {label:>6}: direct {dm:8.2f} ms ({len(direct)} calls; server CPU "
              f"{server * 1e3:.1f} ms a call)")
        for leg, (times, (cpu, server)) in zip(legs[1:], proxied, strict=True):
            pm = statistics.median(times) * 1e3
            print(f"          {leg.label}: {pm:8.2f} ms: +{pm - dm:6.2f} ms ({pm / dm:.2f}x); "
                  f"proxy CPU {cpu * 1e3:.1f} ms a call (server {server * 1e3:.1f} ms)")
    bound = 2 * largest / 2**20 + 80
    for leg, peak in zip(legs[1:], peaks, strict=True):
        print(f"  {leg.label} peak memory {peak:.0f} MB (bound: 2 x {largest / 2**20:.0f} MB "
              f"+ 80 MB = {bound:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
