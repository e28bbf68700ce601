"""Symbolic values: what a plan computes, without running any tool.

A literal argument is a typed symbolic *input*; a step's output is a *result* that records its
provenance: the tool, the step, the output key and the values it was computed from. Two results
are equal exactly when the same tool computed the same key from equal arguments, which is what
makes plan equivalence independent of step numbering.
"""

from __future__ import annotations

import json
from typing import Any

from plancheck.records import FrozenRecord


class InputValue(FrozenRecord):
    """A value the user supplies (a literal in the plan); equal to another by ``key``."""

    _fields = ("value", "type")
    _compared = ("key",)
    __slots__ = (*_fields, "key")

    def __init__(self, value: Any, type: str | None = None) -> None:
        self.value = value
        self.type = type
        # Literals are compared type-exactly, as the reference evaluator does (1, 1.0 and True
        # differ); strings, the common case, skip JSON encoding.
        self.key = "s:" + value if isinstance(value, str) else "j:" + json.dumps(
            value, sort_keys=True, ensure_ascii=False)

    def describe(self) -> str:
        return self.key


class ResultValue(FrozenRecord):
    """The output ``key`` of calling ``tool`` on ``arguments``; ``type`` and ``step`` (its
    provenance) are not part of its identity.

    Results share their arguments (one result may feed many steps), so the hash is computed
    once, from the children's cached hashes, instead of by walking the whole DAG each time.
    """

    _fields = ("tool", "output", "arguments", "type", "step")
    _compared = ("tool", "output", "arguments")
    __slots__ = (*_fields, "_hash")

    def __init__(self, tool: str, output: str, arguments: tuple[tuple[str, SymbolicValue], ...],
                 type: str | None = None, step: int | None = None) -> None:
        self.tool = tool
        self.output = output
        self.arguments = arguments
        self.type = type
        self.step = step
        self._hash = hash((tool, output, arguments))

    def __hash__(self) -> int:  # type: ignore[override]  # (Record says unhashable)
        return self._hash

    def describe(self) -> str:
        args = ", ".join(f"{name}={value.describe()}" for name, value in self.arguments)
        return f"{self.tool}({args}).{self.output}"

    def inputs(self) -> list[InputValue]:
        """The user inputs this result derives from, each once, in first-use order."""
        found: dict[InputValue, None] = {}
        seen: set[int] = set()
        stack: list[SymbolicValue] = [self]
        while stack:
            value = stack.pop()
            if isinstance(value, InputValue):
                found.setdefault(value, None)
            elif isinstance(value, ResultValue) and id(value) not in seen:
                seen.add(id(value))
                stack.extend(v for _, v in reversed(value.arguments))
        return list(found)


class UnknownValue(FrozenRecord):
    """What an unresolvable reference evaluates to; it never equals anything, itself included."""

    __slots__ = _fields = ("reason", "token")
    _compared = ("token",)

    def __init__(self, reason: str, token: int = 0) -> None:
        self.reason = reason
        self.token = token

    def describe(self) -> str:
        return f"<unknown: {self.reason}>"


SymbolicValue = InputValue | ResultValue | UnknownValue
