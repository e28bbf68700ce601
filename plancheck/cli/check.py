"""``plancheck check``: lint plans.

Settings come from, in increasing priority: defaults, the configuration file
(``[tool.plancheck]`` of the nearest pyproject.toml, or plancheck.toml; see
:mod:`plancheck.config`), and the command line.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
from plancheck.cli.common import load_toolset_or_exit, parse_codes, print_plain, toolset_option
from plancheck.compiler.driver import CheckOptions, check_paths
from plancheck.diagnostics.model import Diagnostic, Severity, make
from plancheck.render.registry import FORMATS

if TYPE_CHECKING:
    from plancheck.config import Config, ConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="plan files (.json, .jsonl, .txt completions, .wf DSL), or - for "
                        "standard input")
    toolset_option(parser)
    parser.add_argument("--format", choices=tuple(FORMATS), default=None,
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
    from plancheck.compiler.callshapes import CALL_FORMATS
    from plancheck.compiler.refsyntax import SYNTAXES

    parser.add_argument("--call-format", choices=("auto", *CALL_FORMATS), default="auto",
                        help="read tool calls in this shape only (default: detected per input)")
    parser.add_argument("--reference-syntax", choices=("auto", *SYNTAXES, "none"),
                        default="auto", help="read references to earlier results in this "
                        "syntax only (default: detected per input)")
    parser.add_argument("--timeout-ms", type=int, default=None, metavar="N",
                        help="time limit of --explain's solver per plan, in milliseconds "
                        "(default: 2000)")
    parser.add_argument("--gold", metavar="GOLD", default=None,
                        help="compare with gold plans: a plan file, or a benchmark JSONL whose "
                        "records are matched by task_id")


def run(args: argparse.Namespace) -> int:
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
                            + config.severity),
    )
    fail_level = (Severity.parse(args.fail_level) if args.fail_level is not None
                  else config.fail_level or Severity.ERROR)
    format_name = args.format or config.format or "text"
    toolset, toolset_diagnostics = load_toolset_or_exit(
        args.tools if args.tools is not None else config.tools)
    if toolset is None:
        print_plain(toolset_diagnostics)
        return EXIT_ERROR
    phases = []
    if args.timeout_ms is not None and (args.timeout_ms < 0 or not args.explain):
        raise UsageError("--timeout-ms must be 0 or more" if args.timeout_ms < 0
                         else "--timeout-ms limits --explain; give --explain too")
    if args.explain:
        import functools

        from plancheck.smt.explain import DEFAULT_TIMEOUT_MS, explain_conflicts

        phases.append(functools.partial(
            explain_conflicts,
            timeout_ms=DEFAULT_TIMEOUT_MS if args.timeout_ms is None else args.timeout_ms))
    from plancheck.compiler.callshapes import forced

    call_format = None if args.call_format == "auto" else args.call_format
    syntax = None if args.reference_syntax == "auto" else args.reference_syntax
    with forced(call_format, syntax):
        reports = list(check_paths(args.files, toolset, options, phases))
    if args.gold:
        from plancheck.scoring.gold import GoldError, GoldIndex, add_gold_diagnostics

        try:
            gold = GoldIndex.load(args.gold)
        except GoldError as error:
            print_plain(error.diagnostics)
            return EXIT_ERROR
        for report in reports:
            add_gold_diagnostics(report, gold, options)
    diagnostics = [d for d in toolset_diagnostics if options.keeps(d.code, d.name)]
    for report in reports:
        diagnostics.extend(report.diagnostics)
    files = len({r.file for r in reports})
    plans = sum(1 for r in reports if r.plan is not None or r.value is not None)

    from plancheck.render.registry import RenderContext, Sources, renderer

    sources = Sources()
    for report in reports:
        sources.add(report.file, report.record, report.lines, report.positions)
    to_file = args.output is not None and args.output != "-"
    context = RenderContext(
        diagnostics, sources, files=files, plans=plans, quiet=args.quiet,
        colour=not to_file and format_name == "text" and _colour(sys.stdout),
    )
    if to_file or not args.statistics:
        rendered = renderer(format_name)(context)
        if to_file:
            if not _write_atomically(args.output, rendered):
                return EXIT_ERROR
        elif rendered:
            print(rendered)
    if args.statistics:
        from plancheck.render.statistics import render_statistics

        print(render_statistics(diagnostics, format_name))
    return _exit_code(diagnostics, fail_level)


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
    from plancheck.diagnostics.positions import LineIndex
    from plancheck.render.text import TextRenderer

    source = LineIndex(error.text)
    text = TextRenderer(colour=_colour(sys.stderr), lines_for=lambda _file: source)
    for diagnostic in error.diagnostics:
        print(text.render(diagnostic), file=sys.stderr)
    print("plancheck: the configuration is invalid; nothing was checked", file=sys.stderr)


def _colour(stream: object) -> bool:
    from plancheck.render.text import use_colour

    return use_colour(stream)  # type: ignore[arg-type]


def _write_atomically(path: str, text: str) -> bool:
    """Write ``text`` to ``path`` through a temporary file renamed into place only when
    complete (:mod:`plancheck.fileio`), so that an interrupted run never leaves a half-written
    report behind. False (after printing a PC001 diagnostic) when it cannot."""
    from plancheck.fileio import write_text_atomically

    try:
        write_text_atomically(path, text if not text or text.endswith("\n") else text + "\n")
        return True
    except OSError as error:
        reason = error.strerror or str(error)
        print_plain([make("PC001", f"cannot write {path}: {reason}", data={"path": path})
                     .with_context(file=path, record=None)])
        return False


def _exit_code(diagnostics: list[Diagnostic], fail_level: Severity) -> int:
    if any(d.code in ("PC001", "PC002") for d in diagnostics):
        return EXIT_ERROR
    if any(d.severity >= fail_level for d in diagnostics):
        return EXIT_FINDINGS
    return EXIT_OK
