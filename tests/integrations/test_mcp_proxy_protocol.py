"""Each protocol version the official SDKs speak, through ``plancheck mcp-proxy``, negotiated
by the SDK that speaks it: the MCP Python SDK's ``Client`` (2026-07-28 by ``server/discover``
and the per-request envelope, or the ``initialize`` handshake), raw handshakes at each older
version, and the OpenAI Agents SDK's ``MCPServerStdio``. The server is the SDK's own
``MCPServer`` (``tests/support/mcp_notes_server.py``)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.mcp_raw_client import RAW_SERVER, RawClient, call, proxy_command, ran

ROOT = Path(__file__).resolve().parents[2]
NOTES = [sys.executable, str(ROOT / "tests" / "support" / "mcp_notes_server.py")]
PROXY = proxy_command(server=NOTES)
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}


def _env(log: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "NOTES_CALL_LOG": str(log)}


def _calls(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [json.loads(text)["tool"] for text in log.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_python_sdk_client_at_each_era(tmp_path: Path, mode: str) -> None:
    """``auto`` negotiates 2026-07-28 (issue 32: every call was refused, and the refusal
    lacked ``resultType``, so the client raised); ``legacy`` the newest handshake version."""
    log = tmp_path / "calls.jsonl"

    async def main() -> tuple[str, Any, Any]:
        params = StdioServerParameters(command=PROXY[0], args=PROXY[1:], env=_env(log))
        async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
            with anyio.fail_after(60):
                good = await client.call_tool("read_note", {"name": "a"})
                bad = await client.call_tool("write_note", {"name": "b"})
            return client.protocol_version, good, bad

    version, good, bad = anyio.run(main)
    assert version == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert not good.is_error and "note a" in good.content[0].text
    assert bad.is_error and "the required argument `text` is missing [PC203]" in \
        bad.content[0].text
    assert _calls(log) == ["read_note"]


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
def test_older_handshake_versions(tmp_path: Path, version: str) -> None:
    log = tmp_path / "calls.jsonl"
    with RawClient(PROXY, env={"NOTES_CALL_LOG": str(log)}) as client:
        client.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        assert client.reply(0, timeout=60)["result"]["protocolVersion"] == version
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        client.send(call(1, "write_note", {"name": "b"}))
        client.send(call(2, "read_note", {"name": "a"}))
        refused, answered = client.reply(1), client.reply(2)
        client.close()
    assert refused["result"]["isError"] is True and "resultType" not in refused["result"]
    assert "note a" in json.dumps(answered)
    assert _calls(log) == ["read_note"]


def test_the_proxys_own_tools_list_carries_the_per_request_envelope(tmp_path: Path) -> None:
    """A 2026-07-28 server refuses a request without the envelope: the proxy's tools/list
    carries the one of the call it reads the pool for, and its refusals say resultType."""
    log = tmp_path / "raw.jsonl"
    with RawClient(proxy_command(), env={"RAW_LOG": str(log), "RAW_MODERN": "1"}) as client:
        client.send(call(1, "read_secret", _meta=ENVELOPE))
        client.send(call(2, "send_email", {"body": "no recipient"}, _meta=ENVELOPE))
        answered, refused = client.reply(1), client.reply(2)
        client.close()
    assert "hunter2" in json.dumps(answered), answered
    assert refused["result"]["isError"] is True and refused["result"]["resultType"] == \
        "complete"
    assert ran(log) == ["read_secret"]


@pytest.mark.slow
def test_the_agents_sdk_reads_a_refusal_as_the_tools_answer(tmp_path: Path) -> None:
    """The OpenAI Agents SDK's MCPServerStdio, as an agent run calls a tool: the model gets
    the guard's feedback (issue 32: "An error occurred while running the tool")."""
    agents_mcp = pytest.importorskip("agents.mcp")
    from agents.mcp.util import MCPUtil
    from agents.run_context import RunContextWrapper

    log = tmp_path / "calls.jsonl"
    policy = tmp_path / "p.wf"
    policy.write_text('policy ro "read only" {\n  forbid write_note after read_note\n}\n',
                      encoding="utf-8")
    command = proxy_command("--policy", str(policy), server=NOTES)

    async def main() -> tuple[Any, Any]:
        server = agents_mcp.MCPServerStdio(
            params={"command": command[0], "args": command[1:], "env": _env(log)},
            client_session_timeout_seconds=60)
        async with server:
            tools = {tool.name: tool for tool in await server.list_tools()}
            context = RunContextWrapper(context=None)
            good = await MCPUtil.invoke_mcp_tool(server, tools["read_note"], context,
                                                 json.dumps({"name": "a"}))
            bad = await MCPUtil.invoke_mcp_tool(server, tools["write_note"], context,
                                                json.dumps({"name": "b", "text": "t"}))
            return good, bad

    good, bad = anyio.run(main)
    assert "note a" in str(good)
    assert "policy ro" in str(bad) and "was not run" in str(bad), bad
    assert _calls(log) == ["read_note"]


def test_the_raw_server_needs_the_envelope(tmp_path: Path) -> None:
    """(The control: a 2026-07-28 request without the envelope is refused by the server.)"""
    with RawClient(RAW_SERVER, env={"RAW_MODERN": "1"}) as client:
        client.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        assert "envelope" in json.dumps(client.reply(1))
        client.close()
