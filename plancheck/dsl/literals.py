"""The values of the DSL's string and integer literals, shared by the plan and policy readers.

A literal plancheck cannot read as a value (a raw control character, more digits than Python
reads) is :class:`BadLiteral`, which the readers turn into a diagnostic at the literal."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span


class BadLiteral(Exception):
    """A literal that cannot be read as written (a raw control character in a string, an
    integer of more digits than Python reads): its own diagnostic, at the token."""

    def __init__(self, token: Any, code: str, message: str, help: str) -> None:
        super().__init__(message)
        self.token = token
        self.code = code
        self.message = message
        self.help = help

    def diagnostic(self, filename: str) -> Diagnostic:
        token = self.token
        line = getattr(token, "line", None) or 1
        column = getattr(token, "column", None) or 1
        span = Span(filename, line, column, getattr(token, "end_line", None) or line,
                    getattr(token, "end_column", None) or column + 1)
        return make(self.code, self.message, primary=span, label="this literal",
                    help=[self.help], data={"line": line, "column": column})


_CONTROL = re.compile(r"[\x00-\x1f]")


def string_literal(token: Any, decode: Any = json.loads) -> str:
    """The value of a string literal (``decode``: how its escapes are read); BadLiteral for
    one holding a raw control character (TAB, ESC), which JSON's strings do not allow and a
    terminal would act on."""
    text = str(token)
    found = _CONTROL.search(text)
    if found is not None:
        char = found[0]
        raise BadLiteral(token, "PC119", "a string literal holds the control character "
                         f"U+{ord(char):04X} as is", "write it as an escape: "
                         + json.dumps(char))
    value = decode(text)
    assert isinstance(value, str)
    return value


def integer_literal(token: Any, text: str | None = None) -> int:
    """The value of an integer literal (``text``: the digits, when the token holds more);
    BadLiteral for one longer than Python reads."""
    text = str(token) if text is None else text
    try:
        return int(text)
    except ValueError:
        digits = sum(c.isdigit() for c in text)
        raise BadLiteral(token, "PC120", f"an integer literal of {digits:,} digits is longer "
                         "than plancheck reads", f"at most {sys.get_int_max_str_digits():,} "
                         "digits; write a string if the value is an identifier") from None
