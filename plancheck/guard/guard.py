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

from pathlib import Path
from typing import Any

from plancheck.compiler.profiles import profile_overrides, severity_in
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.severity import Severity
from plancheck.diagnostics.span import Span
from plancheck.guard.reading import ProposedCall, decode_arguments, read_calls
from plancheck.guard.references import (
    MAX_DEPTH,
    MISSING,
    path_tokens,
    references_in,
    replaced,
    value_in,
)
from plancheck.guard.results import result_value
from plancheck.guard.verdict import TurnVerdict, Verdict, feedback_text
from plancheck.ir.lattice import Compat
from plancheck.ir.nodes import Toolset, ToolSignature
from plancheck.ir.schema_types import json_shown, numeric_string
from plancheck.ir.schema_validation import SchemaError, schema_errors, tool_schema_text, value_at
from plancheck.policy.loader import PolicySet
from plancheck.policy.online import GuardPolicies, describe_flows
from plancheck.policy.semantics import EXPLICIT, PolicyCall
from plancheck.records import Record, replace

_FILE = "<call>"
_MAX_LISTED = 30


class Accepted(Record):
    """A call that joined the trajectory, and what it returned once recorded."""

    __slots__ = _fields = ("index", "call_id", "tool", "arguments", "result", "failed")

    def __init__(self, index: int, call_id: str, tool: ToolSignature, arguments: dict[str, Any],
                 result: Any = MISSING, failed: bool = False) -> None:
        self.index = index
        self.call_id = call_id
        self.tool = tool
        self.arguments = arguments
        self.result = result
        self.failed = failed


class _Resolution(Record):
    """What the references of one call resolve to."""

    __slots__ = _fields = ("instance", "holes", "substituted", "explicit", "unknown")

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
    inference of flows from copied values. Building the guard raises
    :class:`~plancheck.corpus.toolsets.ToolsetError` or
    :class:`~plancheck.policy.loader.PolicyError` when the pool or the policies cannot be used.
    ``task``: the user's request the session answers; a call passing a value the user
    must supply that the request does not give (``PC901``, an error under the guard profile)
    or one of the wrong kind (``PC905``) is reported, and :meth:`finish` adds what the
    request asks of the whole trajectory (``PC902``-``PC904``).
    """

    def __init__(self, toolset: Any = None, *, profile: str = "guard",
                 policies: str | Path | PolicySet | None = None,
                 provenance: bool = True, task: str | None = None) -> None:
        from plancheck.corpus.pool_values import toolset_from

        self.toolset: Toolset = toolset_from(toolset)
        self.profile = profile
        self._overrides = profile_overrides(profile)
        rules = PolicySet((), self.toolset, "<none>") if policies is None else policies
        self.policies = GuardPolicies(rules, self.toolset, provenance=provenance)
        self._accepted: list[Accepted] = []
        self._by_id: dict[str, int] = {}
        self._proposed = 0
        self.task = task  # the user's request of the session: the PC9xx rules read it

    # ----------------------------------------------------------------------- the loop

    def propose(self, call: Any) -> Verdict | TurnVerdict:
        """The verdict on ``call`` before it runs (a :class:`TurnVerdict` for a list of the
        parallel calls of one turn, decided in order: each allowed one joins the trajectory
        before the next is decided, so counts hold over the turn). Never raises."""
        try:
            read = read_calls(call)
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
            entry = self._accepted[index]
            entry.result, entry.failed = value, failed
            self.policies.record(entry.call_id, value)
        except Exception as error:
            return [make("PC002", f"the result of `{call_id}` could not be recorded: {error}",
                         severity=Severity.WARNING)]
        return []

    def trajectory(self) -> list[dict[str, Any]]:
        """The accepted calls, in order, as ``{"id", "name", "arguments"}`` (with ``result``
        once recorded): what ``plancheck.check_trajectory`` or ``score`` read later."""
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
        call_id = proposed.call_id or f"call_{self._proposed}"
        self._proposed += 1
        name = proposed.tool
        if not isinstance(name, str) or not name.strip():
            return self._refuse(call_id, None, [self._diag(
                "PC108", f"call {call_id} names no tool (found {json_shown(name)})", "",
                call_id, None)])
        tool = self.toolset.tools.get(name) or self.toolset.tools.get(
            self.toolset.aliases.get(name, ""))
        if tool is None:
            return self._refuse(call_id, name, [self._unknown_tool(call_id, name)])
        arguments, problem = decode_arguments(proposed.arguments)
        if problem is None and not isinstance(arguments, dict):
            problem = (f"the arguments must be a JSON object of named arguments, found "
                       f"{json_shown(arguments)}")
        if problem is not None:
            return self._refuse(call_id, name, [self._diag(
                "PC100", f"call {call_id} `{name}`: {problem}", "", call_id, name)])
        found, too_deep = references_in(arguments)
        if too_deep:
            return self._refuse(call_id, name, [self._diag(
                "PC100", f"call {call_id} `{name}`: the arguments are nested more than "
                         f"{MAX_DEPTH} levels deep", "", call_id, name)])
        diagnostics: list[Diagnostic] = []
        resolution = self._resolve(found, arguments, call_id, tool, diagnostics)
        diagnostics.extend(self._schema(resolution, call_id, tool))
        policy_call, policy_found = self.policies.check(
            call_id, tool.name, arguments, resolution.explicit, frozenset(resolution.unknown))
        diagnostics.extend(policy_found)
        if self.task is not None:
            diagnostics.extend(self._request(call_id, tool, arguments, policy_call))
        flows: list[dict[str, Any]] = []
        lines: list[str] = []
        if policy_call.flows:  # (most calls have none: nothing below to do for them)
            diagnostics.extend(self._inferred_types(policy_call, call_id, tool))
            flows = describe_flows(policy_call, self.policies.monitor.history)
            lines = [_flow_line(flow) for flow in flows]
        allowed = not diagnostics or not any(d.severity is Severity.ERROR for d in diagnostics)
        if allowed:
            self._accept(policy_call, call_id, tool, arguments)
        return Verdict(allowed, diagnostics,
                       feedback_text(call_id, tool.name, diagnostics, allowed, lines),
                       call_id, tool.name, arguments, flows)

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
            call = replace(call, index=self.policies.monitor.next_index)
        self.policies.accept(call)
        self._accepted.append(Accepted(index, call_id, tool, arguments))
        self._by_id[call_id] = index

    def _resolve(self, found: list[Any], arguments: dict[str, Any], call_id: str,
                 tool: ToolSignature, diagnostics: list[Diagnostic]) -> _Resolution:
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
                tool: ToolSignature) -> list[Diagnostic]:
        errors = schema_errors(resolution.instance, tool_schema_text(tool))
        found: list[Diagnostic] = []
        for error in errors:
            if any(error.pointer == h or error.pointer.startswith(h + "/")
                   for h in resolution.holes):
                continue
            found.extend(self._schema_diagnostics(error, resolution, call_id, tool))
        return found

    def _schema_diagnostics(self, error: SchemaError, resolution: _Resolution, call_id: str,
                            tool: ToolSignature) -> list[Diagnostic]:
        named = f"call {call_id} `{tool.name}`"
        if error.keyword == "required":
            return [self._diag("PC203", f"{named}: the required argument `{n}` is missing",
                               "", call_id, tool.name, key=n) for n in error.names]
        if error.keyword == "additionalProperties":
            return [self._unknown_argument(named, call_id, tool, n) for n in error.names]
        top = error.pointer.split("/")[1] if error.pointer else ""
        actual = value_at(resolution.instance, error.pointer)
        place = f"argument `{error.pointer[1:] or top}`" if error.pointer else "the arguments"
        source = next((where for pointer, where in resolution.substituted.items()
                       if error.pointer == pointer or error.pointer.startswith(pointer + "/")),
                      None)
        if source is not None:
            return [self._diag("PC301", f"{named}: {place} gets {json_shown(actual)} from "
                                        f"{source}, which does not fit: {error.message}",
                               error.pointer, call_id, tool.name, key=top, actual=actual)]
        if error.keyword == "type" and {"number", "integer"} & set(error.expected) and \
                numeric_string(actual) is not None:
            return [self._diag("PC305", f"{named}: {place} takes a number, written here as "
                                        f"the string {json_shown(actual)}",
                               error.pointer, call_id, tool.name, key=top, actual=actual,
                               help=[f"write it as the number {numeric_string(actual)}"])]
        return [self._diag("PC302", f"{named}: {place}: {error.message}", error.pointer,
                           call_id, tool.name, key=top, actual=actual)]

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

        base = severity or CODES[code].severity
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
                          name: str) -> Diagnostic:
        from difflib import get_close_matches

        close = get_close_matches(name, list(tool.input_names), n=1)
        return self._diag("PC202", f"{named}: `{tool.name}` takes no argument `{name}`",
                          "/" + name, call_id, tool.name, key=name,
                          suggestion=close[0] if close else None,
                          allowed=list(tool.input_names))

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


def _flow_line(flow: dict[str, Any]) -> str:
    """How feedback says where an argument's value came from."""
    source = f"{flow['from']} `{flow['tool']}`"
    path = f" at `{flow['path']}`" if flow["path"] else ""
    if flow["kind"] == EXPLICIT:
        return f"`{flow['argument']}` is read from {source}{path}"
    if flow["kind"] == "exact":
        return f"`{flow['argument']}` equals a value returned by {source}{path}"
    return f"`{flow['argument']}` holds text returned by {source}{path}"
