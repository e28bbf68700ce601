"""``plancheck mcp-proxy``: a real MCP server (``tests/support/mcp_notes_server.py``, the SDK's
MCPServer) behind the proxy, driven over stdio by the MCP SDK's own client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.mcp_raw_client import RawClient, call

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, str(ROOT / "tests" / "support" / "mcp_notes_server.py")]


def _env(log: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "NOTES_CALL_LOG": str(log)}


def _proxy(*options: str) -> list[str]:
    return [sys.executable, "-m", "plancheck", "mcp-proxy", *options, "--", *SERVER]


def _session(command: list[str], log: Path,
             body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        params = StdioServerParameters(command=command[0], args=command[1:], env=_env(log))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)

    return anyio.run(main)


def _calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
def test_allowed_calls_pass_and_refused_calls_never_reach_the_server(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    async def body(session: ClientSession) -> list[Any]:
        names = [t.name for t in (await session.list_tools()).tools]
        return [names,
                await session.call_tool("read_note", {"name": "a"}),
                await session.call_tool("write_note", {"name": "b"}),  # `text` missing
                await session.call_tool("write_note", {"name": "b", "text": "hi"}),
                await session.call_tool("write_nots", {"name": "b", "text": "hi"})]

    names, read, missing, written, unknown = _session(_proxy(), log, body)
    assert names == ["read_note", "write_note", "crash"]  # relayed unchanged
    assert not read.is_error and "note a" in read.content[0].text
    assert missing.is_error and "the required argument `text` is missing [PC203]" in \
        missing.content[0].text
    assert not written.is_error and written.content[0].text == "wrote b"
    assert unknown.is_error and "did you mean `write_note`?" in unknown.content[0].text
    assert [c["tool"] for c in _calls(log)] == ["read_note", "write_note"]


@pytest.mark.slow
def test_references_resolve_against_recorded_results(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    async def body(session: ClientSession) -> list[Any]:
        await session.call_tool("read_note", {"name": "a"})
        return [await session.call_tool("write_note", {"name": "b",
                                                        "text": "{{steps.0.output.txt}}"}),
                await session.call_tool("write_note", {"name": "b",
                                                       "text": "{{steps.0.output.text}}"})]

    typo, good = _session(_proxy("--references", "template"), log, body)
    assert typo.is_error and "PC208" in typo.content[0].text
    assert not good.is_error


@pytest.mark.slow
def test_a_policy_refuses_calls(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    policy = tmp_path / "p.wf"
    policy.write_text('policy ro "no writes after a read" {\n'
                      '  forbid write_note after read_note\n}\n', encoding="utf-8")

    async def body(session: ClientSession) -> Any:
        await session.call_tool("read_note", {"name": "a"})
        return await session.call_tool("write_note", {"name": "b", "text": "hi"})

    refused = _session(_proxy("--policy", str(policy)), log, body)
    assert refused.is_error and "policy ro" in refused.content[0].text
    assert [c["tool"] for c in _calls(log)] == ["read_note"]


@pytest.mark.slow
def test_an_unusable_policy_refuses_every_call_and_says_why(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    policy = tmp_path / "p.wf"
    policy.write_text('policy ro "x" {\n  forbid write_nope after read_note\n}\n',
                      encoding="utf-8")

    async def body(session: ClientSession) -> Any:
        return await session.call_tool("read_note", {"name": "a"})

    refused = _session(_proxy("--policy", str(policy)), log, body)
    assert refused.is_error and "cannot be used" in refused.content[0].text
    assert _calls(log) == []


@pytest.mark.slow
def test_a_server_that_dies_answers_every_pending_request(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    async def body(session: ClientSession) -> str:
        try:
            with anyio.fail_after(60):  # (a lost request would hang here)
                await session.call_tool("crash", {})
        except Exception as error:  # the SDK raises the JSON-RPC error response
            return str(error)
        return "no error"

    said = _session(_proxy(), log, body)
    assert "exited" in said


@pytest.mark.slow
def test_what_is_not_json_is_answered_with_a_parse_error_and_not_forwarded(
        tmp_path: Path) -> None:
    """Raw lines: garbage gets a JSON-RPC parse error from the proxy (the server never sees
    it), and the next messages are still answered."""
    log = tmp_path / "calls.jsonl"
    with RawClient(_proxy(), env=_env(log)) as client:
        client.start()
        client.send(b"this is not JSON\n")
        parse_error = client.next()
        client.send(call(2, "write_note", {"name": "x"}))
        client.send(call(3, "read_note", {"name": "x"}))
        refused, answered = client.reply(2), client.reply(3)
        assert client.close() == 0
    assert parse_error["id"] is None and parse_error["error"]["code"] == -32700
    assert refused["result"]["isError"] is True  # refused by the proxy
    assert "note x" in json.dumps(answered["result"])
    assert [c["tool"] for c in _calls(log)] == ["read_note"]


def test_no_server_named_is_a_usage_error() -> None:
    done = subprocess.run([sys.executable, "-m", "plancheck", "mcp-proxy"],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "name the server to start after `--`" in done.stderr


@pytest.mark.parametrize("command", [["/nonexistent/server"]])
def test_a_server_that_cannot_start_is_said(command: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "plancheck", "mcp-proxy", "--", *command],
                          capture_output=True, text=True, timeout=60, input="", check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "cannot start /nonexistent/server" in done.stderr


def test_the_stdio_proxy_needs_no_sdk() -> None:
    """It reads JSON-RPC itself: without the MCP SDK installed it still guards."""
    raw_server = [sys.executable, str(ROOT / "tests" / "support" / "mcp_raw_server.py")]
    code = ("import sys; sys.modules['mcp'] = None\n"  # as if the SDK were not installed
            "from plancheck.cli import main\n"
            f"sys.exit(main(['mcp-proxy', '--', *{raw_server!r}]))\n")
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "send_email", "arguments": {"body": "no recipient"}}}]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                          input="".join(json.dumps(m) + "\n" for m in lines).encode(),
                          check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["result"]["isError"] is True and "`to` is missing" in json.dumps(reply)


def test_a_server_that_hangs_gets_calls_refused_not_lost(tmp_path: Path) -> None:
    silent = [sys.executable, str(ROOT / "tests" / "support" / "mcp_silent_server.py")]
    command = [sys.executable, "-m", "plancheck", "mcp-proxy", "--", *silent]

    async def main() -> Any:
        env = {**_env(tmp_path / "calls.jsonl"), "PLANCHECK_MCP_TIMEOUT": "1"}
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            with anyio.fail_after(30):
                return await session.call_tool("read_note", {"name": "a"})

    refused = anyio.run(main)
    assert refused.is_error and "did not answer tools/list within 1 s" in \
        refused.content[0].text


def test_a_server_that_writes_garbage_is_still_relayed_in_order_and_guarded(
        tmp_path: Path) -> None:
    """Each answer of the server follows a line that is not JSON: those lines are dropped
    (and said on stderr), every answer reaches the client in order, the pool is still read
    from the server's tools/list, a bad call is still refused, a good one answered."""
    server = [sys.executable, str(ROOT / "tests" / "support" / "mcp_garbage_server.py")]
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "echo", "arguments": {"text": 5}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "echo", "arguments": {"text": "hi"}}},
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run([sys.executable, "-m", "plancheck", "mcp-proxy", "--", *server],
                          input=text.encode(), capture_output=True, timeout=60, check=False,
                          env=_env(tmp_path / "calls.jsonl"))
    replies = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3]
    assert replies[1]["result"]["isError"] is True  # `text` takes a string: refused
    assert replies[2]["result"]["content"][0]["text"] == "echo hi"
    assert "garbage before 2" not in done.stderr.decode()  # it never reached the server
    assert "not JSON-RPC" in done.stderr.decode() and "garbage before 3" in \
        done.stderr.decode()
    assert done.returncode == 0, done.stderr.decode()
