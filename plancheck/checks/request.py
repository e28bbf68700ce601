"""The user's request a plan answers, as the request rules read it (``PC9xx``).

What a request gives is read once, by pattern, with no model: the files and URLs it names
(each with whether the sentence around it introduces a result to be written rather than an
input), the values it quotes, and the steps it enumerates or chains. The rules compare these
with the literals and calls of the plan; nothing here knows a plan.

Where a record keeps its request: :data:`REQUEST_FIELDS`, the first that holds text.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

from plancheck.records import FrozenRecord

__all__ = ["REQUEST_FIELDS", "Mention", "Request", "looks_like_file", "normalized",
           "read_request", "request_of", "task_table"]

# The fields a record (a JSONL line, a DORA task) keeps the user's request in, in the order
# asked: the names agent frameworks and benchmarks use (DisasterBench `task_desc`, TaskBench
# `user_request` and `instruction`, Seal-Tools `query`, DORA `question`).
REQUEST_FIELDS: Final = ("task", "query", "user_request", "question", "task_desc",
                         "instruction")

_URL = r"https?://[^\s'\"<>()\[\]{}`]+"
# A path: segments joined by '/', or one name with an extension (letters first: not `3.5`).
_PATH = (r"(?:~|\.{1,2})?/?[\w\-.]+(?:/[\w\-.]+)*\.[A-Za-z][A-Za-z0-9]{0,4}(?![\w/])"
         r"|(?:~|\.{1,2})?/[\w\-.]+(?:/[\w\-.]+)+/?")
_MENTION = re.compile(rf"(?<![\w/.\-@])(?:{_URL}|{_PATH})")
# Abbreviations that look like a name with an extension.
_NOT_FILES = frozenset({"e.g", "i.e", "etc", "vs", "u.s", "a.m", "p.m", "no", "mr", "dr",
                        "st", "approx", "fig"})
_QUOTED = re.compile(r"""(?:(?<=[\s(\[:=,])|^)(?:'([^'\n]{1,200})'|"([^"\n]{1,200})"|"""
                     r"""`([^`\n]{1,200})`|“([^”\n]{1,200})”|‘([^’\n]{1,200})’)(?=[\s.,;:!?)\]]|$)""")
# Words that make a file named later in the same clause a result to write, not an input.
_WRITTEN = re.compile(r"\b(?:sav(?:e|ed|ing)|writ(?:e|ten|ing)|output|export(?:ed)?|stor(?:e|ing)"
                      r" (?:the )?(?:result|output)s?|result(?:s|ing)? (?:will|should|to)"
                      r"|will be (?:saved|written|stored|placed|generated|produced)"
                      r"|into (?:a |an |the )?(?:new )?(?:\w+ )?file (?:called|named))\b",
                      re.IGNORECASE)
_CLAUSE_END = re.compile(r"[.;](?=\s|$)|\n")
# The files and URLs read of one request, at most: the rules compare each with the plan's
# literals, and a request that names more is no request a person wrote.
MAX_MENTIONS: Final = 1000
# Steps the request enumerates: "Step 1: ...", "1. ...", "1) ..." at a line or sentence start.
_ENUMERATED = re.compile(r"(?:^|(?<=[\n.;:]))\s*(?:step\s*(\d{1,2})\s*[:.)\-]|(\d{1,2})[.)]\s)",
                         re.IGNORECASE)

# Words that chain a request's actions in order ("extract the audio, reduce the noise, and
# then add reverb. Finally, ..."): each starts an action after the first. Only at a clause's
# start (after a comma, a sentence's end, a line break): "moving at 20 m/s and then
# accelerates" describes a motion, not two actions.
_CHAINED = re.compile(r"(?:[,.;:!?]|^|\n)\s*(?:and\s+)?(?:then|after that|afterwards|finally|"
                      r"lastly|followed by|subsequently)\b", re.IGNORECASE | re.MULTILINE)


class Mention(FrozenRecord):
    """A file or URL the request names: its text, where it starts, and whether the sentence
    introduces it as a result to write (``written``) rather than an input."""

    __slots__ = _fields = ("text", "start", "written")

    def __init__(self, text: str, start: int, written: bool) -> None:
        self.text = text
        self.start = start
        self.written = written


class Request(FrozenRecord):
    """One request, read: ``text`` and its ``folded`` form (see :func:`normalized`), the
    files and URLs it names, the values it quotes, the steps it numbers (their texts, in
    order; empty when it numbers none) and, when it numbers none, the actions it chains with
    sequence words (``then``, ``finally``; their texts, empty when it chains fewer than
    two)."""

    __slots__ = _fields = ("text", "folded", "mentions", "quoted", "steps", "chained")

    def __init__(self, text: str, folded: str, mentions: tuple[Mention, ...],
                 quoted: tuple[str, ...], steps: tuple[str, ...],
                 chained: tuple[str, ...] = ()) -> None:
        self.text = text
        self.folded = folded
        self.mentions = mentions
        self.quoted = quoted
        self.steps = steps
        self.chained = chained

    def gives(self, value: str) -> bool:
        """Whether ``value`` is written in the request (case and spacing aside)."""
        folded = normalized(value)
        return bool(folded) and folded in self.folded

    @property
    def inputs(self) -> tuple[Mention, ...]:
        """The files and URLs the request gives to be read (not those it names as results)."""
        return tuple(m for m in self.mentions if not m.written)


def normalized(text: str) -> str:
    """``text`` folded for comparison: lower case, runs of white space as one space, no
    surrounding quotes or white space."""
    return " ".join(text.lower().split()).strip("'\"`")


@lru_cache(maxsize=512)
def read_request(text: str) -> Request:
    """Read ``text`` (cached: a batch often asks the same request of many plans)."""
    mentions: list[Mention] = []
    seen: set[str] = set()
    # One sweep: a file is written when a marker word comes after the last clause end before
    # it (the markers and the ends found once: a request naming thousands of files stays
    # linear).
    markers = [m.end() for m in _WRITTEN.finditer(text)]
    ends = [m.start() for m in _CLAUSE_END.finditer(text)]
    for match in _MENTION.finditer(text):
        found = match.group(0).rstrip(".,;:!?'\"")
        if not _is_mention(found) or found.lower() in seen:
            continue
        if len(mentions) == MAX_MENTIONS:
            break
        seen.add(found.lower())
        start = match.start()
        marker = bisect_left(markers, start + 1) - 1
        end = bisect_left(ends, start) - 1
        written = marker >= 0 and (end < 0 or markers[marker] > ends[end])
        mentions.append(Mention(found, start, written))
    quoted = tuple(dict.fromkeys(
        q.strip() for m in _QUOTED.finditer(text) for q in m.groups() if q and q.strip()))[
        :MAX_MENTIONS]
    steps = _steps(text)
    return Request(text, normalized(text), tuple(mentions), quoted, steps,
                   () if steps else _chained(text))


def _is_mention(found: str) -> bool:
    if found.lower().startswith(("http://", "https://")):
        return len(found) > len("https://")
    if "/" not in found:
        stem, _, extension = found.rpartition(".")
        return bool(stem) and stem.lower().rstrip(".") not in _NOT_FILES and \
            found.lower().rstrip(".") not in _NOT_FILES and any(c.isalpha() for c in extension)
    return any(c.isalnum() for c in found.replace("/", ""))


def looks_like_file(value: str) -> bool:
    """Whether ``value`` is, as a whole, a file path or URL the way a request writes one."""
    match = _MENTION.fullmatch(value.strip())
    return match is not None and _is_mention(match.group(0))


def _steps(text: str) -> tuple[str, ...]:
    """The steps ``text`` numbers 1, 2, ..., n (at least two, in order), or none."""
    marks = [(m.start(), m.end(), int(m.group(1) or m.group(2)))
             for m in _ENUMERATED.finditer(text)]
    numbers = [number for _, _, number in marks]
    if len(marks) < 2 or numbers != list(range(1, len(marks) + 1)):
        return ()
    ends = [start for start, _, _ in marks[1:]] + [len(text)]
    return tuple(text[end:stop].strip() for (_, end, _), stop in zip(marks, ends, strict=True))


def _chained(text: str) -> tuple[str, ...]:
    """The actions ``text`` chains: what comes before its first sequence word, then what
    follows each (at least two, or none)."""
    cuts = [(m.start(), m.end()) for m in _CHAINED.finditer(text)]
    if not cuts:
        return ()
    starts = [0] + [end for _, end in cuts]
    stops = [start for start, _ in cuts] + [len(text)]
    # (a sequence word with nothing after it, "..., then.", starts no action)
    actions = tuple(action for a, b in zip(starts, stops, strict=True)
                    if (action := text[a:b].strip(" \t\n,;.!?")))
    return actions if len(actions) > 1 else ()


def request_of(record: Mapping[str, Any] | None) -> str | None:
    """The request a record holds (the first of :data:`REQUEST_FIELDS` that is non-blank
    text), or None."""
    if not record:
        return None
    for key in REQUEST_FIELDS:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list):  # the user's messages (BFCL's `question` turns)
            said = "\n".join(_user_messages(value, 0))
            if said.strip():
                return said
    return None


def _user_messages(value: list[Any], depth: int) -> list[str]:
    found: list[str] = []
    for item in value:
        if isinstance(item, list) and depth < 3:
            found.extend(_user_messages(item, depth + 1))
        elif isinstance(item, dict) and item.get("role") == "user" and isinstance(
                item.get("content"), str):
            found.append(item["content"])
    return found


# The members a task file names its tasks by, most specific first.
_TASK_IDS: Final = ("task_id", "question_id", "id", "sample_id")


def task_table(value: Any) -> dict[str, str]:
    """Each task's id -> its request, from a task file's JSON (a record, a list of records,
    the lines of a JSONL file as a list; DORA's samples holding ``tasks``): every object with
    an id (:data:`_TASK_IDS`) and a request (:data:`REQUEST_FIELDS`), at any depth."""
    table: dict[str, str] = {}
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        node, depth = pending.pop()
        if depth > 8:
            continue
        if isinstance(node, list):
            pending.extend((item, depth + 1) for item in reversed(node))
        elif isinstance(node, dict):
            request = request_of(node)
            key = next((node[k] for k in _TASK_IDS if isinstance(node.get(k), (str, int))
                        and not isinstance(node.get(k), bool)), None)
            if request is not None and key is not None:
                table.setdefault(str(key), request)
            tasks = node.get("tasks")
            if isinstance(tasks, list):
                pending.append((tasks, depth + 1))
                sample = node.get("sample_id")
                if isinstance(sample, (str, int)) and not isinstance(sample, bool):
                    # DORA names the tasks of a sample <sample_id>_task<i>
                    for i, task in enumerate(tasks):
                        request = request_of(task) if isinstance(task, dict) else None
                        if request is not None:
                            table.setdefault(f"{sample}_task{i}", request)
    return table
