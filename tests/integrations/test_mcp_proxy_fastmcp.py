"""The guard on FastMCP: as a middleware of a FastMCP server, and ``plancheck mcp-proxy``
served over Streamable HTTP and SSE, or in front of a server over HTTP (``--url``), driven by
the MCP Python SDK's client. Servers listen on 127.0.0.1 only, each bounded and killed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

fastmcp = pytest.importorskip("fastmcp", reason="FastMCP is not installed (plancheck[fastmcp])")

from tests.support.mcp_raw_client import RawClient, call, proxy_command  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTES = [sys.executable, str(ROOT / "tests" / "support" / "fastmcp_notes_server.py")]
POLICY = 'policy ro "read only" {\n  forbid write_note after read_note\n}\n'


def _policy(tmp_path: Path) -> str:
    path = tmp_path / "p.wf"
    path.write_text(POLICY, encoding="utf-8")
    return str(path)


def _calls(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [json.loads(text)["tool"] for text in log.read_text(encoding="utf-8").splitlines()]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def _serving(command: list[str], port: int, env: dict[str, str]) -> Iterator[None]:
    process = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                stderr = process.stderr.read().decode() if process.stderr else ""
                raise AssertionError(f"the server did not listen on {port}: {stderr[-2000:]}")
            time.sleep(0.1)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _sdk_session(target: Any) -> tuple[Any, Any, Any]:
    from mcp.client.client import Client

    async def main() -> tuple[Any, Any, Any]:
        async with Client(target) as client:
            with anyio.fail_after(60):
                good = await client.call_tool("read_note", {"name": "a"})
                typo = await client.call_tool("write_note", {"name": "b", "txt": "x"})
                refused = await client.call_tool("write_note", {"name": "b", "text": "x"})
                return good, typo, refused

    return anyio.run(main)


def _check(results: tuple[Any, Any, Any], log: Path) -> None:
    good, typo, refused = results
    assert not good.is_error and "note a" in good.content[0].text
    assert typo.is_error and "did you mean `text`?" in typo.content[0].text
    assert refused.is_error and "policy ro" in refused.content[0].text
    assert _calls(log) == ["read_note"]


def test_the_middleware_on_a_fastmcp_server(tmp_path: Path) -> None:
    from fastmcp import Client, FastMCP

    from plancheck.integrations.mcp.fastmcp_guard import GuardMiddleware

    ran: list[dict[str, Any]] = []
    server = FastMCP("notes")

    @server.tool()
    def read_note(name: str) -> dict[str, str]:
        ran.append({"read_note": name})
        return {"text": f"note {name}"}

    @server.tool()
    def write_note(name: str, text: str) -> str:
        ran.append({"write_note": name})
        return f"wrote {name}"

    server.add_middleware(GuardMiddleware(policies=POLICY))

    async def main() -> list[Any]:
        async with Client(server) as client:
            return [await client.call_tool("read_note", {"name": "a"}, raise_on_error=False),
                    await client.call_tool("write_note", {"name": "b", "text": "x"},
                                           raise_on_error=False)]

    good, refused = anyio.run(main)
    assert not good.is_error and refused.is_error
    assert "policy ro" in refused.content[0].text
    assert ran == [{"read_note": "a"}]


@pytest.mark.slow
@pytest.mark.parametrize(("transport", "path"), [("http", "/mcp"), ("sse", "/sse")])
def test_served_over_http_and_sse(tmp_path: Path, transport: str, path: str) -> None:
    log = tmp_path / "calls.jsonl"
    port = _free_port()
    command = proxy_command("--transport", transport, "--port", str(port), "--policy",
                            _policy(tmp_path), server=NOTES)
    with _serving(command, port, {"NOTES_CALL_LOG": str(log)}):
        if transport == "http":
            results = _sdk_session(f"http://127.0.0.1:{port}{path}")
        else:
            from mcp.client.sse import sse_client

            results = _sdk_session(sse_client(f"http://127.0.0.1:{port}{path}"))
    _check(results, log)


@pytest.mark.slow
@pytest.mark.parametrize(("transport", "path"), [("http", "/mcp"), ("sse", "/sse")])
def test_in_front_of_a_server_over_http_and_sse(tmp_path: Path, transport: str,
                                                path: str) -> None:
    log = tmp_path / "calls.jsonl"
    port = _free_port()
    with _serving([*NOTES, transport, str(port)], port, {"NOTES_CALL_LOG": str(log)}), \
            RawClient(proxy_command("--url", f"http://127.0.0.1:{port}{path}", "--policy",
                                    _policy(tmp_path), server=[])) as client:
        client.start()
        client.send(call(1, "read_note", {"name": "a"}))
        client.send(call(2, "write_note", {"name": "b", "text": "x"}))
        good, refused = client.reply(1, 60), client.reply(2, 60)
        client.close()
    assert "note a" in json.dumps(good)
    assert refused["result"]["isError"] is True and "policy ro" in json.dumps(refused)
    assert _calls(log) == ["read_note"]


@pytest.mark.slow
def test_in_front_of_a_server_over_http_the_references_are_the_proxys(tmp_path: Path) -> None:
    """``--references`` holds on every transport: in front of a server over HTTP, a template
    naming an earlier result runs with that result's value (it ran as the template's text),
    and one naming a call that has not run is refused."""
    log = tmp_path / "calls.jsonl"
    port = _free_port()
    with _serving([*NOTES, "http", str(port)], port, {"NOTES_CALL_LOG": str(log)}), \
            RawClient(proxy_command("--url", f"http://127.0.0.1:{port}/mcp", "--references",
                                    "template", server=[])) as client:
        client.start()
        client.send(call(1, "read_note", {"name": "a"}))
        assert "note a" in json.dumps(client.reply(1, 60))
        client.send(call(2, "write_note", {"name": "{{steps.0.output.text}}", "text": "x"}))
        client.send(call(3, "write_note", {"name": "{{steps.7.output.text}}", "text": "y"}))
        written, unknown = client.reply(2, 60), client.reply(3, 60)
        client.close()
    assert written["result"].get("isError") is not True, written
    assert unknown["result"]["isError"] is True and "PC206" in json.dumps(unknown)
    ran = [json.loads(text) for text in log.read_text(encoding="utf-8").splitlines()]
    assert ran == [{"tool": "read_note", "arguments": {"name": "a"}},
                   {"tool": "write_note", "arguments": {"name": "note a", "text": "x"}}]


def test_without_fastmcp_the_extra_is_named() -> None:
    code = ("import sys; sys.modules['fastmcp'] = None\n"  # as if FastMCP were not installed
            "from plancheck.cli import main\n"
            "sys.exit(main(['mcp-proxy', '--url', 'http://127.0.0.1:9/mcp']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "pip install 'plancheck[fastmcp]'" in done.stderr
    code = ("import sys; sys.modules['fastmcp'] = None\n"
            "import plancheck.integrations.mcp.fastmcp_guard\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "pip install 'plancheck[fastmcp]'" in done.stderr and done.returncode == 1
