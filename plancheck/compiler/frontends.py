"""Read inputs (JSON plans, raw completions, JSONL batches, DSL files) into plan units.

A *unit* is one plan to check: a JSON value still to be lowered (or, for the DSL, a plan already
in IR form), the positions needed to point into its file, the diagnostics its frontend raised,
and the record it came from. Frontends never raise on bad input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from plancheck.compiler.extraction.linter import extract_plan
from plancheck.compiler.forced_formats import forced_formats
from plancheck.compiler.units import PlanUnit, SourceFile
from plancheck.diagnostics.limits import MAX_STEPS, too_many
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.positions import LineIndex, Positions
from plancheck.diagnostics.span import Span
from plancheck.fast_json import loads_or_invalid
from plancheck.fileio import (
    InputTooLarge,
    format_size,
    not_utf8,
    read_limit,
    read_text_limited,
)
from plancheck.formats.records import RECORD_PLAN_FIELDS
from plancheck.formats.sniff import (
    is_plain_plan,
    is_plan_record,
    is_plan_record_list,
    is_run_config,
    is_scored_record,
    is_task_record,
)
from plancheck.records import replace


def read_text(path: str) -> tuple[str | None, Diagnostic | None]:
    try:
        if path == "-":
            import sys

            # Bytes, decoded as a file is: text read from stdin may otherwise carry lone
            # surrogates (undecodable bytes under surrogateescape) that no output can print.
            buffer = getattr(sys.stdin, "buffer", None)
            limit = read_limit()
            if buffer is None:
                text = sys.stdin.read(limit + 1)
                if len(text) > limit:
                    raise InputTooLarge("<stdin>", limit)
                return text, None
            data = buffer.read(limit + 1)
            if len(data) > limit:
                raise InputTooLarge("<stdin>", limit)
            return data.decode("utf-8-sig"), None
        return read_text_limited(path, "utf-8-sig"), None
    except InputTooLarge as error:
        return None, make("PC006", f"{path} is larger than the {format_size(error.limit)} "
                          "limit; not read", help=["raise the limit with --max-size"],
                          data={"path": path, "limit": error.limit})
    except (OSError, UnicodeDecodeError) as error:
        reason = f"{not_utf8(error)}; plans are read as UTF-8" \
            if isinstance(error, UnicodeDecodeError) else error.strerror or str(error)
        return None, make(
            "PC001",
            f"cannot read {path}: {reason}",
            data={"path": path, "error": reason},
        )


def parse_source(text: str, file: str, *, strict: bool = False, kind: str = "text") -> SourceFile:
    lines = LineIndex(text)
    source = SourceFile(file, lines=lines)
    if kind == "jsonl":
        source.units.extend(_jsonl_units(text, file, lines, strict))
        if not source.units:
            source.units.append(empty_batch(file))
    elif kind == "dsl":
        _dsl_units(source, text, file, lines)
    elif kind == "json" and not text.strip():  # as an empty batch is: nothing to check
        source.units.append(nothing_to_check(file, "is empty (no JSON value)"))
    elif kind == "json":
        source.units.extend(_json_units(text, file, lines, strict))
    else:
        source.units.append(_text_unit(text, file, lines, strict))
    return source


def nothing_to_check(display: str, what: str, help: list[str] | None = None) -> PlanUnit:
    """The unit of an input without a plan in it (``what`` says what it holds instead): a
    ``PC117`` warning, so that it is never "All checks passed", nor an error a line."""
    unit = PlanUnit(display, None, Positions(display, LineIndex("")))
    unit.diagnostics.append(no_plan_diagnostic(display, what, help))
    return unit


def no_plan_diagnostic(display: str, what: str, help: list[str] | None = None) -> Diagnostic:
    """The ``PC117`` of :func:`nothing_to_check`."""
    return make("PC117", f"{display} {what}; nothing was checked", help=help or [],
                data={"path": display}).with_context(file=display, record=None)


def empty_batch(display: str) -> PlanUnit:
    """The unit of a JSONL batch without a record."""
    return nothing_to_check(display, "holds no records (no line that is not blank)")


# --------------------------------------------------------------------------- JSON documents


def _json_units(text: str, file: str, lines: LineIndex, strict: bool) -> list[PlanUnit]:
    from plancheck.compiler.repeated_keys import loads_noting_repeats

    try:
        value, repeated = loads_noting_repeats(text)
    except json.JSONDecodeError as error:
        if not text.lstrip().startswith(("[", "{")):
            return [_text_unit(text, file, lines, strict)]
        if error.msg == "Extra data" and "\n" in text.strip():
            # One JSON document a line in a .json file (BFCL's and TaskBench's data files).
            return list(_jsonl_units(text, file, lines, strict))
        line, col = lines.position(error.pos)
        span = Span(file, line, col, line, col + 1, start_offset=error.pos,
                    end_offset=error.pos + 1)
        unit = PlanUnit(file, None, Positions(file, lines))
        unit.diagnostics.append(
            make("PC100", f"invalid JSON: {error.msg}", primary=span, label=error.msg.lower(),
                 data={"error": error.msg, "line": line, "column": col})
        )
        return [unit]
    except (ValueError, RecursionError) as error:  # too deep, or an integer of 4,301+ digits
        unit = PlanUnit(file, None, Positions(file, lines))
        unit.diagnostics.append(make("PC100", f"invalid JSON: {_unusable(error)}",
                                     primary=Span(file, pointer="")))
        return [unit]
    start = len(text) - len(text.lstrip())
    region = (start, len(text.rstrip()))
    instead = no_plan_record(value, file)  # a run's configuration, a per-item line, a task
    if instead is not None:
        return [instead]
    return _with_repeated_keys(_value_units(value, file, lines, region, strict), repeated,
                               text, file, lines)


def value_units(value: Any, file: str, *, strict: bool = False) -> list[PlanUnit]:
    """The units of a JSON value held in memory, read exactly as the same value in a file
    (:func:`parse_source`): a plan, a record or a list of records, tool calls in any shape
    plancheck knows, a DORA document or trajectory. There is no text, so spans keep their
    JSON pointers and have no line numbers."""
    units = _value_units(value, file, LineIndex(""), None, strict)
    for unit in units:
        if unit.plan is not None and not unit.has_value:
            unit.value = value  # the document the calls were found in (their results)
    return units


def _value_units(value: Any, file: str, lines: LineIndex, region: tuple[int, int] | None,
                 strict: bool) -> list[PlanUnit]:
    if isinstance(value, list) and len(value) > MAX_STEPS:  # refused before any reader walks it
        refused = too_many("items in its top-level array", len(value), MAX_STEPS,
                           Span(file, pointer=""))
        refused = replace(refused, help=("a batch larger than that is read a record at a time "
                                         "when written as JSONL (one JSON object a line)",))
        return [PlanUnit(file, None, Positions(file, lines, json_region=region),
                         diagnostics=[refused])]
    if forced_formats()[0] is not None or not is_plain_plan(value):
        found = _calls_or_trajectories(value, file, lines, region)
        if found is not None:
            return found
    if is_plan_record_list(value):
        return [
            _record_unit(item, f"/{i}", file, lines, region, strict, default_name=f"item {i}")
            for i, item in enumerate(value)
        ]
    if is_plan_record(value):
        return [_record_unit(value, "", file, lines, region, strict, default_name=None)]
    unit = PlanUnit(file, None, Positions(file, lines, json_region=region),
                    value=value, has_value=True, root=Span(file, pointer=""))
    return [unit]


def _with_repeated_keys(units: list[PlanUnit], repeated: list[str], text: str, file: str,
                        lines: LineIndex, start: int = 0) -> list[PlanUnit]:
    """``units``, the first one also warned of the ``repeated`` keys of ``text``."""
    if repeated and units:
        from plancheck.compiler.repeated_keys import repeated_key_diagnostics

        units[0].diagnostics.extend(repeated_key_diagnostics(repeated, text, file, lines,
                                                             start))
    return units


def _calls_or_trajectories(value: Any, file: str, lines: LineIndex,
                           region: tuple[int, int] | None) -> list[PlanUnit] | None:
    """The units of a DORA document, or of tool calls in a common shape or a DORA-style
    trajectory (``None``: ``value`` is none of these)."""
    from plancheck.compiler.callshapes import call_unit  # tool calls, trajectories too
    from plancheck.dora.formats import find_trajectories

    if find_trajectories(value) is not None:  # DORA's own documents (only they load its lowering)
        from plancheck.compiler.dora_native import dora_units

        dora = dora_units(value, file, Positions(file, lines, json_region=region))
        if dora is not None:
            return dora
    from plancheck.compiler.trajectories import reread  # a DORA-style trajectory, whole

    calls = call_unit(value, file, Positions(file, lines, json_region=region), reread)
    return [calls] if calls is not None else None


def _unusable(error: BaseException) -> str:
    """Why a text json.loads refused without a position: too deep, or a huge integer."""
    if isinstance(error, RecursionError):
        return "nested too deeply"
    text = str(error)
    if "integer string conversion" in text:
        return "an integer has more than 4,300 digits (Python's limit)"
    return text


def _record_name(record: dict[str, Any], default: str | None) -> str | None:
    for key in ("id", "task_id"):
        if key in record and record[key] is not None:
            return str(record[key])
    return default


def _record_unit(
    record: Any,
    pointer: str,
    file: str,
    lines: LineIndex,
    region: tuple[int, int] | None,
    strict: bool,
    default_name: str | None,
) -> PlanUnit:
    """A plan held by a record object (JSONL line, or an element of a JSON array)."""
    if isinstance(record, list):
        from plancheck.compiler.dora_native import dora_into_unit

        unit = PlanUnit(file, default_name, Positions(file, lines, json_region=region))
        if dora_into_unit(unit, record, Span(file, pointer=pointer)):
            return unit  # a bare DORA trajectory, one a line
        return PlanUnit(file, default_name, Positions(file, lines, json_region=region),
                        value=record, has_value=True, root=Span(file, pointer=pointer))
    name = _record_name(record, default_name) if isinstance(record, dict) else default_name
    positions = Positions(file, lines, json_region=region)
    unit = PlanUnit(file, name, positions,
                    task_id=record.get("task_id") if isinstance(record, dict) else None,
                    record_data=record if isinstance(record, dict) else None)
    if not isinstance(record, dict):
        unit.diagnostics.append(make("PC116", "the record is neither a plan nor an object",
                                     primary=Span(file, pointer=pointer)))
        return unit
    for key in RECORD_PLAN_FIELDS:
        if key not in record:
            continue
        held = record[key]
        field_pointer = f"{pointer}/{key}"
        if isinstance(held, str):
            _text_into_unit(unit, held, strict, field_pointer)
        else:
            unit.value, unit.has_value = held, True
            unit.root = Span(file, pointer=field_pointer)
        return unit
    if _calls_into_unit(unit, record, Span(file, pointer=pointer)):
        return unit
    unit.diagnostics.append(
        make("PC116", "the record has none of the fields " +
             ", ".join(f"`{k}`" for k in RECORD_PLAN_FIELDS),
             primary=Span(file, pointer=pointer or ""), label="no plan in this record",
             data={"fields": sorted(record)})
    )
    return unit


def _text_into_unit(unit: PlanUnit, text: str, strict: bool, field_pointer: str) -> None:
    """A raw completion held in a JSON string: positions fall back to that string."""
    field_region = unit.positions.pointer_offsets(field_pointer)
    unit.positions = Positions(unit.file, unit.positions.lines, text_offset=None,
                               fallback=field_region)
    extraction = extract_plan(text, unit.file, strict=strict)
    if not extraction.found and not strict:
        from plancheck.compiler.callshapes import calls_in_text

        found = calls_in_text(text)  # tool calls, where no DisasterBench plan was found
        if found is not None and _calls_into_unit(unit, found[0],
                                                  Span(unit.file, pointer=None)):
            return
    unit.diagnostics.extend(extraction.diagnostics)
    if extraction.found:
        unit.value, unit.has_value = extraction.value, True
        unit.root = Span(unit.file, pointer=None)
        _calls_in_text(unit)


# --------------------------------------------------------------------------- raw text


def _text_unit(text: str, file: str, lines: LineIndex, strict: bool) -> PlanUnit:
    extraction = extract_plan(text, file, strict=strict)
    positions = Positions(
        file,
        lines,
        json_region=(extraction.start, extraction.end) if extraction.verbatim else None,
        fallback=(extraction.start, extraction.end) if extraction.found else None,
    )
    unit = PlanUnit(file, None, positions, diagnostics=list(extraction.diagnostics))
    if extraction.found:
        unit.value, unit.has_value = extraction.value, True
        unit.root = Span(file, pointer="")
        _calls_in_text(unit)
        if extraction.verbatim:  # JSON as written (damaged JSON was repaired: not as written)
            from plancheck.compiler.repeated_keys import repeated_keys

            written = text[extraction.start:extraction.end]
            _with_repeated_keys([unit], repeated_keys(written), written, file, lines,
                                extraction.start)
    elif not strict:
        from plancheck.compiler.callshapes import calls_in_text

        found = calls_in_text(text)  # tool calls, where no DisasterBench plan was found
        if found is not None:
            value, start, end, verbatim = found
            calls = PlanUnit(file, None, Positions(
                file, lines, json_region=(start, end) if verbatim else None,
                fallback=(start, end)))
            root = Span(file, pointer="" if verbatim else None)
            if _calls_into_unit(calls, value, root):
                if not verbatim:
                    line, col = lines.position(start)
                    end_line, end_col = lines.position(end)
                    calls.diagnostics.insert(0, make(
                        "PC102", "the tool calls are not valid JSON; read as a Python literal "
                        "or repaired", primary=Span(file, line, col, end_line, end_col,
                                                   start_offset=start, end_offset=end),
                        label="read from here",
                        notes=["positions inside this region are approximate"]))
                return calls
    if not extraction.found and text.lstrip().startswith(("[", "{")):
        _name_deep_json(unit, text, file)
    return unit


def _name_deep_json(unit: PlanUnit, text: str, file: str) -> None:
    """JSON nested too deeply to read is "nested too deeply", on standard input as in a
    ``.json`` file, not "no JSON plan was found" (only asked when nothing was found)."""
    try:
        json.loads(text)
    except RecursionError as error:
        unit.diagnostics[:] = [d for d in unit.diagnostics if d.code != "PC101"]
        unit.diagnostics.insert(0, make("PC100", f"invalid JSON: {_unusable(error)}",
                                        primary=Span(file, pointer="")))
    except ValueError:
        pass


def _calls_into_unit(unit: PlanUnit, value: Any, root: Span) -> bool:
    """Fill ``unit`` with the plan of ``value`` (a JSONL record, or the JSON found in a
    completion): DORA's run record or steps, else its tool calls; False when it holds none."""
    from plancheck.compiler.callshapes import calls_into_unit
    from plancheck.compiler.dora_native import dora_into_unit

    if forced_formats() == (None, None) and dora_into_unit(unit, value, root):
        return True  # a DORA run record, or DORA steps in a completion
    return calls_into_unit(unit, value, root)


def _calls_in_text(unit: PlanUnit) -> None:
    """A completion whose JSON is a list of tool calls rather than a plan."""
    if _calls_into_unit(unit, unit.value, unit.root or Span(unit.file, pointer="")):
        unit.value, unit.has_value = None, False


# --------------------------------------------------------------------------- JSONL


def _jsonl_units(text: str, file: str, lines: LineIndex, strict: bool) -> Iterator[PlanUnit]:
    offset = 0
    first = True
    for number, line in enumerate(text.split("\n"), start=1):
        start = offset
        offset += len(line) + 1
        if line.strip():
            instead = not_plans(line, file) if first else None
            if instead is not None:
                yield instead
                return
            first = False
            yield jsonl_unit(line, number, start, file, lines, strict)


# Words in a line without which it is none of the records below (checked before parsing it).
_NOT_PLAN_WORDS = ('"diagnostics"', '"question_id"', '"question"', '"api_name"',
                   '"inputSchema"', '"input_schema"', '"parameters"')


def not_plans(line: str, display: str) -> PlanUnit | None:
    """The one unit of a JSONL file whose first record (``line``) shows that it holds no
    plans (see :func:`no_plan_record`); None for anything else, which is checked record by
    record."""
    if not any(word in line for word in _NOT_PLAN_WORDS):
        return None  # (the common case, settled without parsing)
    return no_plan_record(loads_or_invalid(line), display, lines=True)


def no_plan_record(record: Any, display: str, *, lines: bool = False) -> PlanUnit | None:
    """The unit saying what ``record`` holds instead of a plan (``lines``: it is the first
    of a JSONL file, one such record a line): a per-item line of ``plancheck score``, a
    benchmark's task (BFCL's question files: a question and the tools for it), or a tool
    definition of a pool written one a line (Seal-Tools' ``tool.jsonl``); None when it may
    hold something to check."""
    if not isinstance(record, dict) or any(key in record for key in RECORD_PLAN_FIELDS):
        return None
    from plancheck.corpus.pool_formats import pool_kind

    if not lines and is_run_config(record):
        return nothing_to_check(
            display, "holds the configuration `plancheck plan` writes for a run, not a plan",
            ["its predictions are in predictions.jsonl beside it"])
    if is_scored_record(record):
        return nothing_to_check(
            display, "holds the per-item lines `plancheck score` writes (scores, not plans)",
            ["`plancheck report` reads them: `plancheck report RESULTS_DIR`"])
    if is_task_record(record):
        return nothing_to_check(
            display, "holds tasks (a question and the tools for it a line), not plans" if lines
            else "holds a task (a question and the tools for it), not a plan",
            ["a record with the tools (`function`, `tools`) and an answer (`ground_truth`, "
             "`tool_calls`, ...) is checked against its own tools"])
    if lines and "task_id" not in record and pool_kind([record]) is not None:
        return nothing_to_check(
            display, "holds tool definitions, one a line (a tool pool), not plans",
            [f"lint the pool with `plancheck toolset lint {display}`; check plans against "
             f"it with `plancheck check --tools {display} PLAN`"])
    return None


def jsonl_unit(line: str, number: int, start: int, file: str, lines: LineIndex,
               strict: bool) -> PlanUnit:
    """The unit of one non-blank JSONL line, which starts at offset ``start`` of ``lines``."""
    from plancheck.compiler.repeated_keys import loads_noting_repeats

    region = (start, start + len(line.rstrip("\r")))
    try:
        record, repeated = loads_noting_repeats(line)
    except (ValueError, RecursionError) as error:  # one bad line spoils only itself
        unit = PlanUnit(file, f"line {number}", Positions(file, lines, fallback=region))
        pos = getattr(error, "pos", 0) or 0
        line_no, col = lines.position(start + pos)
        unit.diagnostics.append(
            make("PC116", "the record is not valid JSON: "
                 + (getattr(error, "msg", None) or _unusable(error)),
                 primary=Span(file, line_no, col, line_no, col + 1),
                 label="invalid JSON", data={"line": number})
        )
        return unit
    return _with_repeated_keys(
        [_record_unit(record, "", file, lines, region, strict, default_name=f"line {number}")],
        repeated, line, file, lines, start)[0]


# --------------------------------------------------------------------------- DSL


def _dsl_units(source: SourceFile, text: str, file: str, lines: LineIndex) -> None:
    from plancheck.dsl.parser import parse_dsl

    module = parse_dsl(text, file)
    source.toolsets.extend(module.toolsets)
    positions = Positions(file, lines)
    plan_diagnostics: dict[int, list[Diagnostic]] = {}
    for diagnostic in module.diagnostics:
        span = diagnostic.span
        owner = next(
            (i for i, plan in enumerate(module.plans)
             if span is not None and plan.span.start_line <= span.start_line <= plan.span.end_line),
            None,
        )
        if owner is None:
            source.diagnostics.append(diagnostic)
        else:
            plan_diagnostics.setdefault(owner, []).append(diagnostic)
    for i, plan in enumerate(module.plans):
        name = plan.name or (f"plan {i}" if len(module.plans) > 1 else None)
        source.units.append(PlanUnit(file, name, positions, plan=plan,
                                     diagnostics=plan_diagnostics.get(i, [])))
    if not module.plans and not module.diagnostics:  # nothing to check must not pass
        names = ", ".join(f"`{t.name}`" for t in module.toolsets)
        source.diagnostics.append(make(
            "PC117",
            f"{file} declares no plan, only the toolset {names}; nothing was checked"
            if names else f"{file} declares no plan; nothing was checked",
            help=[f"lint a toolset with `plancheck toolset lint {file}`; check plans against "
                  f"it with `plancheck check --tools {file} PLAN`"] if names else [],
            data={"path": file},
        ).with_context(file=file, record=None))
