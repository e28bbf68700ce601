"""The one intermediate representation of plans and tool pools.

Every frontend (JSON plan, raw model completion, JSONL record, workflow DSL) lowers into these
nodes, and every later phase (name resolution, type checking, symbolic execution, gold
comparison) reads only these nodes. Nodes carry the span they came from, so a diagnostic raised
in any phase can point back into the user's file. Plan nodes are never changed after lowering.
Nodes are records (:mod:`plancheck.records`): slotted classes with a plain ``__init__``, which
cost nothing to define at start-up and as little as possible to construct (a batch scorer
builds millions of them).

A plan that is malformed is still represented: a field that could not be read is ``None`` and
the lowering phase has already reported why. Later phases skip what is ``None`` instead of
reporting it again, which is how one defect yields one diagnostic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, ClassVar, TypeAlias

from plancheck.diagnostics.span import NO_SPAN, Span
from plancheck.records import FrozenRecord, Record

if TYPE_CHECKING:
    from plancheck.diagnostics.model import Diagnostic
    from plancheck.ir.lattice import TypeLattice

JSONValue: TypeAlias = (
    "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
)




# --------------------------------------------------------------------------- plans


class Literal(Record):
    """A value written directly in the plan (usually a file path)."""

    __slots__ = _fields = ("value", "span")

    def __init__(self, value: JSONValue, span: Span) -> None:
        self.value = value
        self.span = span


class Reference(Record):
    """A use of an earlier step's output: ``<GENERATED>-{step}-<{key}>`` in JSON.

    ``path`` is a path into the output's value (``.name``, ``[0]``), as tool-call syntaxes
    write it: ``{{steps.0.output.entities[0].name}}`` is output ``entities``, path
    ``[0].name``.
    """

    __slots__ = _fields = ("step", "key", "span", "raw", "path")

    def __init__(self, step: int, key: str, span: Span, raw: str = "", path: str = "") -> None:
        self.step = step
        self.key = key
        self.span = span
        self.raw = raw
        self.path = path


class MalformedReference(Record):
    """A value that is meant as a reference but cannot be read as one.

    Kept in the IR (rather than turned into a literal) so later phases know the argument is
    bound to *some* earlier result and do not report a second, cascaded error for it.
    """

    __slots__ = _fields = ("raw", "span", "step")

    def __init__(self, raw: str, span: Span, step: int | None = None) -> None:
        self.raw = raw
        self.span = span
        self.step = step


Binding: TypeAlias = Literal | Reference | MalformedReference


class Argument(Record):
    """An argument of a step: ``span`` is the whole argument (JSON: the value of the input
    member), ``name_span_`` its name when the frontend records it. ``nested`` holds the
    references written inside a list or object literal, each with the JSON pointer of its
    place below the argument's value (``/0/contents``): the literal is checked around them."""

    __slots__ = _fields = ("name", "value", "span", "name_span_", "nested")

    def __init__(self, name: str, value: Binding, span: Span, name_span_: Span | None = None,
                 nested: tuple[tuple[str, Reference], ...] = ()) -> None:
        self.name = name
        self.value = value
        self.span = span
        self.name_span_ = name_span_
        self.nested = nested

    def references(self) -> list[Reference]:
        """The argument's reference, or the references nested in its literal value."""
        if isinstance(self.value, Reference):
            return [self.value]
        return [reference for _, reference in self.nested]

    @property
    def name_span(self) -> Span:
        if self.name_span_ is not None:
            return self.name_span_
        return self.span.key() if self.span.pointer is not None else self.span


class Step(Record):
    """One tool call.

    ``index`` is the step number the plan declares (``None`` if it could not be read);
    ``position`` is where the step stands in the plan. ``dependence`` and
    ``dependence_content`` are what the source *declares* (JSON); the DSL derives them from
    references and leaves them ``None``.

    The spans of the step's fields are computed on demand from the step's JSON pointer (checking
    a clean plan never needs them); frontends with real positions (the DSL) store them instead.

    ``field_keys`` are the JSON field names actually used, when an alias stood for a
    canonical field.
    """

    __slots__ = _fields = ("position", "index", "tool", "args", "outputs", "span", "dependence",
                           "dependence_content", "declares_dependence", "extra_fields",
                           "inputs_readable", "field_keys", "stored_spans")

    def __init__(
        self,
        position: int,
        index: int | None,
        tool: str | None,
        args: tuple[Argument, ...],
        outputs: tuple[str, ...] | None,
        span: Span,
        dependence: tuple[int, ...] | None = None,
        dependence_content: Mapping[int, tuple[str, ...]] | None = None,
        declares_dependence: bool = False,
        extra_fields: tuple[str, ...] = (),
        inputs_readable: bool = True,
        field_keys: Mapping[str, str] | None = None,
        stored_spans: Mapping[str, Span] | None = None,
    ) -> None:
        self.position = position
        self.index = index
        self.tool = tool
        self.args = args
        self.outputs = outputs
        self.span = span
        self.dependence = dependence
        self.dependence_content = dependence_content
        self.declares_dependence = declares_dependence
        self.extra_fields = extra_fields
        self.inputs_readable = inputs_readable
        self.field_keys = field_keys
        self.stored_spans = stored_spans

    def field_span(self, field: str) -> Span:
        """The span of a step field (``agent``, ``step``, ``dependence``, ...)."""
        if self.stored_spans is not None and field in self.stored_spans:
            return self.stored_spans[field]
        if self.span.pointer is None:
            return self.span
        key = self.field_keys.get(field, field) if self.field_keys else field
        return self.span.child(key)

    @property
    def tool_span(self) -> Span:
        return self.field_span("agent")

    @property
    def index_span(self) -> Span:
        return self.field_span("step")

    @property
    def outputs_span(self) -> Span:
        return self.field_span("outputs")

    @property
    def dependence_span(self) -> Span:
        return self.field_span("dependence")

    @property
    def dependence_content_span(self) -> Span:
        return self.field_span("dependence_content")

    def arg(self, name: str) -> Argument | None:
        for argument in self.args:
            if argument.name == name:
                return argument
        return None

    def references(self) -> list[tuple[Argument, Reference]]:
        """Every reference of the step, nested ones included, in argument order."""
        return [(a, r) for a in self.args for r in a.references()]

    def has_malformed_reference(self) -> bool:
        return any(isinstance(a.value, MalformedReference) for a in self.args)


class Plan(Record):
    """A whole plan. ``steps`` are in source order; ``toolset`` is the toolset a DSL plan
    names with ``uses``."""

    # Annotated: subclasses (tool-call and DORA plans) add fields.
    _fields: ClassVar[tuple[str, ...]] = ("steps", "span", "name", "toolset")
    __slots__ = _fields

    def __init__(self, steps: tuple[Step, ...], span: Span, name: str | None = None,
                 toolset: str | None = None) -> None:
        self.steps = steps
        self.span = span
        self.name = name
        self.toolset = toolset

    # What a kind of plan adds to the common checks. The driver asks the plan (each kind a
    # subclass, in the module that reads it: tool calls, DORA trajectories), so it imports no
    # kind; a plain plan adds nothing.

    def bind(self, toolset: Toolset) -> tuple[Plan, list[Diagnostic]]:
        """This plan finished against a tool pool (what depends on the pool: positional
        arguments, "the result of call k"), and what binding it found."""
        return self, []

    def kind_checks(self, toolset: Toolset, found: list[Diagnostic],
                    check: Callable[[Plan, Toolset], list[Diagnostic]]) -> list[Diagnostic]:
        """The common checks' ``found`` diagnostics, adjusted to this kind of plan (``check``
        runs the common checks on another plan, e.g. a loop body)."""
        return found

    def own_toolset(self) -> Toolset | None:
        """The tool pool this kind of plan is checked against when none was asked for."""
        return None


# --------------------------------------------------------------------------- tool pools


class TypeDecl(FrozenRecord):
    """A nominal artifact type. ``parents`` are its direct supertypes; ``formats`` file
    extensions, lower-case with the dot; ``name_spans`` where each of ``(*parents,
    *converts_to)`` is written, when known (a diagnostic about one of them points at that
    name, not at the whole declaration)."""

    __slots__ = _fields = ("name", "parents", "doc", "span", "converts_to", "formats",
                           "name_spans")

    def __init__(self, name: str, parents: tuple[str, ...], doc: str = "", span: Span = NO_SPAN,
                 converts_to: tuple[str, ...] = (), formats: tuple[str, ...] = (),
                 name_spans: tuple[Span, ...] = ()) -> None:
        self.name = name
        self.parents = parents
        self.doc = doc
        self.span = span
        self.converts_to = converts_to
        self.formats = formats
        self.name_spans = name_spans


class Param(FrozenRecord):
    """An input or output of a tool.

    An output marked ``polymorphic`` (``out key: any T`` in the DSL) may be any subtype of
    ``T``; the consumer decides which, so it is compatible with every subtype of ``T``.
    ``schema_text`` is the JSON Schema a foreign pool (MCP, OpenAI tools) declares for the
    parameter, as canonical JSON; literals are then checked against it (see
    corpus/schema_types.py). ``type_span`` is where the type name is written (``span`` is the
    declaration).
    """

    __slots__ = _fields = ("name", "type", "required", "doc", "span", "polymorphic",
                           "schema_text", "type_span")

    def __init__(self, name: str, type: str, required: bool = True, doc: str = "",
                 span: Span = NO_SPAN, polymorphic: bool = False, schema_text: str | None = None,
                 type_span: Span = NO_SPAN) -> None:
        self.name = name
        self.type = type
        self.required = required
        self.doc = doc
        self.span = span
        self.polymorphic = polymorphic
        self.schema_text = schema_text
        self.type_span = type_span


class ToolSignature(FrozenRecord):
    """A tool. ``open_outputs``: the pool does not say what the tool returns (an MCP tool
    without an ``outputSchema``), so any key of its result may be read, as an untyped value.
    ``open_inputs``: its input schema admits keys it does not list (or is one plancheck cannot
    read, such as a ``$ref``), so an input it does not name is not an error. ``input_schema``:
    the input schema a foreign pool publishes for the tool, whole, as canonical JSON (``None``
    for a DSL tool): the guard validates arguments against it (:mod:`.schema_validation`)."""

    _fields = ("name", "inputs", "outputs", "category", "family", "description", "span",
               "open_outputs", "open_inputs", "input_schema")
    # Derived lookups, computed once: checking a plan asks for them many times.
    __slots__ = (*_fields, "input_names", "input_name_set", "output_names",
                 "required_input_names", "_inputs_by_name", "_outputs_by_name")

    def __init__(self, name: str, inputs: tuple[Param, ...], outputs: tuple[Param, ...],
                 category: str = "", family: str = "", description: str = "",
                 span: Span = NO_SPAN, open_outputs: bool = False,
                 open_inputs: bool = False, input_schema: str | None = None) -> None:
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.category = category
        self.family = family
        self.description = description
        self.span = span
        self.open_outputs = open_outputs
        self.open_inputs = open_inputs
        self.input_schema = input_schema
        self.input_names = tuple(p.name for p in inputs)
        self.input_name_set = frozenset(self.input_names)
        self.output_names = tuple(p.name for p in outputs)
        self.required_input_names = frozenset(p.name for p in inputs if p.required)
        self._inputs_by_name = {p.name: p for p in inputs}
        self._outputs_by_name = {p.name: p for p in outputs}

    def input(self, name: str) -> Param | None:
        return self._inputs_by_name.get(name)

    def output(self, name: str) -> Param | None:
        return self._outputs_by_name.get(name)


class Flow(FrozenRecord):
    """A declared tool-to-tool data flow (the workflow graph, collapsed to tool pairs)."""

    __slots__ = _fields = ("source", "target", "span")

    def __init__(self, source: str, target: str, span: Span = NO_SPAN) -> None:
        self.source = source
        self.target = target
        self.span = span


class Family(FrozenRecord):
    """A family of look-alike tools."""

    __slots__ = _fields = ("name", "doc", "span")

    def __init__(self, name: str, doc: str = "", span: Span = NO_SPAN) -> None:
        self.name = name
        self.doc = doc
        self.span = span


class Toolset(Record):
    """A pool of typed tools, the types they use and the flows declared between them.

    ``outputs_are_fields``: the outputs are fields of one JSON response (API-style pools: MCP,
    OpenAI, Seal-Tools), not separate results; leaving some unread is normal, so PC502 is not
    reported.
    """

    _fields = ("name", "types", "tools", "flows", "flow_decls", "families", "max_predecessors",
               "aliases", "span", "description", "outputs_are_fields")
    __slots__ = (*_fields, "_compiled")

    def __init__(
        self,
        name: str,
        types: dict[str, TypeDecl] | None = None,
        tools: dict[str, ToolSignature] | None = None,
        flows: set[tuple[str, str]] | None = None,
        flow_decls: list[Flow] | None = None,
        families: dict[str, Family] | None = None,
        max_predecessors: int | None = None,
        aliases: dict[str, str] | None = None,
        span: Span = NO_SPAN,
        description: str = "",
        outputs_are_fields: bool = False,
    ) -> None:
        self.name = name
        self.types = {} if types is None else types
        self.tools = {} if tools is None else tools
        self.flows = set() if flows is None else flows
        self.flow_decls = [] if flow_decls is None else flow_decls
        self.families = {} if families is None else families
        self.max_predecessors = max_predecessors
        self.aliases = {} if aliases is None else aliases
        self.span = span
        self.description = description
        self.outputs_are_fields = outputs_are_fields
        self._compiled: tuple[TypeLattice, list[Diagnostic]] | None = None

    def tool(self, name: str) -> ToolSignature | None:
        return self.tools.get(name)

    def has_flows(self) -> bool:
        return bool(self.flows)

    def _compile(self) -> tuple[TypeLattice, list[Diagnostic]]:
        # Built on first use and kept: a toolset is not changed after it has been loaded.
        if self._compiled is None:
            from plancheck.ir.lattice import build_lattice

            self._compiled = build_lattice(self)
        return self._compiled

    @property
    def lattice(self) -> TypeLattice:
        return self._compile()[0]

    def problems(self) -> list[Diagnostic]:
        """Diagnostics about the toolset itself (unknown types, cycles, flows and families
        naming what the pool lacks)."""
        from plancheck.ir.pool_checks import declaration_problems

        return [*self._compile()[1], *declaration_problems(self)]

    def __getstate__(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self._fields}

    def __setstate__(self, state: dict[str, object]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        self._compiled = None
