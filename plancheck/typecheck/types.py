"""Type checking of bindings against the toolset's nominal type lattice.

* A reference whose producing output is not a subtype of the consuming input (and does not
  convert to it) is an error, ``PC301``, labelled at the consuming argument with a secondary
  label at the producing step. A reference nested in a literal argument is typed by the
  place it fills, when the input's JSON Schema describes it.
* A reference accepted only through an implicit conversion is a warning, ``PC303``.
* A literal path whose extension is not a format of the expected type is a warning, ``PC302``
  (a path is weak evidence).
* A well-typed reference along a tool pair the declared flows do not list is a warning,
  ``PC304`` (the release's own gold plans use such pairs); types stay authoritative.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from functools import lru_cache

from plancheck.diagnostics.findings import Findings
from plancheck.diagnostics.model import Diagnostic, Suggestion, make
from plancheck.diagnostics.span import escape_pointer
from plancheck.ir.lattice import Compat, TypeLattice
from plancheck.ir.nodes import Argument, Literal, Param, Reference, Step, Toolset, ToolSignature
from plancheck.ir.output_paths import input_place
from plancheck.ir.references import respell
from plancheck.ir.schema_types import VALUE, declared_kind, json_shown, with_holes
from plancheck.typecheck.names import Link, PlanFacts


def literal_extension(value: object) -> str | None:
    """The lower-case extension of a path-like literal (``None`` if it has none)."""
    if not isinstance(value, str):
        return None
    return _extension_of(value)


@lru_cache(maxsize=4096)
def _extension_of(value: str) -> str | None:
    base = posixpath.basename(value.strip().replace("\\", "/"))
    if "." not in base.strip("."):
        return None
    extension = "." + base.rsplit(".", 1)[1].lower()
    return extension if 1 < len(extension) <= 8 and extension[1:].isalnum() else None


def check_step_types(
    step: Step,
    tool: ToolSignature,
    links: Iterable[Link],
    tools: Mapping[int, ToolSignature],
    facts: PlanFacts,
    toolset: Toolset,
    findings: Findings,
) -> None:
    """The type checks of one step whose tool is known, given its resolved references
    (``tools``: the known tools of the plan's steps, by position)."""
    lattice = toolset.lattice
    by_name: dict[str, Link] = {}
    nested: list[Link] = []
    for resolved in links:
        if resolved.reference is resolved.argument.value:
            by_name[resolved.argument.name] = resolved
        else:
            nested.append(resolved)
    if nested:
        _check_nested(step, tool, nested, tools, facts, toolset, findings)
    if tool.input_schema is not None:
        check_published_schema(step, tool, lattice, findings)
    for argument in step.args:
        param = tool.input(argument.name)
        if param is None:
            continue
        link = by_name.get(argument.name)
        if link is not None:
            output = link.output
            producer_tool = tools.get(link.producer)
            if output is None or producer_tool is None:
                continue
            for code in reference_codes(output, param, producer_tool, tool, toolset):
                findings.report(code, reference_diagnostic, code, step, link, param, tool,
                                producer_tool, toolset, facts)
        elif isinstance(argument.value, Literal):
            literal = argument.value
            if argument.nested:
                literal = Literal(with_holes(literal.value, argument.nested), literal.span)
            elif literal_passes(literal.value, param, lattice):
                continue
            found = _check_literal(step, argument, literal, param, tool, lattice)
            if found is not None:
                findings.add(found)


def _check_nested(
    step: Step,
    tool: ToolSignature,
    nested: list[Link],
    tools: Mapping[int, ToolSignature],
    facts: PlanFacts,
    toolset: Toolset,
    findings: Findings,
) -> None:
    """References nested in a literal argument, typed by the place they fill: the input's JSON
    Schema at that place (a place it does not describe takes anything; the literal around
    the references is checked by itself, each place taken to hold whatever it should)."""
    for link in nested:
        param = tool.input(link.argument.name)
        output = link.output
        producer_tool = tools.get(link.producer)
        if param is None or output is None or producer_tool is None:
            continue
        pointer = next((at for at, reference in link.argument.nested
                        if reference is link.reference), "")
        place = input_place(param, pointer)
        if place is None:
            continue
        for code in reference_codes(output, place, producer_tool, tool, toolset):
            findings.report(code, reference_diagnostic, code, step, link, place, tool,
                            producer_tool, toolset, facts)


def reference_codes(
    output: Param, param: Param, producer: ToolSignature, consumer: ToolSignature,
    toolset: Toolset,
) -> tuple[str, ...]:
    """What a reference draws when it passes ``output`` of ``producer`` as the input ``param``
    of ``consumer``: nothing when it is well typed along a declared flow (or the pool declares
    no flows); ``PC301`` when the types are incompatible (nothing else is said then);
    ``PC303`` when only an implicit conversion makes it fit; ``PC304`` when the declared
    flows lack the pair of tools."""
    compat = _compat(toolset.lattice, output, param.type)
    if compat is Compat.INCOMPATIBLE:
        return ("PC301",)
    undeclared = toolset.has_flows() and (producer.name, consumer.name) not in toolset.flows
    if compat is Compat.CONVERTIBLE:
        return ("PC303", "PC304") if undeclared else ("PC303",)
    return ("PC304",) if undeclared else ()


def literal_passes(value: object, param: Param, lattice: TypeLattice) -> bool:
    """Whether a literal certainly draws no diagnostic from the type checks: a string
    for a parameter without a JSON Schema, with no extension or one the type may have. (The
    common case, settled without building anything.)"""
    if type(value) is not str or param.schema_text is not None:
        return False
    if declared_kind(param.type, lattice.decls) not in (None, "string"):
        return False  # a string where another JSON kind is wanted
    return plain_path_fits(value, param.type, lattice)


def plain_path_fits(value: str, expected: str, lattice: TypeLattice) -> bool:
    """Whether a string literal passed where ``expected`` is wanted (a parameter without a
    JSON Schema) certainly draws no diagnostic: it has no extension, or one the type may
    have."""
    extension = _extension_of(value)
    return extension is None or lattice.literal_fits(extension, expected) is not False


def _compat(lattice: TypeLattice, output: Param, expected: str) -> Compat:
    """``lattice.compat``, remembered: a pool has few (type, type) pairs and plans use the
    same ones over and over."""
    if output.type == VALUE:
        # Untyped (no schema, or one that says nothing plancheck can check): gradual typing,
        # so it fits anywhere; the value is checked when it exists, not here.
        return Compat.OK
    key = (output.type, output.polymorphic, expected)
    memo = _COMPAT_MEMO.get(id(lattice))
    if memo is None or memo[0] is not lattice:
        if len(_COMPAT_MEMO) >= 8:
            _COMPAT_MEMO.clear()
        memo = (lattice, {})
        _COMPAT_MEMO[id(lattice)] = memo  # the lattice is kept, so its id is not reused
    found = memo[1].get(key)
    if found is None:
        found = memo[1][key] = lattice.compat(output, expected)
    return found


_COMPAT_MEMO: dict[int, tuple[TypeLattice, dict[tuple[str, bool, str], Compat]]] = {}


def reference_diagnostic(
    code: str,
    consumer: Step,
    link: Link,
    param: Param,
    tool: ToolSignature,
    producer_tool: ToolSignature,
    toolset: Toolset,
    facts: PlanFacts,
) -> Diagnostic:
    lattice = toolset.lattice
    output = link.output
    assert output is not None
    producer = facts.step(link.producer)
    reference = link.reference
    data = {
        "step": consumer.index,
        "position": consumer.position,
        "tool": tool.name,
        "key": param.name,
        "expected": param.type,
        "actual": output.type,
        "producer_step": producer.index,
        "producer_tool": producer_tool.name,
        "producer_key": output.name,
    }
    producer_label = (
        producer.tool_span or producer.span,
        f"step {producer.index} `{producer_tool.name}` produces `{output.name}`: `{output.type}`",
    )
    if code == "PC301":
        return make(
            "PC301",
            f"step {consumer.index} `{tool.name}.{param.name}` expects "
            f"{lattice.describe(param.type)}, but step {producer.index} produces "
            f"`{output.name}`, {lattice.describe(output.type)}",
            primary=reference.span,
            label=f"expected `{param.type}`, found `{output.type}`",
            secondary=[producer_label],
            help=_bridging_help(output, param, producer_tool, tool, toolset)
            + _alternatives_help(consumer, param, facts, lattice, reference),
            data=data,
            suggestions=_bridging_suggestions(output, param, toolset),
        )
    if code == "PC303":
        return make(
            "PC303",
            f"step {consumer.index} `{tool.name}.{param.name}` expects `{param.type}`; step "
            f"{producer.index} produces `{output.name}` of type `{output.type}`, which is only "
            f"implicitly convertible",
            primary=reference.span,
            label=f"`{output.type}` used as `{param.type}`",
            secondary=[producer_label],
            notes=[_conversion_note(output.type, lattice)],
            data=data,
        )
    assert code == "PC304"
    return make(
        "PC304",
        f"the declared workflow has no flow from `{producer_tool.name}` to `{tool.name}`",
        primary=reference.span,
        label="undeclared flow",
        secondary=[producer_label],
        notes=[_declared_consumers_note(producer_tool.name, toolset)],
        data={**data, "flow": [producer_tool.name, tool.name]},
    )


def _check_literal(
    step: Step,
    argument: Argument,
    literal: Literal,
    param: Param,
    tool: ToolSignature,
    lattice: TypeLattice,
) -> Diagnostic | None:
    value = literal.value
    if tool.input_schema is not None and not isinstance(value, str) and \
            not _typed_path(param, lattice):
        return None  # the published schema decided (check_published_schema)
    if param.schema_text is not None and tool.input_schema is None:
        from plancheck.ir.schema_types import schema_literal_diagnostic

        found = schema_literal_diagnostic(step, literal, param, tool)
        if found is not None or not isinstance(value, str):
            return found  # the schema decides; a string may still be a path of the wrong kind
    kind = declared_kind(param.type, lattice.decls)
    if kind is not None and param.schema_text is not None:
        return None  # the schema settled the JSON kind (`["array", "string"]` takes a string)
    if kind is not None:  # a JSON value kind (a DSL export of a schema pool): check the kind
        from plancheck.ir.schema_types import schema_problem

        problem = schema_problem(value, {"type": kind}, f"`{param.name}`")
        if problem is None:
            return None
        return make(
            "PC302",
            f"step {step.index} `{tool.name}`: {problem}",
            primary=literal.span,
            label=f"not {lattice.describe(param.type)}",
            data={"step": step.index, "position": step.position, "tool": tool.name,
                  "key": param.name, "expected": param.type, "actual": value},
        )
    if not isinstance(value, str):
        shown = json_shown(value)
        return make(
            "PC302",
            f"step {step.index} `{tool.name}.{param.name}` expects a path to "
            f"{lattice.describe(param.type)}, found {shown}",
            primary=literal.span,
            label="not a path",
            data={"step": step.index, "position": step.position, "tool": tool.name,
                  "key": param.name, "expected": param.type, "actual": shown},
        )
    problem = extension_problem(value, param.type, lattice)
    if problem is None:
        return None
    extension = literal_extension(value)
    inferred = lattice.types_for_extension(extension or "")
    allowed = sorted(lattice.formats.get(param.type, frozenset()))
    return make(
        "PC302",
        f"step {step.index} `{tool.name}.{param.name}` {problem}",
        primary=literal.span,
        label=f"a `{extension}` file",
        notes=[f"`{param.type}` is usually stored as " + ", ".join(allowed)],
        data={"step": step.index, "position": step.position, "tool": tool.name,
              "key": param.name, "expected": param.type, "extension": extension,
              "inferred": inferred},
    )


def extension_problem(value: str, expected: str, lattice: TypeLattice) -> str | None:
    """``expects an image, but `a.txt` is a `.txt` file`` when a path's extension is not a
    format of the ``expected`` type (plancheck's own check: the guard makes it too)."""
    extension = literal_extension(value)
    if extension is None:
        return None
    fits = lattice.literal_fits(extension, expected)
    if fits is None or fits:
        return None
    return (f"expects {lattice.describe(expected)}, but `{posixpath.basename(value)}` is a "
            f"`{extension}` file")


def _typed_path(param: Param, lattice: TypeLattice) -> bool:
    """Whether ``param`` takes a path to one of the pool's own types (``HighResImage``), not
    a JSON kind: a value that is no string is then said as the built-in pool says it."""
    return param.type != VALUE and declared_kind(param.type, lattice.decls) is None


def check_published_schema(step: Step, tool: ToolSignature, lattice: TypeLattice,
                           findings: Findings) -> None:
    """The verdict of the schema ``tool``'s pool publishes on the step's arguments, whole
    (:func:`~plancheck.ir.schema_verdict.argument_problems`, as the guard gives it); a
    reference's place is not judged. What the name checks report from the same schema (an
    undeclared input, a top-level required one) is left to them."""
    from plancheck.ir.schema_validation import SchemaUndecided
    from plancheck.ir.schema_verdict import argument_problems

    instance: dict[str, object] = {}
    holes: list[str] = []
    for argument in step.args:
        pointer = "/" + escape_pointer(argument.name)
        if isinstance(argument.value, Literal):
            instance[argument.name] = argument.value.value
            holes.extend(pointer + at for at, _ in argument.nested)
        else:  # a reference: its value is not known here
            instance[argument.name] = None
            holes.append(pointer)
    try:
        problems = argument_problems(instance, tool, tuple(holes))
    except SchemaUndecided:
        return  # an invalid schema is PC711 (toolset lint); a value JSON cannot hold, PC100
    by_name = {a.name: a for a in step.args}
    for problem in problems:
        if (problem.code == "PC202" and not tool.open_inputs) or \
                (problem.code == "PC203" and problem.key in tool.required_input_names):
            continue  # the name checks report it (typecheck.names)
        owner = by_name.get(problem.key)
        param = tool.input(problem.key)
        if problem.keyword == "type" and problem.pointer.count("/") == 1 and \
                param is not None and _typed_path(param, lattice):
            continue  # a path to a pool type: _check_literal says it as the DSL pool does
        span = step.tool_span or step.span if owner is None else (
            owner.value.span if isinstance(owner.value, Literal) else owner.span)
        findings.add(make(
            problem.code, f"step {step.index} `{tool.name}`: {problem.message}", primary=span,
            label="does not fit the tool's schema", help=problem.help,
            data={"step": step.index, "position": step.position, "tool": tool.name,
                  "key": problem.key, "pointer": problem.pointer, "actual": problem.actual},
            severity=problem.severity))


def _bridging_tools(output: Param, param: Param, toolset: Toolset) -> list[ToolSignature]:
    """Tools that take what was produced and make what is expected (a missing step): between
    the pool's own types only. Of JSON value kinds (a schema pool's `List`, `String`) a tool
    that takes an array and returns a string converts nothing (`delete_entities` is no way
    from a list of entities to a name)."""
    lattice = toolset.lattice
    if declared_kind(output.type, lattice.decls) is not None or \
            declared_kind(param.type, lattice.decls) is not None:
        return []
    found = []
    for candidate in toolset.tools.values():
        takes = any(lattice.compat(output, p.type) is Compat.OK for p in candidate.inputs)
        makes = any(lattice.compat(o, param.type) is Compat.OK for o in candidate.outputs)
        if takes and makes:
            found.append(candidate)
    return found


def _bridging_help(
    output: Param, param: Param, producer: ToolSignature, consumer: ToolSignature,
    toolset: Toolset,
) -> list[str]:
    bridges = _bridging_tools(output, param, toolset)
    if not bridges:
        return []
    names = ", ".join(f"`{t.name}`" for t in bridges[:3])
    return [f"a step calling {names} between `{producer.name}` and `{consumer.name}` "
            f"would convert `{output.type}` into `{param.type}`"]


def _bridging_suggestions(output: Param, param: Param, toolset: Toolset) -> list[Suggestion]:
    bridges = _bridging_tools(output, param, toolset)
    return [Suggestion(f"insert a `{t.name}` step", (), "maybe-incorrect") for t in bridges[:1]]


def _alternatives_help(
    consumer: Step, param: Param, facts: PlanFacts, lattice: TypeLattice, model: Reference
) -> list[str]:
    """Earlier outputs that would fit (a mis-bound reference), written as ``model`` is."""
    options = []
    for position, index, output in _fitting_outputs(facts, lattice, param.type):
        if position < consumer.position:
            options.append(f"`{respell(model, index, output)}`")
            if len(options) == 4:
                break
    if not options:
        return []
    return ["outputs of earlier steps that fit: " + ", ".join(options[:4])]


def _fitting_outputs(facts: PlanFacts, lattice: TypeLattice, wanted: str
                     ) -> list[tuple[int, int, str]]:
    """Every output of a numbered step that fits ``wanted``, as (position, step number,
    output), in plan order: found once per type and plan (a plan of thousands of mis-bound
    steps asked for it once per step, and scanned every earlier step each time)."""
    cache: dict[tuple[str, int, int], list[tuple[int, int, str]]] = \
        facts.memo.setdefault("fitting", {})
    key = (wanted, id(lattice), len(facts.order))
    found = cache.get(key)
    if found is None:
        found = cache[key] = []
        for position in facts.order:
            index = facts.indices[position]
            tool = facts.tools.get(position)
            if index is None or tool is None:
                continue
            for output in tool.outputs:
                if lattice.compat(output, wanted) is Compat.OK:
                    found.append((position, index, output.name))
    return found


def _conversion_note(actual: str, lattice: TypeLattice) -> str:
    decl = lattice.decls.get(actual)
    owner = next(
        (a for a in lattice.chain(actual) if lattice.decls[a].converts_to), actual
    )
    targets = ", ".join(f"`{t}`" for t in lattice.decls[owner].converts_to)
    why = lattice.decls[owner].doc if decl else ""
    return f"`{owner}` converts to {targets}: {why}".rstrip(": ")


def _declared_consumers_note(producer: str, toolset: Toolset) -> str:
    targets = sorted(t for s, t in toolset.flows if s == producer)
    if not targets:
        return f"the declared workflow has no flow out of `{producer}`"
    return f"`{producer}` flows to " + ", ".join(f"`{t}`" for t in targets)
