"""A general tool-call frontend: the call shapes agent loops and tool-use corpora write.

A *call shape* says where a call keeps its tool name and its arguments. Each is a few lines,
registered in :data:`plancheck.formats.shapes.CALL_SHAPES` (which also finds them):

==================== ======================================================================
shape                a call is written
==================== ======================================================================
``openai-chat``      ``{"type": "function", "function": {"name", "arguments": "<JSON>"}}``
``openai-responses`` ``{"type": "function_call", "name", "arguments": "<JSON>", "call_id"}``
``anthropic``        ``{"type": "tool_use", "id", "name", "input": {...}}``
``gemini``           ``{"functionCall": {"name", "args": {...}}}`` in ``parts``
``generic``          the name under ``name``/``tool``/``tool_name``/``api``/``task``/
                     ``function``/``action``, the arguments (an object, a JSON string holding
                     one, or a positional list bound in input order) under ``arguments``/
                     ``args``/``parameters``/``params``/``param``/``input``/``inputs``/
                     ``action_input``
``name-keyed``       ``{"tool_name": {arguments}}`` (inside ``ground_truth``, or when forced)
``bfcl-answer``      BFCL's possible answers, ``{"tool_name": {"arg": [alternatives]}}``: an
                     argument whose alternatives include ``""`` may be left out, so it is; the
                     others take their first alternative
==================== ======================================================================

Calls are found wherever these containers put them, in document order: a bare list; an
object's ``tool_calls``, ``calls``, ``trajectory``, ``task_nodes`` (TaskBench), ``calling``
(Seal-Tools), ``ground_truth`` (BFCL), ``result``; chat transcripts (``messages``, ``choices``,
``message``, ``content`` blocks, Responses ``output`` items, legacy ``function_call``,
Gemini ``candidates``/``contents``/``parts``).

Every call becomes a step of the one plan IR, numbered by its place, with JSON pointers to its
name and each argument, so every check and renderer applies unchanged. References are read by
:mod:`plancheck.compiler.refsyntax`; what depends on the tool pool (which input a positional
argument is, which output "the result of call 2" is) is bound by :func:`bind_plan` when the
plan is checked.

``--call-format`` and ``--reference-syntax`` force one shape or one syntax
(:func:`plancheck.compiler.call_formats.forced`); by default the shape is detected per input,
and the references are read in the syntaxes its shapes declare (``CallShape.references``: the
generic shape's corpora write every registered syntax; a chat API's calls none, their strings
are text).

**Other readings of a call list.** A reader given to :func:`lower_calls` (``reread``) may
read the same calls otherwise after they are read (a trajectory whose references another
format defines, :mod:`plancheck.compiler.trajectories`): it subclasses
:class:`CallLowering`, whose hooks say how an item, a call's tool and its arguments are read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from plancheck.compiler.call_formats import SYNTAXES, forced_formats
from plancheck.compiler.refsyntax import Placeholder, RefMatch, numbering_base, parse
from plancheck.compiler.repeated_keys import (
    ARGUMENTS_HELP,
    arguments_noting_repeats,
    twice_in_arguments,
)
from plancheck.diagnostics.limits import MAX_FIELDS, TooManyFields, plan_limit
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span, escape_pointer
from plancheck.formats.records import PLAN_WRAPPER_KEYS
from plancheck.formats.shapes import (
    WHOLE_OUTPUT,
    FoundCall,
    call_shapes,
    find_calls,
    positional_key,
)
from plancheck.formats.sniff import is_plan_steps, is_trajectory_document, message_kind
from plancheck.ir.nodes import Argument, Binding, Literal, Plan, Reference, Step, Toolset
from plancheck.ir.output_paths import split_path
from plancheck.ir.references import read_binding
from plancheck.ir.schema import json_type_name
from plancheck.records import replace

if TYPE_CHECKING:
    from plancheck.compiler.units import PlanUnit
    from plancheck.diagnostics.positions import Positions


class CallPlan(Plan):
    """A plan read from tool calls; :func:`bind_plan` finishes it against a tool pool."""

    __slots__ = ("needs_binding",)
    _fields = (*Plan._fields, "needs_binding")

    def __init__(self, steps: tuple[Step, ...], span: Span, name: str | None = None,
                 toolset: str | None = None, needs_binding: bool = False) -> None:
        super().__init__(steps, span, name, toolset)
        self.needs_binding = needs_binding

    def bind(self, toolset: Toolset) -> tuple[Plan, list[Diagnostic]]:
        return bind_plan(self, toolset)


# --------------------------------------------------------------------------- lowering


Lowered = tuple[Plan | None, list[Diagnostic]]
# Another reading of the calls of a document, asked once they are read (the lowering, or None
# when no call was found): its plan and diagnostics, or None to keep this one.
Reread = Callable[[Any, Span, "str | None", "CallLowering | None"], "Lowered | None"]


def lower_calls(value: Any, root: Span, *, name: str | None = None,
                reread: Reread | None = None) -> Lowered | None:
    """The plan the tool calls in ``value`` make (``None``: no calls found). ``reread``: another
    reading of the document, asked when neither a call format nor a reference syntax is
    forced (see the module docstring). With a forced call format, finding no call of that
    shape is an error, not a reason to read a plan instead."""
    call_format, syntax = forced_formats()
    if call_format is None and is_plan_steps(value):
        return None
    calls = find_calls(value, call_format)
    if not calls and call_format is not None:
        return None, [make("PC101", f"no `{call_format}` tool calls were found",
                           primary=root, label="searched here",
                           help=["--call-format auto detects the shape"],
                           data={"call_format": call_format})]
    if not calls:
        again = reread(value, root, name, None) if reread is not None else None
        return again if again is not None else _without_calls(value, root, name)
    too_large = plan_limit([call.arguments for call in calls], root, what="calls")
    if too_large is not None:
        return None, [too_large]
    allowed = declared_syntaxes(calls) if syntax in (None, "auto") else \
        (() if syntax == "none" else (syntax,))
    lowering = CallLowering(root, calls, allowed)
    try:
        lowering.read()
    except TooManyFields as error:  # arguments decoded from JSON strings past the field limit
        return None, [error.diagnostic(root)]
    if reread is not None and call_format is None and syntax is None:
        again = reread(value, root, name, lowering)
        if again is not None:
            return again
    return lowering.plan(name), lowering.diagnostics


def declared_syntaxes(calls: list[FoundCall]) -> tuple[str, ...]:
    """The reference syntaxes the shapes of ``calls`` declare (``CallShape.references``), in
    the registry's order: what their arguments are read with when no syntax is forced."""
    shapes = call_shapes()
    declared = {name for shape in {call.shape for call in calls} if shape in shapes
                for name in shapes[shape].references}
    return tuple(name for name in SYNTAXES if name in declared)


@dataclass(slots=True)
class Parsed:
    """An argument as read: its name (``#i`` when positional), value, span, and the reference
    or placeholder its value spells."""

    name: str
    value: Any
    span: Span
    match: RefMatch | Placeholder | None
    name_span: Span | None = None
    # References inside a list or object value: (JSON pointer below the value, reference,
    # its span, its text).
    nested: list[tuple[str, RefMatch, Span, str]] = field(default_factory=list)
    # Bound while read (by a reading of its own): the binding and the nested references.
    bound: Binding | None = None
    bound_nested: tuple[tuple[str, Reference], ...] = ()


# The shape of an item of a call list that is not an object (kept in its place, no step).
NOT_A_CALL = "not a call"


@dataclass(slots=True)
class CallLowering:
    """Reads found calls into steps; the hooks (:meth:`tool`, :meth:`read_items`,
    :meth:`not_arguments`, :meth:`make_plan`, ``positional_lists``) are what another reading
    of a call list overrides."""

    # Whether a list of arguments is read as positional ones (bound in input order).
    positional_lists: ClassVar[bool] = True

    root: Span
    calls: list[FoundCall]
    allowed: tuple[str, ...]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    parsed: list[list[Parsed] | None] = field(default_factory=list)  # per call; None: unread
    syntaxes: set[str] = field(default_factory=set)
    positional: bool = False
    placeholders: int = 0
    decoded_fields: int = 0  # arguments read from JSON strings, which plan_limit cannot see
    tools: list[str | None] = field(default_factory=list)  # per call, once read

    def span(self, pointer: str | None) -> Span:
        if self.root.pointer is None:  # calls inside a text: positions fall back to it
            return self.root
        return Span(self.root.file, pointer=self.root.pointer + (pointer or ""))

    def read(self) -> None:
        """Read every call once, in document order (its tool, then its arguments), noting the
        syntaxes and shapes they use."""
        self.parsed = [self.call(c, i) for i, c in enumerate(self.calls)]

    def call(self, call: FoundCall, position: int) -> list[Parsed] | None:
        self.tools.append(self.tool(call, position, self.span(call.pointer)))
        if call.conflict is not None:
            self.ambiguous(call, position, *call.conflict)
        return self.arguments(call, position)

    def ambiguous(self, call: FoundCall, position: int, pointer: str, said: str) -> None:
        """``PC122`` for a call object that another reader reads as another call."""
        self.diagnostics.append(make(
            "PC122", f"call {position} reads as two calls: {said}",
            primary=self.span(pointer), label="another reading of this call",
            help=["keep one tool name and one set of arguments in the call object"],
            data={"position": position, "key": pointer.rsplit("/", 1)[-1]}))

    def tool(self, call: FoundCall, position: int, span: Span) -> str | None:
        """The call's tool (``PC108`` when it names none that can be one)."""
        if isinstance(call.name, str) and call.name.strip():
            return call.name
        self.diagnostics.append(make(
            "PC108", f"the tool of call {position} must be a non-empty string, found "
            f"{json_type_name(call.name)}",
            primary=self.span(call.name_pointer) if call.name_pointer else span,
            label="expected a tool name",
            data={"position": position, "field": "tool",
                  "actual": json_type_name(call.name)}))
        return None

    def plan(self, name: str | None) -> Plan:
        """The plan, once every call is read."""
        bases = self.bases()
        labels = {label: (i, key) for i, c in enumerate(self.calls) for label, key in c.labels}
        steps = []
        for position, call in enumerate(self.calls):
            if call.shape == NOT_A_CALL:
                continue
            args = self.parsed[position]
            bound = tuple(
                Argument(a.name, a.bound, a.span, a.name_span, a.bound_nested)
                if a.bound is not None else
                Argument(a.name, self.binding(a, position, bases, labels), a.span, a.name_span,
                         self.nested(a, position, bases, labels))
                for a in (args or ()))
            steps.append(self.step(call, position, bound, args is not None))
        return self.make_plan(tuple(steps), name, bool(labels))

    def make_plan(self, steps: tuple[Step, ...], name: str | None, labelled: bool) -> Plan:
        return CallPlan(steps, self.root, name=name,
                        needs_binding=self.positional or labelled or bool(self.syntaxes))

    def step(self, call: FoundCall, position: int, args: tuple[Argument, ...],
             readable: bool) -> Step:
        span = self.span(call.pointer)
        name_span = self.span(call.name_pointer) if call.name_pointer else span
        arguments_span = self.span(call.arguments_pointer) if call.arguments_pointer else span
        return Step(position=position, index=position, tool=self.tools[position], args=args,
                    outputs=None, span=span, inputs_readable=readable,
                    stored_spans={"agent": name_span, "inputs": arguments_span, "step": span,
                                  "outputs": span})

    def arguments(self, call: FoundCall, position: int) -> list[Parsed] | None:
        raw = call.arguments
        if raw is None and call.arguments_pointer is None:
            return []  # a call without arguments passes none
        span = self.span(call.arguments_pointer)
        inline = True
        if isinstance(raw, str):
            decoded, repeated = _decode(raw)
            if decoded is not None:
                raw, inline = decoded, False
            for key in repeated:
                self.diagnostics.append(make(
                    "PC118", f"call {position}: {twice_in_arguments(key)}", primary=span,
                    label="a key written twice", help=[ARGUMENTS_HELP],
                    data={"step": position, "key": key}))
        if call.shape == "bfcl-answer" and isinstance(raw, dict):
            raw = _first_alternatives(raw)
        if not inline and isinstance(raw, (dict, list)):  # counted before: the string only
            self.decoded_fields += len(raw)
            if self.decoded_fields > MAX_FIELDS:
                raise TooManyFields(self.decoded_fields)
        if isinstance(raw, dict):
            items: list[tuple[str, Any, Span]] = [
                (str(k), v, below(span, str(k), inline)) for k, v in raw.items()]
        elif isinstance(raw, list) and self.positional_lists:
            self.positional = self.positional or bool(raw)
            items = [(positional_key(i), v, below(span, i, inline)) for i, v in enumerate(raw)]
        else:
            self.not_arguments(call, position, raw, span)
            return None
        return self.read_items(items, position, inline, span)

    def read_items(self, items: list[tuple[str, Any, Span]], position: int, inline: bool,
                   span: Span) -> list[Parsed]:
        """The arguments (name, value, span) of the call at ``position``, read: references
        and placeholders in the allowed syntaxes."""
        parsed = []
        for key, value, value_span in items:
            match = parse(value, self.allowed) if isinstance(value, str) else None
            if isinstance(match, RefMatch):
                self.syntaxes.add(match.syntax)
            elif isinstance(match, Placeholder):
                self.placeholder(value, value_span, position, key)
            nested: list[tuple[str, RefMatch, Span, str]] = []
            if isinstance(value, (list, dict)):
                self.nested_strings(value, value_span, "", position, key, nested, inline)
            parsed.append(Parsed(key, value, value_span, match, None if inline else span,
                                 nested))
        return parsed

    def not_arguments(self, call: FoundCall, position: int, raw: Any, span: Span) -> None:
        """``PC108`` for arguments that are no object of named arguments nor a list of
        positional ones."""
        what = "a string that is neither a JSON object nor a list" \
            if isinstance(call.arguments, str) else json_type_name(raw)
        self.diagnostics.append(make(
            "PC108", f"the arguments of call {position} must be an object or a list, "
            f"found {what}", primary=span,
            label="expected an object of named arguments or a list of positional ones",
            data={"position": position, "field": "arguments",
                  "actual": json_type_name(call.arguments)}))

    # ------------------------------------------------------------ references in any syntax

    def nested_strings(self, value: Any, span: Span, pointer: str, position: int, key: str,
                       found: list[tuple[str, RefMatch, Span, str]], inline: bool) -> None:
        """References and placeholders inside a list or object argument: the references go
        to ``found``, the placeholders are reported."""
        members = enumerate(value) if isinstance(value, list) else value.items()
        for token, item in members:
            under = below(span, token, inline)
            where = f"{pointer}/{escape_pointer(str(token))}"
            if isinstance(item, str):
                match = parse(item, self.allowed)
                if isinstance(match, RefMatch):
                    self.syntaxes.add(match.syntax)
                    found.append((where, match, under, item))
                elif isinstance(match, Placeholder):
                    self.placeholder(item, under, position, key)
            elif isinstance(item, (list, dict)):
                self.nested_strings(item, under, where, position, key, found, inline)

    def placeholder(self, value: str, span: Span, position: int, key: str) -> None:
        self.placeholders += 1
        self.diagnostics.append(make(
            "PC209", f"argument `{_shown(key)}` of call {position} is the placeholder "
            f"`{value}`, not a value or a reference", primary=span,
            label="a placeholder, passed on as text",
            help=["pass the value itself, or a reference in the syntax the rest of the plan "
                  "uses"],
            data={"position": position, "key": key, "actual": value}))

    def bases(self) -> dict[str, int]:
        """The numbering base of each numbered syntax in this plan."""
        uses: dict[str, list[tuple[int, int]]] = {}
        for position, parsed in enumerate(self.parsed):
            for argument in parsed or ():
                matches = [argument.match, *(m for _, m, _, _ in argument.nested)]
                for match in matches:
                    if isinstance(match, RefMatch) and match.number is not None:
                        uses.setdefault(match.syntax, []).append((match.number, position))
        bases = {syntax: numbering_base(found) for syntax, found in uses.items()}
        bases["generated"] = 0  # DisasterBench numbers steps from 0, always
        return bases

    def binding(self, parsed: Parsed, position: int, bases: dict[str, int],
                labels: dict[str, tuple[int, str]]) -> Binding:
        return self.bound(parsed.match, parsed.span, parsed.value, parsed.name, position,
                          bases, labels)

    def nested(self, parsed: Parsed, position: int, bases: dict[str, int],
               labels: dict[str, tuple[int, str]]) -> tuple[tuple[str, Reference], ...]:
        """The references nested in an argument's value that name a call (the others are
        reported, and stay the text they are)."""
        found = []
        for pointer, match, span, text in parsed.nested:
            bound = self.bound(match, span, text, parsed.name, position, bases, labels)
            if isinstance(bound, Reference):
                found.append((pointer, bound))
        return tuple(found)

    def bound(self, match: RefMatch | Placeholder | None, span: Span, value: Any, name: str,
              position: int, bases: dict[str, int],
              labels: dict[str, tuple[int, str]]) -> Binding:
        if isinstance(match, Placeholder):
            return Literal(value, span)  # reported while reading
        if isinstance(match, RefMatch):
            if match.label is not None:
                target = labels.get(match.label)
                if target is None:
                    self.diagnostics.append(make(
                        "PC206", f"argument `{_shown(name)}` of call {position} uses "
                        f"`{match.label}`, which no call declares", primary=span,
                        label=f"no call declares `{match.label}`",
                        data={"step": position, "position": position, "key": name,
                              "label": match.label}))
                    return Literal(value, span)
                step, key = target
                output, path = split_path(match.key or key)
                return Reference(step, output, span, raw=value, path=path)
            assert match.number is not None
            output, path = split_path(match.key)
            return Reference(match.number - bases.get(match.syntax, 0), output, span,
                             raw=value, path=path)
        if isinstance(value, str) and "generated" in self.allowed:
            return read_binding(value, span)  # a `<GENERATED>` reference DisasterBench misspelt
        return Literal(value, span)  # (in no allowed syntax, a string is text)


def below(span: Span, token: str | int, inline: bool) -> Span:
    # Values decoded from a JSON string all point at that string.
    return span.child(token) if inline and span.pointer is not None else span


def _decode(text: str) -> tuple[Any, list[str]]:
    """Arguments written as a JSON string (OpenAI), or ``None`` when it holds no object/list;
    and the keys an object of it repeats."""
    try:
        decoded, repeated = arguments_noting_repeats(text)
    except (ValueError, RecursionError):  # also an integer of 4,301+ digits
        return None, []
    return (decoded, repeated) if isinstance(decoded, (dict, list)) else (None, [])


def _first_alternatives(arguments: dict[str, Any]) -> dict[str, Any]:
    """BFCL possible answers: leave out what may be left out, else take the first value (an
    object value holds possible answers for its members in turn)."""
    chosen = {}
    for key, alternatives in arguments.items():
        if not isinstance(alternatives, list) or not alternatives:
            chosen[key] = alternatives
        elif "" not in alternatives:
            first = alternatives[0]
            nested = isinstance(first, dict) and all(isinstance(v, list) for v in first.values())
            chosen[key] = _first_alternatives(first) if nested else first
    return chosen


def _shown(name: str) -> str:
    return f"argument {name[1:]}" if name.startswith("#") else name


# --------------------------------------------------------------------------- frontend hooks


def _without_calls(value: Any, root: Span, name: str | None) -> Lowered | None:
    """An empty plan and its ``PC112`` for a message that holds no tool call (``tool_calls:
    []``, or a model's reply in text only), rather than a ``PC105`` that expected a plan of
    steps; None for any other document."""
    if not isinstance(value, dict) or any(isinstance(value.get(key), list)
                                          for key in PLAN_WRAPPER_KEYS):
        return None  # (a plan under a wrapper key is read as one)
    for key in ("tool_calls", "calls"):
        if value.get(key) == []:
            return Plan((), root, name=name), [make(
                "PC112", f"the message holds no tool call: `{key}` is empty",
                primary=root.child(key), label="no calls")]
    kind = message_kind(value)
    if kind is None:
        return None
    what = "the transcript holds no tool call" if kind == "transcript" else \
        "the message holds no tool call (text only)"
    return Plan((), root, name=name), [make("PC112", what, primary=root, label="no calls")]


def call_unit(value: Any, file: str, positions: Positions, reread: Reread | None = None
              ) -> PlanUnit | None:
    """A plan unit for a JSON document of tool calls (``None``: it holds none); ``reread``:
    see :func:`lower_calls`."""
    from plancheck.compiler.units import PlanUnit

    lowered = lower_calls(value, Span(file, pointer=""), reread=reread)
    if lowered is None:
        return None
    return PlanUnit(file, None, positions, plan=lowered[0], diagnostics=lowered[1])


def calls_into_unit(unit: PlanUnit, value: Any, root: Span) -> bool:
    """Fill ``unit`` with the plan of the tool calls in ``value`` (a JSONL record, or the
    JSON found in a completion); False when it holds none."""
    lowered = lower_calls(value, root)
    if lowered is None:
        return False
    unit.plan = lowered[0]
    unit.diagnostics.extend(lowered[1])
    return True


_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```", re.DOTALL)
_OPENERS = 8  # bracket positions tried outside fences (each is a parse of the rest)


def calls_in_text(text: str) -> tuple[Any, int, int, bool] | None:
    """Tool calls inside a raw completion: in a code fence, or at one of the first brackets of
    the text, as JSON, a Python literal, or (fences and the first bracket only) JSON mended by
    json-repair. Returns the value, where it is, and whether that region is verbatim JSON."""
    fences = [(m.start(1), m.end(1), True) for m in _FENCE.finditer(text)]
    openers = [i for i, c in enumerate(text) if c in "[{"][:_OPENERS]
    candidates = [*fences, *((i, len(text), n == 0) for n, i in enumerate(openers))]
    for start, end, repair in candidates:
        value, stop, verbatim = _read_value(text, start, end, repair=repair)
        if stop > start and (find_calls(value, forced_formats()[0]) or _other(value)):
            return value, start, stop, verbatim
    return None


def _other(value: Any) -> bool:
    """Another document of calls the recogniser knows (a trajectory document), unless a call
    format or a reference syntax is forced."""
    return forced_formats() == (None, None) and is_trajectory_document(value)


def _read_value(text: str, start: int, end: int, *, repair: bool) -> tuple[Any, int, bool]:
    import ast

    from plancheck.compiler.extraction.linter import _loads_or_repair

    start += len(text[start:end]) - len(text[start:end].lstrip())
    try:
        value, stop = json.JSONDecoder().raw_decode(text, start)
        return value, stop, True
    except (ValueError, RecursionError):  # also an integer of 4,301+ digits
        pass
    chunk = text[start:end].rstrip()
    try:  # a Python literal (single quotes, True/None), as models print lists of dicts
        return ast.literal_eval(chunk), start + len(chunk), False
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    if not repair:
        return None, start, False
    # Damaged JSON (a trailing comma, a missing bracket): json-repair, as for plans.
    value = _loads_or_repair(chunk, allow_repair=True)
    return value, (start + len(chunk) if value is not None else start), False


# --------------------------------------------------------------------------- binding


def bind_plan(plan: Plan, toolset: Toolset) -> tuple[Plan, list[Diagnostic]]:
    """Bind what depends on the tool pool: positional arguments to input names (in the tool's
    input order), and "the result of call k" to the output it is (the tool's only output, or
    its i-th for Seal-Tools' ``API_call_K``). Other plans pass through unchanged."""
    if not isinstance(plan, CallPlan) or not plan.needs_binding:
        return plan, []
    diagnostics: list[Diagnostic] = []
    tools = [toolset.tool(s.tool) if s.tool else None for s in plan.steps]
    steps = []
    for step, tool in zip(plan.steps, tools, strict=True):
        args = []
        for argument in step.args:
            name = argument.name
            if name.startswith("#") and name[1:].isdigit() and tool is not None:
                index = int(name[1:])
                if index >= len(tool.inputs):
                    if index == len(tool.inputs):
                        diagnostics.append(_too_many(step, tool, argument))
                    continue
                name = tool.inputs[index].name
            value = argument.value
            if isinstance(value, Reference):
                value = _bind_output(value, plan.steps, tools)
            nested = tuple((pointer, _bind_output(reference, plan.steps, tools))
                           for pointer, reference in argument.nested)
            args.append(replace(argument, name=name, value=value, nested=nested))
        steps.append(replace(step, args=tuple(args)))
    return replace(plan, steps=tuple(steps), needs_binding=False), diagnostics


def _bind_output(ref: Reference, steps: tuple[Step, ...], tools: list[Any]) -> Reference:
    """``ref`` naming the output it means when it names "the result" or "the i-th output"
    of a call (any other reference is returned as it is)."""
    if ref.key != WHOLE_OUTPUT and not ref.key.startswith("#"):
        return ref
    if not 0 <= ref.step < len(steps) or tools[ref.step] is None:
        return ref
    outputs = tools[ref.step].output_names
    if ref.key == WHOLE_OUTPUT and len(outputs) == 1:
        return replace(ref, key=outputs[0])
    if ref.key.startswith("#") and ref.key[1:].isdigit() and int(ref.key[1:]) < len(outputs):
        return replace(ref, key=outputs[int(ref.key[1:])])
    # No one output it can be: shown as written when the output is reported unknown (PC208).
    return replace(ref, key=ref.raw or ref.key)


def _too_many(step: Step, tool: Any, first_extra: Argument) -> Diagnostic:
    passed = sum(1 for a in step.args if a.name.startswith("#"))
    taken = ", ".join(f"`{n}`" for n in tool.input_names) or "nothing"
    return make(
        "PC202", f"call {step.position} passes {passed} positional arguments, but "
        f"`{tool.name}` takes {len(tool.inputs)} ({taken})", primary=first_extra.span,
        label="one argument too many" if passed == len(tool.inputs) + 1 else
        "from here on, more arguments than the tool takes",
        data={"step": step.index, "position": step.position, "tool": tool.name,
              "key": first_extra.name, "allowed": list(tool.input_names)})
