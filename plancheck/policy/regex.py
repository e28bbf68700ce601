"""The regular expressions of policy rules (``matches "..."``), matched in linear time.

A value a model writes must not decide how long a verdict takes. Python's ``re`` backtracks:
``(a+)+$`` against 40 ``a`` and a ``!`` ran past 120 s under a 2,000 ms ``--timeout-ms``, and
in the guard 27 characters took 2.5 s, four times longer for every two more. Patterns are
therefore compiled and matched by RE2 (Google's engine, the ``google-re2`` package), whose time
is linear in the value's length for every pattern. Its syntax is Python's without what needs
backtracking: a backreference (``\\1``) or a lookaround (``(?=...)``, ``(?<!...)``) does not
compile, and the policy is refused with ``PC810`` naming why, as is a pattern RE2 cannot
compile within its memory budget. ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are ASCII, as in RE2
(``\\p{L}``, ``\\p{Nd}`` name Unicode classes). Without ``google-re2`` installed, a policy with a
regular expression is refused, never matched by a backtracking engine.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["Regex", "RegexError", "compile_regex"]

# Memory RE2 may use for one pattern's automata (its default is 8 MiB): a pattern that needs
# more does not compile; matching never needs more than this.
_MAX_MEMORY = 64 << 20
_SURROGATE = re.compile("[\ud800-\udfff]")  # (one character class: linear in re too)


class RegexError(ValueError):
    """A pattern that cannot be matched in linear time (or at all): the message says why."""


class Regex:
    """A compiled policy pattern; :meth:`fullmatch` takes time linear in the value."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str, compiled: Any) -> None:
        self.pattern = pattern
        self._compiled = compiled

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Regex) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(self.pattern)

    def __repr__(self) -> str:
        return f"Regex({self.pattern!r})"

    def fullmatch(self, value: str) -> bool:
        """Whether all of ``value`` matches. A lone surrogate (JSON can spell one, UTF-8
        cannot) is read as U+FFFD, the character that replaces what cannot be encoded."""
        try:
            return self._compiled.fullmatch(value) is not None
        except UnicodeEncodeError:
            fixed = _SURROGATE.sub("\ufffd", value)
            return self._compiled.fullmatch(fixed) is not None


@lru_cache(maxsize=1024)
def compile_regex(pattern: str) -> Regex:
    """The pattern compiled for linear-time matching; raises :class:`RegexError`."""
    try:
        import re2
    except ImportError as error:
        raise RegexError("regular expressions need the google-re2 package (pip install "
                         "google-re2); without it no pattern is matched") from error
    options = re2.Options()
    options.log_errors = False  # (RE2 would print every refused pattern on stderr)
    options.max_mem = _MAX_MEMORY
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as error:
        raise RegexError(_reason(error, pattern)) from None
    except (UnicodeEncodeError, TypeError, ValueError) as error:
        raise RegexError(str(error)) from None
    return Regex(pattern, compiled)


def _reason(error: Exception, pattern: str) -> str:
    detail = error.args[0] if error.args else ""
    text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
    lookaround = "invalid perl operator: (?" in text
    backreference = re.search(r"invalid escape sequence: \\[1-9]", text) is not None
    if lookaround or backreference:
        return (f"{text} (a lookaround or a backreference needs a backtracking engine, whose "
                "time a value can make exponential; policies use RE2, which has neither)")
    return text or f"RE2 cannot compile {pattern!r}"
