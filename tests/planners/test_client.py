"""ChatClient against a real loopback OpenAI-compatible HTTP server (no mocked client)."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import pytest

from plancheck.planners.client import (
    LOCAL_DUMMY_KEY,
    ChatClient,
    ClientConfig,
    ClientError,
    MissingApiKey,
    RequestRejected,
    TransportError,
    Usage,
    is_loopback_url,
)
from tests.support.openai_server import EXHAUSTED_STATUS, Reply, ScriptedOpenAIServer

REPO_ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-test-DO-NOT-LEAK-0123456789abcdef"
SECRET_ENV = "PLANCHECK_TEST_API_KEY"


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's real endpoint or key must never leak into (or change) these tests.
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENROUTER_API_KEY", SECRET_ENV):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as srv:
        yield srv


def make_client(srv: ScriptedOpenAIServer, **overrides: Any) -> ChatClient:
    # Tiny backoff keeps retry tests fast while still exercising the real sleep path.
    settings: dict[str, Any] = {
        "model": "test-model",
        "base_url": srv.base_url,
        "timeout_s": 5.0,
        "max_retries": 3,
        "backoff_base_s": 0.005,
        "backoff_max_s": 0.02,
    }
    settings.update(overrides)
    return ChatClient(ClientConfig(**settings))


def unused_loopback_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- basic protocol ----------------------------------------------------------


def test_plain_string_is_sent_as_one_user_message(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(content="plan: step 1", prompt_tokens=7, completion_tokens=3))
    with make_client(server) as client:
        [completion] = client.complete("write a plan", temperature=0.0)

    assert completion.text == "plan: step 1"
    assert completion.finish_reason == "stop"
    assert (completion.prompt_tokens, completion.completion_tokens) == (7, 3)
    assert not completion.cached
    assert not completion.truncated
    assert completion.latency_s > 0
    [body] = server.requests
    assert body["model"] == "test-model"
    assert body["messages"] == [{"role": "user", "content": "write a plan"}]
    assert body["temperature"] == 0.0
    assert body["top_p"] == 0.95
    assert body["max_tokens"] == 2048
    assert "n" not in body  # not sent for n=1: some servers reject the parameter


def test_message_list_options_and_overrides_are_forwarded(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(content="{}"))
    messages = [
        {"role": "system", "content": "You write plans."},
        {"role": "user", "content": "go"},
    ]
    response_format = {"type": "json_object"}
    with make_client(server) as client:
        client.complete(
            messages,
            temperature=0.3,
            stop=["END"],
            response_format=response_format,
            max_tokens=64,
        )
    [body] = server.requests
    assert body["messages"] == messages
    assert body["stop"] == ["END"]
    assert body["response_format"] == response_format
    assert body["max_tokens"] == 64


def test_rejects_n_below_one(server: ScriptedOpenAIServer) -> None:
    with make_client(server) as client, pytest.raises(ValueError, match="n must be"):
        client.complete("x", temperature=0.0, n=0)
    assert server.requests == []


def test_finish_reason_length_marks_truncated(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(content="step 1, step 2, st", finish_reason="length"))
    with make_client(server) as client:
        [completion] = client.complete("x", temperature=0.0)
    assert completion.truncated
    assert completion.finish_reason == "length"


# -- n > 1 -------------------------------------------------------------------


def test_n_samples_in_one_call_when_server_honours_n(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(content="a"), Reply(content="b c"), Reply(content="d e f"))
    with make_client(server) as client:
        completions = client.complete("x", temperature=0.8, n=3)

    assert [c.text for c in completions] == ["a", "b c", "d e f"]
    [body] = server.requests
    assert body["n"] == 3
    # The response's completion tokens (1+2+3) are split so that they add up.
    assert sum(c.completion_tokens or 0 for c in completions) == 6
    assert client.usage.calls == 1


def test_n_samples_by_repeated_calls_when_server_ignores_n() -> None:
    with ScriptedOpenAIServer(honour_n=False) as srv:
        srv.enqueue(Reply(content="a"), Reply(content="b"), Reply(content="c"))
        with make_client(srv) as client:
            completions = client.complete("x", temperature=0.8, n=3)

        assert [c.text for c in completions] == ["a", "b", "c"]
        assert [body.get("n", 1) for body in srv.requests] == [3, 2, 1]
        assert client.usage.calls == 3


# -- retries -------------------------------------------------------------------


def test_rate_limit_is_retried_and_counted_not_surfaced(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(status=429), Reply(content="ok"))
    with make_client(server) as client:
        [completion] = client.complete("x", temperature=0.0)
    assert completion.text == "ok"
    assert len(server.requests) == 2
    assert client.usage.retries == 1
    assert client.usage.calls == 1


def test_retry_after_is_honoured_up_to_backoff_max(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(status=429, retry_after_s=0.25), Reply(content="ok"))
    with make_client(server, backoff_max_s=0.5) as client:
        started = time.monotonic()
        client.complete("x", temperature=0.0)
        assert time.monotonic() - started >= 0.25

    server.enqueue(Reply(status=429, retry_after_s=30), Reply(content="ok"))
    with make_client(server, backoff_max_s=0.05) as client:
        started = time.monotonic()
        client.complete("x", temperature=0.0)
        assert time.monotonic() - started < 5  # capped, not 30 s


def test_server_error_then_success(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(status=500), Reply(status=503), Reply(content="ok"))
    with make_client(server) as client:
        [completion] = client.complete("x", temperature=0.0)
    assert completion.text == "ok"
    assert client.usage.retries == 2


def test_timeout_then_success(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(content="too late", delay_s=3.0), Reply(content="ok"))
    with make_client(server, timeout_s=0.3) as client:
        started = time.monotonic()
        [completion] = client.complete("x", temperature=0.0)
        elapsed = time.monotonic() - started
    assert completion.text == "ok"
    assert client.usage.retries == 1
    assert elapsed < 2.5  # gave up on the slow answer instead of waiting for it


@pytest.mark.parametrize(
    "malformed_body",
    [
        '{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}',
        '{"choices": [{"index": 0, "finish_reason": "stop"}]}',
        "<html>502 Bad Gateway</html>",
    ],
    ids=["no-choices", "no-message", "not-json"],
)
def test_malformed_success_body_is_retried_like_a_transport_failure(
    server: ScriptedOpenAIServer, malformed_body: str
) -> None:
    server.enqueue(Reply(raw_body=malformed_body), Reply(content="ok"))
    with make_client(server) as client:
        [completion] = client.complete("x", temperature=0.0)
    assert completion.text == "ok"
    assert client.usage.retries == 1


@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "application/json"])
def test_an_html_answer_is_named_as_one(server: ScriptedOpenAIServer, content_type: str) -> None:
    """A login page or a proxy's error page was "response has no choices" (or a JSON
    decoding error when the page came labelled as JSON)."""
    page = "<!DOCTYPE html>\n<html><body><h1>502 Bad Gateway</h1></body></html>"
    server.enqueue(Reply(raw_body=page, headers={"Content-Type": content_type}))
    with make_client(server, max_retries=0) as client, pytest.raises(TransportError) as caught:
        client.complete("x", temperature=0.0)
    message = str(caught.value)
    assert "answered with an HTML page, not a chat completion" in message
    assert "502 Bad Gateway" in message and "no choices" not in message


def test_exhausted_retries_raise_transport_error_with_last_status(
    server: ScriptedOpenAIServer,
) -> None:
    server.enqueue(Reply(status=500), Reply(status=502), Reply(status=503))
    with make_client(server, max_retries=2) as client:
        with pytest.raises(TransportError) as caught:
            client.complete("x", temperature=0.0)
        assert client.usage.retries == 2
        assert client.usage.calls == 0
    assert caught.value.status == 503
    assert caught.value.attempts == 3
    assert len(server.requests) == 3
    assert isinstance(caught.value, ClientError)


def test_unreachable_server_raises_transport_error_without_status() -> None:
    config = ClientConfig(
        model="m",
        base_url=f"http://127.0.0.1:{unused_loopback_port()}/v1",
        max_retries=1,
        backoff_base_s=0.001,
        backoff_max_s=0.002,
        timeout_s=2.0,
    )
    with ChatClient(config) as client, pytest.raises(TransportError) as caught:
        client.complete("x", temperature=0.0)
    assert caught.value.status is None
    assert caught.value.attempts == 2


def test_bad_request_raises_request_rejected_without_retry(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(status=400, error="response_format json_schema not supported"))
    server.enqueue(Reply(content="never requested"))
    with make_client(server) as client:
        with pytest.raises(RequestRejected) as caught:
            client.complete("x", temperature=0.0)
        assert client.usage.retries == 0
    assert caught.value.status == 400
    assert caught.value.server_message == "response_format json_schema not supported"
    assert len(server.requests) == 1
    assert server.pending == 1


def test_json_schema_rejection_allows_json_object_fallback() -> None:
    schema_format = {
        "type": "json_schema",
        "json_schema": {"name": "plan", "schema": {"type": "object"}},
    }
    with ScriptedOpenAIServer(reject_json_schema=True) as srv:
        srv.enqueue(Reply(content='{"steps": []}'))
        with make_client(srv) as client:
            try:
                completions = client.complete("x", temperature=0.0, response_format=schema_format)
            except RequestRejected:
                completions = client.complete(
                    "x", temperature=0.0, response_format={"type": "json_object"}
                )
        assert completions[0].text == '{"steps": []}'
        sent_formats = [body["response_format"]["type"] for body in srv.requests]
        assert sent_formats == ["json_schema", "json_object"]


# -- cache -------------------------------------------------------------------


def test_identical_call_is_served_from_cache(server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    server.enqueue(Reply(content="first"))
    with make_client(server, cache_path=tmp_path / "cache.sqlite") as client:
        [fresh] = client.complete("x", temperature=0.0)
        [again] = client.complete("x", temperature=0.0)
        usage = client.usage

    assert len(server.requests) == 1
    assert not fresh.cached
    assert again.cached
    assert again.text == "first"
    assert again.latency_s == fresh.latency_s
    assert usage == Usage(calls=1, prompt_tokens=1, completion_tokens=1, cache_hits=1, retries=0)


def test_cache_key_covers_the_whole_request(server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    server.responder = lambda body: Reply(content=f"answer {len(server.requests)}")
    with make_client(server, cache_path=tmp_path / "cache.sqlite") as client:
        client.complete("x", temperature=0.0)
        client.complete("x", temperature=0.5)
        client.complete("y", temperature=0.0)
        client.complete("x", temperature=0.0, stop=["END"])
        client.complete("x", temperature=0.0, max_tokens=10)
        client.complete("x", temperature=0.0, response_format={"type": "json_object"})
        client.complete("x", temperature=0.0)  # the only repeat
    assert len(server.requests) == 6


def test_samples_are_cached_by_index_and_survive_a_new_client(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    cache = tmp_path / "cache.sqlite"
    server.enqueue(Reply(content="s0"), Reply(content="s1"), Reply(content="s2"))
    with make_client(server, cache_path=cache) as client:
        first = client.complete("x", temperature=0.9, n=2)
        # One more sample than before: only the missing index is requested.
        grown = client.complete("x", temperature=0.9, n=3)

    assert [c.text for c in first] == ["s0", "s1"]
    assert [c.text for c in grown] == ["s0", "s1", "s2"]
    assert [c.cached for c in grown] == [True, True, False]
    assert len(server.requests) == 2
    assert "n" not in server.requests[1]

    with make_client(server, cache_path=cache) as rerun_client:  # a rerun costs nothing
        rerun = rerun_client.complete("x", temperature=0.9, n=3)
        assert rerun_client.usage.calls == 0
        assert rerun_client.usage.cache_hits == 3
    assert [c.text for c in rerun] == ["s0", "s1", "s2"]
    assert len(server.requests) == 2


def test_cache_is_safe_across_threads(server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    def echo(body: dict[str, Any]) -> Reply:
        return Reply(content="echo " + body["messages"][0]["content"])

    server.responder = echo
    prompts = [f"prompt {i}" for i in range(24)]
    with make_client(server, cache_path=tmp_path / "cache.sqlite") as client:
        with ThreadPoolExecutor(max_workers=8) as pool:
            fresh = list(pool.map(lambda p: client.complete(p, temperature=0.0)[0], prompts))
        with ThreadPoolExecutor(max_workers=8) as pool:
            cached = list(pool.map(lambda p: client.complete(p, temperature=0.0)[0], prompts))
        usage = client.usage

    assert [c.text for c in fresh] == [f"echo {p}" for p in prompts]
    assert [c.text for c in cached] == [c.text for c in fresh]
    assert all(c.cached for c in cached)
    assert len(server.requests) == len(prompts)
    assert (usage.calls, usage.cache_hits) == (len(prompts), len(prompts))


# -- usage -------------------------------------------------------------------


def test_usage_totals_accumulate_and_subtract(server: ScriptedOpenAIServer) -> None:
    server.enqueue(
        Reply(status=429),
        Reply(content="a", prompt_tokens=10, completion_tokens=4),
        Reply(content="b", prompt_tokens=12, completion_tokens=5),
        Reply(content="c", completion_tokens=6),
    )
    with make_client(server) as client:
        client.complete("x", temperature=0.0)
        before = client.usage
        client.complete("y", temperature=0.7, n=2)
        total = client.usage

    assert total == Usage(calls=2, prompt_tokens=22, completion_tokens=15, retries=1)
    assert total.total_tokens == 37
    assert total - before == Usage(calls=1, prompt_tokens=12, completion_tokens=11)


# -- keys ----------------------------------------------------------------------


def test_key_is_sent_but_never_exposed(
    server: ScriptedOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, openai and httpx included
    monkeypatch.setenv(SECRET_ENV, SECRET)
    cache = tmp_path / "cache.sqlite"
    config = ClientConfig(
        model="m",
        base_url=server.base_url,
        api_key_env=SECRET_ENV,
        cache_path=cache,
        max_retries=1,
        backoff_base_s=0.001,
        backoff_max_s=0.002,
    )
    # A misbehaving server that echoes the key back in its error messages.
    server.enqueue(
        Reply(content=f"harmless {SECRET_ENV}"),
        Reply(status=400, error=f"invalid key {SECRET}"),
        Reply(status=500, error=f"oops {SECRET}"),
        Reply(status=500, error=f"oops {SECRET}"),
    )
    errors: list[ClientError] = []
    with ChatClient(config) as client:
        client.complete("x", temperature=0.0)
        for prompt in ("rejected", "transport"):
            try:
                client.complete(prompt, temperature=0.0)
            except ClientError as exc:
                errors.append(exc)
        texts = [repr(client), str(client), repr(config), str(config), repr(client.usage)]

    assert server.request_headers[0]["authorization"] == f"Bearer {SECRET}"
    assert [type(e) for e in errors] == [RequestRejected, TransportError]
    texts += [text for e in errors for text in (str(e), repr(e), repr(e.args))]
    rejected = errors[0]
    assert isinstance(rejected, RequestRejected)
    texts.append(rejected.server_message)
    for text in texts:
        assert SECRET not in text
    assert "[REDACTED]" in str(rejected)
    assert SECRET not in caplog.text
    for path in tmp_path.iterdir():  # the database and its WAL/SHM side files
        assert SECRET.encode() not in path.read_bytes(), path.name


def test_missing_key_for_remote_endpoint_names_the_variables() -> None:
    config = ClientConfig(model="m", base_url="https://api.example.invalid/v1")
    with pytest.raises(MissingApiKey) as caught:
        ChatClient(config)
    assert "OPENAI_API_KEY" in str(caught.value)
    assert "OPENROUTER_API_KEY" in str(caught.value)

    remote = "https://api.example.invalid/v1"
    custom = ClientConfig(model="m", base_url=remote, api_key_env="MY_KEY")
    with pytest.raises(MissingApiKey, match="MY_KEY"):
        ChatClient(custom)


def test_fallback_key_variable_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-fallback")
    client = ChatClient(ClientConfig(model="m", base_url="https://openrouter.example.invalid/v1"))
    client.close()


def test_loopback_server_needs_no_key(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(content="ok"))
    with make_client(server) as client:
        client.complete("x", temperature=0.0)
    assert server.request_headers[0]["authorization"] == f"Bearer {LOCAL_DUMMY_KEY}"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://127.1.2.3/v1", True),
        ("https://api.openai.com/v1", False),
        ("https://openrouter.ai/api/v1", False),
        ("http://10.0.0.5:8000/v1", False),
        (None, False),
    ],
)
def test_is_loopback_url(url: str | None, expected: bool) -> None:
    assert is_loopback_url(url) is expected


# -- packaging -----------------------------------------------------------------


def test_importing_the_client_module_does_not_import_openai() -> None:
    code = "import plancheck.planners.client, sys; assert 'openai' not in sys.modules"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr


# -- the scripted server itself -------------------------------------------------


def test_server_lists_models_and_reports_unscripted_requests(server: ScriptedOpenAIServer) -> None:
    with urlopen(f"{server.base_url}/models", timeout=5) as response:
        assert b"scripted-model" in response.read()
    with make_client(server) as client, pytest.raises(RequestRejected) as caught:
        client.complete("nothing scripted", temperature=0.0)
    assert caught.value.status == EXHAUSTED_STATUS
    assert "no scripted reply" in caught.value.server_message
