"""Read policy files (or text) and refuse the ones that cannot be used, saying where and why.

A policy is checked against the pool before anything is checked against it: a syntax error
(``PC114``), a malformed rule (``PC810``), a tool, family or argument the pool lacks
(``PC811``), a rule that can never hold or never fire (``PC812``). Contradictions between rules
need the solver (:mod:`plancheck.smt.policy_lint`, ``PC813``); this module never imports z3, so
a guard loads policies without it.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from plancheck.diagnostics.limits import may_be_close
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span
from plancheck.dsl.policy_ast import (
    ARGUMENT,
    AT_MOST,
    COMPARISONS,
    FLOW,
    REQUIRE_BEFORE,
    ArgumentPath,
    Rule,
    ToolPattern,
)
from plancheck.fileio import not_utf8, read_text_limited
from plancheck.ir.nodes import Toolset
from plancheck.policy.regex import RegexError, compile_regex
from plancheck.policy.semantics import Matcher, is_number
from plancheck.records import FrozenRecord


class PolicyError(Exception):
    """A policy that cannot be used: its diagnostics (with positions in the policy file) and
    the text they point into."""

    def __init__(self, diagnostics: list[Diagnostic], text: str = "", name: str = "") -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics
        self.text = text
        self.name = name


class PolicySet(FrozenRecord):
    """The rules of every policy of one source, checked against one pool."""

    __slots__ = _fields = ("rules", "toolset", "name", "text")

    def __init__(self, rules: tuple[Rule, ...], toolset: Toolset, name: str = "<policy>",
                 text: str = "") -> None:
        self.rules = rules
        self.toolset = toolset
        self.name = name
        self.text = text


def read_policy_source(spec: str | Path) -> tuple[str, str]:
    """(name, text) of a policy given as a path or as DSL text. A string that holds a ``{`` is
    text; anything else names a file."""
    if isinstance(spec, str) and "{" in spec:
        return "<policy>", spec
    path = Path(spec)
    try:
        return str(path), read_text_limited(path, "utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        why = ("no such file" if isinstance(error, FileNotFoundError)
               else not_utf8(error) if isinstance(error, UnicodeDecodeError)
               else error.strerror or str(error))
        raise PolicyError([make("PC001", f"cannot read policy {path}: {why}",
                                data={"path": str(path)})], "", str(path)) from None


def load_policies(spec: str | Path | PolicySet, toolset: Toolset) -> PolicySet:
    """The policies of a file or of DSL text, checked against ``toolset``; raises
    :class:`PolicyError` when they cannot be used."""
    if isinstance(spec, PolicySet):
        return spec
    name, text = read_policy_source(spec)
    return parse_policies(text, toolset, name)


def parse_policies(text: str, toolset: Toolset, name: str = "<policy>") -> PolicySet:
    from plancheck.dsl.parser import parse_dsl

    module = parse_dsl(text, name)
    problems = list(module.diagnostics)
    rules = tuple(rule for policy in module.policies for rule in policy.rules)
    if not problems and not module.policies:
        problems.append(make("PC810", f"{name} declares no policy",
                             help=["write `policy NAME { require A before B ... }`"],
                             primary=Span(name, 1, 1, 1, 2)))
    if not problems:
        for rule in rules:
            problems.extend(rule_problems(rule, toolset))
    if problems:
        raise PolicyError(problems, text, name)
    return PolicySet(rules, toolset, name, text)


# --------------------------------------------------------------------------- rule problems


def rule_problems(rule: Rule, toolset: Toolset) -> list[Diagnostic]:
    """What makes one rule unusable against ``toolset`` (nothing: it can be used)."""
    found: list[Diagnostic] = []
    for pattern in (rule.first, rule.second, rule.unless):
        if pattern is not None:
            found.extend(_pattern_problems(pattern, toolset))
    if rule.source is not None:
        found.extend(_pattern_problems(rule.source.tool, toolset))
        if not found:
            found.extend(_path_problems(rule.source, toolset, outputs=True))
    if rule.target is not None:
        before = len(found)
        found.extend(_pattern_problems(rule.target.tool, toolset))
        if len(found) == before:
            found.extend(_path_problems(rule.target, toolset, outputs=False))
    found.extend(_shape_problems(rule))
    if not found and rule.kind == ARGUMENT:
        found.extend(_kind_problems(rule, toolset))
    return found


def _pattern_problems(pattern: ToolPattern, toolset: Toolset) -> list[Diagnostic]:
    if pattern.kind == "family":
        if pattern.text in toolset.families or any(
                t.family == pattern.text for t in toolset.tools.values()):
            return []
        return [_unknown(pattern.span, f"family `{pattern.text}`", pattern.text,
                         list(toolset.families))]
    if pattern.kind == "name":
        if pattern.text in toolset.tools:
            return []
        return [_unknown(pattern.span, f"tool `{pattern.text}`", pattern.text,
                         list(toolset.tools))]
    if Matcher(pattern, toolset).in_pool(toolset):
        return []
    return [make("PC812", f"`{pattern.text}` matches no tool of the pool: the rule never fires",
                 primary=pattern.span, label="matches nothing",
                 data={"pattern": pattern.text})]


def _unknown(span: Span, what: str, name: str, known: list[str]) -> Diagnostic:
    close = difflib.get_close_matches(name, known, n=3) if may_be_close(name, known) else []
    hint = [f"did you mean {', '.join(f'`{c}`' for c in close)}?"] if close else []
    return make("PC811", f"the pool has no {what}", primary=span, label="not in the pool",
                help=hint, data={"name": name})


def _path_problems(path: ArgumentPath, toolset: Toolset, *, outputs: bool) -> list[Diagnostic]:
    """The first key of an argument path must be an input (a result key, for a flow's source)
    of some tool the pattern names; a tool that declares none accepts any."""
    if not path.path:
        return []
    key = str(path.path[0])
    tools = [toolset.tools[n] for n in Matcher(path.tool, toolset).in_pool(toolset)]
    names: list[str] = []
    for tool in tools:
        params = tool.output_names if outputs else tool.input_names
        if not params or key in params or (outputs and tool.open_outputs):
            return []
        names.extend(params)
    noun = "result" if outputs else "argument"
    return [_unknown(path.span, f"{noun} `{key}` of `{path.tool}`", key,
                     sorted(set(names)))]


def _shape_problems(rule: Rule) -> list[Diagnostic]:
    if rule.kind == REQUIRE_BEFORE and _same(rule.first, rule.second):
        return [make("PC812", f"`{rule.body()}` can never hold: the first call of "
                     f"`{rule.first}` has none before it", primary=rule.span,
                     label="never holds")]
    if rule.kind == AT_MOST:
        if rule.count < 0:
            return [make("PC812", f"`{rule.body()}` can never hold: a count is never below 0",
                         primary=rule.span, label="never holds")]
        if rule.window is not None and rule.window < 1:
            return [make("PC810", "a window of calls is at least 1 call", primary=rule.span,
                         label="here")]
        if rule.window is not None and rule.count >= rule.window:
            return [make("PC812", f"`{rule.body()}` never fires: {rule.window} calls never "
                         f"hold more than {rule.window}", primary=rule.span,
                         label="never fires")]
    if rule.kind == ARGUMENT and rule.predicate is not None:
        return _predicate_problems(rule)
    if rule.kind == FLOW and rule.target is not None and not rule.target.path:
        return [make("PC810", "a flow rule names the argument it protects (`to B.arg`)",
                     primary=rule.target.span, label="no argument")]
    return []


# What a predicate can hold of, by the JSON Schema type of the argument: numeric comparisons
# of numbers, a regular expression of strings.
_NEEDS = {"<": ("number", "integer"), "<=": ("number", "integer"), ">": ("number", "integer"),
          ">=": ("number", "integer"), "matches": ("string",)}


def _kind_problems(rule: Rule, toolset: Toolset) -> list[Diagnostic]:
    """A predicate that no value of the argument's declared type satisfies (a string compared
    with ``<``, a number matched by a regular expression): ``require`` never holds, ``forbid``
    never fires. Said only when every tool the rule names declares the argument so."""
    assert rule.target is not None and rule.predicate is not None
    needs = _NEEDS.get(rule.predicate.op)
    if needs is None or len(rule.target.path) != 1:
        return []
    key = str(rule.target.path[0])
    kinds = set()
    for name in Matcher(rule.target.tool, toolset).in_pool(toolset):
        param = next((p for p in toolset.tools[name].inputs if p.name == key), None)
        kind = _schema_type(param.schema_text if param is not None else None)
        if kind is None or kind in needs:
            return []
        kinds.add(kind)
    if not kinds:
        return []
    verdict = "never fires" if rule.forbid else "can never hold"
    return [make("PC812", f"`{rule.body()}` {verdict}: `{key}` is declared "
                 f"{' or '.join(sorted(kinds))}, and `{rule.predicate.op}` holds only of a "
                 f"{needs[0]}", primary=rule.predicate.span, label=verdict,
                 data={"argument": key, "declared": sorted(kinds)})]


def _schema_type(schema_text: str | None) -> str | None:
    """The one JSON type a parameter's schema declares (None: none, or several)."""
    if not schema_text:
        return None
    import json

    try:
        schema = json.loads(schema_text)
    except ValueError:
        return None
    kind = schema.get("type") if isinstance(schema, dict) else None
    return kind if isinstance(kind, str) else None


def _same(first: ToolPattern | None, second: ToolPattern | None) -> bool:
    """Both patterns are written alike (so they name the same calls)."""
    return (first is not None and second is not None
            and (first.kind, first.text) == (second.kind, second.text))


def _predicate_problems(rule: Rule) -> list[Diagnostic]:
    assert rule.predicate is not None
    predicate = rule.predicate
    op, value = predicate.op, predicate.value
    if op == "matches":
        try:
            compile_regex(str(value))
        except RegexError as error:
            return [make("PC810", f"the regular expression does not compile: {error}",
                         primary=predicate.span, label="here",
                         help=["policy patterns are RE2 (Python's syntax without lookarounds "
                               "and backreferences), matched in time linear in the value"])]
    if op in ("in", "not in") and not isinstance(value, list):
        return [make("PC810", f"`{op}` takes a list of values", primary=predicate.span,
                     label="not a list")]
    if op in ("in", "not in") and value == [] and (op == "in") != rule.forbid:
        return [make("PC812", f"`{rule.body()}` can never hold: no value is in an empty list",
                     primary=rule.span, label="never holds")]
    if op in COMPARISONS[:4] and not is_number(value):
        return [make("PC812", f"`{op}` compares numbers, and {value!r} is not one: the rule "
                     "would reject every call", primary=predicate.span,
                     label="not a number")]
    return []
