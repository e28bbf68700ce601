"""Check a plan in one pass over its steps, and a JSON plan straight from its JSON where it can.

The pipeline (:func:`~plancheck.compiler.lowering.lower_plan`, then the phases: names,
dependencies, types, symbolic execution) builds the IR of every step and walks the plan once
per phase. Each phase's checks work a step at a time against facts about the other steps
(:class:`~plancheck.typecheck.names.PlanFacts`), so :func:`check_plan_steps` runs them all
in one pass over a lowered plan (what :func:`~plancheck.compiler.driver.check_plan` does).

:func:`check_json_plan` goes further for the batch scorer. Most steps it sees are clean, and
for a clean step each phase's check comes down to a few lookups: its tool is known, its input
keys are the tool's, each reference names an output of an earlier step's known tool, each
literal is a plain path of a fitting kind. It settles such a step from the JSON, doing those
lookups once and reporting what the output, dependency and type checks find with their own
tests (:func:`~plancheck.typecheck.names.outputs_differ`,
:func:`~plancheck.typecheck.deps.dependence_codes`,
:func:`~plancheck.typecheck.types.reference_codes`), and never lowers it. Every other step is
lowered and checked by the phases' own per-step checks
(:class:`~plancheck.typecheck.names.NameResolver`,
:func:`~plancheck.typecheck.deps.check_step_dependencies`,
:func:`~plancheck.typecheck.types.check_step_types`,
:class:`~plancheck.interp.checks.DataFlow`). So every finding comes from the one
implementation of each check; the fast path only recognises the steps on which the name,
reference and literal checks find nothing.

Findings keep the phases' order, and their diagnostics are built only when asked for (a
batch scorer needs only the codes). The result is what ``lower_plan`` followed by
``check_plan`` reports, diagnostic for diagnostic, and with ``form=True`` the plan's
canonical form (:func:`~plancheck.interp.canonical.form_and_completeness`);
``tests/compiler/test_checker.py`` checks both against the phases run one after the other,
on generated plans, mutated plans and random edits of their JSON.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Final

from plancheck.compiler.lowering import (
    CleanFields,
    clean_fields,
    clean_step,
    empty_plan,
    lower_step,
    step_span,
)
from plancheck.diagnostics.codes import (
    DEPENDENCIES,
    EARLY,
    NAMES,
    NUMBERING,
    REFERENCES,
    TYPES,
    UNREACHABLE,
    UNUSED,
)
from plancheck.diagnostics.findings import Findings
from plancheck.diagnostics.model import Diagnostic
from plancheck.diagnostics.span import Span
from plancheck.interp.canonical import FormWriter, literal_term
from plancheck.interp.checks import DataFlow, unreachable_steps, unused_outputs
from plancheck.ir.lattice import TypeLattice
from plancheck.ir.nodes import Param, Plan, Reference, Step, Toolset, ToolSignature
from plancheck.ir.references import mentions_generated, reference_parts
from plancheck.typecheck.deps import (
    check_step_dependencies,
    dependence_codes,
    dependence_diagnostic,
)
from plancheck.typecheck.names import (
    Link,
    NameResolver,
    PlanFacts,
    check_numbering,
    clean_producer,
    inputs_pass,
    outputs_differ,
    wrong_outputs_diagnostic,
)
from plancheck.typecheck.types import (
    check_step_types,
    literal_passes,
    reference_codes,
    reference_diagnostic,
)

__all__ = ["Checked", "check_json_plan", "check_plan_steps"]

_ROOT: Final = Span("<prediction>", pointer="")
_PREFIX: Final = "<GENERATED>-"
_NO_DEPENDENCE: Final = [-1]


class Checked:
    """What checking a plan found (in the order the pipeline reports it) and, when asked for,
    its canonical form and whether all its values were known."""

    __slots__ = ("complete", "findings", "form")

    def __init__(self, findings: Findings, form: tuple[str, ...] | None, complete: bool) -> None:
        self.findings = findings
        self.form = form
        self.complete = complete

    def codes(self) -> list[str]:
        return self.findings.codes()

    def diagnostics(self) -> list[Diagnostic]:
        return self.findings.diagnostics()


def check_json_plan(
    value: list[Any], toolset: Toolset, root: Span = _ROOT, *, form: bool = False
) -> Checked:
    """Check the plan ``value`` (a JSON array of steps) as ``lower_plan(value, root)`` and
    ``check_plan(plan, toolset)`` would, and write its canonical form when ``form``."""
    tables = _tables(toolset)
    findings = Findings()
    if not value:
        findings.report("PC112", empty_plan, root)
    clean: dict[int, CleanFields] = {}
    facts = PlanFacts(partial(_lower_clean, clean, root))
    # (position, fields of a clean step or None, the step's IR or None, its tool's entry)
    work: list[tuple[int, CleanFields | None, Step | None, _ToolEntry | None]] = []
    add = facts.add
    tool_entry = tables.tool
    for position, item in enumerate(value):
        fields = clean_fields(item) if type(item) is dict else None
        if fields is not None:
            entry = tool_entry(fields[0])
            clean[position] = fields
            add(position, fields[1], fields[5], entry.signature if entry is not None else None)
            work.append((position, fields, None, entry))
            continue
        step, reported = lower_step(item, position, root, unclean=True)
        if reported:
            findings.extend(reported)
        if step is not None:
            tool = step.tool
            add(position, step.index, step.outputs,
                toolset.tool(tool) if tool is not None else None, step)
            work.append((position, None, step, None))

    flow = DataFlow(facts)
    writer = FormWriter(toolset) if form else None
    resolver: NameResolver | None = None  # made for the first step that needs the phases
    findings.phase = NUMBERING
    check_numbering(facts, findings)
    for position, fields, step, entry in work:
        if fields is not None and entry is not None and _settle(
            position, fields, entry, facts, tables, flow, findings, writer
        ):
            continue
        if step is None:
            step = facts.step(position)
        if resolver is None:
            resolver = NameResolver(facts, toolset)
        _check_step(step, resolver, facts, toolset, flow, findings)
        if writer is not None:
            writer.run_step(step)
    findings.phase = UNUSED
    unused_outputs(facts, flow.consumed, findings,
                   fields_of_one_response=toolset.outputs_are_fields)
    if writer is None:
        return Checked(findings, None, True)
    written, complete = writer.form()
    return Checked(findings, written, complete)


def _check_step(
    step: Step,
    resolver: NameResolver,
    facts: PlanFacts,
    toolset: Toolset,
    flow: DataFlow | None,
    findings: Findings,
    *,
    types: bool = True,
) -> list[Link]:
    """Every phase's checks of one step, by the phases' own per-step checks (``flow``:
    the data flow so far, None when symbolic execution is off); its resolved references."""
    findings.phase = NAMES
    resolver.check_step(step, findings)
    findings.phase = REFERENCES
    found = resolver.resolve_references(step, findings)
    findings.phase = DEPENDENCIES
    check_step_dependencies(step, found.referenced, found.broken, found.unkeyed,
                            toolset.max_predecessors, findings)
    if types:
        signature = facts.tools.get(step.position)
        if signature is not None:
            findings.phase = TYPES
            check_step_types(step, signature, found.links, facts.tools, facts, toolset,
                             findings)
    if flow is not None:
        findings.phase = EARLY
        flow.run_step(step, toolset, findings)
    return found.links


def check_plan_steps(
    plan: Plan,
    toolset: Toolset,
    *,
    types: bool = True,
    interpret: bool = True,
    unreachable: bool = False,
) -> Findings:
    """Check a lowered plan as the phases do one after the other (names, dependencies,
    types unless ``types`` is false, symbolic execution unless ``interpret`` is false, with
    ``PC503`` when ``unreachable``), in one pass over its steps: the same findings, in the
    same order."""
    facts = PlanFacts.of_plan(plan, toolset)
    findings = Findings()
    findings.phase = NUMBERING
    check_numbering(facts, findings)
    resolver = NameResolver(facts, toolset)
    flow = DataFlow(facts) if interpret else None
    fed_by: dict[int, list[int]] = {}  # consumer position -> producer positions
    for step in plan.steps:
        links = _check_step(step, resolver, facts, toolset, flow, findings, types=types)
        if unreachable and links:
            fed_by[step.position] = [link.producer for link in links]
    if flow is not None:
        findings.phase = UNUSED
        unused_outputs(facts, flow.consumed, findings,
                       fields_of_one_response=toolset.outputs_are_fields)
        if unreachable:
            findings.phase = UNREACHABLE
            unreachable_steps(plan, facts.tools, fed_by, findings)
    return findings


def _lower_clean(clean: dict[int, CleanFields], root: Span, position: int) -> Step:
    """The IR of a step that lowered cleanly (built when a check or a diagnostic needs it)."""
    return clean_step(clean[position], position, step_span(root, position))


def _settle(
    position: int,
    fields: CleanFields,
    entry: _ToolEntry,
    facts: PlanFacts,
    tables: _Tables,
    flow: DataFlow,
    findings: Findings,
    writer: FormWriter | None,
) -> bool:
    """Check and run a clean step of a known tool straight from its JSON fields, when the
    name, reference and literal checks find nothing in it: report what the output, dependency
    and type checks find, run it (data flow, canonical form) and return True. Otherwise
    change nothing and return False: the step then goes through the phases' per-step checks.

    Every test here is the rule's own function, the one its per-step check runs first:
    :func:`inputs_pass` (input names), :func:`mentions_generated` (the lowering reads a
    string as a literal), :func:`clean_producer` (a reference resolves with no finding),
    :func:`literal_passes` (a literal draws no type finding), :func:`outputs_differ`,
    :func:`dependence_codes`, :func:`reference_codes`, and the data flow's own moves
    (:meth:`DataFlow.start`, :meth:`DataFlow.read`, :meth:`DataFlow.finish`). A reference that
    resolves cleanly reads a slot already made (its producer is an earlier step of a known
    tool, which makes all its outputs), so no reference of a settled step is read early.
    """
    tool, index, dependence, content, inputs, outputs = fields
    signature = entry.signature
    if not inputs_pass(inputs.keys(), signature):
        return False
    tools = facts.tools
    # The references, in input order: (input, step number, output key, producer's tool,
    # the type codes the reference draws); and the keys read of each step.
    reads: list[tuple[str, int, str, ToolSignature, tuple[str, ...]]] | None = None
    consumed: dict[int, set[str]] = {}
    for name, value in inputs.items():
        if type(value) is not str:
            return False
        parts = reference_parts(value) if value.startswith(_PREFIX) else None
        if parts is not None:
            number, key = parts
            producer = clean_producer(facts, position, number, key)
            if producer is None:
                return False
            producer_tool = tools[producer]
            if reads is None:
                reads = []
            reads.append((name, number, key, producer_tool,
                          entry.reads(name, producer_tool, key, tables)))
            keys = consumed.get(number)
            if keys is None:
                consumed[number] = {key}
            else:
                keys.add(key)
        elif not tables.literal_passes(value, entry.params[name]):
            return False
    # Settled: what the other checks find, in their phases, and run it.
    if outputs_differ(outputs, signature):
        findings.phase = NAMES
        findings.report("PC204", _outputs_finding, facts, position, signature)
    limit = tables.toolset.max_predecessors
    if consumed or content is not None or dependence != _NO_DEPENDENCE or (
        limit is not None and limit < 0
    ):
        found = dependence_codes(dependence, content, consumed.keys(), consumed, False, limit)
    else:
        found = ()  # reads nothing and declares so: what dependence_codes finds then
    if found:
        findings.phase = DEPENDENCIES
        for code in found:
            findings.report(code, _dependence_finding, code, facts, position, set(consumed),
                            limit)
    flow.start(index)
    if reads is not None:
        for name, number, key, producer_tool, codes in reads:
            flow.read(number, key)
            if codes:
                findings.phase = TYPES
                for code in codes:
                    findings.report(code, _reference_finding, code, facts, position, name,
                                    producer_tool, signature, tables.toolset)
    flow.finish(index, signature.output_names)
    if writer is not None:
        terms = {}
        for name, value in inputs.items():
            parts = reference_parts(value) if value.startswith(_PREFIX) else None
            terms[name] = writer.read(*parts) if parts is not None else literal_term(value)
        writer.call(tool, index, terms, outputs)
    return True


def _outputs_finding(facts: PlanFacts, position: int, tool: ToolSignature) -> Diagnostic:
    """The diagnostic of ``PC204`` on a step settled from its JSON: the step is lowered now
    and the diagnostic built as the names phase builds it."""
    return wrong_outputs_diagnostic(facts.step(position), tool)


def _dependence_finding(code: str, facts: PlanFacts, position: int, referenced: set[int],
                        limit: int | None) -> Diagnostic:
    """The diagnostic of a dependency finding on a step settled from its JSON."""
    return dependence_diagnostic(code, facts.step(position), referenced, limit)


def _reference_finding(
    code: str,
    facts: PlanFacts,
    position: int,
    name: str,
    producer_tool: ToolSignature,
    tool: ToolSignature,
    toolset: Toolset,
) -> Diagnostic:
    """The diagnostic of a type finding on a reference of a step settled from its JSON:
    the step is lowered now, and the diagnostic built as the types phase builds it."""
    step = facts.step(position)
    argument = next(a for a in step.args if a.name == name)
    reference = argument.value
    assert isinstance(reference, Reference)
    producer = facts.earlier(position, reference.step)
    assert producer is not None
    output = producer_tool.output(reference.key)
    param = tool.input(name)
    assert param is not None
    link = Link(argument, reference, producer, output)
    return reference_diagnostic(code, step, link, param, tool, producer_tool, toolset, facts)


class _ToolEntry:
    """A known tool, as the fast path looks at it: its parameters by name, and what the types
    phase says of references to outputs of other tools."""

    __slots__ = ("_reads", "params", "signature")

    def __init__(self, signature: ToolSignature) -> None:
        self.signature = signature
        self.params = {param.name: param for param in signature.inputs}
        self._reads: dict[tuple[str, str, str], tuple[ToolSignature, tuple[str, ...]]] = {}

    def reads(self, name: str, producer: ToolSignature, key: str, tables: _Tables
              ) -> tuple[str, ...]:
        """What the types phase reports on input ``name`` reading output ``key`` of a step of
        ``producer`` (:func:`reference_codes`; ``producer`` makes ``key``)."""
        memo_key = (name, producer.name, key)
        found = self._reads.get(memo_key)
        if found is None or found[0] is not producer:
            if len(self._reads) >= 1024:
                self._reads.clear()  # (keys come from plans: a misspelt one is kept too)
            output = producer.output(key)
            assert output is not None
            codes = tables.reference_codes(producer, output, self.signature, self.params[name])
            found = self._reads[memo_key] = (producer, codes)
        return found[1]


class _Tables:
    """What the fast path looks up in one toolset: its tools, and the type codes each
    (producer tool, output, consumer tool, input) reference draws. The toolset is read
    afresh where it is cheap to (a tool replaced under the same name, new flows or types
    start the tables over)."""

    __slots__ = ("_fits", "_references", "_stamp", "_tools", "lattice", "toolset")

    def __init__(self, toolset: Toolset) -> None:
        self.toolset = toolset
        self.lattice: TypeLattice = toolset.lattice
        self._stamp = _stamp(toolset)
        self._tools: dict[str, _ToolEntry] = {}
        self._references: dict[tuple[str, str, str, str], tuple[str, ...]] = {}
        self._fits: dict[tuple[str, int], bool] = {}

    def literal_passes(self, value: str, param: Param) -> bool:
        """Whether the string ``value`` passed for ``param`` is a literal (the lowering reads
        it as one) on which the type checks find nothing. Kept: batches repeat their paths."""
        key = (value, id(param))  # (the toolset keeps its parameters alive)
        found = self._fits.get(key)
        if found is None:
            if len(self._fits) >= 2048:
                self._fits.clear()
            found = self._fits[key] = not mentions_generated(value) and literal_passes(
                value, param, self.lattice
            )
        return found

    def current(self) -> bool:
        toolset = self.toolset
        return self._stamp == _stamp(toolset) and self.lattice is toolset.lattice

    def tool(self, name: str) -> _ToolEntry | None:
        signature = self.toolset.tools.get(name)
        if signature is None:
            return None
        entry = self._tools.get(name)
        if entry is None or entry.signature is not signature:
            if entry is not None:
                self._references.clear()  # a tool was replaced: its codes may differ
                self._fits.clear()
            entry = self._tools[name] = _ToolEntry(signature)
        return entry

    def reference_codes(
        self, producer: ToolSignature, output: Param, consumer: ToolSignature, param: Param
    ) -> tuple[str, ...]:
        key = (producer.name, output.name, consumer.name, param.name)
        codes = self._references.get(key)
        if codes is None:
            codes = self._references[key] = reference_codes(
                output, param, producer, consumer, self.toolset
            )
        return codes


def _stamp(toolset: Toolset) -> tuple[int, int, int, int, int | None]:
    return (id(toolset.tools), id(toolset.flows), len(toolset.flows), id(toolset.types),
            toolset.max_predecessors)


_TABLES: dict[int, _Tables] = {}  # by the toolset's id (the entry keeps the toolset alive)
_LAST: list[_Tables | None] = [None]  # the tables used last


def _tables(toolset: Toolset) -> _Tables:
    last = _LAST[0]
    if last is not None and last.toolset is toolset and last.current():
        return last
    tables = _TABLES.get(id(toolset))
    if tables is None or tables.toolset is not toolset or not tables.current():
        if len(_TABLES) >= 8:
            _TABLES.clear()
        tables = _TABLES[id(toolset)] = _Tables(toolset)
    _LAST[0] = tables
    return tables
