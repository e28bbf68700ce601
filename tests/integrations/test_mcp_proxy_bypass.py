"""What the server runs is what the guard judged: a differential byte test.

Each form below is a ``send_email`` call that a policy forbids after ``read_secret``, written
so a lenient server (``tests/support/mcp_raw_server.py``, which reads its input the loosest
way real servers do) runs it. Sent to the server directly, it runs (the control: the form is a
real way in); through the proxy, the server's log shows it never ran, and the client got its
answer from the proxy. Every case ran the call on the proxy of issue 32 (it forwarded what it
could not read).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp_raw_client import (
    INITIALIZE,
    INITIALIZED,
    RAW_SERVER,
    RawClient,
    call,
    line,
    proxy_command,
    ran,
    raw_log,
)

POLICY = ('policy secrets "no secret leaves" {\n'
          '  forbid send_email after read_secret\n'
          '  forbid write_file after read_secret\n}\n')
SEND = call(5, "send_email", {"to": "eve@example.com", "body": "hunter2"})


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


BYPASSES: dict[str, tuple[bytes, int | None]] = {
    # the bytes, and the JSON-RPC error code the proxy answers with (None: no answer is due)
    "invalid UTF-8 in _meta": (
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"send_email",'
        b'"arguments":{"to":"eve@example.com"},"_meta":{"note":"\xff"}}}\n', -32700),
    "a message after a carriage return": (
        b'{"jsonrpc":"2.0","method":"notifications/progress"}\r' + line(SEND), -32700),
    "nesting 3,000 levels deep": (
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write_file",'
        b'"arguments":{"path":"/tmp/x","content":' + _deep(3000) + b'}}}\n', -32700),
    "a batch": (line([SEND]), -32600),
    "no jsonrpc member": (line({k: v for k, v in SEND.items() if k != "jsonrpc"}), -32600),
    'jsonrpc "1.0"': (line({**SEND, "jsonrpc": "1.0"}), -32600),
    "a notification": (line({k: v for k, v in SEND.items() if k != "id"}), None),
}


def _policy(tmp_path: Path) -> Path:
    path = tmp_path / "p.wf"
    path.write_text(POLICY, encoding="utf-8")
    return path


@pytest.mark.parametrize("form", list(BYPASSES))
def test_the_lenient_server_runs_the_form_when_sent_directly(tmp_path: Path, form: str) -> None:
    log = tmp_path / "raw.jsonl"
    with RawClient(RAW_SERVER, env={"RAW_LOG": str(log)}) as client:
        client.start()
        client.send(BYPASSES[form][0])
        client.send(call(6, "read_secret"))
        client.reply(6)
        client.close()
    assert ran(log)[0] in ("send_email", "write_file")


@pytest.mark.parametrize("form", list(BYPASSES))
def test_through_the_proxy_the_server_never_runs_it(tmp_path: Path, form: str) -> None:
    log = tmp_path / "raw.jsonl"
    data, code = BYPASSES[form]
    with RawClient(proxy_command("--policy", str(_policy(tmp_path))),
                   env={"RAW_LOG": str(log)}) as client:
        client.start()
        client.send(call(1, "read_secret"))
        assert "hunter2" in json.dumps(client.reply(1))
        client.send(data)
        client.send(call(2, "send_email", {"to": "eve@example.com"}))  # the plain form
        refused = client.reply(2)
        assert client.close() == 0
    assert refused["result"]["isError"] is True and "policy secrets" in json.dumps(refused)
    assert ran(log) == ["read_secret"], raw_log(log)
    errors = [m for m in client.seen if "error" in m]
    if code is None:
        assert errors == [] and "notification" in client.stderr.decode()
    else:
        assert [e["error"]["code"] for e in errors] == [code], client.seen
        assert errors[0]["id"] in (None, 5)


def test_what_the_server_reads_is_the_message_the_guard_read(tmp_path: Path) -> None:
    """A repeated key, non-ASCII text, U+2028 and JSON whitespace: the server receives one
    compact ASCII line, the value the guard judged (a parser that keeps the first of two
    repeated keys reads the same as one that keeps the last)."""
    log = tmp_path / "raw.jsonl"
    sent = (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_email",\r\t'
            b' "arguments":{"to":"a@example.com","body":"caf\xc3\xa9 \xe2\x80\xa8 ok",'
            b'"to":"b@example.com"}}}\r\n')
    with RawClient(proxy_command(), env={"RAW_LOG": str(log)}) as client:
        client.start()
        client.send(sent)
        client.reply(7)
        client.close()
    received = [e["received"] for e in raw_log(log) if "received" in e]
    forwarded = next(text for text in received if '"id":7' in text)
    assert forwarded.isascii()
    assert json.loads(forwarded)["params"]["arguments"] == {
        "to": "b@example.com", "body": "caf\u00e9 \u2028 ok"}
    assert forwarded.count('"to"') == 1
    assert [e["arguments"] for e in raw_log(log) if e.get("ran") == "send_email"] == [
        {"to": "b@example.com", "body": "caf\u00e9 \u2028 ok"}]


@pytest.mark.parametrize("request_id", [True, None, 1.5, {"a": 1}])
def test_a_request_with_an_id_mcp_does_not_allow_is_refused(tmp_path: Path,
                                                            request_id: Any) -> None:
    log = tmp_path / "raw.jsonl"
    with RawClient(proxy_command(), env={"RAW_LOG": str(log)}) as client:
        client.start()
        client.send({**SEND, "id": request_id})
        client.send(call(8, "read_secret"))
        client.reply(8)
        client.close()
    assert ran(log) == ["read_secret"]
    assert any(m.get("error", {}).get("code") == -32600 for m in client.seen)


def test_the_proxys_own_requests_cannot_collide_with_a_clients(tmp_path: Path) -> None:
    """The client's request ``plancheck-proxy/1`` (the proxy's own first id in issue 32) is
    pending when the proxy asks for the pool: each gets its own answer."""
    log = tmp_path / "raw.jsonl"
    with RawClient(proxy_command(), env={"RAW_LOG": str(log)}) as client:
        client.start()
        client.send({"jsonrpc": "2.0", "id": "plancheck-proxy/1", "method": "slow/echo"})
        client.send(call(9, "read_secret"))
        answer = client.reply("plancheck-proxy/1")
        called = client.reply(9)
        client.close()
    assert answer["result"] == {}
    assert "hunter2" in json.dumps(called)
    assert sum(1 for m in client.seen if m.get("id") == "plancheck-proxy/1") == 1


def test_a_duplicate_pending_id_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "raw.jsonl"
    with RawClient(proxy_command(), env={"RAW_LOG": str(log)}) as client:
        client.send(INITIALIZE)
        client.send({"jsonrpc": "2.0", "id": "init", "method": "slow/echo"})
        client.reply("init")
        client.send(INITIALIZED)
        client.close()
    answers = [m for m in client.seen if m.get("id") == "init"]
    assert len(answers) == 2 and sum("error" in m for m in answers) == 1


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, -1, 2**70, -(2**63), rng.randrange(-10**6, 10**6)])
    if kind == 2:
        return rng.choice([0.1, -2.5e-300, 1e300, 3.0, rng.random()])
    if kind in (3, 4):
        alphabet = "ab \r\n\t\"\\/\u00e9\u2028\u2029\x85\x00\x1f\ud800\udfff\U0001f600<{$"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
    if kind == 5:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {_value(rng, 9) if rng.random() < 0.5 else f"k{i}": _value(rng, depth + 1)
            for i in range(rng.randrange(4))} if kind == 6 else {"k": _value(rng, depth + 1)}


def test_every_value_arrives_as_the_guard_read_it(tmp_path: Path) -> None:
    """200 seeded random JSON values (control characters, lone surrogates, U+2028, NEL,
    integers past 64 bits, extreme floats, nesting) sent through the proxy as an argument:
    the server reads each exactly as the proxy did. (The guard refuses a string holding a
    lone surrogate, which JSON text cannot carry: those never run.)"""
    log = tmp_path / "raw.jsonl"
    rng = random.Random(32)
    values = [_value(rng) for _ in range(200)]
    with RawClient(proxy_command(), env={"RAW_LOG": str(log)}) as client:
        client.start()
        for index, value in enumerate(values):
            client.send(call(index, "write_file", {"path": "p", "content": value}))
        replies = [client.reply(index) for index in range(len(values))]
        client.close()
    refused = {i for i, reply in enumerate(replies) if reply["result"].get("isError")}
    assert all("lone surrogate" in json.dumps(replies[i]) for i in refused)
    assert len(refused) < 60
    arrived = [e["arguments"]["content"] for e in raw_log(log) if e.get("ran") == "write_file"]
    assert arrived == [json.loads(json.dumps(v)) for i, v in enumerate(values)
                       if i not in refused]
