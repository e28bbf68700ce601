"""What a policy rule means: one definition, read by the online monitor and by the Z3 check.

A trace is a sequence of :class:`PolicyCall` (a plan's steps, or the calls a guard accepted), each
with its tool, its arguments and the flows into them (explicit references, or provenance
inferred from earlier results). For every rule kind this module defines

* which calls a pattern names (:class:`Matcher`), what an argument path reads (:func:`lookup`)
  and whether a predicate holds of a value (:func:`holds`);
* the rule's verdict, decided a call at a time by a small state machine per rule
  (:class:`RuleState`): ``violation(call)`` before the call joins the trace, ``accept(call)``
  after. Its state is a few numbers per rule, never the trace, so a verdict costs the same at
  call 100 as at call 1.

The meaning, rule by rule (``i`` is the position of the call being decided):

* ``require A before B``: a call of B at ``i`` with no call of A at a position ``< i``;
* ``forbid A after B``: a call of A at ``i`` with a call of B at a position ``< i``;
* ``at most N A``: a call of A at ``i`` with N calls of A already before it (``per W calls``:
  in positions ``i-W+1 .. i-1``);
* ``require T.p OP v [unless C before]``: a call of T at ``i`` whose argument ``p`` is known and
  fails the predicate (``forbid``: satisfies it), and no call of C before ``i``. An argument the
  call does not pass, or whose value is a reference not yet known, does not fire the rule;
* ``forbid flow from A[.p] to B.q``: a call of B at ``i`` with a flow into ``q`` (or below or
  above it) from a call of A (from its result at ``p``, or below) or from a call a flow of A
  already reached (taint passes through calls);
* ``require A``: no call of A in a complete trace (a prefix can still meet it).
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from plancheck.dsl.policy_ast import (
    ARGUMENT,
    AT_MOST,
    FLOW,
    FORBID_AFTER,
    REQUIRE_BEFORE,
    REQUIRE_CALL,
    ArgumentPath,
    PathKey,
    Predicate,
    Rule,
    ToolPattern,
)
from plancheck.ir.nodes import Toolset
from plancheck.policy.regex import Regex, RegexError, compile_regex
from plancheck.records import FrozenRecord

# The diagnostic code of each rule kind's violations.
CODE_OF_KIND = {
    REQUIRE_BEFORE: "PC801",
    FORBID_AFTER: "PC802",
    AT_MOST: "PC803",
    ARGUMENT: "PC804",
    FLOW: "PC805",
    REQUIRE_CALL: "PC806",
}

EXPLICIT, EXACT, CONTAINED = "explicit", "exact", "contained"


class FlowIn(FrozenRecord):
    """A value that reached argument ``argument`` of a call from the result of call ``source``
    (at ``source_path`` inside it): an explicit reference, or inferred (``exact``: the argument
    equals a value of the result; ``contained``: one holds the other as a substring)."""

    _fields = ("argument", "source", "source_path", "kind")
    __slots__ = _fields

    def __init__(self, argument: tuple[PathKey, ...], source: int,
                 source_path: tuple[PathKey, ...] = (), kind: str = EXPLICIT) -> None:
        self.argument = argument
        self.source = source
        self.source_path = source_path
        self.kind = kind


class PolicyCall:
    """One call of a trace: its position, id and tool, its arguments, the flows into them, and
    the top-level arguments whose value is not known (a reference to a result not recorded).

    A plain class, not a record: the guard makes one per call, and compiled it is a C struct
    (a record's base is interpreted, so its subclasses are built and read through the type's
    dictionary). Equal by its fields, and treated as immutable: :meth:`but` makes changed
    copies."""

    __slots__ = ("arguments", "call_id", "flows", "index", "tool", "unknown")

    def __init__(self, index: int, tool: str, arguments: Mapping[str, Any],
                 flows: tuple[FlowIn, ...] = (), unknown: frozenset[str] = frozenset(),
                 call_id: str = "") -> None:
        self.index = index
        self.tool = tool
        self.arguments = arguments
        self.flows = flows
        self.unknown = unknown
        self.call_id = call_id

    def but(self, *, index: int | None = None, arguments: Mapping[str, Any] | None = None,
            flows: tuple[FlowIn, ...] | None = None) -> PolicyCall:
        """A copy with the fields given changed."""
        return PolicyCall(self.index if index is None else index, self.tool,
                          self.arguments if arguments is None else arguments,
                          self.flows if flows is None else flows, self.unknown, self.call_id)

    def _fields_of(self) -> tuple[Any, ...]:
        return (self.index, self.tool, self.arguments, self.flows, self.unknown, self.call_id)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PolicyCall):
            return NotImplemented
        return self._fields_of() == other._fields_of()

    def __hash__(self) -> int:
        return hash(self._fields_of())

    def __repr__(self) -> str:
        return (f"PolicyCall(index={self.index!r}, tool={self.tool!r}, "
                f"arguments={self.arguments!r}, flows={self.flows!r}, "
                f"unknown={self.unknown!r}, call_id={self.call_id!r})")

    @property
    def label(self) -> str:
        """How feedback names the call: its id, or its position."""
        return self.call_id or f"call {self.index}"


class Violation(FrozenRecord):
    """A rule broken at call ``index`` (-1: by a complete trace as a whole), with the earlier
    calls that take part (their positions) and a message in the trace's own terms."""

    _fields = ("rule", "index", "earlier", "message", "code", "argument")
    __slots__ = _fields

    def __init__(self, rule: Rule, index: int, earlier: tuple[int, ...], message: str,
                 code: str = "", argument: tuple[PathKey, ...] = ()) -> None:
        self.rule = rule
        self.index = index
        self.earlier = earlier
        self.message = message
        self.code = code
        self.argument = argument

    @property
    def blocking(self) -> bool:
        return self.rule.severity != "warn"


# --------------------------------------------------------------------------- patterns, values


class Matcher:
    """Which tool names a pattern names: one name, a glob (on any name, in the pool or not), or
    the tools of a family of the pool."""

    __slots__ = ("_cache", "_family", "pattern")

    def __init__(self, pattern: ToolPattern, toolset: Toolset) -> None:
        self.pattern = pattern
        self._family = frozenset(
            name for name, tool in toolset.tools.items() if tool.family == pattern.text
        ) if pattern.kind == "family" else frozenset()
        self._cache: dict[str, bool] = {}

    def __call__(self, tool: str) -> bool:
        known = self._cache.get(tool)
        if known is None:
            kind, text = self.pattern.kind, self.pattern.text
            known = (tool == text if kind == "name" else fnmatchcase(tool, text)
                     if kind == "glob" else tool in self._family)
            self._cache[tool] = known
        return known

    def in_pool(self, toolset: Toolset) -> list[str]:
        """The pool's tools the pattern names."""
        return [name for name in toolset.tools if self(name)]


_MISSING = object()


def lookup(arguments: Mapping[str, Any], path: tuple[PathKey, ...]) -> Any:
    """The value at ``path`` inside a call's arguments, or :data:`MISSING` when there is none
    (an integer key indexes a list; a string key that spells an integer does too)."""
    value: Any = arguments
    for key in path:
        if isinstance(value, Mapping):
            value = value.get(str(key), _MISSING)
        elif isinstance(value, list) and not isinstance(key, bool):
            try:
                value = value[int(key)]
            except (ValueError, IndexError):
                return _MISSING
        else:
            return _MISSING
        if value is _MISSING:
            return _MISSING
    return value


MISSING = _MISSING


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def same_json(left: Any, right: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if is_number(left) and is_number(right):
        return bool(left == right)
    return type(left) is type(right) and bool(left == right)


class CompiledPredicate(FrozenRecord):
    """A predicate ready to test: its regular expression compiled once."""

    _fields = ("predicate", "regex")
    __slots__ = _fields

    def __init__(self, predicate: Predicate, regex: Regex | None = None) -> None:
        self.predicate = predicate
        self.regex = regex

    @classmethod
    def of(cls, predicate: Predicate) -> CompiledPredicate:
        """The predicate compiled. A pattern that cannot be matched in linear time is refused
        when its policy is loaded (``PC810``); here it matches nothing."""
        if predicate.op == "matches" and isinstance(predicate.value, str):
            try:
                return cls(predicate, compile_regex(predicate.value))
            except RegexError:
                return cls(predicate)
        return cls(predicate)

    def holds(self, value: Any) -> bool:
        """Whether ``value`` satisfies the predicate. A comparison of a value that is not a
        number, or a regular expression on a value that is not a string, does not hold."""
        op, bound = self.predicate.op, self.predicate.value
        if op == "matches":
            return (self.regex is not None and isinstance(value, str)
                    and self.regex.fullmatch(value))
        if op in ("in", "not in"):
            inside = isinstance(bound, list) and any(same_json(value, b) for b in bound)
            return inside if op == "in" else not inside
        if op == "==":
            return same_json(value, bound)
        if op == "!=":
            return not same_json(value, bound)
        if not (is_number(value) and is_number(bound)):
            return False
        assert isinstance(value, int | float) and isinstance(bound, int | float)
        return bool(value < bound if op == "<" else value <= bound if op == "<="
                    else value > bound if op == ">" else value >= bound)


def path_overlaps(left: tuple[PathKey, ...], right: tuple[PathKey, ...]) -> bool:
    """One path lies inside the other (a flow into ``body`` reaches ``body.text``, and back)."""
    shorter = min(len(left), len(right))
    return all(str(a) == str(b) for a, b in zip(left[:shorter], right[:shorter], strict=True))


NAMED = 5  # earlier calls a message names; the rest are counted


def tool_names(calls: list[PolicyCall], positions: tuple[int, ...]) -> str:
    named = ", ".join(f"{calls[p].label} `{calls[p].tool}`" for p in positions[-NAMED:])
    more = len(positions) - NAMED
    return f"{more} more and {named}" if more > 0 else named


# --------------------------------------------------------------------------- per-rule state


class RuleState:
    """The verdict of one rule, a call at a time. ``violation`` decides the call before it joins
    the trace (and changes nothing); ``accept`` adds it. ``history`` names earlier calls by
    position: the monitor's record of the accepted calls' ids and tools, shared by every rule."""

    # The calls a violation can be at (None: none; the whole trace, for ``require A``).
    trigger: Matcher | None = None

    def __init__(self, rule: Rule, toolset: Toolset) -> None:
        self.rule = rule
        self.code = CODE_OF_KIND[rule.kind]

    def violation(self, call: PolicyCall, history: list[PolicyCall]) -> Violation | None:
        raise NotImplementedError

    def accept(self, call: PolicyCall) -> None:
        raise NotImplementedError

    def finish(self) -> Violation | None:
        """The verdict on the trace as a complete one (only ``require A`` has one)."""
        return None

    def _violation(self, call: PolicyCall | None, earlier: tuple[int, ...], message: str,
                   argument: tuple[PathKey, ...] = ()) -> Violation:
        return Violation(self.rule, -1 if call is None else call.index, earlier,
                         f"{message} (policy {self.rule.policy}: `{self.rule.body()}`)",
                         self.code, argument)


class _RequireBefore(RuleState):
    def __init__(self, rule: Rule, toolset: Toolset) -> None:
        super().__init__(rule, toolset)
        assert rule.first is not None and rule.second is not None
        self.needed, self.guarded = Matcher(rule.first, toolset), Matcher(rule.second, toolset)
        self.trigger = self.guarded
        self.met = False

    def violation(self, call: PolicyCall, history: list[PolicyCall]) -> Violation | None:
        if self.met or not self.guarded(call.tool):
            return None
        return self._violation(call, (), f"{call.label} `{call.tool}` runs before any call of "
                               f"`{self.rule.first}`")

    def accept(self, call: PolicyCall) -> None:
        self.met = self.met or self.needed(call.tool)


class _ForbidAfter(RuleState):
    def __init__(self, rule: Rule, toolset: Toolset) -> None:
        super().__init__(rule, toolset)
        assert rule.first is not None and rule.second is not None
        self.banned, self.after = Matcher(rule.first, toolset), Matcher(rule.second, toolset)
        self.trigger = self.banned
        self.triggered_at: int | None = None

    def violation(self, call: PolicyCall, history: list[PolicyCall]) -> Violation | None:
        if self.triggered_at is None or not self.banned(call.tool):
            return None
        at = self.triggered_at
        return self._violation(call, (at,), f"{call.label} `{call.tool}` comes after "
                               f"{tool_names(history, (at,))}")

    def accept(self, call: PolicyCall) -> None:
        if self.triggered_at is None and self.after(call.tool):
            self.triggered_at = call.index


class _AtMost(RuleState):
    def __init__(self, rule: Rule, toolset: Toolset) -> None:
        super().__init__(rule, toolset)
        assert rule.first is not None
        self.counted = self.trigger = Matcher(rule.first, toolset)
        self.seen: list[int] = []  # the positions of the last (count) calls counted

    def _recent(self, index: int) -> list[int]:
        window = self.rule.window
        return self.seen if window is None else [p for p in self.seen if p > index - window]

    def violation(self, call: PolicyCall, history: list[PolicyCall]) -> Violation | None:
        if not self.counted(call.tool):
            return None
        recent = self._recent(call.index)
        if len(recent) < self.rule.count:
            return None
        where = f" within {self.rule.window} calls" if self.rule.window is not None else ""
        earlier = tuple(recent[-self.rule.count:]) if self.rule.count else ()
        before = f": {tool_names(history, earlier)} came before" if earlier else ""
        return self._violation(call, earlier, f"{call.label} `{call.tool}` is call "
                               f"{len(recent) + 1} of `{self.rule.first}`{where}, more than "
                               f"{self.rule.count}{before}")

    def accept(self, call: PolicyCall) -> None:
        if self.counted(call.tool):
            self.seen.append(call.index)
            # Only the last `count` positions can ever be named or counted again.
            del self.seen[:-max(self.rule.count, 1)]


class _Argument(RuleState):
    def __init__(self, rule: Rule, toolset: Toolset) -> None:
        super().__init__(rule, toolset)
        assert rule.target is not None and rule.predicate is not None
        self.target: ArgumentPath = rule.target
        self.called = self.trigger = Matcher(rule.target.tool, toolset)
        self.predicate = CompiledPredicate.of(rule.predicate)
        self.excused = Matcher(rule.unless, toolset) if rule.unless is not None else None
        self.excused_at: int | None = None

    def violation(self, call: PolicyCall, history: list[PolicyCall]) -> Violation | None:
        if self.excused_at is not None or not self.called(call.tool):
            return None
        path = self.target.path
        if path and str(path[0]) in call.unknown:
            return None
        value = lookup(call.arguments, path)
        if value is MISSING or self.predicate.holds(value) != self.rule.forbid:
            return None
        import json

        shown = json.dumps(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        keys = ".".join(str(k) for k in path)
        verb = "must not satisfy" if self.rule.forbid else "must satisfy"
        return self._violation(call, (), f"{call.label} `{call.tool}`: `{keys}` is {shown}; "
                               f"it {verb} `{self.rule.predicate}`", path)

    def accept(self, call: PolicyCall) -> None:
        if self.excused is not None and self.excused_at is None and self.excused(call.tool):
            self.excused_at = call.index


class _Flow(RuleState):
    def __init__(self, rule: Rule, toolset: Toolset) -> None:
        super().__init__(rule, toolset)
        assert rule.source is not None and rule.target is not None
        self.source: ArgumentPath = rule.source
        self.target: ArgumentPath = rule.target
        self.from_tool = Matcher(rule.source.tool, toolset)
        self.to_tool = self.trigger = Matcher(rule.target.tool, toolset)
        self.sources: set[int] = set()  # calls of the source tool
        self.tainted: dict[int, int] = {}  # call reached by a flow -> the source call

    def _origin(self, flow: FlowIn) -> int | None:
        if flow.source in self.sources and path_overlaps(flow.source_path, self.source.path):
            return flow.source
        return self.tainted.get(flow.source)

    def violation(self, call: PolicyCall, history: list[PolicyCall]) -> Violation | None:
        if not self.to_tool(call.tool):
            return None
        for flow in call.flows:
            if not path_overlaps(flow.argument, self.target.path):
                continue
            origin = self._origin(flow)
            if origin is None:
                continue
            keys = ".".join(str(k) for k in flow.argument)
            through = "" if origin == flow.source else \
                f" through {tool_names(history, (flow.source,))}"
            how = "a value returned by" if flow.kind == EXPLICIT else (
                "a copy of a value returned by" if flow.kind == EXACT else "text returned by")
            earlier = (origin,) if origin == flow.source else (origin, flow.source)
            return self._violation(call, earlier, f"{call.label} `{call.tool}`: `{keys}` holds "
                                   f"{how} {tool_names(history, (origin,))}{through}",
                                   flow.argument)
        return None

    def accept(self, call: PolicyCall) -> None:
        if self.from_tool(call.tool):
            self.sources.add(call.index)
        for flow in call.flows:
            origin = self._origin(flow)
            if origin is not None and call.index not in self.tainted:
                self.tainted[call.index] = origin


def reads_flows(state: RuleState) -> bool:
    """Whether a rule's verdicts read the flows into calls (a flow rule follows them from call
    to call: it needs those of every call)."""
    return isinstance(state, _Flow)


class _RequireCall(RuleState):
    def __init__(self, rule: Rule, toolset: Toolset) -> None:
        super().__init__(rule, toolset)
        assert rule.first is not None
        self.wanted = Matcher(rule.first, toolset)
        self.met = False

    def violation(self, call: PolicyCall, history: list[PolicyCall]) -> Violation | None:
        return None

    def accept(self, call: PolicyCall) -> None:
        self.met = self.met or self.wanted(call.tool)

    def finish(self) -> Violation | None:
        if self.met:
            return None
        return self._violation(None, (), f"no call of `{self.rule.first}` in the whole trace")


_STATES: dict[str, type[RuleState]] = {
    REQUIRE_BEFORE: _RequireBefore,
    FORBID_AFTER: _ForbidAfter,
    AT_MOST: _AtMost,
    ARGUMENT: _Argument,
    FLOW: _Flow,
    REQUIRE_CALL: _RequireCall,
}


def rule_state(rule: Rule, toolset: Toolset) -> RuleState:
    """A fresh state machine for ``rule`` (patterns resolved against ``toolset``)."""
    return _STATES[rule.kind](rule, toolset)


def decide_trace(rules: list[Rule], toolset: Toolset, calls: list[PolicyCall], *,
                 complete: bool) -> list[Violation]:
    """The violations of ``calls`` (every call accepted, whatever its verdict), in order; with
    ``complete``, also those of the trace as a whole."""
    states = [rule_state(rule, toolset) for rule in rules]
    found: list[Violation] = []
    history: list[PolicyCall] = []
    for call in calls:
        for state in states:
            violation = state.violation(call, history)
            if violation is not None:
                found.append(violation)
        for state in states:
            state.accept(call)
        history.append(call)
    if complete:
        found.extend(v for v in (s.finish() for s in states) if v is not None)
    return found
