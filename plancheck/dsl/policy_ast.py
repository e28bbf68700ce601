"""The syntax of policies (``policy NAME { ... }``), as the parser reads it.

Plain data with spans: what a rule means is :mod:`plancheck.policy.semantics`, and which tools
a pattern names is decided there, against a pool.
"""

from __future__ import annotations

from plancheck.diagnostics.span import NO_SPAN, Span
from plancheck.ir.nodes import JSONValue
from plancheck.records import FrozenRecord

# Rule kinds, in the order ``plancheck explain`` lists their codes.
REQUIRE_BEFORE = "require_before"
FORBID_AFTER = "forbid_after"
AT_MOST = "at_most"
ARGUMENT = "argument"
FLOW = "flow"
REQUIRE_CALL = "require_call"
RULE_KINDS = (REQUIRE_BEFORE, FORBID_AFTER, AT_MOST, ARGUMENT, FLOW, REQUIRE_CALL)

COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
PREDICATE_OPS = (*COMPARISONS, "matches", "in", "not in")

PathKey = str | int


class ToolPattern(FrozenRecord):
    """Which calls a rule is about: one tool (``name``), a glob over tool names (``glob``:
    ``delete_*``) or every tool of a workflow family (``family``)."""

    __slots__ = _fields = ("kind", "text", "span",
                           )

    def __init__(self, kind: str, text: str, span: Span = NO_SPAN) -> None:
        self.kind = kind  # name | glob | family
        self.text = text
        self.span = span

    def __str__(self) -> str:
        if self.kind == "family":
            return f"family {self.text}"
        if self.kind == "name" and not _is_plain_name(self.text):
            return _quote(self.text)
        return self.text


class ArgumentPath(FrozenRecord):
    """A value inside a call's arguments (``transfer.amount``, ``post.recipients.0``), or inside
    a call's result when it is the source of a flow (an empty path: the whole result)."""

    __slots__ = _fields = ("tool", "path", "span")

    def __init__(self, tool: ToolPattern, path: tuple[PathKey, ...], span: Span = NO_SPAN) -> None:
        self.tool = tool
        self.path = path
        self.span = span

    def __str__(self) -> str:
        keys = "".join(f".{_key_text(k)}" for k in self.path)
        return f"{self.tool}{keys}"


class Predicate(FrozenRecord):
    __slots__ = _fields = ("op", "value", "span")

    def __init__(self, op: str, value: JSONValue, span: Span = NO_SPAN) -> None:
        self.op = op  # one of PREDICATE_OPS
        self.value = value  # the bound; a regular expression for `matches`; a list for `in`
        self.span = span

    def __str__(self) -> str:
        import json

        return f"{self.op} {json.dumps(self.value)}"


class Rule(FrozenRecord):
    """One rule. Which fields are set depends on ``kind``:

    * ``require_before``: ``first`` must have run before every ``second``;
    * ``forbid_after``: no ``first`` once a ``second`` has run;
    * ``require_call``: ``first`` runs somewhere in a complete plan;
    * ``at_most``: at most ``count`` calls of ``first`` (in any ``window`` consecutive calls);
    * ``argument``: ``target`` satisfies ``predicate`` (``forbid``: does not), unless an
      ``unless`` call ran before;
    * ``flow``: no value of ``source`` reaches ``target``, directly or through other calls.
    """

    __slots__ = _fields = ("kind", "severity", "first", "second", "count", "window", "target",
                           "predicate", "forbid", "unless", "source", "span", "policy")

    def __init__(self, kind: str, severity: str = "deny", first: ToolPattern | None = None,
                 second: ToolPattern | None = None, count: int = 0, window: int | None = None,
                 target: ArgumentPath | None = None, predicate: Predicate | None = None,
                 forbid: bool = False, unless: ToolPattern | None = None,
                 source: ArgumentPath | None = None, span: Span = NO_SPAN,
                 policy: str = "") -> None:
        self.kind = kind
        self.severity = severity  # deny (an error) | warn (a warning)
        self.first = first
        self.second = second
        self.count = count
        self.window = window
        self.target = target
        self.predicate = predicate
        self.forbid = forbid
        self.unless = unless
        self.source = source
        self.span = span
        self.policy = policy

    def __str__(self) -> str:
        prefix = "warn " if self.severity == "warn" else ""
        return prefix + self.body()

    def body(self) -> str:
        """The rule as it is written, without its severity."""
        if self.kind == REQUIRE_BEFORE:
            return f"require {self.first} before {self.second}"
        if self.kind == FORBID_AFTER:
            return f"forbid {self.first} after {self.second}"
        if self.kind == REQUIRE_CALL:
            return f"require {self.first}"
        if self.kind == AT_MOST:
            window = f" per {self.window} calls" if self.window is not None else ""
            return f"at most {self.count} {self.first}{window}"
        if self.kind == FLOW:
            return f"forbid flow from {self.source} to {self.target}"
        unless = f" unless {self.unless} before" if self.unless is not None else ""
        return f"{'forbid' if self.forbid else 'require'} {self.target} {self.predicate}{unless}"


class PolicyDecl(FrozenRecord):
    __slots__ = _fields = ("name", "rules", "span", "doc")

    def __init__(self, name: str, rules: tuple[Rule, ...], span: Span = NO_SPAN,
                 doc: str = "") -> None:
        self.name = name
        self.rules = rules
        self.span = span
        self.doc = doc


# Words of the grammar: a tool or key spelled like one is printed quoted.
KEYWORDS = frozenset({
    "after", "any", "at", "before", "calls", "deny", "doc", "false", "family", "flow", "from",
    "in", "matches", "most", "not", "null", "out", "per", "plan", "policy", "require",
    "forbid", "step", "to", "tool", "toolset", "true", "type", "unless", "uses", "warn",
})


def _is_plain_name(text: str) -> bool:
    import re

    return text not in KEYWORDS and \
        re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*+(?:-[A-Za-z0-9_]++)*+", text) is not None


def _quote(text: str) -> str:
    import json

    return json.dumps(text)


def _key_text(key: PathKey) -> str:
    return str(key) if isinstance(key, int) or _is_plain_name(key) else _quote(key)
