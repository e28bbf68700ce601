"""``plancheck check``: lint plans.

Settings come from, in increasing priority: defaults, the configuration file
(``[tool.plancheck]`` of the nearest pyproject.toml, or plancheck.toml; see
:mod:`plancheck.config`), and the command line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
from plancheck.cli.common import (
    forced_syntax,
    load_policies_or_exit,
    load_toolset_or_exit,
    once_each,
    overwrites_an_input,
    parse_codes,
    policy_option,
    print_plain,
    reference_syntax_option,
    stdin_filename_option,
    stdin_name,
    toolset_option,
)
from plancheck.compiler.driver import PLAN_SUFFIXES, CheckOptions, PlanPhase, check_paths
from plancheck.compiler.profiles import profile_overrides
from plancheck.diagnostics.model import Diagnostic, Severity, make
from plancheck.records import replace
from plancheck.render.registry import FORMATS, format_choices

if TYPE_CHECKING:
    from plancheck.config import Config, ConfigError
    from plancheck.fileio import AtomicWriter
    from plancheck.ir.nodes import Toolset


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="plan files (.json, .jsonl or .ndjson batches, .txt completions, "
                        ".wf DSL), directories (for the "
                        + ", ".join(PLAN_SUFFIXES) + " files below them), or - for standard "
                        "input")
    toolset_option(parser)
    policy_option(parser)
    stdin_filename_option(parser)
    parser.add_argument("--no-provenance", action="store_true",
                        help="infer no flows from the tool results a transcript holds (an "
                        "argument that copies an earlier result is then no flow for policies, "
                        "and no PC306)")
    parser.add_argument("--prefix", action="store_true",
                        help="the plans are prefixes of trajectories still running: a "
                        "`require A` that can still be met is not a violation")
    parser.add_argument("--format", choices=format_choices(), default=None,
                        help="output format: " + "; ".join(
                            f"{name}: {description}" for name, (_, description)
                            in FORMATS.items()) + " (default: text)")
    parser.add_argument("--output", "-o", metavar="FILE", default=None,
                        help="write the report to FILE (replaced atomically) instead of "
                        "standard output (- for standard output)")
    parser.add_argument("--statistics", action="store_true",
                        help="print how many diagnostics of each code were found instead of "
                        "the diagnostics (with --output, in addition to the report)")
    parser.add_argument("--select", default=None, metavar="CODES",
                        help="comma-separated codes, prefixes or names to report (default: all)")
    parser.add_argument("--ignore", default=None, metavar="CODES",
                        help="comma-separated codes, prefixes or names not to report")
    parser.add_argument("--fail-level", choices=("error", "warning", "info"), default=None,
                        help="lowest severity that makes the exit code 1 (default: error)")
    parser.add_argument("--strict-json", action=argparse.BooleanOptionalAction, default=None,
                        help="do not repair damaged JSON or read alias keys")
    parser.add_argument("--no-types", action="store_true", help="skip type checking")
    parser.add_argument("--strict-types", action="store_true",
                        help="make numbers written as numeric strings (PC305) errors")
    parser.add_argument("--profile", choices=("default", "guard", "strict"), default="default",
                        help="which codes block (docs/guard.md): guard gives plancheck.Guard's "
                        "verdict on each call")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="print only the summary line (text and concise formats)")
    parser.add_argument("--config", metavar="FILE", default=None,
                        help="read settings from FILE (a plancheck.toml, or a pyproject.toml "
                        "with [tool.plancheck]) instead of the nearest one")
    parser.add_argument("--no-config", action="store_true",
                        help="ignore configuration files")
    parser.add_argument("--explain", action="store_true",
                        help="explain inconsistent dependency constraints with a minimal "
                        "conflicting set (Z3)")
    from plancheck.formats.plugins import Choices

    # The shapes' and syntaxes' registries are read only when such an option is given (or the
    # help shown): checking a plain plan loads neither (tests/cli/test_startup.py).
    parser.add_argument("--call-format", choices=Choices(("auto",), _call_formats),
                        default="auto", metavar="SHAPE",
                        help="read tool calls in this shape only: %(choices)s (default: "
                        "auto, detected per input)")
    reference_syntax_option(parser)
    parser.add_argument("--timeout-ms", type=int, default=None, metavar="N",
                        help="time limit of the solver (--explain, --policy) per plan, in "
                        "milliseconds (default: 2000); a policy check past it is a PC814 error")
    parser.add_argument("--max-size", metavar="SIZE", default=None,
                        help="refuse (PC006) a plan file, completion or JSONL record larger "
                        "than SIZE bytes; K, M and G suffixes (default: 16M)")
    parser.add_argument("--gold", metavar="GOLD", default=None,
                        help="compare with gold plans: a plan file, or a benchmark JSONL whose "
                        "records are matched by task_id")
    parser.add_argument("--task-fields", action="store_true",
                        help="check each record against the request it holds (its task, "
                        "query, user_request, question, task_desc or instruction field)")
    parser.add_argument("--task", metavar="FILE|TEXT", default=None,
                        help="the user's request the plans answer (a file holding it, or the "
                        "text): checked by the PC9xx rules")
    parser.add_argument("--tasks", metavar="FILE", default=None,
                        help="the requests by task id (a JSON or JSONL task file, such as "
                        "DisasterBench's benchmark.jsonl or DORA's tasks), joined to each "
                        "record by its task_id, question_id or id")


def run(args: argparse.Namespace) -> int:
    if overwrites_an_input(args, "output", "--output"):
        return EXIT_ERROR
    stdin_name(args, args.files)
    config = _configuration(args)
    if config is None:
        return EXIT_ERROR
    select = (parse_codes(args.select, "--select") if args.select is not None
              else config.select or ())
    ignore = (parse_codes(args.ignore, "--ignore") if args.ignore is not None
              else config.ignore or ())
    options = CheckOptions(
        strict_json=args.strict_json if args.strict_json is not None
        else bool(config.strict_json),
        types=not args.no_types,
        select=select,
        ignore=ignore,
        severity_overrides=(((("PC305", Severity.ERROR),) if args.strict_types else ())
                            + config.severity + profile_overrides(args.profile)),
        provenance=not args.no_provenance and config.provenance is not False,
    )
    fail_level = (Severity.parse(args.fail_level) if args.fail_level is not None
                  else config.fail_level or Severity.ERROR)
    format_name = args.format or config.format or "text"
    toolset, toolset_diagnostics = load_toolset_or_exit(
        args.tools if args.tools is not None else config.tools)
    if toolset is None:
        print_plain(toolset_diagnostics)
        return EXIT_ERROR
    phases: list[PlanPhase] = []
    policy = args.policy if args.policy is not None else config.policy
    if args.timeout_ms is not None and (args.timeout_ms < 0
                                        or not (args.explain or policy is not None)):
        raise UsageError("--timeout-ms must be 0 or more" if args.timeout_ms < 0
                         else "--timeout-ms limits --explain and --policy; give one of them")
    if args.prefix and policy is None:
        raise UsageError("--prefix says how to read policies; give --policy too")
    if policy is not None:
        from plancheck.smt.policy_check import DEFAULT_TIMEOUT_MS, policy_phase

        solver_ms = DEFAULT_TIMEOUT_MS if args.timeout_ms is None else args.timeout_ms
        policies = load_policies_or_exit(policy, toolset, solver_ms)
        if policies is None:
            return EXIT_ERROR
        phases.append(policy_phase(policies, complete=not args.prefix, timeout_ms=solver_ms))
    if args.explain:
        import functools

        from plancheck.smt.explain import DEFAULT_TIMEOUT_MS, explain_conflicts

        phases.append(functools.partial(
            explain_conflicts,
            timeout_ms=DEFAULT_TIMEOUT_MS if args.timeout_ms is None else args.timeout_ms))
    if args.task is not None or args.tasks is not None or args.task_fields:
        phases.append(_request_phase(args.task, args.tasks, args.task_fields))
    from plancheck.compiler.forced_formats import forced
    from plancheck.fileio import DEFAULT_MAX_SIZE, parse_size, set_read_limit

    try:
        max_size = (parse_size(args.max_size) if args.max_size is not None
                    else config.max_size or DEFAULT_MAX_SIZE)
    except ValueError as error:
        raise UsageError(f"--max-size: {error}") from None
    set_read_limit(max_size)  # (a configured limit: the files still to be read)
    gold = None
    if args.gold:
        from plancheck.scoring.gold import GoldError, GoldIndex

        try:
            gold = GoldIndex.load(args.gold)
        except GoldError as error:
            print_plain(error.diagnostics)
            return EXIT_ERROR
    from plancheck.render.registry import stream_class
    from plancheck.render.stream import Tally

    counted = None
    if args.statistics:
        from plancheck.render.statistics import Statistics

        counted = Statistics()
    tally = Tally()
    fatal = False

    def take(diagnostics: list[Diagnostic]) -> None:
        nonlocal fatal
        tally.add(diagnostics)
        if counted is not None:
            counted.add(diagnostics)
        fatal = fatal or any(d.code in _FATAL for d in diagnostics)

    to_file = args.output is not None and args.output != "-"
    writer = None
    if to_file:
        from plancheck.fileio import AtomicWriter

        try:
            writer = AtomicWriter(args.output)
        except OSError as error:
            _cannot_write(args.output, error)
            return EXIT_ERROR
    stream = None
    try:  # (from the writer's creation on: a signal anywhere removes its temporary)
        # The report is written while the plans are checked, each plan's diagnostics as soon
        # as they are known, and each plan's source dropped after them: memory stays flat in
        # the size of the input (see plancheck.render.stream).
        if to_file or not args.statistics:
            stream = stream_class(format_name)(
                _file_writer(writer) if writer is not None else _stdout_writer,
                quiet=args.quiet,
                colour=not to_file and format_name == "text" and _colour(sys.stdout))
        loose = [d for d in toolset_diagnostics if options.keeps(d.code, d.name)]
        take(loose)
        if stream is not None:
            stream.loose(loose)
        call_format = None if args.call_format == "auto" else args.call_format
        with forced(call_format, forced_syntax(args)):
            # No pool asked for: DORA's trajectories are checked against DORA's tools.
            own_pool = args.tools is None and config.tools is None
            files = once_each(args.files, "checked once")
            repeated = _RepeatedIds()
            for report in check_paths(files, toolset, options, phases, max_size=max_size,
                                      own_pool=own_pool,
                                      stdin_name=args.stdin_filename):
                if gold is not None:
                    from plancheck.scoring.check_gold import add_gold_diagnostics

                    add_gold_diagnostics(report, gold, options)
                repeated.add(report.file, report.record_data)
                if own_pool:
                    report.diagnostics = name_the_default_pool(report.diagnostics, toolset)
                take(report.diagnostics)
                tally.add_plan(report.file, report.plan is not None or report.value is not None)
                if stream is not None:
                    stream.report(report.diagnostics, report.lines, report.positions)
                    if report.flows:
                        stream.flows(report.file, report.record, report.flows)
        if stream is not None:
            stream.finish(tally)
        repeated.warn()
        if writer is not None:
            try:
                writer.commit()
            except OSError as error:
                raise _WriteError(error) from None
    except _WriteError as error:
        _cannot_write(args.output, error.error)
        return EXIT_ERROR
    finally:
        if writer is not None:
            writer.discard()  # nothing when committed; an interrupted run leaves no file
    if counted is not None:
        from plancheck.render.statistics import render_statistics

        print(render_statistics(counted, format_name))
    if fatal:
        return EXIT_ERROR
    if tally.worst is not None and tally.worst >= fail_level:
        return EXIT_FINDINGS
    return EXIT_OK


class _RepeatedIds:
    """Records of a batch that repeat the ``id`` of an earlier one (two runs appended to one
    file?): said on stderr once per file, as ``score`` says it."""

    def __init__(self) -> None:
        self._seen: dict[str, set[str]] = {}
        self._repeated: dict[str, list[str]] = {}

    def add(self, file: str, record: dict[str, object] | None) -> None:
        if record is None or record.get("id") is None:
            return
        import json

        ident = json.dumps(record["id"], ensure_ascii=False, sort_keys=True)
        seen = self._seen.setdefault(file, set())
        if ident in seen:
            self._repeated.setdefault(file, []).append(ident)
        seen.add(ident)

    def warn(self) -> None:
        for file, idents in self._repeated.items():
            shown = ", ".join(dict.fromkeys(idents[:5]))
            print(f"plancheck: warning: {file}: {len(idents)} record(s) repeat the id of an "
                  f"earlier record ({shown}); each was checked", file=sys.stderr)


def name_the_default_pool(diagnostics: list[Diagnostic], toolset: Toolset
                           ) -> list[Diagnostic]:
    """An unknown tool with no near name in the pool, when no pool was asked for, names the
    pool it was looked up in and ``--tools``: tool calls of another agent checked against the
    built-in pool by default were only "not a tool of this pool", with no word of which pool
    or how to give another. (A near name, `Depth_Speed_Model` for `depth_speed_model`, says
    the pool is the right one: its "did you mean" is help enough.)"""
    if not any(d.code == "PC201" for d in diagnostics):
        return diagnostics
    names = sorted(toolset.tools)
    hint = (f"checked against the built-in DisasterBench pool ({len(names)} tools), since no "
            "pool was given: `--tools POOL` checks against yours (an MCP tools/list result, "
            "OpenAI, Gemini or TaskBench tool definitions, a .wf toolset, or `dora`)")
    return [replace(d, help=(*d.help, hint))
            if d.code == "PC201" and d.data.get("suggestion") is None
            and d.data.get("allowed") == names else d
            for d in diagnostics]


# Codes that mean the input was not (all) checked: exit status 2, whatever else was found.
_FATAL = frozenset({"PC001", "PC002", "PC006"})


class _WriteError(Exception):
    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


def _request_phase(task: str | None, tasks: str | None, fields: bool) -> PlanPhase:
    """The request rules' phase: ``--task`` (a file's text, or the text), else each record's
    request by its id in ``--tasks``, else (``--task-fields``) its own field."""
    import os

    from plancheck.checks.request_check import RequestPhase
    from plancheck.fileio import read_text_limited

    text = None
    if task is not None:
        if not task.strip():
            raise UsageError("--task: the request is empty")
        try:
            text = read_text_limited(task, "utf-8-sig") if os.path.isfile(task) else task
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"--task: cannot read {task}: {error}") from None
    table = None
    if tasks is not None:
        from plancheck.checks.request import task_table

        table = task_table(_json_or_lines(tasks))
        if not table:
            raise UsageError(f"--tasks: {tasks} holds no task with an id and a request "
                             "(task_id/question_id/id and task/query/user_request/question/"
                             "task_desc/instruction)")
    return RequestPhase(text, table, fields)


def _json_or_lines(path: str) -> object:
    """A JSON file's value, or a JSONL file's records as a list."""
    import json

    from plancheck.fileio import read_text_limited

    try:
        text = read_text_limited(path, "utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--tasks: cannot read {path}: {error}") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except (ValueError, RecursionError) as error:
        raise UsageError(f"--tasks: {path} is neither JSON nor JSONL ({error})") from None


def _stdout_writer(text: str) -> None:
    sys.stdout.write(text)


def _file_writer(writer: AtomicWriter) -> Callable[[str], None]:
    """Writes to the report file, telling its failures (a full disk) from other OSErrors."""

    def write(text: str) -> None:
        try:
            writer.write(text)
        except OSError as error:
            raise _WriteError(error) from None

    return write


def _configuration(args: argparse.Namespace) -> Config | None:
    """The configuration to apply, or None after reporting why it is unusable."""
    from plancheck.config import EMPTY, ConfigError, discover

    if args.no_config:
        if args.config is not None:
            raise UsageError("--config and --no-config contradict each other")
        return EMPTY
    try:
        return discover(args.config)
    except ConfigError as error:
        _print_config_error(error)
        return None


def _print_config_error(error: ConfigError) -> None:
    from plancheck.cli.config_errors import print_config_error

    print_config_error(error, "nothing was checked")


def _colour(stream: object) -> bool:
    from plancheck.render.text import use_colour

    return use_colour(stream)  # type: ignore[arg-type]


def _cannot_write(path: str, error: OSError) -> None:
    """The PC001 of a report that cannot be written (nothing of it is left behind)."""
    reason = error.strerror or str(error)
    print_plain([make("PC001", f"cannot write {path}: {reason}", data={"path": path})
                 .with_context(file=path, record=None)])


def _call_formats() -> tuple[str, ...]:
    from plancheck.compiler.call_formats import call_format_choices

    return tuple(call_format_choices())


