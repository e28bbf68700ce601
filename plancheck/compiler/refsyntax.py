"""The ways tool-call corpora write "the result of an earlier call" inside an argument: the
registry :data:`REFERENCE_SYNTAXES` (``--reference-syntax``'s choices are its names).

Each grammar is a few lines: a reader and what a match names. A match names the producing
call either by *number* (its place in the list, counted from 0 or 1, see :func:`numbering_base`)
or by a *label* that an earlier call declares (Seal-Tools' ``responses``, a ``label`` member),
and optionally a path into that call's result.

=============  ======================================  =========================================
syntax         spelling                                names
=============  ======================================  =========================================
``generated``  ``<GENERATED>-2-<mask_path>``           call 2, output ``mask_path`` (DisasterBench)
``dora``       ``<mask_path> from trajectory[2].obs``  call 2, output ``mask_path`` (DORA)
``taskbench``  ``<node-2>``, ``<node-2>.text``         call 2, its only output (or ``text``)
``template``   ``{{steps.2.output.text}}``             call 2, output ``text``
``label``      ``$var_1.result$``, ``$var_1$``         the call labelled ``$var_1`` (``label``)
``api-call``   ``API_call_3``                          the call whose ``responses`` list it
=============  ======================================  =========================================

A string that merely looks like a reference (``"<output of step 2>"``, ``"result of call 1"``)
is a *placeholder*: the frontend keeps it as a literal and warns (``PC209``). With no syntax
allowed (``--reference-syntax none``, a guard over a pool that declares none, the calls of a
call shape that declares none: ``CallShape.references``) every string is text, placeholders
and DisasterBench's misspelt ``<GENERATED>`` references too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache
from typing import Final

from plancheck.formats.found import WHOLE_OUTPUT
from plancheck.ir.references import REFERENCE_RE
from plancheck.records import FrozenRecord


# An empty key stands for "the call's only output"; "#i" for "its i-th output". Both are
# bound to real output names once the tool pool is known (see callshapes.bind_plan).
class RefMatch(FrozenRecord):
    """A reference as written: ``number`` (as written, before the numbering base is applied)
    or ``label`` names the producing call; ``key`` is the output (see :data:`WHOLE_OUTPUT`)."""

    __slots__ = _fields = ("syntax", "key", "number", "label")

    def __init__(self, syntax: str, key: str, number: int | None = None,
                 label: str | None = None) -> None:
        self.syntax = syntax
        self.key = key
        self.number = number
        self.label = label


class Placeholder(FrozenRecord):
    """Text that reads like a reference but names no output in any known syntax."""

    __slots__ = _fields = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_TASKBENCH = re.compile(r"^\s*<node-(\d+)>(?:\.([A-Za-z_][\w.\[\]-]*))?\s*$")
_TEMPLATE = re.compile(
    r"^\s*\{\{\s*(?:steps?|calls?|nodes?)\s*(?:\.\s*|\[\s*)(\d+)\s*\]?"
    r"(?:\s*\.\s*(?:outputs?|results?|obs))?(?:\s*\.\s*([A-Za-z_][\w.\[\]-]*))?\s*\}\}\s*$")
_LABEL = re.compile(r"^\s*\$([A-Za-z_][\w-]*)((?:\.[A-Za-z_][\w\[\]-]*)*)\$\s*$")
_API_CALL = re.compile(r"^\s*(API_call_\d+)\s*$")
_PLACEHOLDER = re.compile(
    r"^\s*[<{\[(]?\s*(?:the\s+)?(?:output|result|response|return(?:ed)?\s+value)s?\s+"
    r"(?:of|from)\s+(?:the\s+)?(?:step|call|node|tool|task|previous)\b.*$"
    r"|^\s*<[^<>]*\b(?:output|result)\b[^<>]*\b(?:step|call|node)\s*\d+[^<>]*>\s*$",
    re.IGNORECASE)


def _generated(text: str) -> RefMatch | None:
    match = REFERENCE_RE.match(text)  # DisasterBench's, defined once (plancheck.ir.references)
    return None if match is None else RefMatch("generated", match.group(2),
                                               number=int(match.group(1)))


def _dora(text: str) -> RefMatch | None:
    if "trajectory" not in text.lower():
        return None
    from plancheck.dora.references import TrajectoryReference, parse_reference

    parsed = parse_reference(text)
    if isinstance(parsed, TrajectoryReference):
        return RefMatch("dora", parsed.key if parsed.key is not None else WHOLE_OUTPUT,
                        number=parsed.step)
    return None


def _taskbench(text: str) -> RefMatch | None:
    match = _TASKBENCH.match(text)
    return None if match is None else RefMatch("taskbench", match.group(2) or WHOLE_OUTPUT,
                                               number=int(match.group(1)))


def _template(text: str) -> RefMatch | None:
    match = _TEMPLATE.match(text)
    return None if match is None else RefMatch("template", match.group(2) or WHOLE_OUTPUT,
                                               number=int(match.group(1)))


def _label(text: str) -> RefMatch | None:
    match = _LABEL.match(text)
    return None if match is None else RefMatch("label", match.group(2).lstrip("."),
                                               label="$" + match.group(1))


def _api_call(text: str) -> RefMatch | None:
    match = _API_CALL.match(text)
    return None if match is None else RefMatch("api-call", WHOLE_OUTPUT, label=match.group(1))


class ReferenceSyntax(FrozenRecord):
    """A registered reference syntax: its name (``--reference-syntax NAME``), a one-line
    description with an example, and its reader (a match, or None)."""

    __slots__ = _fields = ("name", "description", "read")

    def __init__(self, name: str, description: str,
                 read: Callable[[str], RefMatch | None]) -> None:
        self.name = name
        self.description = description
        self.read = read


# The registry, in the order they are tried (the spellings exclude each other).
REFERENCE_SYNTAXES: Final = {syntax.name: syntax for syntax in (
    ReferenceSyntax("generated", "`<GENERATED>-2-<mask_path>` (DisasterBench)", _generated),
    ReferenceSyntax("dora", "`<mask_path> from trajectory[2].obs` (DORA)", _dora),
    ReferenceSyntax("taskbench", "`<node-2>`, `<node-2>.text` (TaskBench)", _taskbench),
    ReferenceSyntax("template", "`{{steps.2.output.text}}`", _template),
    ReferenceSyntax("label", "`$var_1.result$`, `$var_1$` (a call's `label`)", _label),
    ReferenceSyntax("api-call", "`API_call_3` (Seal-Tools' `responses`)", _api_call),
)}
SYNTAXES: Final = tuple(REFERENCE_SYNTAXES)


@cache
def _readers(allowed: tuple[str, ...]) -> tuple[Callable[[str], RefMatch | None], ...]:
    return tuple(s.read for s in REFERENCE_SYNTAXES.values() if s.name in allowed)


def parse(text: str, allowed: Iterable[str] = SYNTAXES) -> RefMatch | Placeholder | None:
    """The reference ``text`` spells in one of the ``allowed`` syntaxes, a placeholder, or
    ``None`` for an ordinary string."""
    for read in _readers(tuple(allowed)):
        found = read(text)
        if found is not None:
            return found
    if allowed and _PLACEHOLDER.match(text):  # (with no syntax, every string is text)
        return Placeholder(text)
    return None


def numbering_base(uses: Iterable[tuple[int, int]]) -> int:
    """Whether numbered references count calls from 0 or from 1, given (number as written,
    position of the call that writes it) for every numbered reference of one plan.

    Corpora mix both conventions (TaskBench's gold chains do, record by record), so it is read
    from the references themselves: 1 when no reference says 0, some reference would point at
    its own call or a later one when counted from 0, and every one points backward when counted
    from 1; otherwise 0.
    """
    pairs = list(uses)
    if not pairs or any(number == 0 for number, _ in pairs):
        return 0
    if any(number >= position for number, position in pairs) and \
            all(number - 1 < position for number, position in pairs):
        return 1
    return 0
