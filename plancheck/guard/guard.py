"""``plancheck.Guard``: a verdict on each tool call before it runs, in an agent loop.

    guard = plancheck.Guard(tools, policies="p.wf")   # an MCP tools/list result, a path, ...
    verdict = guard.propose(tool_call)                # any call shape, or a turn's calls
    if verdict.allowed:
        result = run(tool_call)
        guard.record(verdict.call_id, result)         # for references and provenance
    else:
        send_back(verdict.feedback)                   # the model repairs the call

A refused call never joins the trajectory. State is kept per call (the accepted calls by
position and id, the policies' per-rule state, the provenance indexes), so deciding call 100
costs what deciding call 1 does. Nothing a model or a tool sends makes the guard raise: a call
that cannot be read is refused with a diagnostic that says why.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from plancheck.compiler.profiles import profile_overrides, severity_in
from plancheck.compiler.repeated_keys import ARGUMENTS_HELP, twice_in_arguments
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.severity import Severity
from plancheck.diagnostics.span import Span, escape_pointer
from plancheck.guard.reading import ProposedCall, decode_arguments, read_calls
from plancheck.guard.references import (
    MAX_DEPTH,
    MISSING,
    declared_syntaxes,
    path_tokens,
    references_in,
    replaced,
    value_in,
)
from plancheck.guard.results import result_value
from plancheck.guard.verdict import TurnVerdict, Verdict, feedback_text
from plancheck.ir.json_data import MAX_MEMBERS, json_data_problem
from plancheck.ir.lattice import Compat
from plancheck.ir.nodes import Toolset, ToolSignature
from plancheck.ir.schema_types import VALUE, declared_kind, json_shown
from plancheck.ir.schema_validation import SchemaUndecided, schema_problem, tool_schema_text
from plancheck.ir.schema_values import json_problem
from plancheck.ir.schema_verdict import ArgumentProblem, argument_problems, place_of
from plancheck.policy.loader import PolicySet
from plancheck.policy.online import GuardPolicies, describe_flows
from plancheck.policy.semantics import EXPLICIT, PolicyCall
from plancheck.records import replace
from plancheck.typecheck.types import extension_problem

_FILE = "<call>"
_NONE: frozenset[str] = frozenset()  # (no argument unknown: no set made per call)
# The resolution of a call without references, shared: only the resolving of a reference
# writes into these, and such a call gets its own.
_NO_HOLES: list[str] = []
_NO_SOURCES: dict[str, str] = {}
_NO_REFERENCES: dict[str, tuple[str, tuple[Any, ...]]] = {}
_NO_UNKNOWN: set[str] = set()
_MAX_LISTED = 30


class Accepted:
    """A call that joined the trajectory, and what it returned once recorded. (This class and
    the next are plain, not records: compiled, a plain class is a C struct, built and read
    without the type's dictionary; nothing compares them.)"""

    __slots__ = ("arguments", "call_id", "failed", "index", "result", "tool")

    def __init__(self, index: int, call_id: str, tool: ToolSignature, arguments: dict[str, Any],
                 result: Any = MISSING, failed: bool = False) -> None:
        self.index = index
        self.call_id = call_id
        self.tool = tool
        self.arguments = arguments
        self.result = result
        self.failed = failed


# The result of a call whose guard keeps no results (``keep_arguments=False`` and no reference
# syntax): recorded, not held.
_LET_GO: Final = object()


class _Resolution:
    """What the references of one call resolve to."""

    __slots__ = ("explicit", "holes", "instance", "substituted", "unknown")

    def __init__(self, instance: dict[str, Any], holes: list[str], substituted: dict[str, str],
                 explicit: dict[str, tuple[str, tuple[Any, ...]]], unknown: set[str]) -> None:
        self.instance = instance  # the arguments, with known referenced values in place
        self.holes = holes  # pointers whose value is not known yet (not validated)
        self.substituted = substituted  # pointer -> "call K `tool`" the value came from
        self.explicit = explicit  # argument -> (call id, path)
        self.unknown = unknown


class Guard:
    """An online monitor of one agent loop's tool calls (see the module docstring).

    ``toolset``: anything :func:`plancheck.load_toolset` takes (a path, a loaded toolset, an
    MCP ``tools/list`` result, an OpenAI or Anthropic ``tools`` list, JSON or DSL text, or a
    list of them). ``profile``: which codes block (:mod:`plancheck.compiler.profiles`).
    ``policies``: a policy file, DSL text or a loaded set. ``provenance=False`` turns off the
    inference of flows from copied values; with it on, the flows a verdict does not need (no
    flow rule, request check, PC301 or feedback reads them) are inferred when its ``flows``
    are first read, from the results recorded before the call (a recorded result must not
    change after). ``references``: the syntaxes in which a string
    argument refers to an earlier call's result (names of
    :data:`~plancheck.compiler.call_formats.SYNTAXES`, ``"all"`` or ``"none"``); by default
    the pool's own (DisasterBench's ``<GENERATED>-k-<key>``, DORA's ``trajectory[k].obs``),
    and none for any other pool, whose strings are text. ``invalid_schemas="allow"`` lets calls
    to a tool whose input schema is not valid run unvalidated (with a ``PC711`` warning);
    by default they are refused. Building the guard raises
    :class:`~plancheck.corpus.toolsets.ToolsetError` or
    :class:`~plancheck.policy.loader.PolicyError` when the pool or the policies cannot be used,
    ``ValueError`` for an unknown profile or syntax. One guard may be shared between threads:
    its calls are decided one at a time.
    ``task``: the user's request the session answers; a call passing a value the user
    must supply that the request does not give (``PC901``, an error under the guard profile)
    or one of the wrong kind (``PC905``) is reported, and :meth:`finish` adds what the
    request asks of the whole trajectory (``PC902``-``PC904``).
    ``keep_arguments=False``: an accepted call's arguments are let go of once it is decided
    (what later calls are judged by, its tool and id, is kept), and so is its result unless
    the pool declares a reference syntax (a later call may read it) or provenance reads it:
    a session of many large arguments or results, a proxy's, then holds none of them.
    :meth:`trajectory` then raises ``ValueError``, and no ``task`` may be given (its checks
    read the trajectory).
    """

    def __init__(self, toolset: Any = None, *, profile: str = "guard",
                 policies: str | Path | PolicySet | None = None,
                 provenance: bool = True, references: str | list[str] | None = None,
                 invalid_schemas: str = "refuse", task: str | None = None,
                 keep_arguments: bool = True) -> None:
        from plancheck.corpus.pool_values import toolset_from

        if task is not None and not keep_arguments:
            raise ValueError("a guard with a task keeps the arguments (keep_arguments=True)")
        if invalid_schemas not in ("refuse", "allow"):
            raise ValueError(f"invalid_schemas must be 'refuse' or 'allow', not "
                             f"{invalid_schemas!r}")
        self.toolset: Toolset = toolset_from(toolset)
        self.profile = profile
        self._overrides = profile_overrides(profile)
        self.references = declared_syntaxes(self.toolset, references)
        self.invalid_schemas = invalid_schemas
        rules = PolicySet((), self.toolset, "<none>") if policies is None else policies
        self.policies = GuardPolicies(rules, self.toolset, provenance=provenance)
        self._accepted: list[Accepted] = []
        # Accepted calls by id (their position): the policies' own map, filled as they accept
        # a call (one map of thousands of ids, not two, each written on every call).
        self._by_id: dict[str, int] = self.policies.positions
        self._proposed = 0
        self._typed: dict[str, frozenset[str]] = {}  # per tool, its inputs of a pool type
        # The tools a recorded result of which holds one of their outputs by name (an inferred
        # flow from such a result may be a value of the wrong type: PC301), and per (tool,
        # how many such tools) whether one of their outputs has a type a call to it cannot take.
        self._keyed: dict[str, ToolSignature] = {}
        self._mistyped: dict[tuple[str, int], bool] = {}
        # A call is decided and joins the trajectory under this lock: counts and ids hold
        # when several threads share the guard.
        self._lock = threading.RLock()
        self.pool_diagnostics = [self._invalid_pool_schema(tool, problem)
                                 for tool in self.toolset.tools.values()
                                 if (problem := schema_problem(tool_schema_text(tool)))]
        self.task = task  # the user's request of the session: the PC9xx rules read it
        if task is not None:  # (its check reads each call's flows: results read as they come)
            self.policies.monitor.read_results = True
        self.keep_arguments = keep_arguments
        # Whether a recorded result stays with its call: the trajectory and references read
        # it (provenance keeps its own reading of it, when on).
        self._keeps_results = keep_arguments or bool(self.references)

    # ----------------------------------------------------------------------- the loop

    def propose(self, call: Any) -> Verdict | TurnVerdict:
        """The verdict on ``call`` before it runs (a :class:`TurnVerdict` for a list of the
        parallel calls of one turn, decided in order: each allowed one joins the trajectory
        before the next is decided, so counts hold over the turn). Never raises."""
        try:
            read = read_calls(call)
            with self._lock:
                if isinstance(read, str):
                    return self._unreadable(read)
                if len(read) == 1 and not isinstance(call, list):
                    return self._decide(read[0])
                return TurnVerdict([self._decide(proposed) for proposed in read])
        except Exception as error:
            return self._unreadable(f"plancheck failed on this call ({type(error).__name__}: "
                                    f"{error}); please report it", code="PC002")

    def record(self, call_id: str, result: Any) -> list[Diagnostic]:
        """What the accepted call ``call_id`` returned (an MCP ``CallToolResult``, its dict,
        or any JSON value). Returns a diagnostic when no accepted call has that id; never
        raises."""
        index = self._by_id.get(str(call_id))
        if index is None:
            return [make("PC206", f"no accepted call has the id `{call_id}`: its result is not "
                                  "recorded", data={"call_id": str(call_id)},
                         severity=Severity.WARNING)]
        try:
            value, failed = result_value(result)
            with self._lock:
                entry = self._accepted[index]
                entry.result = value if self._keeps_results else _LET_GO
                entry.failed = failed
                if entry.tool.name not in self._keyed and _holds_an_output(value, entry.tool):
                    self._keyed[entry.tool.name] = entry.tool
                self.policies.record(entry.call_id, value)
        except Exception as error:
            return [make("PC002", f"the result of `{call_id}` could not be recorded: {error}",
                         severity=Severity.WARNING)]
        return []

    def trajectory(self) -> list[dict[str, Any]]:
        """The accepted calls, in order, as ``{"id", "name", "arguments"}`` (with ``result``
        once recorded): what ``plancheck.check_trajectory`` or ``score`` read later."""
        if not self.keep_arguments:
            raise ValueError("this guard does not keep the arguments of the calls it accepted "
                             "(keep_arguments=False)")
        calls = []
        for entry in self._accepted:
            item: dict[str, Any] = {"id": entry.call_id, "name": entry.tool.name,
                                    "arguments": entry.arguments}
            if entry.result is not MISSING:
                item["result"] = entry.result
            calls.append(item)
        return calls

    def finish(self) -> list[Diagnostic]:
        """The policy rules the trajectory breaks as a whole (``require A`` never met), and
        with a ``task``, what the request asks of it as a whole (an input no call used)."""
        found = self.policies.finish()
        if self.task is not None and self._accepted:
            from plancheck.checks.request_check import PER_CALL_CODES, RequestPhase
            from plancheck.compiler.driver import check_in_memory

            report = check_in_memory(self.trajectory(), self.toolset,
                                     extra_phases=[RequestPhase(self.task)])
            found.extend(d for d in report.diagnostics
                         if d.code.startswith("PC9") and d.code not in PER_CALL_CODES)
        return found

    # ----------------------------------------------------------------------- deciding

    def _decide(self, proposed: ProposedCall) -> Verdict:
        call_id = proposed.call_id or self._fresh_id()
        self._proposed += 1
        if call_id in self._by_id:
            return self._refuse(call_id, proposed.tool if isinstance(proposed.tool, str)
                                else None, [self._diag(
                "PC110", f"call {call_id}: an accepted call already has the id `{call_id}`; "
                         "each call needs an id of its own (results are recorded by id)", "",
                call_id, None, severity=Severity.ERROR)])
        name = proposed.tool
        if not isinstance(name, str) or not name.strip():
            return self._refuse(call_id, None, [self._diag(
                "PC108", f"call {call_id} names no tool (found {json_shown(name)})", "",
                call_id, None)])
        tool = self.toolset.tools.get(name) or self.toolset.tools.get(
            self.toolset.aliases.get(name, ""))
        if tool is None:
            return self._refuse(call_id, name, [self._unknown_tool(call_id, name)])
        arguments, problem, repeated = decode_arguments(proposed.arguments)
        if problem is None and (not isinstance(arguments, dict) or (
                proposed.arguments is None and proposed.has_arguments)):
            # (as check reads them: PC108; ``"arguments": null`` is no object either)
            shown = "null" if proposed.arguments is None else \
                "an empty string" if proposed.arguments == "" else json_shown(arguments)
            return self._refuse(call_id, name, [self._diag(
                "PC108", f"call {call_id} `{name}`: the arguments must be a JSON object of "
                         f"named arguments, found {shown}", "", call_id, name,
                severity=Severity.ERROR)])
        if problem is None and arguments:  # (``{}`` holds nothing to walk)
            # A value inside itself, or parts shared so often that a walk of every path would
            # not end, first: json_problem walks every path.
            # (A value inside itself json_problem finds at once, and names as an argument.)
            # (Arguments of strings, numbers and lists or objects of them under string keys,
            # the most common, hold no part to share: no walk of their containers.)
            shared = None if _flat(arguments) else json_data_problem(arguments)
            not_json = ("", shared) if shared is not None and not shared.endswith(
                "contains itself") else json_problem(arguments, MAX_DEPTH)
            if not_json is not None:
                where = place_of(not_json[0])
                problem = (f"{'argument `' + where + '`' if where else 'the arguments'} cannot "
                           f"be checked: {not_json[1]}")
        if problem is not None:
            return self._refuse(call_id, name, [self._diag(
                "PC100", f"call {call_id} `{name}`: {problem}", "", call_id, name,
                severity=Severity.ERROR)])
        found = references_in(arguments, self.references)
        diagnostics: list[Diagnostic] = []
        for key in repeated:  # (an error under the guard profile: refused)
            diagnostics.append(self._diag(
                "PC118", f"call {call_id} `{name}`: {twice_in_arguments(key)}", "", call_id,
                name, key=key, help=[ARGUMENTS_HELP]))
        if proposed.conflict is not None:  # (an error under the guard profile: refused)
            pointer, said = proposed.conflict
            diagnostics.append(self._diag(
                "PC122", f"call {call_id} `{name}` reads as two calls: {said}", pointer,
                call_id, name, help=["keep one tool name and one set of arguments in the "
                                     "call object"]))
        resolution = self._resolve(found, arguments, call_id, tool, diagnostics)
        diagnostics.extend(self._schema(resolution, call_id, tool))
        diagnostics.extend(self._paths(resolution, call_id, tool))
        # Policies judge the values the tool would run with (a reference substituted): a
        # template must not carry a forbidden value past them.
        monitor = self.policies.monitor
        infer = self._infers_now(tool)
        policy_call, policy_found = self.policies.check(
            call_id, tool.name, resolution.instance, resolution.explicit,
            frozenset(resolution.unknown) if resolution.unknown else _NONE, infer=infer)
        diagnostics.extend(policy_found)
        if self.task is not None:
            diagnostics.extend(self._request(call_id, tool, arguments, policy_call))
        later = None
        if not infer and monitor.recorded:  # (no result recorded: no flow to infer)
            if diagnostics:  # (the feedback names the flows into a call it speaks of)
                policy_call = policy_call.but(flows=monitor.inferred(
                    policy_call.arguments, policy_call.flows))
            else:  # (its explicit flows too, listed with the inferred ones when asked)
                later = self._later_flows(policy_call, monitor.recorded)
        flows: list[dict[str, Any]] | None = None if later is not None else []
        lines: list[str] = []
        if later is None and policy_call.flows:  # (most calls have none: nothing to do)
            diagnostics.extend(self._inferred_types(policy_call, call_id, tool))
            flows = describe_flows(policy_call, monitor.history)
            lines = [_flow_line(flow) for flow in flows]
        allowed = not diagnostics or not any(d.severity is Severity.ERROR for d in diagnostics)
        # What the tool must run with: each reference that resolved replaced by its value.
        to_run = resolution.instance
        if allowed:
            self._accept(policy_call, call_id, tool, to_run)
        return Verdict(allowed, diagnostics,
                       feedback_text(call_id, tool.name, diagnostics, allowed, lines)
                       if diagnostics or not allowed else "",
                       call_id, tool.name, to_run, flows, later)

    def _infers_now(self, tool: ToolSignature) -> bool:
        """Whether the verdict on a call to ``tool`` needs the flows provenance infers into
        it: a rule or the request check reads them, or one may be a value of a type the
        argument does not take (PC301). Otherwise they are inferred when the verdict's flows
        are read, or its feedback names them."""
        monitor = self.policies.monitor
        if monitor.provenance is None:
            return False
        if monitor.reads_flows or self.task is not None:
            return True
        if not self._keyed:
            return False
        key = (tool.name, len(self._keyed))
        found = self._mistyped.get(key)
        if found is None:
            lattice = self.toolset.lattice
            found = self._mistyped[key] = any(
                lattice.compat(output, param.type) is Compat.INCOMPATIBLE
                for source in self._keyed.values() for output in source.outputs
                for param in tool.inputs)
        return found

    def _later_flows(self, call: PolicyCall, recorded: int
                     ) -> Callable[[], list[dict[str, Any]]]:
        """The flows into ``call`` (its explicit ones given), inferred when first asked from
        the ``recorded`` results there were when it was proposed."""
        monitor = self.policies.monitor

        def flows() -> list[dict[str, Any]]:
            with self._lock:
                # A loop that reads flows reads them again: from now on each result is read
                # as it is recorded, while the model writes its next call.
                monitor.read_results = True
                try:
                    inferred = monitor.inferred(call.arguments, call.flows, recorded)
                except Exception:  # (a lookup that fails names no flow: never raises)
                    inferred = call.flows
                return describe_flows(call.but(flows=inferred), monitor.history)

        return flows

    def _fresh_id(self) -> str:
        """An id for a call that carries none (``call_N``), never one a call already has."""
        number = self._proposed
        while f"call_{number}" in self._by_id:
            number += 1
        return f"call_{number}"

    def _request(self, call_id: str, tool: ToolSignature, arguments: dict[str, Any],
                 call: PolicyCall) -> list[Diagnostic]:
        """The request rules on one call (an argument copied from a result is no invention)."""
        from plancheck.checks.request_check import call_findings

        assert self.task is not None
        copied = frozenset(str(flow.argument[0]) for flow in call.flows if flow.argument)
        return [replace(found, message=found.message.replace("step 0 ", f"call {call_id} ", 1),
                        severity=severity_in(self._overrides, found.code, found.severity),
                        data={**found.data, "call_id": call_id, "tool": tool.name})
                for found in call_findings(self.toolset, tool.name, arguments, self.task,
                                           copied, _FILE)]

    def _accept(self, call: PolicyCall, call_id: str, tool: ToolSignature,
                arguments: dict[str, Any]) -> None:
        index = len(self._accepted)
        if call.index != self.policies.monitor.next_index:
            call = call.but(index=self.policies.monitor.next_index)
        if not self.keep_arguments:  # (no rule reads an earlier call's arguments)
            arguments = {}
            call = call.but(arguments=arguments)
        self.policies.accept(call)  # (now in self._by_id, at ``index``: call.index is it)
        self._accepted.append(Accepted(index, call_id, tool, arguments))

    def _resolve(self, found: list[Any], arguments: dict[str, Any], call_id: str,
                 tool: ToolSignature, diagnostics: list[Diagnostic]) -> _Resolution:
        if not found:  # (most calls: nothing to resolve, and nothing below changes these)
            return _Resolution(arguments, _NO_HOLES, _NO_SOURCES, _NO_REFERENCES, _NO_UNKNOWN)
        resolution = _Resolution(arguments, [], {}, {}, set())
        for ref in found:
            top = ref.pointer.split("/")[1] if ref.pointer else ""
            match = ref.match
            number = getattr(match, "number", None)
            label = getattr(match, "label", None)
            resolution.holes.append(ref.pointer)
            if number is None and label is None:  # a placeholder, not a reference
                diagnostics.append(self._diag(
                    "PC209", f"call {call_id} `{tool.name}`: argument `{top}` is the "
                             f"placeholder {json_shown(ref.text)}, not a value",
                    ref.pointer, call_id, tool.name, key=top,
                    help=["write the value itself, or refer to an earlier call's result as "
                          "{{steps.K.output.KEY}}"]))
                continue
            index = self._by_id.get(label.strip("$")) if label else number
            if index is None or index >= len(self._accepted):
                diagnostics.append(self._missing_call(call_id, tool, top, ref.pointer,
                                                      ref.text))
                continue
            source = self._accepted[index]
            tokens = path_tokens(match.key) if getattr(match, "key", "") else ()
            where = f"call {source.call_id} `{source.tool.name}`"
            resolution.explicit[top] = (source.call_id, tokens)
            if source.result is not MISSING:
                value = value_in(source.result, tokens)
                if value is MISSING:
                    diagnostics.append(self._missing_key(call_id, tool, top, ref.pointer,
                                                         source, match.key))
                    continue
                resolution.instance = replaced(resolution.instance, ref.pointer, value)
                resolution.holes.pop()
                resolution.substituted[ref.pointer] = where
            else:
                resolution.unknown.add(top)
                head = str(tokens[0]) if tokens else ""
                if head and not source.tool.open_outputs and \
                        source.tool.output(head) is None:
                    diagnostics.append(self._missing_key(call_id, tool, top, ref.pointer,
                                                         source, match.key))
                    continue
                diagnostics.append(self._diag(
                    "PC206", f"call {call_id} `{tool.name}`: argument `{place_of(ref.pointer)}`"
                             f" refers to the result of {where}, which is not recorded yet "
                             f"({json_shown(ref.text)}): the value it must run with is not "
                             "known", ref.pointer, call_id, tool.name, key=top,
                    severity=Severity.WARNING,
                    help=[f"record the result first: guard.record({source.call_id!r}, result)"]))
            self._explicit_type(source, tokens, tool, top, ref.pointer, call_id, diagnostics)
        return resolution

    def _explicit_type(self, source: Accepted, tokens: tuple[Any, ...], tool: ToolSignature,
                       top: str, pointer: str, call_id: str,
                       diagnostics: list[Diagnostic]) -> None:
        """``PC301`` (an error) when a referenced output's type does not fit the input."""
        param = tool.input(top)
        output = source.tool.output(str(tokens[0])) if tokens else (
            source.tool.outputs[0] if len(source.tool.outputs) == 1 else None)
        if param is None or output is None or pointer.count("/") != 1:
            return
        if self.toolset.lattice.compat(output, param.type) is Compat.INCOMPATIBLE:
            diagnostics.append(self._diag(
                "PC301", f"call {call_id} `{tool.name}`: argument `{top}` refers to "
                         f"`{output.name}` of call {source.call_id} `{source.tool.name}`, a "
                         f"{output.type}, but `{top}` takes a {param.type}",
                pointer, call_id, tool.name, key=top, expected=param.type,
                actual=output.type))

    def _schema(self, resolution: _Resolution, call_id: str,
                tool: ToolSignature) -> Sequence[Diagnostic]:
        """The schema's own verdict on the arguments (:mod:`plancheck.ir.schema_verdict`);
        a call it cannot decide is refused, saying why."""
        try:
            problems = argument_problems(resolution.instance, tool, tuple(resolution.holes))
        except SchemaUndecided as undecided:
            named = f"call {call_id} `{tool.name}`"
            if undecided.invalid_schema:
                allow = self.invalid_schemas == "allow"
                return [self._diag(
                    "PC711", f"{named}: `{tool.name}` cannot be checked: {undecided.reason}; "
                             + ("it runs unvalidated" if allow else "no call to it is run"),
                    "", call_id, tool.name,
                    severity=Severity.WARNING if allow else Severity.ERROR,
                    help=["fix the tool's inputSchema, or build the guard with "
                          "invalid_schemas=\"allow\" to run its calls unchecked"])]
            return [self._diag("PC002", f"{named} cannot be checked, so it is not run: "
                                        f"{undecided.reason}", "", call_id, tool.name,
                               severity=Severity.ERROR)]
        if not problems:
            return ()  # (most calls: no list made)
        named = f"call {call_id} `{tool.name}`"
        return [self._schema_diagnostic(problem, resolution, named, call_id, tool)
                for problem in problems]

    def _paths(self, resolution: _Resolution, call_id: str,
               tool: ToolSignature) -> Sequence[Diagnostic]:
        """plancheck's own check of a path written for a typed input (the built-in pool's,
        DORA's): a `.txt` file where an image is wanted is PC302, as check says."""
        typed = self._typed.get(tool.name)
        if typed is None:  # the inputs of a type of the pool's own (not a JSON kind), once
            decls = self.toolset.lattice.decls
            typed = self._typed[tool.name] = frozenset(
                p.name for p in tool.inputs if declared_kind(p.type, decls) is None
                and p.type != VALUE)
        if not typed:
            return ()
        found = []
        lattice = self.toolset.lattice
        for name, value in resolution.instance.items():
            param = tool.input(name) if isinstance(value, str) else None
            pointer = "/" + escape_pointer(name)
            if param is None or name not in typed or pointer in resolution.substituted or \
                    pointer in resolution.holes:
                continue
            problem = extension_problem(value, param.type, lattice)
            if problem is not None:
                found.append(self._diag("PC302", f"call {call_id} `{tool.name}`: argument "
                                                 f"`{name}` {problem}", pointer, call_id,
                                        tool.name, key=name, actual=value))
        return found

    def _schema_diagnostic(self, problem: ArgumentProblem, resolution: _Resolution,
                           named: str, call_id: str, tool: ToolSignature) -> Diagnostic:
        if problem.code == "PC202":
            return self._unknown_argument(named, call_id, tool, problem.key, problem.message,
                                          problem.severity)
        source = next((where for pointer, where in resolution.substituted.items()
                       if problem.pointer == pointer or problem.pointer.startswith(pointer + "/")),
                      None)
        if source is not None:
            return self._diag("PC301", f"{named}: {problem.message}; the value comes from "
                                       f"{source}", problem.pointer, call_id, tool.name,
                              key=problem.key, actual=problem.actual)
        return self._diag(problem.code, f"{named}: {problem.message}", problem.pointer, call_id,
                          tool.name, key=problem.key, actual=problem.actual,
                          help=list(problem.help), severity=problem.severity)

    def _inferred_types(self, call: PolicyCall, call_id: str,
                        tool: ToolSignature) -> list[Diagnostic]:
        """``PC301`` as a warning when a value copied from an earlier result (an inferred
        flow) has a type that does not fit the argument: the copy may be a coincidence."""
        found = []
        history = self.policies.monitor.history
        for flow in call.flows:
            if flow.kind == EXPLICIT or len(flow.argument) != 1 or not flow.source_path or \
                    flow.source >= len(self._accepted) or flow.source >= len(history):
                continue
            source = self._accepted[flow.source]
            param = tool.input(str(flow.argument[0]))
            output = source.tool.output(str(flow.source_path[0]))
            if param is None or output is None:
                continue
            if self.toolset.lattice.compat(output, param.type) is Compat.INCOMPATIBLE:
                name = str(flow.argument[0])
                found.append(self._diag(
                    "PC301", f"call {call_id} `{tool.name}`: argument `{name}` holds a value "
                             f"returned by call {source.call_id} `{source.tool.name}` as "
                             f"`{output.name}`, a {output.type}, but `{name}` takes a "
                             f"{param.type}", f"/{name}", call_id, tool.name, key=name,
                    expected=param.type, actual=output.type, severity=Severity.WARNING))
        return found

    # ----------------------------------------------------------------------- diagnostics

    def _diag(self, code: str, message: str, pointer: str, call_id: str, tool: str | None,
              *, key: str | None = None, help: list[str] | None = None,
              severity: Severity | None = None, **data: Any) -> Diagnostic:
        from plancheck.diagnostics.codes import CODES

        base = severity if severity is not None else CODES[code].severity
        fields: dict[str, Any] = {"call_id": call_id, "tool": tool}
        if key is not None:
            fields["key"] = key
        fields.update(data)
        return make(code, message, primary=Span(_FILE, pointer=f"/arguments{pointer}"),
                    help=help or (), data=fields,
                    severity=severity_in(self._overrides, code, base))

    def _unknown_tool(self, call_id: str, name: str) -> Diagnostic:
        from difflib import get_close_matches

        names = sorted(self.toolset.tools)
        close = get_close_matches(name, names, n=1)
        return self._diag("PC201", f"call {call_id}: there is no tool `{name}`", "", call_id,
                          name, suggestion=close[0] if close else None,
                          allowed=names[:_MAX_LISTED])

    def _unknown_argument(self, named: str, call_id: str, tool: ToolSignature,
                          name: str, message: str, severity: Severity | None) -> Diagnostic:
        from difflib import get_close_matches

        close = get_close_matches(name, list(tool.input_names), n=1)
        return self._diag("PC202", f"{named}: {message}", "/" + name, call_id, tool.name,
                          key=name, suggestion=close[0] if close else None,
                          allowed=list(tool.input_names), severity=severity)

    def _invalid_pool_schema(self, tool: ToolSignature, problem: str) -> Diagnostic:
        """``PC711`` when the pool loads: every call to the tool is refused (or, with
        ``invalid_schemas="allow"``, runs unvalidated)."""
        then = "its calls run unvalidated" if self.invalid_schemas == "allow" else \
            "the guard refuses every call to it"
        return make("PC711", f"the JSON Schema of tool `{tool.name}` is not valid ({problem}): "
                             f"{then}", primary=tool.span, data={"tool": tool.name,
                                                                 "problem": problem})

    def _missing_call(self, call_id: str, tool: ToolSignature, top: str, pointer: str,
                      text: str) -> Diagnostic:
        count = len(self._accepted)
        return self._diag(
            "PC206", f"call {call_id} `{tool.name}`: argument `{top}` refers to a call that "
                     f"has not run ({json_shown(text)}; {count} call{'s' if count != 1 else ''}"
                     f" ran so far, numbered from 0)", pointer, call_id, tool.name, key=top,
            allowed=[f"{e.index}: {e.call_id} `{e.tool.name}`" for e in self._accepted[-5:]])

    def _missing_key(self, call_id: str, tool: ToolSignature, top: str, pointer: str,
                     source: Accepted, key: str) -> Diagnostic:
        result = source.result
        keys = (sorted(map(str, result)) if isinstance(result, dict) else
                list(source.tool.output_names))
        return self._diag(
            "PC208", f"call {call_id} `{tool.name}`: argument `{top}` reads `{key}` of call "
                     f"{source.call_id} `{source.tool.name}`, which returned no such value",
            pointer, call_id, tool.name, key=top, allowed=keys[:_MAX_LISTED])

    def _refuse(self, call_id: str, tool: str | None, diagnostics: list[Diagnostic]
                ) -> Verdict:
        return Verdict(False, diagnostics, feedback_text(call_id, tool, diagnostics, False, []),
                       call_id, tool)

    def _unreadable(self, why: str, code: str = "PC100") -> Verdict:
        call_id = f"call_{self._proposed}"
        self._proposed += 1
        return self._refuse(call_id, None, [make(code, why, data={"call_id": call_id},
                                                 severity=Severity.ERROR)])


def _holds_an_output(result: Any, tool: ToolSignature) -> bool:
    """Whether a path provenance finds in ``result`` may start at one of ``tool``'s outputs
    (a key of a mapping, a position in a list, or either in the JSON a string holds): only a
    flow from such a place can be a value of a declared output's type."""
    names = tool.output_names
    if not names:
        return False
    if isinstance(result, str):
        return result[:1] in ("{", "[") and len(result) > 1
    if isinstance(result, Mapping):
        return any(name in result for name in names) or any(
            type(key) is not str and str(key) in names for key in result)
    if isinstance(result, list):
        return any(name.isdigit() and str(int(name)) == name and int(name) < len(result)
                   for name in names)
    return False


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _flat(arguments: dict[str, Any]) -> bool:
    """Whether ``arguments`` hold, under string keys, scalars and lists or objects of scalars
    only, fewer than ``MAX_MEMBERS`` in all: no part can be shared deep enough to matter or
    hold itself (what :func:`json_data_problem` walks for), as a list of paths or ids is."""
    if not all(type(key) is str for key in arguments):
        return False
    members = len(arguments)
    for value in arguments.values():
        kind = type(value)
        if kind in _SCALARS:
            continue
        if kind is list:
            if not all(type(member) in _SCALARS for member in value):
                return False
        elif kind is dict:
            if not all(type(key) is str and type(member) in _SCALARS
                       for key, member in value.items()):
                return False
        else:
            return False
        members += len(value)
    return members <= MAX_MEMBERS


def _flow_line(flow: dict[str, Any]) -> str:
    """How feedback says where an argument's value came from."""
    source = f"{flow['from']} `{flow['tool']}`"
    path = f" at `{flow['path']}`" if flow["path"] else ""
    if flow["kind"] == EXPLICIT:
        return f"`{flow['argument']}` is read from {source}{path}"
    if flow["kind"] == "exact":
        return f"`{flow['argument']}` equals a value returned by {source}{path}"
    return f"`{flow['argument']}` holds text returned by {source}{path}"
