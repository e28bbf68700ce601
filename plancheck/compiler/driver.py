"""Run the checking pipeline over plan units and collect one :class:`Report` per plan.

    frontend (JSON / raw text / JSONL / DSL)  ->  lowering  ->  names  ->  dependencies
    ->  types  ->  symbolic execution  ->  (gold comparison)  ->  span resolution  ->  Report

One bad record never sinks a batch: an unexpected exception while checking a unit becomes a
``PC002`` diagnostic on that unit and the next unit is checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import Any

from plancheck.compiler.checker import check_plan_steps
from plancheck.compiler.frontends import value_units
from plancheck.compiler.lowering import lower_plan
from plancheck.compiler.sources import load_source
from plancheck.compiler.units import PlanUnit, SourceFile
from plancheck.diagnostics.codes import CODES
from plancheck.diagnostics.model import Diagnostic, Label, Severity, make
from plancheck.diagnostics.positions import LineIndex, Positions
from plancheck.diagnostics.span import Span
from plancheck.formats.sniff import is_tool_definitions
from plancheck.ir.nodes import Plan, Toolset
from plancheck.records import FrozenRecord, Record, replace


class CheckOptions(FrozenRecord):
    """What a check runs (types, symbolic execution, strict JSON) and which codes it keeps,
    at which severity."""

    __slots__ = _fields = ("strict_json", "types", "interpret", "select", "ignore",
                           "severity_overrides", "provenance")

    def __init__(self, strict_json: bool = False, types: bool = True, interpret: bool = True,
                 select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
                 severity_overrides: tuple[tuple[str, Severity], ...] = (),
                 provenance: bool = True) -> None:
        self.strict_json = strict_json
        self.types = types
        self.interpret = interpret
        self.select = select
        self.ignore = ignore
        self.severity_overrides = severity_overrides
        # Flows inferred from the tool results a transcript holds (plancheck.policy.trace).
        self.provenance = provenance

    def keeps(self, code: str, name: str) -> bool:
        from plancheck.diagnostics.codes import CODES

        def matches(patterns: tuple[str, ...]) -> bool:
            return any(code.startswith(p) or name == p for p in patterns)

        if self.select and not matches(self.select):
            return False
        if not self.select and not CODES[code].default_enabled:
            return False
        return not (self.ignore and matches(self.ignore))

    def severity_for(self, diagnostic: Diagnostic) -> Severity:
        for pattern, severity in self.severity_overrides:
            if diagnostic.code.startswith(pattern) or diagnostic.name == pattern:
                return severity
        return diagnostic.severity


_DEFAULT_OPTIONS = CheckOptions()
_DEFAULT_KEEPS_UNREACHABLE = _DEFAULT_OPTIONS.keeps("PC503", CODES["PC503"].name)


class Report(Record):
    """The outcome of checking one plan (one file, or one record of a batch). ``value`` is
    the JSON value the plan was lowered from, if any; ``positions`` resolves the spans of
    diagnostics added later; ``flows``, for a transcript that holds tool results, every flow
    into its calls, explicit and inferred (:meth:`plancheck.policy.trace.Trace.flow_records`).
    """

    __slots__ = _fields = ("file", "record", "plan", "diagnostics", "task_id", "lines", "value",
                           "record_data", "positions", "flows")

    def __init__(self, file: str, record: str | None, plan: Plan | None,
                 diagnostics: list[Diagnostic] | None = None, task_id: Any = None,
                 lines: LineIndex | None = None, value: Any = None,
                 record_data: dict[str, Any] | None = None,
                 positions: Positions | None = None,
                 flows: list[dict[str, Any]] | None = None) -> None:
        self.file = file
        self.record = record
        self.plan = plan
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        self.task_id = task_id
        self.lines = lines
        self.value = value
        self.record_data = record_data
        self.positions = positions
        self.flows = flows

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]

    @property
    def ok(self) -> bool:
        """True when the plan has no errors (warnings and notes allowed)."""
        return not self.errors

    def worst(self) -> Severity | None:
        return max((d.severity for d in self.diagnostics), default=None)

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]

    def to_feedback(self, *, max_items: int = 12, include_warnings: bool = False) -> str:
        """Compact, model-readable feedback built from the diagnostics."""
        from plancheck.diagnostics.feedback import render_feedback

        return render_feedback(self, max_items=max_items, include_warnings=include_warnings)

    def add(self, diagnostics: Iterable[Diagnostic], options: CheckOptions | None = None) -> None:
        """Add diagnostics from a later phase (gold comparison), resolving their spans."""
        positions = self.positions or Positions(self.file, self.lines or LineIndex(""))
        self.diagnostics.extend(finish(list(diagnostics), positions, self.file, self.record,
                                       options or _DEFAULT_OPTIONS))
        self.diagnostics.sort(key=_position)

    def to_dict(self) -> dict[str, Any]:
        from plancheck.diagnostics.serialize import diagnostic_to_dict

        return {
            "file": self.file,
            "record": self.record,
            "ok": self.ok,
            "diagnostics": [diagnostic_to_dict(d) for d in self.diagnostics],
            **({"flows": self.flows} if self.flows else {}),
        }


# --------------------------------------------------------------------------- phases


# A check phase run after the built-in ones. One that has an ``on_trace(plan, toolset, trace)``
# method is given the transcript's trace with provenance instead, when there is one (the
# policy check: plancheck.smt.policy_check).
PlanPhase = Callable[[Plan, Toolset], list[Diagnostic]]


def check_plan(plan: Plan, toolset: Toolset, options: CheckOptions | None = None
               ) -> list[Diagnostic]:
    """All static checks of one IR plan: names, dependencies, types, interpretation.

    Diagnostics of a code the options do not keep may be left out (``PC503``, off by default,
    is only computed when kept); :func:`finish` filters the rest."""
    options = options or _DEFAULT_OPTIONS
    # The registered rules (plancheck.checks) run a step at a time, in one pass: the same
    # diagnostics, in the same order, as the rules run one phase after the other.
    return check_plan_steps(
        plan,
        toolset,
        types=options.types,
        interpret=options.interpret,
        unreachable=options.interpret and _keeps_unreachable(options),
        kept=_kept_optional(options.select, options.ignore) if options.select else frozenset(),
    ).diagnostics()


def _keeps_unreachable(options: CheckOptions) -> bool:
    if options is _DEFAULT_OPTIONS:
        return _DEFAULT_KEEPS_UNREACHABLE
    return options.keeps("PC503", CODES["PC503"].name)


@cache
def _kept_optional(select: tuple[str, ...], ignore: tuple[str, ...]) -> frozenset[str]:
    """The codes of optional rules (off by default: run only when selected) a check keeps."""
    from plancheck.checks.registry import optional_codes

    options = CheckOptions(select=select, ignore=ignore)
    return frozenset(c for c in optional_codes() if options.keeps(c, CODES[c].name))


def _pool_instead(unit: PlanUnit, lowered: list[Diagnostic] | None) -> list[Diagnostic] | None:
    """What to say of a file that is a tool pool (checked by mistake, or met in a directory
    walk): one ``PC117``, not a ``PC105`` "expected a plan" (None: it is no pool). Asked
    before lowering (``lowered`` None) of a value that is tool definitions and nothing else."""
    if lowered is not None and (len(lowered) != 1 or lowered[0].code != "PC105"):
        return None
    from plancheck.compiler.frontends import no_plan_diagnostic
    from plancheck.corpus.pool_formats import pool_file

    found = pool_file(unit.value, unit.file)
    if found is None:
        return None
    what, help = found
    return [no_plan_diagnostic(unit.file, f"holds {what}", help)]


def check_unit(
    unit: PlanUnit,
    toolset: Toolset,
    options: CheckOptions | None = None,
    extra_phases: Iterable[PlanPhase] = (),
) -> Report:
    """Lower and check one unit; never raises."""
    options = options or CheckOptions()
    report = Report(unit.file, unit.record, None, task_id=unit.task_id,
                    lines=unit.positions.lines, record_data=unit.record_data,
                    positions=unit.positions)
    diagnostics = list(unit.diagnostics)
    try:
        plan = unit.plan
        if unit.has_value:
            report.value = unit.value
            pool = _pool_instead(unit, None) if unit.record is None and is_tool_definitions(
                unit.value) else None
            if pool is not None:  # a bare OpenAI `tools` array is no plan of 9 bad steps
                plan, lowered = None, list[Diagnostic]()
            else:
                plan, lowered = lower_plan(unit.value, unit.root or Span(unit.file, pointer=""),
                                           strict=options.strict_json)
            if plan is None and unit.record is None:
                pool = pool or _pool_instead(unit, lowered)
                if pool is not None:
                    lowered, report.value = pool, None  # no plan at all: none is counted
            diagnostics.extend(lowered)
        trace = None
        if plan is not None and type(plan) is not Plan:  # tool-call plans: bind to the pool
            plan, bound = plan.bind(toolset)
            diagnostics.extend(bound)
            if options.provenance:
                trace = _trace(unit, plan)
        report.plan = plan
        if plan is not None:
            found = check_plan(plan, toolset, options)
            if type(plan) is not Plan:  # a kind of plan with checks of its own
                found = plan.kind_checks(toolset, found, check_plan)
            diagnostics.extend(found)
            if trace is not None:
                report.flows = trace.flow_records()
                if options.types:
                    from plancheck.policy.inferred_types import inferred_type_warnings

                    diagnostics.extend(inferred_type_warnings(plan, toolset, trace))
            for phase in extra_phases:
                for_unit = getattr(phase, "for_unit", None)
                if for_unit is not None:  # a phase that reads the unit's record (its request)
                    phase = for_unit(unit)
                on_trace = getattr(phase, "on_trace", None) if trace is not None else None
                diagnostics.extend(on_trace(plan, toolset, trace) if on_trace is not None
                                   else phase(plan, toolset))
    except Exception as error:  # one bad unit must not sink the batch
        diagnostics.append(internal_error(error))
    report.diagnostics = finish(diagnostics, unit.positions, unit.file, unit.record, options)
    return report


def _trace(unit: PlanUnit, plan: Plan) -> Any:
    """The trace with provenance of a plan read from tool calls, when the document they were
    found in holds their results (None otherwise: nothing to infer from)."""
    document = unit.value
    if document is None:
        region = unit.positions.json_region
        text = unit.positions.lines.text
        if region is None or not plan.steps or plan.steps[0].span.pointer is None:
            return None
        text = text[region[0]:region[1]]
        from plancheck.policy.transcript import may_hold_results

        if not may_hold_results(text):
            return None  # the common case, settled without parsing the text again
        import json

        try:
            document = json.loads(text)
        except (ValueError, RecursionError):
            return None
    from plancheck.policy.trace import transcript_trace

    return transcript_trace(plan, document)


def check_in_memory(plan: Plan | Any, toolset: Toolset, options: CheckOptions | None = None,
                    *, name: str = "<plan>", extra_phases: Iterable[PlanPhase] = (),
                    own_pool: bool = False) -> Report:
    """Check a plan held in memory, an IR plan or a JSON value, read as the same value in a
    file is read (:func:`~plancheck.compiler.frontends.value_units`); one report (the
    reports of a value holding several plans merged). No source text: spans keep their JSON
    pointers and no line numbers."""
    if isinstance(plan, Plan):
        positions = Positions(name, LineIndex(""))
        return check_unit(PlanUnit(name, None, positions, plan=plan), toolset, options,
                          extra_phases)
    options = options or CheckOptions()
    source = SourceFile(name, value_units(plan, name, strict=options.strict_json))
    if len(source.units) == 1:  # (most values: what check_source would do, less its loop)
        unit = source.units[0]
        return check_unit(unit, toolset_for(unit, source, toolset, own_pool), options,
                          extra_phases)
    return one_report(list(check_source(source, toolset, options, extra_phases,
                                        own_pool=own_pool)), name)


def one_report(reports: list[Report], name: str) -> Report:
    """One report for one input (the reports of a multi-record input merged)."""
    plans = [r for r in reports if r.plan is not None or r.value is not None]
    if len(reports) == 1:
        return reports[0]
    merged = Report(name, None, plans[0].plan if len(plans) == 1 else None)
    for report in reports:
        merged.diagnostics.extend(report.diagnostics)
        merged.lines = merged.lines or report.lines
    return merged


def internal_error(error: BaseException) -> Diagnostic:
    import traceback  # only after a bug: not worth its import at every start-up

    where = traceback.extract_tb(error.__traceback__)[-1:] if error.__traceback__ else []
    location = f" at {where[0].filename.rsplit('/', 1)[-1]}:{where[0].lineno}" if where else ""
    return make(
        "PC002",
        f"internal error: {type(error).__name__}: {error}{location}",
        notes=["this is a bug in plancheck; the rest of the input was still checked"],
        data={"exception": type(error).__name__},
    )


def finish(
    diagnostics: list[Diagnostic],
    positions: Positions,
    file: str,
    record: str | None,
    options: CheckOptions,
) -> list[Diagnostic]:
    """Filter, re-grade, resolve spans, attach file and record names, sort by position."""
    finished = []
    for diagnostic in diagnostics:
        if not options.keeps(diagnostic.code, diagnostic.name):
            continue
        labels = tuple(
            Label(positions.resolve(label.span), label.message, label.primary)
            for label in diagnostic.labels
        )
        finished.append(
            replace(
                diagnostic,
                labels=labels,
                severity=options.severity_for(diagnostic),
                file=file,
                record=record,
            )
        )
    finished.sort(key=_position)
    return finished


def _position(diagnostic: Diagnostic) -> tuple[int, int]:
    span = diagnostic.span
    return (span.start_line, span.start_col) if span is not None else (0, 0)


# --------------------------------------------------------------------------- files


def toolset_for(unit: PlanUnit, source: SourceFile, default: Toolset,
                own_pool: bool = False) -> Toolset:
    """A DSL plan uses the toolset it names (or its file's only toolset); a record that
    carries its own tool list (BFCL) uses that; with ``own_pool`` (no pool was asked for),
    a kind of plan with a pool of its own uses it (``Plan.own_toolset``); others the
    default."""
    if own_pool and unit.plan is not None and type(unit.plan) is not Plan:
        kind_pool = unit.plan.own_toolset()
        if kind_pool is not None:
            return kind_pool
    if unit.record_data is not None:
        from plancheck.corpus.pool_formats import record_pool

        own = record_pool(unit.record_data, unit.file)
        if own is not None:
            if any(d.severity is Severity.ERROR for d in own[1]):
                unit.diagnostics.extend(own[1])  # reported on the record; default pool used
                return default
            return own[0]
    if unit.plan is None or not source.toolsets:
        return default
    wanted = unit.plan.toolset
    for toolset in source.toolsets:
        if wanted is None or toolset.name == wanted:
            return toolset
    return default


def check_source(
    source: SourceFile,
    toolset: Toolset,
    options: CheckOptions | None = None,
    extra_phases: Iterable[PlanPhase] = (),
    *,
    own_pool: bool = False,
) -> Iterator[Report]:
    """One report per plan of ``source``; ``own_pool``: see :func:`toolset_for`."""
    options = options or CheckOptions()
    lines = source.lines or LineIndex("")
    if source.diagnostics:
        positions = Positions(source.file, lines)
        yield Report(source.file, None, None,
                     finish(source.diagnostics, positions, source.file, None, options),
                     lines=lines)
    for defined in source.toolsets:
        problems = defined.problems()
        if problems:
            yield Report(source.file, f"toolset {defined.name}", None,
                         finish(problems, Positions(source.file, lines), source.file,
                                f"toolset {defined.name}", options), lines=lines)
    for unit in source.units:
        yield check_unit(unit, toolset_for(unit, source, toolset, own_pool), options,
                         extra_phases)
    if source.stream is not None:
        yield from _check_stream(source, source.stream, toolset, options, extra_phases,
                                 own_pool)


def _check_stream(source: SourceFile, stream: Iterator[PlanUnit], toolset: Toolset,
                  options: CheckOptions, extra_phases: Iterable[PlanPhase],
                  own_pool: bool) -> Iterator[Report]:
    """The units of a batch read a record at a time: a failure to read on ends the file with
    a diagnostic (as a failure to read it at all would), never the run."""
    while True:
        try:
            unit = next(stream)
        except StopIteration:
            return
        except OSError as error:
            reason = error.strerror or str(error)
            yield Report(source.file, None, None, [make(
                "PC001", f"cannot read {source.file}: {reason}",
                data={"path": source.file, "error": reason},
            ).with_context(file=source.file, record=None)])
            return
        except Exception as error:  # a frontend bug must not sink the other files
            yield Report(source.file, None, None, [internal_error(error).with_context(
                file=source.file, record=None)])
            return
        yield check_unit(unit, toolset_for(unit, source, toolset, own_pool), options,
                         extra_phases)


PLAN_SUFFIXES = (".json", ".jsonl", ".ndjson", ".wf")


def expand_paths(paths: Iterable[str]) -> Iterator[str | Diagnostic]:
    """Files as given; a directory stands for the plan files below it, in sorted order. What a
    directory walk cannot read (and a directory with no plan file) comes as a ``PC001``
    diagnostic in its place, so that nothing is skipped in silence."""
    from plancheck.fileio import is_dir, walk_files

    for path in paths:
        if path != "-" and is_dir(path):
            walk = walk_files(path, PLAN_SUFFIXES)
            yield from walk.files
            yield from walk.problems
            if not walk.files and not walk.problems:
                yield make("PC001", f"{path} holds no plan files ("
                           + ", ".join(PLAN_SUFFIXES) + "); nothing to check",
                           data={"path": path}).with_context(file=path, record=None)
        else:
            yield path


def check_paths(
    paths: Iterable[str],
    toolset: Toolset,
    options: CheckOptions | None = None,
    extra_phases: Iterable[PlanPhase] = (),
    *,
    max_size: int | None = None,
    own_pool: bool = False,
    stdin_name: str | None = None,
) -> Iterator[Report]:
    """One report per plan, as each is checked. With ``max_size`` (bytes), JSONL batches are
    read a record at a time and a larger input is refused (see :mod:`.streaming`);
    ``own_pool``: see :func:`toolset_for`; ``stdin_name``: the name standard input is read
    as (see :func:`~plancheck.compiler.sources.load_source`)."""
    options = options or CheckOptions()
    for path in expand_paths(paths):
        if isinstance(path, Diagnostic):
            yield Report(path.file or "", None, None, [path])
            continue
        try:
            source = load_source(path, strict=options.strict_json, max_size=max_size,
                                 stdin_name=stdin_name)
        except Exception as error:  # a frontend bug must not sink the other files
            yield Report(path, None, None, [internal_error(error).with_context(file=path,
                                                                              record=None)])
            continue
        yield from check_source(source, toolset, options, extra_phases,
                                own_pool=own_pool)
