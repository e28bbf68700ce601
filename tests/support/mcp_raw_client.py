"""A byte-level MCP client for the proxy's tests: it writes exact bytes to ``plancheck
mcp-proxy`` (or to a server directly) and reads each line it answers, every wait bounded."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RAW_SERVER = [sys.executable, str(ROOT / "tests" / "support" / "mcp_raw_server.py")]
INITIALIZE = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def proxy_command(*options: str, server: list[str] | None = None) -> list[str]:
    return [sys.executable, "-m", "plancheck", "mcp-proxy", *options, "--",
            *(RAW_SERVER if server is None else server)]


def line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


def call(request_id: Any, tool: str, arguments: dict[str, Any] | None = None,
         **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments or {}, **extra}}


class RawClient:
    """The proxy (or a server) as a subprocess; ``send`` bytes, ``reply(id)`` its answer."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.seen: list[Any] = []
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self.lines.put(raw)
        self.lines.put(b"")

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()

    def send(self, data: bytes | dict[str, Any] | list[Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data if isinstance(data, bytes) else line(data))
        self.process.stdin.flush()

    def next(self, timeout: float = 30) -> Any:
        """The next message the process writes (None at its end)."""
        raw = self.lines.get(timeout=timeout)
        if not raw:
            self.lines.put(b"")
            return None
        try:
            message = json.loads(raw)
        except ValueError:
            message = {"unparsed": raw.decode("utf-8", "replace")}
        self.seen.append(message)
        return message

    def reply(self, request_id: Any, timeout: float = 30) -> dict[str, Any]:
        """The answer to ``request_id`` (what else comes first is kept in ``seen``)."""
        deadline = time.monotonic() + timeout
        for message in self.seen:
            if isinstance(message, dict) and message.get("id") == request_id and \
                    "method" not in message:
                return message
        while True:
            message = self.next(max(0.01, deadline - time.monotonic()))
            if message is None:
                raise AssertionError(f"the process ended without answering {request_id!r}")
            if isinstance(message, dict) and message.get("id") == request_id and \
                    "method" not in message:
                return dict(message)

    def start(self) -> None:
        self.send(INITIALIZE)
        self.reply("init")
        self.send(INITIALIZED)

    def close(self, timeout: float = 30) -> int:
        """Closes the input; the rest of the output is read; the exit status."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        while (message := self.next(timeout)) is not None:
            del message
        return code

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *_: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def raw_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]


def ran(path: Path) -> list[str]:
    """The tools the raw server ran, in order."""
    return [entry["ran"] for entry in raw_log(path) if "ran" in entry]
