"""Values only the user can supply (a path, a URL, an id, a name), looked for in the request:
a value counts as invented when the request does not give it, no earlier result holds it and
the tool's schema does not name it."""

from __future__ import annotations

from plancheck.checks.request import Request, looks_like_file
from plancheck.checks.request_values import (
    TextLiteral,
    name_words,
    schema_values,
    text_literals,
)
from plancheck.checks.rule import Rule
from plancheck.diagnostics.model import Diagnostic, Edit, Suggestion, make
from plancheck.ir.nodes import Param, Plan, Toolset

# Words of a parameter's name that make its value something the user supplies.
_USER_WORDS = frozenset({"path", "paths", "file", "files", "filename", "filepath", "url",
                         "urls", "uri", "link", "id", "ids", "name", "dir", "directory",
                         "folder"})


class InventedValues(Rule):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("invented values", "request", ("PC901",), hooks=(), option="request")

    def check_request(self, plan: Plan, toolset: Toolset, request: Request,
                      copied: frozenset[tuple[int, str]]) -> list[Diagnostic]:
        """``copied``: the (step position, argument) pairs whose value copies an earlier
        call's result (a transcript with results; see plancheck.policy.trace)."""
        found: list[Diagnostic] = []
        for literal in text_literals(plan, toolset):
            value = literal.value.strip()
            if len(value) < 2 or not _user_supplied(literal.param, literal.argument, value,
                                                    literal.step.tool or ""):
                continue
            if request.gives(value) or value in schema_values(literal.param):
                continue
            if (literal.step.position, literal.argument) in copied:
                continue
            found.append(_invented(literal, value, request))
        return found


_PATH_WORDS = frozenset({"path", "paths", "file", "files", "filename", "filepath", "dir",
                         "directory", "folder"})
# Words of a parameter's name, or of its tool's, that make a file the call's result: where
# to write is the model's to choose (write_file's path, an output_path).
_WRITE_WORDS = frozenset({"output", "out", "dest", "destination", "target", "save", "write",
                          "create", "mkdir", "export", "new", "upload"})


def _user_supplied(param: Param | None, argument: str, value: str, tool: str) -> bool:
    """Whether the value is one the user supplies: a file or URL, or passed to a parameter
    whose name says it is a path, an id or a name; not a place to write."""
    words = name_words(param.name if param is not None else argument)
    if not _WRITE_WORDS.isdisjoint(words):
        return False
    if looks_like_file(value) or not _PATH_WORDS.isdisjoint(words):
        # a file: the user's to give, unless the tool writes it (write_file's path)
        return _WRITE_WORDS.isdisjoint(name_words(tool))
    return not _USER_WORDS.isdisjoint(words)


def _invented(literal: TextLiteral, value: str, request: Request) -> Diagnostic:
    tool = literal.step.tool or "?"
    closest = _closest(value, request)
    suggestions = () if closest is None else (Suggestion(
        f"use `{closest}`, which the request gives",
        (Edit(literal.span.pointer, closest),) if literal.span.pointer is not None else ()),)
    return make(
        "PC901",
        f"step {literal.step.position} `{tool}.{literal.argument}` is `{value}`, which the "
        f"request does not give",
        primary=literal.span, label="not in the request",
        help=(f"the request gives `{closest}`" if closest is not None else
              "pass a value the request gives, or one an earlier call returns",),
        data={"step": literal.step.position, "input": literal.argument, "value": value,
              **({"closest": closest} if closest is not None else {})},
        suggestions=suggestions)


# The request's values compared with an invented one, at most (each comparison is quadratic
# in the values' lengths).
_CANDIDATES = 200


def _closest(value: str, request: Request) -> str | None:
    """The request's file, URL or quoted value most like ``value`` (None: none is close)."""
    from difflib import SequenceMatcher  # only for a finding: a plain check never loads it

    best, best_ratio = None, 0.6
    matcher = SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(value.lower()[:500])
    candidates = (*(m.text for m in request.inputs), *request.quoted)[:_CANDIDATES]
    for candidate in candidates:
        matcher.set_seq1(candidate.lower()[:500])
        if matcher.real_quick_ratio() > best_ratio and matcher.quick_ratio() > best_ratio:
            ratio = matcher.ratio()
            if ratio > best_ratio:
                best, best_ratio = candidate, ratio
    return best
