"""What a call shape is: everything plancheck knows about one way of writing tool calls.

A :class:`CallShape` owns its calls: how to read one (its tool, its arguments, its id), the
blocks of a transcript in the same format that are not calls but answer them (their results,
with the id of the call each answers; for a format whose blocks may carry no id, the tool each
names, which then pairs it with the earliest unanswered call of that tool), the text that marks
such a block (a cheap test before a transcript is parsed for results), the syntaxes in which
its calls' arguments refer to earlier calls' results (names of the reference-syntax registry,
:data:`plancheck.compiler.refsyntax.REFERENCE_SYNTAXES`), and how a call is written back
(``plancheck fix`` writes a repaired call in the shape it was read in). The registry
(:mod:`plancheck.formats.shapes`) finds the built-in shapes in :mod:`plancheck.formats.calls`,
one module each, and plugins' shapes in the entry-point group ``plancheck.call_shapes``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plancheck.formats.found import FoundCall
from plancheck.records import FrozenRecord

__all__ = ["AnswerName", "CallShape", "Reader", "ResultReader", "Writer"]

Reader = Callable[[dict[str, Any], str], "FoundCall | None"]
# A block answering a call: (the id of the call it answers, or None; the result as written).
ResultReader = Callable[[dict[str, Any]], "tuple[str | None, Any] | None"]
# The tool a block answering a call names (what pairs it when it carries no id), or None.
AnswerName = Callable[[dict[str, Any]], "str | None"]
# A call written in the shape: (tool, arguments, id or None) -> the call's JSON.
Writer = Callable[[str, Any, "str | None"], Any]


class CallShape(FrozenRecord):
    """A registered call shape (see the module docstring). ``detected``: tried on any input;
    ``answers``: tried only inside BFCL's ``ground_truth`` (or when forced); ``order``: its
    place in the registry (specific shapes before the ones that would also read their calls:
    ``generic`` guesses from key names, at 900). ``answer_name``: for a format whose results
    pair with their calls by tool and order when ids are absent (Gemini's), the tool a result
    block names; a result without an id then answers the earliest unanswered call of that
    tool without an id. ``references``: the reference syntaxes its calls are read with when
    none is forced (``--reference-syntax``): none for the formats of chat APIs, whose strings
    are text (a loop that writes references there says which syntax it uses).
    ``trajectories``: a list of its calls may be a DORA-style trajectory, read as DORA reads
    it when its references are DORA's or DisasterBench's (the recogniser decides:
    :func:`plancheck.formats.sniff.reads_as_trajectory`)."""

    __slots__ = ("answer_name", "answers", "description", "detected", "markers", "name",
                 "order", "read", "references", "result", "trajectories", "write")
    _fields = ("name", "read", "detected", "answers", "description", "order", "result",
               "markers", "write", "answer_name", "references", "trajectories")

    def __init__(self, name: str, read: Reader, detected: bool, answers: bool = False, *,
                 description: str = "", order: int = 500, result: ResultReader | None = None,
                 markers: tuple[str, ...] = (), write: Writer | None = None,
                 answer_name: AnswerName | None = None,
                 references: tuple[str, ...] = (), trajectories: bool = False) -> None:
        self.name = name
        self.read = read
        self.detected = detected
        self.answers = answers
        self.description = description
        self.order = order
        self.result = result
        self.markers = markers
        self.write = write
        self.answer_name = answer_name
        self.references = references
        self.trajectories = trajectories
