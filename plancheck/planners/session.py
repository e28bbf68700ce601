"""One task's conversation with the model: every call goes through a :class:`ModelSession`, so
the task's calls, tokens, latency, finish reasons and truncations are counted in one place, and
its request budget is kept there too: every method, whatever its search, stops asking once the
task has sent ``max_requests`` HTTP requests (retries included).

The runner gives each worker thread its own :class:`ChatClient`; a task runs on one thread, so
the difference of the client's usage before and after a call is exactly that call's usage, even
when the server ignores ``n`` and several HTTP requests serve one call.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plancheck.planners.client import ChatClient, Completion, Usage

Messages = list[dict[str, str]]

# Levels of structured output, strongest first; a server that rejects one gets the next.
FORMAT_LEVELS = ("json_schema", "json_object", "none")


@dataclass
class FormatPolicy:
    """Which response_format the server accepts, learnt once and shared by a run's sessions."""

    level: str = "json_schema"
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def settle(self, accepted: str) -> None:
        """Remember that the server accepted ``accepted`` after refusing stronger levels."""
        with self._lock:
            if FORMAT_LEVELS.index(accepted) > FORMAT_LEVELS.index(self.level):
                self.level = accepted


def _format_level(response_format: dict[str, Any] | None) -> str:
    if response_format is None:
        return "none"
    kind = response_format.get("type")
    return kind if kind in FORMAT_LEVELS else "none"


def _refuses_format(error: Exception) -> bool:
    """Whether a failed request may have failed because of its response_format.

    Any 4xx may (servers word it differently); a 5xx only when it names response_format,
    because some servers (llama-cpp-python's) answer an unsupported json_schema with HTTP 500.
    """
    from plancheck.planners.client import RequestRejected

    if isinstance(error, RequestRejected):
        return True
    status = getattr(error, "status", None)
    return status is not None and status >= 500 and "response_format" in str(error)


@dataclass
class ModelSession:
    client: ChatClient
    policy: FormatPolicy = field(default_factory=FormatPolicy)
    max_tokens: int | None = None
    max_requests: int | None = None  # None: no budget
    call_log: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0
    requests: int = 0  # HTTP requests sent: the successful calls and the retries
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    truncated_completions: int = 0

    def ask(
        self,
        messages: Messages | str,
        *,
        temperature: float,
        n: int = 1,
        stop: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        purpose: str = "plan",
        first_sample: int = 0,
    ) -> list[Completion]:
        """``n`` completions. Raises the client's errors (never plan errors).
        ``first_sample``: see :meth:`ChatClient.complete` (re-sampling the same prompt)."""
        from plancheck.planners.client import RequestRejected, TransportError

        formats = self._fallbacks(response_format)
        for index, sent in enumerate(formats):
            try:
                completions = self._call(messages, temperature, n, stop, sent, purpose,
                                         first_sample)
            except (RequestRejected, TransportError) as error:
                # The server may refuse the structured-output request itself: try a weaker
                # one. Other failures (a prompt too long, an outage) re-raise.
                if index + 1 == len(formats) or not _refuses_format(error):
                    raise
                continue
            if index > 0:
                self.policy.settle(_format_level(sent))  # learnt: skip the refused levels
            return completions
        raise AssertionError("unreachable")  # pragma: no cover

    def _fallbacks(self, wanted: dict[str, Any] | None) -> list[dict[str, Any] | None]:
        """The formats to try, strongest first, starting from what the server accepts."""
        if wanted is None:
            return [None]
        start = max(FORMAT_LEVELS.index(_format_level(wanted)),
                    FORMAT_LEVELS.index(self.policy.level))
        formats: list[dict[str, Any] | None] = []
        for level in FORMAT_LEVELS[start:]:
            if level == "json_schema":
                formats.append(wanted)
            elif level == "json_object":
                formats.append({"type": "json_object"})
            else:
                formats.append(None)
        return formats

    def _call(
        self,
        messages: Messages | str,
        temperature: float,
        n: int,
        stop: list[str] | None,
        response_format: dict[str, Any] | None,
        purpose: str,
        first_sample: int = 0,
    ) -> list[Completion]:
        if self.max_requests is not None and self.requests >= self.max_requests:
            from plancheck.planners.client import RequestBudgetSpent

            # Checked before each call: one call may send several requests (retries, or a
            # server that ignores n), so the budget is met, not cut in the middle of a call.
            raise RequestBudgetSpent(self.requests, self.max_requests)
        before = self.client.usage
        started = time.monotonic()
        error: str | None = None
        completions: list[Completion] = []
        try:
            completions = self.client.complete(
                messages,
                temperature=temperature,
                n=n,
                stop=stop,
                response_format=response_format,
                max_tokens=self.max_tokens,
                first_sample=first_sample,
            )
        except Exception as failure:
            error = f"{type(failure).__name__}: {failure}"
            raise
        finally:
            self._account(purpose, n, temperature, response_format, before,
                          time.monotonic() - started, completions, error)
        return completions

    def _account(
        self,
        purpose: str,
        n: int,
        temperature: float,
        response_format: dict[str, Any] | None,
        before: Usage,
        elapsed: float,
        completions: list[Completion],
        error: str | None,
    ) -> None:
        delta = self.client.usage - before
        self.calls += delta.calls
        self.requests += delta.calls + delta.retries
        self.prompt_tokens += delta.prompt_tokens
        self.completion_tokens += delta.completion_tokens
        self.latency_s += elapsed
        truncated = sum(1 for c in completions if c.truncated)
        self.truncated_completions += truncated
        entry: dict[str, Any] = {
            "purpose": purpose,
            "n": n,
            "temperature": temperature,
            "response_format": _format_level(response_format),
            "http_calls": delta.calls,
            "retries": delta.retries,
            "cache_hits": delta.cache_hits,
            "prompt_tokens": delta.prompt_tokens,
            "completion_tokens": delta.completion_tokens,
            "latency_s": round(elapsed, 4),
            "finish_reasons": [c.finish_reason for c in completions],
            "truncated": truncated,
        }
        if error is not None:
            entry["error"] = error
        self.call_log.append(entry)

    def ask_one(self, messages: Messages | str, **kwargs: Any) -> Completion:
        return self.ask(messages, n=1, **kwargs)[0]
