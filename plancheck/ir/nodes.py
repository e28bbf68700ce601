"""The one intermediate representation of plans and tool pools.

Every frontend (JSON plan, raw model completion, JSONL record, workflow DSL) lowers into these
nodes, and every later phase (name resolution, type checking, symbolic execution, gold
comparison) reads only these nodes. Nodes carry the span they came from, so a diagnostic raised
in any phase can point back into the user's file. Plan nodes are never changed after lowering;
they are not ``frozen`` dataclasses only because a batch scorer builds millions of them and a
frozen dataclass costs three times as much to construct.

A plan that is malformed is still represented: a field that could not be read is ``None`` and
the lowering phase has already reported why. Later phases skip what is ``None`` instead of
reporting it again, which is how one defect yields one diagnostic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from plancheck.diagnostics.span import NO_SPAN, Span

if TYPE_CHECKING:
    from plancheck.diagnostics.model import Diagnostic
    from plancheck.ir.lattice import TypeLattice

JSONValue: TypeAlias = (
    "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
)




# --------------------------------------------------------------------------- plans


@dataclass(slots=True)
class Literal:
    """A value written directly in the plan (usually a file path)."""

    value: JSONValue
    span: Span


@dataclass(slots=True)
class Reference:
    """A use of an earlier step's output: ``<GENERATED>-{step}-<{key}>`` in JSON."""

    step: int
    key: str
    span: Span
    raw: str = ""
    # A path into the output's value (``.name``, ``[0]``), as tool-call syntaxes write it:
    # ``{{steps.0.output.entities[0].name}}`` is output ``entities``, path ``[0].name``.
    path: str = ""


@dataclass(slots=True)
class MalformedReference:
    """A value that is meant as a reference but cannot be read as one.

    Kept in the IR (rather than turned into a literal) so later phases know the argument is
    bound to *some* earlier result and do not report a second, cascaded error for it.
    """

    raw: str
    span: Span
    step: int | None = None


Binding: TypeAlias = Literal | Reference | MalformedReference


@dataclass(slots=True)
class Argument:
    name: str
    value: Binding
    span: Span  # the whole argument (JSON: the value of the input member)
    name_span_: Span | None = None  # the argument's name, when the frontend records it
    # References written inside a list or object literal, each with the JSON pointer of its
    # place below the argument's value ("/0/contents"): the literal is checked around them.
    nested: tuple[tuple[str, Reference], ...] = ()

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


@dataclass(slots=True)
class Step:
    """One tool call.

    ``index`` is the step number the plan declares (``None`` if it could not be read);
    ``position`` is where the step stands in the plan. ``dependence`` and
    ``dependence_content`` are what the source *declares* (JSON); the DSL derives them from
    references and leaves them ``None``.

    The spans of the step's fields are computed on demand from the step's JSON pointer (checking
    a clean plan never needs them); frontends with real positions (the DSL) store them instead.
    """

    position: int
    index: int | None
    tool: str | None
    args: tuple[Argument, ...]
    outputs: tuple[str, ...] | None
    span: Span
    dependence: tuple[int, ...] | None = None
    dependence_content: Mapping[int, tuple[str, ...]] | None = None
    declares_dependence: bool = False
    extra_fields: tuple[str, ...] = ()
    inputs_readable: bool = True
    # JSON field names actually used, when an alias stood for a canonical field.
    field_keys: Mapping[str, str] | None = None
    stored_spans: Mapping[str, Span] | None = None

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


@dataclass(slots=True)
class Plan:
    """A whole plan. ``steps`` are in source order."""

    steps: tuple[Step, ...]
    span: Span
    name: str | None = None
    toolset: str | None = None  # the toolset a DSL plan names with ``uses``


# --------------------------------------------------------------------------- tool pools


@dataclass(frozen=True, slots=True)
class TypeDecl:
    """A nominal artifact type. ``parents`` are its direct supertypes."""

    name: str
    parents: tuple[str, ...]
    doc: str = ""
    span: Span = NO_SPAN
    converts_to: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()  # file extensions, lower-case with the dot
    # Where each of ``(*parents, *converts_to)`` is written, when known: a diagnostic about
    # one of them points at that name, not at the whole declaration.
    name_spans: tuple[Span, ...] = ()


@dataclass(frozen=True, slots=True)
class Param:
    """An input or output of a tool.

    An output marked ``polymorphic`` (``out key: any T`` in the DSL) may be any subtype of
    ``T``; the consumer decides which, so it is compatible with every subtype of ``T``.
    """

    name: str
    type: str
    required: bool = True
    doc: str = ""
    span: Span = NO_SPAN
    polymorphic: bool = False
    # The JSON Schema a foreign pool (MCP, OpenAI tools) declares for the parameter, as
    # canonical JSON; literals are then checked against it (see corpus/schema_types.py).
    schema_text: str | None = None
    type_span: Span = NO_SPAN  # where the type name is written (``span`` is the declaration)


@dataclass(frozen=True, slots=True)
class ToolSignature:
    name: str
    inputs: tuple[Param, ...]
    outputs: tuple[Param, ...]
    category: str = ""
    family: str = ""
    description: str = ""
    span: Span = NO_SPAN
    # The pool does not say what the tool returns (an MCP tool without an ``outputSchema``):
    # any key of its result may be read, as an untyped value.
    open_outputs: bool = False
    # Derived lookups, computed once: checking a plan asks for them many times.
    input_names: tuple[str, ...] = field(init=False, repr=False, compare=False)
    input_name_set: frozenset[str] = field(init=False, repr=False, compare=False)
    output_names: tuple[str, ...] = field(init=False, repr=False, compare=False)
    required_input_names: frozenset[str] = field(init=False, repr=False, compare=False)
    _inputs_by_name: dict[str, Param] = field(init=False, repr=False, compare=False)
    _outputs_by_name: dict[str, Param] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "input_names", tuple(p.name for p in self.inputs))
        object.__setattr__(self, "input_name_set", frozenset(self.input_names))
        object.__setattr__(self, "output_names", tuple(p.name for p in self.outputs))
        object.__setattr__(
            self, "required_input_names", frozenset(p.name for p in self.inputs if p.required)
        )
        object.__setattr__(self, "_inputs_by_name", {p.name: p for p in self.inputs})
        object.__setattr__(self, "_outputs_by_name", {p.name: p for p in self.outputs})

    def input(self, name: str) -> Param | None:
        return self._inputs_by_name.get(name)

    def output(self, name: str) -> Param | None:
        return self._outputs_by_name.get(name)


@dataclass(frozen=True, slots=True)
class Flow:
    """A declared tool-to-tool data flow (the workflow graph, collapsed to tool pairs)."""

    source: str
    target: str
    span: Span = NO_SPAN


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    doc: str = ""
    span: Span = NO_SPAN


@dataclass(slots=True)
class Toolset:
    """A pool of typed tools, the types they use and the flows declared between them."""

    name: str
    types: dict[str, TypeDecl] = field(default_factory=dict)
    tools: dict[str, ToolSignature] = field(default_factory=dict)
    flows: set[tuple[str, str]] = field(default_factory=set)
    flow_decls: list[Flow] = field(default_factory=list)
    families: dict[str, Family] = field(default_factory=dict)
    max_predecessors: int | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    span: Span = NO_SPAN
    description: str = ""
    # The outputs are fields of one JSON response (API-style pools: MCP, OpenAI, Seal-Tools),
    # not separate results: leaving some unread is normal, so PC502 is not reported.
    outputs_are_fields: bool = False
    _compiled: tuple[TypeLattice, list[Diagnostic]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

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
        return {name: getattr(self, name) for name in self.__slots__ if name != "_compiled"}

    def __setstate__(self, state: dict[str, object]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        self._compiled = None
