"""A guard's answer to a proposed call, and the text a model gets from it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plancheck.diagnostics.model import Diagnostic
from plancheck.diagnostics.severity import Severity
from plancheck.records import FrozenRecord


class Verdict:
    """Whether one call may run. ``feedback`` is for the model, in its terms (the call id and
    the tool name); ``flows`` lists where its arguments' values came from (explicit references
    and inferred flows), as JSON.

    ``later``: how to find the flows when they are first read, for a verdict that did not need
    them (no rule, request or type check read them, and no feedback names them): the guard
    then infers them from the results recorded before the call, only if someone asks."""

    __slots__ = ("_flows", "_later", "allowed", "arguments", "call_id", "diagnostics",
                 "feedback", "tool")

    def __init__(self, allowed: bool, diagnostics: list[Diagnostic], feedback: str, call_id: str,
                 tool: str | None = None, arguments: Any = None,
                 flows: list[dict[str, Any]] | None = None,
                 later: Callable[[], list[dict[str, Any]]] | None = None) -> None:
        self.allowed = allowed
        self.diagnostics = diagnostics
        self.feedback = feedback
        self.call_id = call_id
        self.tool = tool
        self.arguments = arguments
        self._flows = flows if flows is not None or later is not None else []
        self._later = later

    @property
    def flows(self) -> list[dict[str, Any]]:
        found = self._flows
        if found is None:
            # (two threads reading at once both ask: the guard answers both alike)
            later = self._later
            found = self._flows = later() if later is not None else []
        return found

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    # A plain class, not a record (one is made per call; compiled, a C struct): equal,
    # hashed and shown by its fields as a record is.
    def _fields_of(self) -> tuple[Any, ...]:
        return (self.allowed, self.diagnostics, self.feedback, self.call_id, self.tool,
                self.arguments, self.flows)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Verdict):
            return NotImplemented
        return self._fields_of() == other._fields_of()

    def __hash__(self) -> int:
        return hash(self._fields_of())

    def __repr__(self) -> str:
        return (f"Verdict(allowed={self.allowed!r}, diagnostics={self.diagnostics!r}, "
                f"feedback={self.feedback!r}, call_id={self.call_id!r}, tool={self.tool!r}, "
                f"arguments={self.arguments!r}, flows={self.flows!r})")


class TurnVerdict(FrozenRecord):
    """The verdicts of the parallel calls of one assistant turn (each decided against the
    trajectory before the turn; the allowed ones joined it)."""

    _fields = ("verdicts",)
    __slots__ = _fields

    def __init__(self, verdicts: list[Verdict]) -> None:
        self.verdicts = verdicts

    @property
    def allowed(self) -> bool:
        return all(v.allowed for v in self.verdicts)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for v in self.verdicts for d in v.diagnostics]

    @property
    def feedback(self) -> str:
        return "\n\n".join(v.feedback for v in self.verdicts if v.feedback)

    def __iter__(self) -> Any:
        return iter(self.verdicts)

    def __len__(self) -> int:
        return len(self.verdicts)


def feedback_text(call_id: str, tool: str | None, diagnostics: list[Diagnostic],
                  allowed: bool, flow_lines: list[str]) -> str:
    """One text per call: why it was refused (or what to look at), one problem a line."""
    if allowed and not diagnostics:
        return ""
    named = f"`{tool}`" if tool else "the tool"
    problems = [d for d in diagnostics if d.severity is not Severity.INFO or not allowed]
    lines: list[str] = []
    if not allowed:
        lines.append(f"Call {call_id} to {named} was not run:")
    elif problems:
        lines.append(f"Call {call_id} to {named} may run, but:")
    for diagnostic in problems:
        kind = "" if diagnostic.severity is Severity.ERROR else f"{diagnostic.severity.label}: "
        line = f"- {kind}{diagnostic.message} [{diagnostic.code}]"
        suggestion = diagnostic.data.get("suggestion")
        if suggestion:
            line += f" (did you mean `{suggestion}`?)"
        lines.append(line)
        lines.extend(f"  {h}" for h in diagnostic.help)
    if lines and flow_lines:
        lines.extend(f"  note: {f}" for f in flow_lines)
    if not allowed:
        lines.append("Fix the call and send it again.")
    return "\n".join(lines)
