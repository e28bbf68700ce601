"""One small, robust client for any OpenAI-compatible chat-completions endpoint.

This is the only module in plancheck that talks to `openai`, and it imports the
library lazily so that the checker itself never needs it installed.

What it adds on top of the raw library:

* our own retry loop (exponential backoff, full jitter, Retry-After aware) on
  transport errors, timeouts, HTTP 429 and 5xx; the library's retries are off
  so that retries are counted once and in one place;
* typed failures that callers can tell apart from plan errors
  (`TransportError`, `RequestRejected`, `MissingApiKey`, all `ClientError`);
* n>1 sampling that also works against servers that ignore `n`;
* a sqlite response cache keyed by (full request, sample index), so a rerun
  returns the very same samples at no cost;
* usage accounting per completion and in aggregate (`ChatClient.usage`).

API keys are read from the environment, handed to the openai client and kept
nowhere else: not in our objects' reprs, not in exception messages, not in
logs and never in the cache.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from openai import OpenAI
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
    from openai.types.chat.completion_create_params import ResponseFormat

__all__ = [
    "DEFAULT_KEY_ENV_VARS",
    "LOCAL_DUMMY_KEY",
    "ChatClient",
    "ClientConfig",
    "ClientError",
    "Completion",
    "MissingApiKey",
    "RequestRejected",
    "TransportError",
    "Usage",
]

logger = logging.getLogger("plancheck.planners")

DEFAULT_KEY_ENV_VARS: tuple[str, ...] = ("OPENAI_API_KEY", "OPENROUTER_API_KEY")
# Local servers (llama.cpp, vLLM, Ollama, the test server) accept any key, but
# the openai library refuses to run without one.
LOCAL_DUMMY_KEY = "sk-local"
CACHE_SCHEMA_VERSION = 1
_STATUS_TOO_MANY_REQUESTS = 429
_STATUS_SERVER_ERROR = 500
_MAX_DETAIL_CHARS = 500
_REDACTED = "[REDACTED]"

Messages = list[dict[str, str]]


# -- public value types -----------------------------------------------------


@dataclass(frozen=True)
class ClientConfig:
    """Where and how to call. Holds the *name* of the key variable, never the key."""

    model: str
    # None: the openai library default (OPENAI_BASE_URL, else api.openai.com).
    base_url: str | None = None
    # None: OPENAI_API_KEY, then OPENROUTER_API_KEY.
    api_key_env: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 5
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0
    cache_path: Path | None = None
    max_tokens: int = 2048
    top_p: float = 0.95

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("ClientConfig.model must be non-empty")
        if self.timeout_s <= 0:
            raise ValueError("ClientConfig.timeout_s must be positive")
        if self.max_retries < 0:
            raise ValueError("ClientConfig.max_retries must be >= 0")
        if self.backoff_base_s < 0 or self.backoff_max_s < 0:
            raise ValueError("ClientConfig backoff delays must be >= 0")
        if self.max_tokens <= 0:
            raise ValueError("ClientConfig.max_tokens must be positive")


@dataclass(frozen=True)
class Completion:
    """One sampled answer.

    For a response carrying k>1 choices, `prompt_tokens` is the (shared) prompt
    size and the response's completion tokens are split across the k choices so
    that they still add up to the server's total.
    """

    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float  # of the HTTP call that produced it (the original one when cached)
    cached: bool
    truncated: bool  # finish_reason == "length": the answer hit max_tokens


@dataclass(frozen=True)
class Usage:
    """Aggregate accounting. Subtract two snapshots to get the usage in between."""

    calls: int = 0  # successful HTTP chat-completion calls
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0  # completions served from the cache
    retries: int = 0  # attempts repeated after a retryable failure

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            **{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)}
        )


# -- errors -----------------------------------------------------------------


class ClientError(Exception):
    """Base of every failure raised by this module.

    None of these is about the plan the model wrote: callers must not feed them
    back to the model as if they were diagnostics.
    """


class MissingApiKey(ClientError):
    def __init__(self, env_vars: Sequence[str]) -> None:
        self.env_vars = tuple(env_vars)
        names = " or ".join(self.env_vars)
        super().__init__(
            f"no API key found: set {names} (servers on localhost/loopback need no key)"
        )


class TransportError(ClientError):
    """The endpoint could not be reached or kept failing (timeouts, 429, 5xx)."""

    def __init__(self, message: str, *, status: int | None, attempts: int) -> None:
        super().__init__(message)
        self.status = status  # HTTP status of the last attempt; None for connection errors/timeouts
        self.attempts = attempts


class RequestRejected(ClientError):
    """The server refused the request itself (HTTP 4xx other than 429); retrying is pointless.

    Callers use this e.g. to fall back from a json_schema to a json_object response_format.
    """

    def __init__(self, message: str, *, status: int, server_message: str) -> None:
        super().__init__(message)
        self.status = status
        self.server_message = server_message


class RequestBudgetSpent(ClientError):
    """A task sent as many requests as its budget allows (``plancheck plan --max-requests``)."""

    def __init__(self, sent: int, budget: int) -> None:
        super().__init__(f"the task's request budget is spent: {sent} requests sent, "
                         f"{budget} allowed (--max-requests)")
        self.sent = sent
        self.budget = budget


# -- helpers ----------------------------------------------------------------


def _refused(error: BaseException) -> bool:
    """Whether a connection error is a refusal (the causes the client library wraps)."""
    seen = 0
    cause: BaseException | None = error
    while cause is not None and seen < 8:
        if isinstance(cause, ConnectionRefusedError) or "Connection refused" in str(cause):
            return True
        cause = cause.__cause__ or cause.__context__
        seen += 1
    return False


def is_loopback_url(url: str | None) -> bool:
    """True for http(s) URLs that point at this machine (localhost, 127.0.0.0/8, ::1)."""
    if not url:
        return False
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _candidate_key_vars(config: ClientConfig) -> tuple[str, ...]:
    return (config.api_key_env,) if config.api_key_env else DEFAULT_KEY_ENV_VARS


def _resolve_api_key(config: ClientConfig, base_url: str | None) -> str:
    loopback = is_loopback_url(base_url)
    if loopback and config.api_key_env is None:
        # Do not ship a cloud key to whatever listens on a local port unless asked
        # to via api_key_env.
        return LOCAL_DUMMY_KEY
    candidates = _candidate_key_vars(config)
    for name in candidates:
        value = os.environ.get(name, "").strip()
        if value:
            logger.debug("using API key from $%s", name)
            return value
    if loopback:
        return LOCAL_DUMMY_KEY
    raise MissingApiKey(candidates)


def _normalise_messages(messages: Messages | str) -> Messages:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if not messages:
        raise ValueError("messages must not be empty")
    return [dict(message) for message in messages]


def _split_evenly(total: int | None, parts: int) -> list[int | None]:
    """Split a token total over `parts` choices so that the shares add up to it."""
    if total is None:
        return [None] * parts
    share, remainder = divmod(total, parts)
    return [share + (1 if i < remainder else 0) for i in range(parts)]


def _full_jitter_delay(
    attempt: int, base_s: float, max_s: float, retry_after_s: float | None
) -> float:
    # Full jitter (uniform in [0, capped exponential]) spreads out many workers
    # that failed together; a server's Retry-After is a floor, still capped.
    ceiling = min(max_s, base_s * (2**attempt))
    delay = random.uniform(0.0, ceiling)
    if retry_after_s is not None:
        delay = max(delay, min(retry_after_s, max_s))
    return delay


def _retry_after_seconds(headers: Any) -> float | None:
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name) if headers is not None else None
        if raw is None:
            continue
        try:
            seconds = float(raw) / divisor
        except (TypeError, ValueError):
            continue  # an HTTP date; the jittered delay will do
        if seconds >= 0:
            return seconds
    return None


def _server_message(exc: Any) -> str:
    """Best human-readable reason from an openai APIStatusError."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return str(getattr(exc, "message", "") or type(exc).__name__)


def _canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class _Request:
    """Everything that determines an answer; its hash (plus sample index) is the cache key."""

    model: str
    base_url: str | None
    messages: Messages
    temperature: float
    stop: list[str] | None
    response_format: dict[str, Any] | None
    max_tokens: int
    top_p: float

    def cache_key(self, sample_index: int) -> str:
        payload = {
            "v": CACHE_SCHEMA_VERSION,
            "model": self.model,
            "base_url": self.base_url,
            "messages": self.messages,
            "temperature": self.temperature,
            "sample_index": sample_index,
            "stop": self.stop,
            "response_format": self.response_format,
            "max_tokens": self.max_tokens,
            "top_p": self.top_p,
        }
        return hashlib.sha256(_canonical_json(payload).encode("utf-8")).hexdigest()


@dataclass
class _UsageCounter:
    """Thread-safe running totals behind `ChatClient.usage`."""

    _totals: Usage = field(default_factory=Usage)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, delta: Usage) -> None:
        with self._lock:
            self._totals = self._totals + delta

    def snapshot(self) -> Usage:
        with self._lock:
            return self._totals


class _MalformedResponse(Exception):
    """An HTTP 200 whose body is not a usable chat completion."""


@dataclass(frozen=True)
class _Answer:
    """The parts of one successful response that we keep."""

    choices: list[tuple[str, str | None]]  # (text, finish_reason), at least one
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float


def _not_a_completion(body: str) -> _MalformedResponse:
    """Name what came back instead of a chat completion: a web page (a proxy, a login page,
    a base URL without the API's path) reads better than a JSON decoding error."""
    text = " ".join(body.split())
    excerpt = text[:100] + ("..." if len(text) > 100 else "")
    if text.startswith("<") and "html" in text[:500].lower():
        what = "an HTML page"
    elif not text:
        what = "an empty body"
    else:
        what = "text that is not JSON"
    return _MalformedResponse(f"the endpoint answered with {what}, not a chat completion (is "
                              f"the base URL the API's, e.g. ending in /v1?): {excerpt!r}")


def _parse_answer(response: ChatCompletion, n: int, latency_s: float) -> _Answer:
    # Non-strict parsing in the openai library lets odd bodies through as
    # half-filled objects; check what we rely on instead of trusting the types.
    if isinstance(response, str):  # the library's reading of a body that is not JSON
        raise _not_a_completion(response)
    raw_choices = getattr(response, "choices", None)
    if not isinstance(raw_choices, list) or not raw_choices:
        raise _MalformedResponse("response has no choices")
    choices: list[tuple[str, str | None]] = []
    for choice in raw_choices[:n]:
        message = getattr(choice, "message", None)
        if message is None:
            raise _MalformedResponse("response choice has no message")
        content = getattr(message, "content", None)
        finish_reason = getattr(choice, "finish_reason", None)
        choices.append((content if isinstance(content, str) else "", finish_reason))
    usage = getattr(response, "usage", None)
    return _Answer(
        choices=choices,
        prompt_tokens=_int_or_none(getattr(usage, "prompt_tokens", None)),
        completion_tokens=_int_or_none(getattr(usage, "completion_tokens", None)),
        latency_s=latency_s,
    )


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) else None


# -- cache ------------------------------------------------------------------


class _ResponseCache:
    """sqlite store of completions keyed by request hash. Stores answers only, never keys.

    One connection guarded by a lock serves all threads of this process; WAL mode
    and a busy timeout let several processes share the file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False)
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA busy_timeout=30000")
            self._conn.execute(
                """CREATE TABLE IF NOT EXISTS completions (
                       key TEXT PRIMARY KEY,
                       text TEXT NOT NULL,
                       finish_reason TEXT,
                       prompt_tokens INTEGER,
                       completion_tokens INTEGER,
                       latency_s REAL NOT NULL,
                       created_at REAL NOT NULL
                   )"""
            )
            self._conn.commit()

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT text, finish_reason, prompt_tokens, completion_tokens, latency_s "
                "FROM completions WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        text, finish_reason, prompt_tokens, completion_tokens, latency_s = row
        return Completion(
            text=text,
            finish_reason=finish_reason,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=latency_s,
            cached=True,
            truncated=finish_reason == "length",
        )

    def put(self, key: str, completion: Completion) -> None:
        with self._lock:
            # First writer wins: a concurrent duplicate request must not change
            # samples that a caller may already have seen.
            self._conn.execute(
                "INSERT OR IGNORE INTO completions (key, text, finish_reason,"
                " prompt_tokens, completion_tokens, latency_s, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    completion.text,
                    completion.finish_reason,
                    completion.prompt_tokens,
                    completion.completion_tokens,
                    completion.latency_s,
                    time.time(),
                ),
            )
            self._conn.commit()

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# -- the client ---------------------------------------------------------------


class ChatClient:
    """Chat completions with retries, caching and usage accounting. Thread-safe."""

    def __init__(self, config: ClientConfig) -> None:
        from openai import OpenAI  # lazy: plancheck must import without openai installed

        self.config = config
        # With base_url=None the library reads OPENAI_BASE_URL; resolve it here so
        # that loopback detection and cache keys see the real endpoint.
        self.base_url = config.base_url or os.environ.get("OPENAI_BASE_URL") or None
        if self.base_url is not None:
            self.base_url = self.base_url.rstrip("/")
        from plancheck.planners.endpoint import redact_url

        self._shown_url = redact_url(self.base_url)  # no credentials in what is printed
        api_key = _resolve_api_key(config, self.base_url)
        # max_retries=0: our loop is the only one, so every retry is seen and counted.
        self._openai: OpenAI = OpenAI(
            api_key=api_key,
            base_url=self.base_url,
            timeout=config.timeout_s,
            max_retries=0,
        )
        self._cache = _ResponseCache(config.cache_path) if config.cache_path else None
        self._usage = _UsageCounter()

    def __repr__(self) -> str:
        cache = str(self.config.cache_path) if self.config.cache_path else None
        return (
            f"ChatClient(model={self.config.model!r}, base_url={self._shown_url!r}, "
            f"cache={cache!r})"
        )

    __str__ = __repr__

    @property
    def usage(self) -> Usage:
        return self._usage.snapshot()

    def close(self) -> None:
        self._openai.close()
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- public entry point ---------------------------------------------------

    def complete(
        self,
        messages: Messages | str,
        *,
        temperature: float,
        n: int = 1,
        stop: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        first_sample: int = 0,
    ) -> list[Completion]:
        """Return exactly `n` completions, in sample-index order.

        Samples ``first_sample`` to ``first_sample + n - 1`` of the request: asking again for
        *more* samples of the same prompt (a re-sampling round) takes a later ``first_sample``,
        so that the cache answers it with new samples, not the ones already seen.

        Raises TransportError (endpoint unreachable / kept failing), RequestRejected
        (4xx other than 429) or ValueError (bad arguments).
        """
        if n < 1:
            raise ValueError("n must be >= 1")
        request = _Request(
            model=self.config.model,
            base_url=self.base_url,
            messages=_normalise_messages(messages),
            temperature=float(temperature),
            stop=list(stop) if stop else None,
            response_format=response_format,
            max_tokens=max_tokens if max_tokens is not None else self.config.max_tokens,
            top_p=self.config.top_p,
        )
        if first_sample < 0:
            raise ValueError("first_sample must be >= 0")
        results: dict[int, Completion] = self._cached_samples(request, n, first_sample)
        missing = [i for i in range(n) if i not in results]
        while missing:
            fresh = self._fetch(request, len(missing))
            for index, completion in zip(missing, fresh, strict=False):
                results[index] = completion
                if self._cache is not None:
                    self._cache.put(request.cache_key(first_sample + index), completion)
            missing = missing[len(fresh) :]
            if missing:
                # Some servers (llama.cpp, many proxies) ignore n; ask again for the rest.
                logger.debug(
                    "server returned %d of the requested choices; asking for %d more",
                    len(fresh),
                    len(missing),
                )
        return [results[i] for i in range(n)]

    # -- internals ------------------------------------------------------------

    def _cached_samples(self, request: _Request, n: int, first: int = 0
                        ) -> dict[int, Completion]:
        if self._cache is None:
            return {}
        hits: dict[int, Completion] = {}
        for index in range(n):
            cached = self._cache.get(request.cache_key(first + index))
            if cached is not None:
                hits[index] = cached
        if hits:
            logger.debug("cache: %d of %d samples served from %s", len(hits), n, self._cache.path)
            self._usage.add(Usage(cache_hits=len(hits)))
        return hits

    def _fetch(self, request: _Request, n: int) -> list[Completion]:
        """One successful HTTP call (after retries); at least one completion, at most n."""
        answer = self._answer_with_retries(request, n)
        shares = _split_evenly(answer.completion_tokens, len(answer.choices))
        self._usage.add(
            Usage(
                calls=1,
                prompt_tokens=answer.prompt_tokens or 0,
                completion_tokens=answer.completion_tokens or 0,
            )
        )
        logger.debug(
            "chat completion: model=%s choices=%d latency=%.2fs tokens=%s+%s",
            request.model,
            len(answer.choices),
            answer.latency_s,
            answer.prompt_tokens,
            answer.completion_tokens,
        )
        return [
            Completion(
                text=text,
                finish_reason=finish_reason,
                prompt_tokens=answer.prompt_tokens,
                completion_tokens=share,
                latency_s=answer.latency_s,
                cached=False,
                truncated=finish_reason == "length",
            )
            for (text, finish_reason), share in zip(answer.choices, shares, strict=True)
        ]

    def _answer_with_retries(self, request: _Request, n: int) -> _Answer:
        import openai

        attempts_allowed = self.config.max_retries + 1
        for attempt in range(attempts_allowed):
            retry_after: float | None = None
            status: int | None = None
            started = time.monotonic()
            try:
                response = self._create_once(request, n)
                return _parse_answer(response, n, time.monotonic() - started)
            except openai.APIStatusError as exc:
                if not self._is_retryable_status(exc.status_code):
                    raise self._rejected(exc) from None
                failure: Exception = exc
                status = exc.status_code
                retry_after = _retry_after_seconds(exc.response.headers)
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                failure = exc
            except (
                _MalformedResponse,
                openai.APIResponseValidationError,
                json.JSONDecodeError,
            ) as exc:
                # A 200 whose body is not a usable completion (HTML from a gateway,
                # truncated JSON, no choices): transient in practice, so retry it.
                failure, status = exc, 200
                if isinstance(exc, json.JSONDecodeError) and not exc.doc.lstrip().startswith(
                        ("{", "[")):
                    failure = _not_a_completion(exc.doc)
            if attempt + 1 >= attempts_allowed:
                if _refused(failure):  # say who refused, not the library's "Connection error"
                    raise self._refused_error(attempts_allowed) from None
                raise self._transport_error(failure, status, attempts_allowed) from None
            delay = _full_jitter_delay(
                attempt, self.config.backoff_base_s, self.config.backoff_max_s, retry_after
            )
            logger.warning(
                "chat completion attempt %d/%d failed (%s, status %s); retrying in %.2fs",
                attempt + 1,
                attempts_allowed,
                type(failure).__name__,
                status,
                delay,
            )
            self._usage.add(Usage(retries=1))
            time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _create_once(self, request: _Request, n: int) -> ChatCompletion:
        from openai import omit

        return self._openai.chat.completions.create(
            model=request.model,
            messages=cast("list[ChatCompletionMessageParam]", request.messages),
            temperature=request.temperature,
            top_p=request.top_p,
            max_tokens=request.max_tokens,
            # Only send n when needed: some servers reject the parameter outright.
            n=n if n > 1 else omit,
            stop=request.stop if request.stop else omit,
            response_format=(
                cast("ResponseFormat", request.response_format)
                if request.response_format is not None
                else omit
            ),
        )

    def _refused_error(self, attempts: int) -> TransportError:
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(self.base_url or "https://api.openai.com/v1")
            where = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
        except ValueError:
            where = self._shown_url or "the endpoint"
        message = (f"chat completion failed after {attempts} attempt(s): {where} refused the "
                   "connection (is the model server running?)")
        logger.warning("giving up: %s", message)
        return TransportError(message, status=None, attempts=attempts)

    @staticmethod
    def _is_retryable_status(status: int) -> bool:
        return status == _STATUS_TOO_MANY_REQUESTS or status >= _STATUS_SERVER_ERROR

    def _redact(self, text: str) -> str:
        """Defence in depth: a misbehaving server might echo the key back to us."""
        secret = self._openai.api_key  # the only place the key is held
        if secret and secret != LOCAL_DUMMY_KEY:
            text = text.replace(secret, _REDACTED)
        if self.base_url and self._shown_url != self.base_url:
            from plancheck.planners.endpoint import url_secrets

            text = text.replace(self.base_url, self._shown_url or "")
            for credential in url_secrets(self.base_url):
                text = text.replace(credential, _REDACTED)
        return text[:_MAX_DETAIL_CHARS]

    def _rejected(self, exc: Any) -> RequestRejected:
        status = int(exc.status_code)
        detail = self._redact(_server_message(exc))
        logger.warning("chat completion rejected with HTTP %d: %s", status, detail)
        return RequestRejected(
            f"request rejected by {self._shown_url or 'the default endpoint'} "
            f"with HTTP {status}: {detail}",
            status=status,
            server_message=detail,
        )

    def _transport_error(self, exc: Exception, status: int | None, attempts: int) -> TransportError:
        if status is not None and hasattr(exc, "status_code"):
            detail = self._redact(_server_message(exc))
        else:
            detail = self._redact(str(exc) or type(exc).__name__)
        message = (
            f"chat completion failed after {attempts} attempt(s) against "
            f"{self._shown_url or 'the default endpoint'}: {type(exc).__name__}"
            f"{f' (HTTP {status})' if status is not None else ''}: {detail}"
        )
        logger.warning("giving up: %s", message)
        return TransportError(message, status=status, attempts=attempts)
