"""Symbolic values: what a plan computes, without running any tool.

A literal argument is a typed symbolic *input*; a step's output is a *result* that records its
provenance: the tool, the step, the output key and the values it was computed from. Two results
are equal exactly when the same tool computed the same key from equal arguments, which is what
makes plan equivalence independent of step numbering.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class InputValue:
    """A value the user supplies (a literal in the plan)."""

    value: Any = field(compare=False)
    type: str | None = field(default=None, compare=False)
    key: str = field(default="", init=False)

    def __post_init__(self) -> None:
        # Literals are compared type-exactly, as the reference evaluator does (1, 1.0 and True
        # differ); strings, the common case, skip JSON encoding.
        value = self.value
        key = "s:" + value if isinstance(value, str) else "j:" + json.dumps(
            value, sort_keys=True, ensure_ascii=False)
        object.__setattr__(self, "key", key)

    def describe(self) -> str:
        return self.key


@dataclass(frozen=True, slots=True)
class ResultValue:
    """The output ``key`` of calling ``tool`` on ``arguments``.

    Results share their arguments (one result may feed many steps), so the hash is computed
    once, from the children's cached hashes, instead of by walking the whole DAG each time.
    """

    tool: str
    output: str
    arguments: tuple[tuple[str, SymbolicValue], ...]
    type: str | None = field(default=None, compare=False)
    step: int | None = field(default=None, compare=False)  # provenance, not identity
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.tool, self.output, self.arguments)))

    def __hash__(self) -> int:
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


@dataclass(frozen=True, slots=True)
class UnknownValue:
    """What an unresolvable reference evaluates to; it never equals anything, itself included."""

    reason: str = field(compare=False)
    token: int = 0

    def describe(self) -> str:
        return f"<unknown: {self.reason}>"


SymbolicValue = InputValue | ResultValue | UnknownValue
