"""``plancheck mcp-proxy`` over a whole session: state that holds when the server changes its
tools or fails to list them, each request answered once, signals and either side's end passed
on at once, and every size bounded. The server is ``tests/support/mcp_raw_server.py``."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.support.mcp_raw_client import ROOT, RawClient, call, line, proxy_command, ran, raw_log

NOTES = [sys.executable, str(ROOT / "tests" / "support" / "mcp_notes_server.py")]


def _policy(tmp_path: Path, text: str) -> str:
    path = tmp_path / "p.wf"
    path.write_text(f'policy p "test" {{\n  {text}\n}}\n', encoding="utf-8")
    return str(path)


def _refused(reply: dict[str, object]) -> bool:
    result = reply.get("result")
    return isinstance(result, dict) and result.get("isError") is True


# ------------------------------------------------------------------- state that holds

def test_a_policy_holds_across_a_tools_list_changed(tmp_path: Path) -> None:
    log = tmp_path / "raw.jsonl"
    policy = _policy(tmp_path, "forbid send_email after read_secret")
    with RawClient(proxy_command("--policy", policy), env={"RAW_LOG": str(log)}) as client:
        client.start()
        client.send(call(1, "read_secret"))
        client.reply(1)
        client.send(call(2, "refresh"))  # the server says its tools changed
        client.reply(2)
        client.send(call(3, "send_email", {"to": "eve@example.com"}))
        leaked = client.reply(3)
        client.close()
    assert _refused(leaked) and "policy p" in json.dumps(leaked)
    assert ran(log) == ["read_secret", "refresh"]
    assert sum(1 for e in raw_log(log) if '"tools/list"' in e.get("received", "")) == 2


def test_a_count_holds_across_a_tools_list_changed(tmp_path: Path) -> None:
    log = tmp_path / "raw.jsonl"
    policy = _policy(tmp_path, "at most 1 send_email")
    with RawClient(proxy_command("--policy", policy), env={"RAW_LOG": str(log)}) as client:
        client.start()
        client.send(call(1, "send_email", {"to": "a@example.com"}))
        client.reply(1)
        client.send(call(2, "refresh"))
        client.reply(2)
        client.send(call(3, "send_email", {"to": "b@example.com"}))
        second = client.reply(3)
        client.close()
    assert _refused(second)
    assert ran(log) == ["send_email", "refresh"]


def test_a_call_before_initialize_does_not_leave_the_session_unguardable(
        tmp_path: Path) -> None:
    """The pool cannot be read before ``initialize``: that call is refused, saying so, and
    the next one reads it."""
    log = tmp_path / "raw.jsonl"
    with RawClient(proxy_command(), env={"RAW_LOG": str(log), "RAW_INIT_FIRST": "1"}) as client:
        client.send(call(1, "read_secret"))
        early = client.reply(1)
        client.start()
        client.send(call(2, "read_secret"))
        later = client.reply(2)
        client.close()
    assert _refused(early) and "not initialized" in json.dumps(early)
    assert not _refused(later) and "hunter2" in json.dumps(later)
    assert ran(log) == ["read_secret"]


@pytest.mark.slow
def test_a_pool_fetch_that_timed_out_is_tried_again(tmp_path: Path) -> None:
    log = tmp_path / "raw.jsonl"
    env = {"RAW_LOG": str(log), "RAW_STALL_FIRST_LIST": "3", "PLANCHECK_MCP_TIMEOUT": "1"}
    with RawClient(proxy_command(), env=env) as client:
        client.start()
        client.send(call(1, "read_secret"))
        first = client.reply(1)
        time.sleep(3)  # the late answer arrives and is dropped
        client.send(call(2, "read_secret"))
        second = client.reply(2)
        client.close()
    assert _refused(first) and "did not answer tools/list within 1 s" in json.dumps(first)
    assert not _refused(second), second
    assert ran(log) == ["read_secret"]


# ------------------------------------------------------------------- answered once, ended at once

def test_an_answer_the_proxy_cannot_read_is_answered_once(tmp_path: Path) -> None:
    with RawClient(proxy_command()) as client:
        client.start()
        client.send(call(1, "garble"))  # the server answers with invalid UTF-8
        answer = client.reply(1)
        client.close()
    assert answer["error"]["message"].startswith("the MCP server's answer to tools/call is not")
    assert sum(1 for m in client.seen if m.get("id") == 1) == 1, client.seen


@pytest.mark.slow
def test_a_server_that_closes_its_output_ends_the_session(tmp_path: Path) -> None:
    """It closes stdout and keeps running: the pending call is answered at once, naming that,
    and the proxy stops the server and ends (issue 32: a ping unanswered for 15 s)."""
    with RawClient(proxy_command()) as client:
        client.start()
        started = time.monotonic()
        client.send(call(1, "vanish"))
        answer = client.reply(1, timeout=10)
        answered = time.monotonic() - started
        code = client.process.wait(timeout=15)
        ended = time.monotonic() - started
    assert "closed its output" in answer["error"]["message"]
    assert answered < 5 and ended < 10, (answered, ended)
    assert code == 0


def test_when_the_client_closes_the_session_ends_at_once(tmp_path: Path) -> None:
    """A request the server never answers is pending when the client closes its input: the
    server gets EOF at once, and the request one error (issue 32: the proxy waited 30 s)."""
    with RawClient(proxy_command()) as client:
        client.start()
        client.send({"jsonrpc": "2.0", "id": 5, "method": "never/answer"})
        time.sleep(0.5)
        started = time.monotonic()
        code = client.close(timeout=15)
        ended = time.monotonic() - started
    assert ended < 5, ended
    assert code == 0
    assert [m.get("id") for m in client.seen].count(5) == 1
    assert "exited" in json.dumps(next(m for m in client.seen if m.get("id") == 5))


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().split(") ")[1][0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def test_sigterm_reaches_the_server_and_its_children(tmp_path: Path) -> None:
    with RawClient(proxy_command()) as client:
        client.start()
        client.send(call(1, "spawn"))
        pids = json.loads(client.reply(1)["result"]["content"][0]["text"])
        assert _alive(pids["server"]) and _alive(pids["child"])
        os.kill(client.process.pid, signal.SIGTERM)
        client.process.wait(timeout=15)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (_alive(pids["server"]) or
                                               _alive(pids["child"])):
            time.sleep(0.1)
        still = [name for name, pid in pids.items() if _alive(pid)]
        for pid in pids.values():  # (the test's own clean-up, whatever happened)
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert still == []


# ------------------------------------------------------------------- bounds

def test_a_tools_list_without_end_is_cut_at_the_page_limit(tmp_path: Path) -> None:
    env = {"RAW_ENDLESS_PAGES": "1"}
    with RawClient(proxy_command("--max-pages", "5"), env=env) as client:
        client.start()
        client.send(call(1, "read_secret"))
        answer = client.reply(1, timeout=30)
        client.close()
    assert _refused(answer) and "more than 5 pages" in json.dumps(answer)


@pytest.mark.slow
def test_a_server_line_without_end_is_cut_at_the_size_limit(tmp_path: Path) -> None:
    env = {"RAW_ENDLESS_LINE": "4"}
    with RawClient(proxy_command("--max-message-size", "1000000"), env=env) as client:
        client.start()
        client.send(call(1, "read_secret"))
        answer = client.reply(1, timeout=30)
        code = client.process.wait(timeout=20)
    assert "longer than 1000000 bytes" in json.dumps(answer)
    assert code == 2
    stderr = client.stderr.decode()
    assert "longer than 1000000 bytes" in stderr and "Traceback" not in stderr


def test_a_client_line_over_the_size_limit_is_refused_and_the_session_goes_on(
        tmp_path: Path) -> None:
    log = tmp_path / "raw.jsonl"
    with RawClient(proxy_command("--max-message-size", "2000"),
                   env={"RAW_LOG": str(log)}) as client:
        client.start()
        client.send(call(1, "send_email", {"to": "a@example.com", "body": "x" * 5000}))
        refused = client.next()
        client.send(call(2, "read_secret"))
        later = client.reply(2)
        client.close()
    assert refused["error"]["code"] == -32600 and "--max-message-size" in \
        refused["error"]["message"]
    assert "hunter2" in json.dumps(later)
    assert ran(log) == ["read_secret"]


def _peak_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="utf-8") as status:
        return next(int(line.split()[1]) / 1024 for line in status
                    if line.startswith("VmHWM:"))


@pytest.mark.slow
def test_a_session_of_large_calls_stays_in_the_memory_bound(tmp_path: Path) -> None:
    """Issue 32's bound, 2x the largest message + 80 MB, over 12 calls of 8 MB (96 MB in all)
    to the SDK's MCPServer, with a policy: the proxy holds none of the arguments it has
    forwarded (a guard that kept every accepted call's arguments held 8 MB more with each)."""
    if not os.path.exists("/proc/self/status"):
        return  # (VmHWM is Linux's)
    size = 8 << 20
    policy = _policy(tmp_path, "at most 100 write_note")
    with RawClient(proxy_command("--policy", policy, server=NOTES)) as client:
        client.start()
        for request_id in range(1, 13):
            client.send(call(request_id, "write_note", {"name": "n", "text": "x" * size}))
            assert not _refused(client.reply(request_id, timeout=60))
        peak = _peak_mb(client.process.pid)
        client.close()
    assert peak <= 2 * size / 2**20 + 80, peak


@pytest.mark.slow
def test_large_calls_of_mixed_sizes_stay_in_the_memory_bound(tmp_path: Path) -> None:
    """The same bound with 1, then 4, then 8 MB calls after 50 small ones, and a flow policy
    (provenance looks every argument up): the proxy peaked at 103-104 MB (the bound is 96) as
    each of its threads' malloc arenas kept blocks of the largest messages, its read buffer
    doubled to 16 MB for an 8 MB line, and an argument's JSON text was copied to slice its
    quotes off."""
    if not os.path.exists("/proc/self/status"):
        return  # (VmHWM is Linux's)
    policy = _policy(tmp_path, "forbid flow from read_note to write_note.name")
    with RawClient(proxy_command("--policy", policy, server=NOTES)) as client:
        client.start()
        for request_id in range(1, 51):
            client.send(call(request_id, "write_note", {"name": f"n{request_id}", "text": "hi"}))
            assert not _refused(client.reply(request_id, timeout=60))
        for request_id, megabytes in enumerate([1] * 5 + [4] * 5 + [8] * 5, start=100):
            client.send(call(request_id, "write_note",
                             {"name": "big", "text": "x" * (megabytes << 20)}))
            assert not _refused(client.reply(request_id, timeout=60))
        peak = _peak_mb(client.process.pid)
        client.close()
    assert peak <= 2 * 8 + 80, peak


@pytest.mark.slow
def test_large_results_are_not_held_by_the_proxy() -> None:
    """A session of 50 calls each answered with about 2 MB (a 1 MB note, as text and as
    structured content) stays within 2x the largest message + 80 MB: the proxy's guard held
    every result (none is read without a policy: the pool declares no reference syntax),
    and peaked past 100 MB."""
    if not os.path.exists("/proc/self/status"):
        return  # (VmHWM is Linux's)
    largest = 0
    with RawClient(proxy_command(server=NOTES)) as client:
        client.start()
        for request_id in range(1, 51):
            client.send(call(request_id, "read_note", {"name": f"{request_id}" + "z" * (1 << 20)}))
            reply = client.reply(request_id, timeout=60)
            assert not _refused(reply)
            largest = max(largest, len(json.dumps(reply)))
        peak = _peak_mb(client.process.pid)
        client.close()
    assert largest > 2 << 20
    assert peak <= 2 * largest / 2**20 + 80, peak


def test_a_cancel_for_an_answered_request_is_not_kept() -> None:
    """A client's ``notifications/cancelled`` that comes after the answer (a race MCP allows)
    leaves nothing behind: a later request with that id (which a client should not send, but
    may) is judged and answered, not dropped as cancelled, which left the client waiting."""
    with RawClient(proxy_command()) as client:
        client.start()
        client.send(call(7, "read_secret"))
        assert "result" in client.reply(7)
        client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 7, "reason": "too late"}})
        client.seen.clear()  # (the first answer is not the one awaited)
        client.send(call(7, "read_secret"))
        assert "result" in client.reply(7, timeout=10)
        client.close()


def test_a_bad_size_limit_is_a_usage_error() -> None:
    with RawClient(proxy_command("--max-message-size", "0")) as client:
        code = client.process.wait(timeout=30)
    assert code == 2 and "positive integer" in client.stderr.decode()


def test_a_large_call_being_checked_does_not_hold_up_other_messages(tmp_path: Path) -> None:
    """A ping sent after a 4 MB call is forwarded while the call is still being judged, so
    its answer comes first (issue 32: a ping waited 0.7 s behind an 8 MB call)."""
    with RawClient(proxy_command()) as client:
        client.start()
        client.send(call(0, "read_secret"))  # (the pool is read)
        client.reply(0)
        # (one write: the ping is in the pipe right behind the call, however the client
        # process is scheduled under the suite's load)
        client.send(line(call(1, "write_file", {"path": "/tmp/x", "content": "x" * (4 << 20)}))
                    + line({"jsonrpc": "2.0", "id": "ping", "method": "ping"}))
        client.reply(1, timeout=60)
        client.close()
    order = [m.get("id") for m in client.seen if m.get("id") in (1, "ping")]
    assert order == ["ping", 1]


def test_a_call_sent_again_with_its_input_is_the_same_call(tmp_path: Path) -> None:
    """2026-07-28's input_required: the server asks for input, the client sends the same call
    again with it; the guard judged it once (``at most 1`` lets the retry through), and a
    retry with other arguments is a new call, judged."""
    log = tmp_path / "raw.jsonl"
    with RawClient(proxy_command("--policy", _policy(tmp_path, "at most 1 ask")),
                   env={"RAW_LOG": str(log)}) as client:
        client.start()
        client.send(call(1, "ask", {"q": "why"}))
        first = client.reply(1)
        client.send(call(2, "ask", {"q": "why"}, requestState="asked-once"))
        retried = client.reply(2)
        client.send(call(3, "ask", {"q": "how"}, requestState="asked-once"))
        other = client.reply(3)
        client.close()
    assert first["result"]["resultType"] == "input_required"
    assert not _refused(retried) and "ask ran" in json.dumps(retried)
    assert _refused(other) and "policy p" in json.dumps(other)
    assert ran(log) == ["ask"]
