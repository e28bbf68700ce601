"""The kind of a literal (a media file by its extension, a URL, an e-mail address, a date)
held against what its parameter's type, JSON Schema ``format`` or name says it holds."""

from __future__ import annotations

import json
import re
from functools import lru_cache

from plancheck.checks.request import Request
from plancheck.checks.request_values import TextLiteral, name_words, text_literals
from plancheck.checks.rule import Rule
from plancheck.diagnostics.model import Diagnostic, Edit, Suggestion, make
from plancheck.ir.nodes import Param, Plan, Toolset

_MEDIA = {
    "image": frozenset({"jpg", "jpeg", "png", "gif", "bmp", "tif", "tiff", "webp", "svg",
                        "heic"}),
    "audio": frozenset({"wav", "mp3", "flac", "ogg", "m4a", "aac", "wma", "opus", "aiff"}),
    "video": frozenset({"mp4", "avi", "mov", "mkv", "webm", "flv", "wmv", "m4v", "mpeg",
                        "mpg"}),
}
_BY_EXTENSION = {extension: kind for kind, extensions in _MEDIA.items()
                 for extension in extensions}
_FORMATS = {"email": "email", "idn-email": "email", "uri": "url", "url": "url", "iri": "url",
            "date": "date", "date-time": "date"}
_NAMED = frozenset({"image", "audio", "video", "url", "email", "date"})
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://\S+")
_WHAT = {"image": "an image", "audio": "an audio file", "video": "a video", "url": "a URL",
         "email": "an e-mail address", "date": "a date"}


class ValueKinds(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("value kinds", "request", ("PC905",), hooks=(), option="request")

    def check_request(self, plan: Plan, toolset: Toolset, request: Request,
                      copied: frozenset[tuple[int, str]]) -> list[Diagnostic]:
        found: list[Diagnostic] = []
        for literal in text_literals(plan, toolset):
            expected = _expected(literal.param, literal.argument)
            if expected is None:
                continue
            actual = _kind(literal.value.strip())
            if actual is not None and _contradicts(expected, actual):
                fitting = [m.text for m in request.inputs if _kind(m.text) == expected]
                found.append(_mismatch(literal, expected, actual,
                                       fitting[0] if len(fitting) == 1 else None))
        return found


def _expected(param: Param | None, argument: str) -> str | None:
    """What the parameter says its value is: by its schema's ``format``, its type's name, or
    the one kind its name names (None: nothing, or more than one)."""
    if param is not None and param.schema_text:
        named = _format(param.schema_text)
        if named is not None:
            return named
    if param is not None and param.type.lower() in _NAMED:
        return param.type.lower()
    kinds = name_words(param.name if param else argument) & _NAMED
    return next(iter(kinds)) if len(kinds) == 1 else None


@lru_cache(maxsize=4096)
def _format(schema_text: str) -> str | None:
    try:
        schema = json.loads(schema_text)
    except ValueError:
        return None
    found = schema.get("format") if isinstance(schema, dict) else None
    return _FORMATS.get(found) if isinstance(found, str) else None


def _kind(value: str) -> str | None:
    """The kind of a literal (None: none this rule tells apart)."""
    if _URL.fullmatch(value):
        return "url"
    if _EMAIL.fullmatch(value):
        return "email"
    if _DATE.match(value):
        return "date"
    if "." in value and " " not in value:
        return _BY_EXTENSION.get(value.rpartition(".")[2].lower())
    return None


def _contradicts(expected: str, actual: str) -> bool:
    if expected in _MEDIA:  # a URL may name a media file; another medium may not
        return (actual in _MEDIA and actual != expected) or actual in ("email", "date")
    if expected == "url":
        return actual in ("email", "date")
    return actual != expected  # an e-mail address or a date: nothing else is one


def _mismatch(literal: TextLiteral, expected: str, actual: str,
              fitting: str | None) -> Diagnostic:
    """The finding; ``fitting``: the one value of the expected kind the request gives."""
    suggestions = () if fitting is None or literal.span.pointer is None else (Suggestion(
        f"use `{fitting}`, {_WHAT[expected]} the request gives",
        (Edit(literal.span.pointer, fitting),)),)
    return make(
        "PC905",
        f"step {literal.step.position} `{literal.step.tool}.{literal.argument}` expects "
        f"{_WHAT[expected]}, found {_WHAT[actual]} `{literal.value}`",
        primary=literal.span, label=f"{_WHAT[actual]}, not {_WHAT[expected]}",
        help=(f"the request gives {_WHAT[expected]}: `{fitting}`",) if fitting else (),
        data={"step": literal.step.position, "input": literal.argument,
              "expected": expected, "actual": actual}, suggestions=suggestions)
