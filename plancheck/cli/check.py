"""``plancheck check``: lint plans."""

from __future__ import annotations

import argparse
import sys

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from plancheck.cli.common import load_toolset_or_exit, parse_codes, print_plain
from plancheck.compiler.diagnostics import Diagnostic, Severity
from plancheck.compiler.driver import CheckOptions, Report, check_paths
from plancheck.compiler.positions import LineIndex


def run(args: argparse.Namespace) -> int:
    options = CheckOptions(
        strict_json=args.strict_json,
        types=not args.no_types,
        select=parse_codes(args.select, "--select"),
        ignore=parse_codes(args.ignore, "--ignore"),
    )
    fail_level = Severity.parse(args.fail_level)
    toolset, toolset_diagnostics = load_toolset_or_exit(args.tools)
    if toolset is None:
        print_plain(toolset_diagnostics)
        return EXIT_ERROR
    reports = list(check_paths(args.files, toolset, options))
    diagnostics = [d for d in toolset_diagnostics if options.keeps(d.code, d.name)]
    for report in reports:
        diagnostics.extend(report.diagnostics)
    files = len({r.file for r in reports})
    plans = sum(1 for r in reports if r.plan is not None or r.value is not None)
    if args.format == "json":
        from plancheck.compiler.render_json import render_json

        print(render_json(diagnostics, files=files, plans=plans))
    else:
        _print_text(reports, toolset_diagnostics, diagnostics, files, plans, args.quiet)
    return _exit_code(diagnostics, fail_level)


def _print_text(reports: list[Report], toolset_diagnostics: list[Diagnostic],
                diagnostics: list[Diagnostic], files: int, plans: int, quiet: bool) -> None:
    from plancheck.compiler.render_text import TextRenderer, summary_line, use_colour

    lines: dict[str, LineIndex] = {r.file: r.lines for r in reports if r.lines is not None}
    renderer = TextRenderer(colour=use_colour(sys.stdout), lines_for=lines.get)
    if not quiet:
        print_plain(toolset_diagnostics, sys.stdout)
        for report in reports:
            for diagnostic in report.diagnostics:
                print(renderer.render(diagnostic))
                print()
    counts = {s: sum(1 for d in diagnostics if d.severity is s) for s in Severity}
    print(summary_line(counts[Severity.ERROR], counts[Severity.WARNING], counts[Severity.INFO],
                       plans, files))


def _exit_code(diagnostics: list[Diagnostic], fail_level: Severity) -> int:
    if any(d.code in ("PC001", "PC002") for d in diagnostics):
        return EXIT_ERROR
    if any(d.severity >= fail_level for d in diagnostics):
        return EXIT_FINDINGS
    return EXIT_OK
