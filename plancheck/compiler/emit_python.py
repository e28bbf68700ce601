"""Compile plans to typed Python, so that mypy can cross-examine plancheck's type checker.

A toolset becomes a *stub module*: one class per artifact type, one output record per tool and
one keyword-only function per tool. A plan becomes a function that calls those stubs, one
assignment per step. The module runs once real tool functions are registered with
``implement(tool_name, function)``; until then every stub raises ``NotImplementedError``.

How the type lattice is encoded (each rule is derived from the lattice, nothing is hard-coded):

* Subtyping is nominal inheritance: ``A <: B, C`` becomes ``class A(B, C)``, parents that are
  implied by other parents dropped, so every class has a consistent MRO (checked here with C3,
  since a lattice Python cannot linearise is a compile error, not a crash at import).
* Implicit conversions (``A ~> B``, which plancheck accepts with warning PC303) widen the
  parameter: an input of type ``E`` is annotated ``E | A1 | ... | Ak`` where the ``Ai`` are
  the most general types plancheck finds *convertible* to ``E``. That set is closed under
  subtyping (a subtype inherits its ancestors' conversions), so the union accepts exactly the
  types plancheck accepts.
* A polymorphic output (``out key: any T``: the consumer chooses which subtype of ``T``) has the
  class ``AnyT``, which inherits every most specific subtype of ``T``; so mypy accepts it
  wherever ``T``, a supertype or any subtype of ``T`` is expected, as plancheck does. (When a
  subtype of ``T`` has a second parent outside ``T``'s ancestry, nominal subtyping must accept
  that parent too while plancheck does not; :func:`encoding_gaps` lists such cases, and there
  are none in the built-in pool.)
* Optional inputs are keyword parameters defaulting to ``None``. A literal is wrapped in the
  class of the parameter it is passed to (``HighResImage("data/x.tif")``): plancheck only warns
  about literals (PC302), so literals never make mypy complain.

Name errors are compiled so that mypy reports them too, on the line of the step they concern:
an unknown tool is a call of an undefined name, an unknown or missing input is a bad keyword
argument, a reference to a missing step an undefined variable, to a later step a use before
definition, to an unknown output a missing attribute. Dependence fields (PC4xx), the outputs a
step lists (PC204), literal formats (PC302) and declared flows (PC304) have no Python
counterpart. A plan that cannot be represented at all (a step without a readable tool or
number, two steps with one number, a reference that cannot be read, an input given twice)
raises :class:`CompileError`.
"""

from __future__ import annotations

import builtins
import json
import keyword
import math
import re
import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from plancheck.compiler.type_acceptance import TypeAcceptance
from plancheck.diagnostics.model import Severity
from plancheck.ir.lattice import TypeLattice
from plancheck.ir.nodes import (
    JSONValue,
    Literal,
    MalformedReference,
    Param,
    Plan,
    Reference,
    Step,
    Toolset,
    ToolSignature,
)


class CompileError(Exception):
    """The plan or the toolset has no faithful Python rendering."""


@dataclass(frozen=True, slots=True)
class BindingSite:
    """What a line of a compiled module stands for: a step's call or one of its arguments."""

    plan: str  # the function the plan was compiled to
    step: int
    key: str | None  # the input key; None for the line that names the tool


@dataclass(frozen=True, slots=True)
class CompiledModule:
    source: str
    sites: dict[int, BindingSite]  # 1-based line number -> what that line compiles
    functions: tuple[str, ...]  # one per plan, in the order given


# --------------------------------------------------------------------------- names

_IDENTIFIER_CHARS = re.compile(r"\W")
_STEP_VARIABLE = re.compile(r"^step_m?\d+$")
# Names the emitted modules define or import themselves.
_HELPERS = frozenset({
    "annotations", "dataclass", "Callable", "Mapping", "TypeVar", "implement", "TOOLS",
    "_Value", "_V", "_call", "_as", "_IMPLEMENTATIONS",
})
_KEYWORDS = frozenset(keyword.kwlist)
_MODULE_RESERVED = _HELPERS | _KEYWORDS | frozenset(dir(builtins))


def identifier(text: str) -> str:
    """A Python identifier that reads like ``text`` (not guaranteed unique)."""
    name = _IDENTIFIER_CHARS.sub("_", text) or "_"
    if name[0].isdigit():
        name = "_" + name
    return name


class _Allocator:
    """Hands out distinct identifiers, avoiding taken names.

    Module-level names also avoid builtins and the ``step_N`` variables of plan functions;
    parameters and fields only need to avoid keywords and the module's own names.
    """

    def __init__(self, taken: Iterable[str] = (), *, module_level: bool = False) -> None:
        self.taken: set[str] = set(taken)
        self.module_level = module_level

    def take(self, text: str, suffix: str = "") -> str:
        base = identifier(text) + suffix
        if base in _KEYWORDS or (self.module_level and (
                base in _MODULE_RESERVED or _STEP_VARIABLE.match(base))):
            base += "_"
        name, counter = base, 2
        while name in self.taken:
            name, counter = f"{base}_{counter}", counter + 1
        self.taken.add(name)
        return name


@dataclass(slots=True)
class _ToolNames:
    function: str
    outputs: str  # the output record class
    params: dict[str, str] = field(default_factory=dict)  # input key -> parameter name
    fields: dict[str, str] = field(default_factory=dict)  # output key -> attribute name


@dataclass(slots=True)
class _Names:
    types: dict[str, str] = field(default_factory=dict)  # lattice type -> class
    polymorphic: dict[str, str] = field(default_factory=dict)  # T -> class of `any T`
    tools: dict[str, _ToolNames] = field(default_factory=dict)

    def module_names(self) -> set[str]:
        names = set(self.types.values()) | set(self.polymorphic.values())
        for tool in self.tools.values():
            names.update((tool.function, tool.outputs))
        return names


def _take_all(allocator: _Allocator, texts: Iterable[str], suffix: str = "") -> dict[str, str]:
    """Names for ``texts``; those that are already identifiers get first pick, so a mangled
    name never displaces one that was written as it is."""
    ordered = list(dict.fromkeys(texts))
    names = {t: allocator.take(t, suffix) for t in ordered if identifier(t) == t}
    names.update({t: allocator.take(t, suffix) for t in ordered if t not in names})
    return {t: names[t] for t in ordered}


def _allocate(toolset: Toolset, acceptance: TypeAcceptance) -> _Names:
    lattice = acceptance.lattice
    allocator = _Allocator(module_level=True)
    names = _Names()
    names.types = _take_all(allocator, toolset.types)
    for type_name in sorted({p.type for t in toolset.tools.values() for p in t.outputs
                             if p.polymorphic and p.type in lattice.decls}):
        if len(acceptance.most_specific(lattice.descendants[type_name])) > 1:
            names.polymorphic[type_name] = allocator.take("Any" + type_name)
    functions = _take_all(allocator, toolset.tools)
    records = _take_all(allocator, toolset.tools, "_Outputs")
    names.tools = {t: _ToolNames(functions[t], records[t]) for t in toolset.tools}
    # Parameters must not shadow what the stub's body uses (helpers, classes).
    module_names = names.module_names() | _HELPERS
    for tool in toolset.tools.values():
        entry = names.tools[tool.name]
        entry.params = _take_all(_Allocator(module_names), tool.input_names)
        entry.fields = _take_all(_Allocator(module_names), tool.output_names)
    return names


# --------------------------------------------------------------------------- the lattice


def accepted_types(lattice: TypeLattice, expected: str) -> list[str]:
    """The types an input of type ``expected`` is annotated with: itself, then the most general
    types plancheck accepts through an implicit conversion (in declaration order)."""
    return TypeAcceptance(lattice).accepted(expected)


def _parents(lattice: TypeLattice, type_name: str) -> list[str]:
    """Direct supertypes without those another parent already implies."""
    declared = [p for p in lattice.decls[type_name].parents if p in lattice.decls]
    unique = list(dict.fromkeys(declared))
    return [p for p in unique
            if not any(o != p and lattice.is_subtype(o, p) for o in unique)]


def _linearize(name: str, bases: Mapping[str, Sequence[str]],
               memo: dict[str, list[str]]) -> list[str]:
    """Python's C3 method resolution order; raises CompileError where Python would fail."""
    if name in memo:
        return memo[name]
    sequences = [s for s in (*(_linearize(base, bases, memo) for base in bases[name]),
                             list(bases[name])) if s]
    starts = [0] * len(sequences)
    # How often each type sits in a sequence's tail: a head is free when it is in none, so a
    # step costs a pass over the sequences rather than over everything they hold.
    in_tails = Counter(t for s in sequences for t in s[1:])
    order = [name]
    while True:
        heads = [s[start] for s, start in zip(sequences, starts, strict=True) if start < len(s)]
        if not heads:
            break
        head = next((h for h in heads if not in_tails[h]), None)
        if head is None:
            raise CompileError(
                f"type `{name}` has no consistent method resolution order over "
                + ", ".join(f"`{b}`" for b in bases[name])
                + "; Python classes cannot mirror this part of the lattice")
        order.append(head)
        for i, sequence in enumerate(sequences):
            if starts[i] < len(sequence) and sequence[starts[i]] == head:
                starts[i] += 1
                if starts[i] < len(sequence):
                    in_tails[sequence[starts[i]]] -= 1
    memo[name] = order
    return order


def python_ancestors(lattice: TypeLattice, output: Param) -> frozenset[str]:
    """The lattice types the compiled class of ``output`` inherits (itself included)."""
    return TypeAcceptance(lattice).python_ancestors(output)


def encoding_gaps(toolset: Toolset) -> list[tuple[str, str, str]]:
    """``(tool, output, expected type)`` where mypy's verdict on the compiled classes would
    differ from plancheck's: mypy accepts an output exactly when one of the annotated types of
    the input is among the output class's ancestors. Empty for the built-in pool; a gap can
    only come from a polymorphic output (see the module docstring)."""
    return TypeAcceptance(toolset.lattice).encoding_gaps(toolset)


# --------------------------------------------------------------------------- writing


def _docstring(text: str, indent: str, width: int = 96) -> list[str]:
    """A docstring, each paragraph wrapped to ``width`` (single newlines are kept)."""
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip()
    lines: list[str] = []
    for line in body.splitlines() or [""]:
        lines += textwrap.wrap(line, width - len(indent) - 3, break_on_hyphens=False) or [""]
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}', *(f"{indent}{line}" if line else "" for line in lines[1:]),
            f'{indent}"""']


def _quote(text: str) -> str:
    return json.dumps(text)  # a JSON string (ASCII, escaped) is a Python string literal


def python_literal(value: JSONValue) -> str:
    """Python source for a JSON value."""
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_quote(k)}: {python_literal(v)}"
                               for k, v in value.items()) + "}"
    return repr(value)


_STUB_PRELUDE = '''
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

_V = TypeVar("_V", bound="_Value")
_IMPLEMENTATIONS: dict[str, Callable[..., Mapping[str, object]]] = {}


class _Value:
    """A value a plan passes between tools, identified by where it is stored (a path)."""

    def __init__(self, location: object) -> None:
        self.location = location

    def __fspath__(self) -> str:
        if isinstance(self.location, str):
            return self.location
        raise TypeError(f"{self!r} is not stored in a file")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, _Value) and type(other) is type(self)
                and other.location == self.location)

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self.location)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"


def implement(tool: str, function: Callable[..., Mapping[str, object]]) -> None:
    """Register the real implementation of a tool: ``function(**inputs) -> {output: value}``
    (inputs and outputs keyed as in the plan; a returned path is wrapped in the output's type)."""
    if tool not in TOOLS:
        raise KeyError(f"no tool `{tool}` in this toolset")
    _IMPLEMENTATIONS[tool] = function


def _call(tool: str, arguments: dict[str, object]) -> Mapping[str, object]:
    function = _IMPLEMENTATIONS.get(tool)
    if function is None:
        raise NotImplementedError(
            f"no implementation of `{tool}` is registered: call implement({tool!r}, function)")
    return function(**{key: value for key, value in arguments.items() if value is not None})


def _as(kind: type[_V], produced: Mapping[str, object], key: str) -> _V:
    if key not in produced:
        raise KeyError(f"the implementation returned no `{key}`")
    value = produced[key]
    if isinstance(value, kind):
        return value
    return kind(value.location if isinstance(value, _Value) else value)
'''


class _Compiler:
    def __init__(self, toolset: Toolset) -> None:
        problems = [d for d in toolset.problems() if d.severity is Severity.ERROR]
        if problems:
            raise CompileError(f"toolset `{toolset.name}` is inconsistent: "
                               + "; ".join(d.message for d in problems))
        self.toolset = toolset
        self.lattice = toolset.lattice
        self.acceptance = TypeAcceptance(self.lattice)
        self.names = _allocate(toolset, self.acceptance)
        self._check_mro()

    def _check_mro(self) -> None:
        bases: dict[str, list[str]] = {"_Value": []}
        for type_name in self.lattice.decls:
            bases[type_name] = _parents(self.lattice, type_name) or ["_Value"]
        for type_name in self.names.polymorphic:
            bases["Any " + type_name] = self._polymorphic_bases(type_name)
        memo: dict[str, list[str]] = {}
        for name in bases:
            _linearize(name, bases, memo)

    def _polymorphic_bases(self, type_name: str) -> list[str]:
        return self.acceptance.most_specific(self.lattice.descendants[type_name])

    def class_of(self, type_name: str) -> str:
        return self.names.types[type_name]

    def output_class(self, output: Param) -> str:
        if not output.polymorphic:
            return self.class_of(output.type)
        if output.type in self.names.polymorphic:
            return self.names.polymorphic[output.type]
        # One most specific subtype: it is already a subtype of every subtype of the type.
        (only,) = self._polymorphic_bases(output.type)
        return self.class_of(only)

    def annotation(self, param: Param) -> str:
        union = " | ".join(self.class_of(t) for t in self.acceptance.accepted(param.type))
        return union if param.required else f"{union} | None"

    # ---------------------------------------------------------------- the stub module

    def stub_lines(self) -> list[str]:
        lines = _STUB_PRELUDE.strip("\n").splitlines()
        lines += ["", "", "# " + "-" * 60 + " artifact types"]
        for type_name in self._types_in_order():
            lines += ["", "", *self._type_class(type_name)]
        for type_name, class_name in self.names.polymorphic.items():
            bases = ", ".join(self.class_of(t) for t in self._polymorphic_bases(type_name))
            lines += ["", "", f"class {class_name}({bases}):"]
            lines += _docstring(
                f"Any kind of `{type_name}` (an output declared `any {type_name}`): the "
                f"consumer decides which, so it is accepted wherever `{type_name}` or one of "
                "its subtypes is expected.", "    ")
        lines += ["", "", "# " + "-" * 60 + " tools"]
        for tool in self.toolset.tools.values():
            lines += ["", "", *self._outputs_class(tool), "", "", *self._tool_function(tool)]
        lines += ["", ""]
        lines.append("TOOLS: dict[str, Callable[..., object]] = {")
        lines += [f"    {_quote(tool)}: {entry.function},"
                  for tool, entry in self.names.tools.items()]
        lines.append("}")
        return lines

    def _types_in_order(self) -> list[str]:
        """Declaration order, each type after its parents."""
        placed: list[str] = []
        seen: set[str] = set()

        def place(type_name: str) -> None:
            if type_name in seen:
                return
            seen.add(type_name)
            for parent in _parents(self.lattice, type_name):
                place(parent)
            placed.append(type_name)

        for type_name in self.lattice.decls:
            place(type_name)
        return placed

    def _type_class(self, type_name: str) -> list[str]:
        decl = self.lattice.decls[type_name]
        parents = _parents(self.lattice, type_name)
        bases = ", ".join(self.class_of(p) for p in parents) or "_Value"
        doc = decl.doc or f"A `{type_name}`."
        if decl.converts_to:
            targets = ", ".join(f"`{t}`" for t in decl.converts_to)
            doc += (f"\n\nConverts implicitly to {targets}: accepted there (and by related "
                    "types) with warning PC303.")
        return [f"class {self.class_of(type_name)}({bases}):", *_docstring(doc, "    ")]

    def _outputs_class(self, tool: ToolSignature) -> list[str]:
        entry = self.names.tools[tool.name]
        lines = ["@dataclass(frozen=True)", f"class {entry.outputs}:"]
        lines += _docstring(f"What `{tool.name}` produces.", "    ")
        if not tool.outputs:
            lines.append("    pass")
        for output in tool.outputs:
            lines.append(f"    {entry.fields[output.name]}: {self.output_class(output)}")
        return lines

    def _tool_function(self, tool: ToolSignature) -> list[str]:
        entry = self.names.tools[tool.name]
        # A tool whose schema admits inputs it does not list takes them too (plancheck does
        # not report them): a `**` parameter, named apart from the listed ones.
        rest = "other"
        while rest in entry.params.values():
            rest += "_"
        if tool.inputs or tool.open_inputs:
            lines = [f"def {entry.function}(", "    *," if tool.inputs else ""]
            for param in tool.inputs:
                default = "" if param.required else " = None"
                lines.append(f"    {entry.params[param.name]}: {self.annotation(param)}"
                             f"{default},")
            if tool.open_inputs:
                lines.append(f"    **{rest}: object,")
            lines = [line for line in lines if line]
            lines.append(f") -> {entry.outputs}:")
        else:
            lines = [f"def {entry.function}() -> {entry.outputs}:"]
        doc = [tool.description or f"The tool `{tool.name}`."]
        for param in tool.inputs:
            extra = self.acceptance.accepted(param.type)[1:]
            note = (" (also " + ", ".join(f"`{t}`" for t in extra) + ", by implicit conversion)"
                    if extra else "")
            optional = "optional; " if not param.required and not (
                param.doc.lower().startswith("optional")) else ""
            doc.append(f"{param.name}: {optional}{param.doc or param.type}{note}")
        lines += _docstring("\n\n".join(doc[:1]) + ("\n\n" + "\n".join(doc[1:])
                                                    if len(doc) > 1 else ""), "    ")
        if tool.inputs or tool.open_inputs:
            lines.append(f"    produced = _call({_quote(tool.name)}, {{")
            lines += [f"        {_quote(p.name)}: {entry.params[p.name]}," for p in tool.inputs]
            if tool.open_inputs:
                lines.append(f"        **{rest},")
            lines.append("    })")
        else:
            lines.append(f"    produced = _call({_quote(tool.name)}, {{}})")
        if not tool.outputs:
            lines.append(f"    return {entry.outputs}()")
            return lines
        lines.append(f"    return {entry.outputs}(")
        for output in tool.outputs:
            head = f"        {entry.fields[output.name]}=_as("
            arguments = f"{self.output_class(output)}, produced, {_quote(output.name)}),"
            if len(head) + len(arguments) <= 100:
                lines.append(head + arguments)
            else:
                lines += [head, f"            {arguments}"]
        lines.append("    )")
        return lines

    # ---------------------------------------------------------------- plans

    def plan_lines(self, plan: Plan, function: str
                   ) -> tuple[list[str], dict[int, BindingSite], set[str]]:
        """The plan's function, what its lines stand for (by index into the returned lines),
        and the module names it uses."""
        _check_representable(plan)
        used: set[str] = set()
        sites: dict[int, BindingSite] = {}
        lines = [f"def {function}() -> dict[int, object]:"]
        title = f"Plan `{plan.name}`" if plan.name else "The plan"
        count = f"{len(plan.steps)} step{'s' if len(plan.steps) != 1 else ''}"
        lines += _docstring(f"{title} ({count}); returns each step's outputs by step number.",
                            "    ")
        producers = {s.index: s for s in plan.steps}
        for step in plan.steps:
            assert step.index is not None and step.tool is not None
            tool = self.toolset.tool(step.tool)
            sites[len(lines)] = BindingSite(function, step.index, None)
            callee = self._callee(step.tool, tool, used)
            if not step.args:
                lines.append(f"    {_step_variable(step.index)} = {callee}()")
                continue
            lines.append(f"    {_step_variable(step.index)} = {callee}(")
            for argument in step.args:
                expression = self._argument(argument.name, argument.value, tool, producers, used)
                sites[len(lines)] = BindingSite(function, step.index, argument.name)
                lines.append(f"        {self._parameter(argument.name, tool)}={expression},")
            lines.append("    )")
        results = ", ".join(f"{s.index}: {_step_variable(s.index)}" for s in plan.steps
                            if s.index is not None)
        lines.append(f"    return {{{results}}}")
        return lines, sites, used

    def _callee(self, name: str, tool: ToolSignature | None, used: set[str]) -> str:
        if tool is not None:
            function = self.names.tools[tool.name].function
            used.add(function)
            return function
        # An unknown tool: a name that is certainly undefined, so mypy reports it.
        return _unknown("unknown_tool_", name, self.names.module_names() | _MODULE_RESERVED)

    def _parameter(self, key: str, tool: ToolSignature | None) -> str:
        if tool is None:
            return _unknown("unknown_input_", key, _KEYWORDS)
        params = self.names.tools[tool.name].params
        return params.get(key) or _unknown("unknown_input_", key, {*params.values(),
                                                                   *_KEYWORDS})

    def _argument(self, key: str, value: Literal | Reference | MalformedReference,
                  tool: ToolSignature | None, producers: Mapping[int | None, Step],
                  used: set[str]) -> str:
        if isinstance(value, Reference):
            producer = producers.get(value.step)
            producer_tool = self.toolset.tool(producer.tool) if producer and producer.tool \
                else None
            if producer_tool is None:
                attribute = identifier(value.key)
            else:
                fields = self.names.tools[producer_tool.name].fields
                attribute = fields.get(value.key) or _unknown("unknown_output_", value.key,
                                                              {*fields.values(), *_KEYWORDS})
            return f"{_step_variable(value.step)}.{attribute}"
        assert isinstance(value, Literal)
        param = tool.input(key) if tool else None
        if param is None or param.type not in self.lattice.decls:
            return python_literal(value.value)
        class_name = self.class_of(param.type)
        used.add(class_name)
        return f"{class_name}({python_literal(value.value)})"


def _unknown(prefix: str, name: str, defined: set[str] | frozenset[str]) -> str:
    """An identifier for a name the toolset lacks, made distinct from every defined one so
    that mypy reports it as plancheck does."""
    text = identifier(name)
    return prefix + text if text in defined or text in _KEYWORDS else text


def _step_variable(index: int) -> str:
    return f"step_{index}" if index >= 0 else f"step_m{-index}"


def _check_representable(plan: Plan) -> None:
    seen: set[int] = set()
    for step in plan.steps:
        where = f"the step at position {step.position}"
        if step.tool is None:
            raise CompileError(f"{where} names no readable tool")
        if step.index is None:
            raise CompileError(f"{where} has no readable step number")
        if step.index in seen:
            raise CompileError(f"two steps are numbered {step.index}")
        seen.add(step.index)
        names = [a.name for a in step.args]
        if len(set(names)) != len(names):
            raise CompileError(f"step {step.index} gives an input twice")
        for argument in step.args:
            if isinstance(argument.value, MalformedReference):
                raise CompileError(f"step {step.index} input `{argument.name}` is a reference "
                                   f"that cannot be read: {argument.value.raw!r}")


# --------------------------------------------------------------------------- public API


def _header(text: str) -> list[str]:
    return _docstring(text, "")


def compile_toolset(toolset: Toolset) -> str:
    """The stub module of a toolset: artifact classes, output records and tool stubs."""
    compiler = _Compiler(toolset)
    header = _header(
        f"Typed stubs of the tools of toolset `{toolset.name}`, generated by plancheck.\n\n"
        "Register real implementations with ``implement(tool_name, function)``; until then "
        "each\nstub raises NotImplementedError.")
    return "\n".join([*header, "", *compiler.stub_lines()]) + "\n"


def compile_plans(
    plans: Sequence[Plan],
    toolset: Toolset,
    *,
    functions: Sequence[str] | None = None,
    stubs_module: str | None = None,
) -> CompiledModule:
    """One module holding a function per plan.

    With ``stubs_module`` the module imports the toolset's stubs from that module (see
    :func:`compile_toolset`), so that a batch of plans shares one stub module; without it the
    stubs are written into the module.
    """
    compiler = _Compiler(toolset)
    wanted = list(functions) if functions is not None else (
        ["run_plan"] if len(plans) == 1 else [f"plan_{i}" for i in range(len(plans))])
    if len(wanted) != len(plans):
        raise ValueError("one function name per plan")
    allocator = _Allocator(compiler.names.module_names(), module_level=True)
    names = [allocator.take(name) for name in wanted]
    body: list[str] = []
    body_sites: dict[int, BindingSite] = {}
    used: set[str] = set()
    for plan, name in zip(plans, names, strict=True):
        body += ["", ""]
        lines, sites, uses = compiler.plan_lines(plan, name)
        body_sites.update({len(body) + index: site for index, site in sites.items()})
        body += lines
        used |= uses
    named = [f"`{p.name}`" for p in plans if p.name]
    what = ("Plan " + named[0]) if len(plans) == 1 and named else (
        "Plans " + ", ".join(named) if named else ("A plan" if len(plans) == 1 else "Plans"))
    header = _header(
        f"{what} compiled by plancheck against toolset `{toolset.name}`.\n\n"
        "Each step is one call of a typed tool stub, so a type checker rejects exactly the\n"
        "bindings plancheck reports as type errors. To run a plan, register the tools'\n"
        "implementations with ``implement(tool_name, function)`` and call "
        + ("its function." if len(plans) != 1 else f"``{names[0]}()``."))
    if stubs_module is None:
        prelude = compiler.stub_lines()
    else:
        prelude = ["from __future__ import annotations"]
        if used:
            prelude += ["", f"from {stubs_module} import ("]
            prelude += [f"    {name}," for name in sorted(used)]
            prelude.append(")")
    before = [*header, "", *prelude]
    # Line numbers are 1-based: body line i is line len(before) + i + 1.
    sites = {len(before) + index + 1: site for index, site in body_sites.items()}
    return CompiledModule("\n".join([*before, *body]) + "\n", sites, tuple(names))


def compile_to_python(plan: Plan, toolset: Toolset, *, stubs_module: str | None = None) -> str:
    """A typed Python module for one plan: the function ``run_plan`` (see the module docs)."""
    return compile_plans([plan], toolset, stubs_module=stubs_module).source
