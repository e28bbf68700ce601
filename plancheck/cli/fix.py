"""``plancheck fix FILE``: repair a plan with the minimum weighted number of edits (Z3).

The repaired plan goes to standard output as JSON (``--in-place`` rewrites a JSON file
instead); what was wrong and how it was changed goes to standard error. Exit 0 when the
repaired plan checks clean, 1 when no repair was found (or the solver timed out), 2 on usage
or I/O errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from plancheck.cli.common import load_toolset_or_exit, print_plain, toolset_option

if TYPE_CHECKING:
    from plancheck.compiler.driver import Report
    from plancheck.diagnostics.model import Diagnostic
    from plancheck.smt.repair import RepairResult


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a plan (JSON, completion, DSL) or -")
    parser.add_argument("--in-place", action="store_true",
                        help="rewrite FILE (a JSON plan) instead of printing the repaired plan")
    toolset_option(parser)
    parser.add_argument("--timeout-ms", type=int, default=None, metavar="N",
                        help="time limit of the solver in milliseconds (default: 2000)")


def run(args: argparse.Namespace) -> int:
    from plancheck.compiler.driver import CheckOptions, check_paths
    from plancheck.dsl.printer import dump_json
    from plancheck.smt.explain import DEFAULT_TIMEOUT_MS, repair_plan

    timeout_ms = DEFAULT_TIMEOUT_MS if args.timeout_ms is None else args.timeout_ms
    if timeout_ms < 0:
        print("plancheck: error: --timeout-ms must be 0 or more", file=sys.stderr)
        return EXIT_ERROR
    if args.in_place and args.file == "-":
        print("plancheck: error: --in-place needs a file, not standard input", file=sys.stderr)
        return EXIT_ERROR
    toolset, problems = load_toolset_or_exit(args.tools)
    if toolset is None:
        print_plain(problems)
        return EXIT_ERROR
    reports = list(check_paths([args.file], toolset, CheckOptions()))
    io_errors = [d for r in reports for d in r.diagnostics if d.code in ("PC001", "PC002")]
    plans = [r for r in reports if r.plan is not None]
    if io_errors or not plans:
        _render(reports, [d for r in reports for d in r.diagnostics])
        if not io_errors:
            print("plancheck fix: no plan to repair", file=sys.stderr)
        return EXIT_ERROR if io_errors else EXIT_FINDINGS
    if len(plans) > 1:
        print("plancheck: error: fix takes a file with one plan; this one has "
              f"{len(plans)}", file=sys.stderr)
        return EXIT_ERROR
    report = plans[0]
    assert report.plan is not None
    result = repair_plan(report.plan, toolset, timeout_ms=timeout_ms)
    if not result.ok or result.plan is None:
        from plancheck.compiler.driver import finish
        from plancheck.diagnostics.positions import LineIndex, Positions

        positions = report.positions or Positions(report.file, report.lines or LineIndex(""))
        why = finish(list(result.diagnostics), positions, report.file, report.record,
                     CheckOptions())
        _render([report], [d for d in report.diagnostics if d.severity.label == "error"] + why)
        print("plancheck fix: no repair found", file=sys.stderr)
        return EXIT_FINDINGS
    _explain(report, result)
    text = dump_json(result.plan) + "\n"
    if not args.in_place:
        sys.stdout.write(text)
        return EXIT_OK
    return _write_in_place(args.file, report, result, text)


def _render(reports: Sequence[Report], diagnostics: Sequence[Diagnostic]) -> None:
    from plancheck.render.text import TextRenderer, use_colour

    lines = {r.file: r.lines for r in reports if r.lines is not None}
    renderer = TextRenderer(colour=use_colour(sys.stderr), lines_for=lines.get)
    for diagnostic in diagnostics:
        print(renderer.render(diagnostic), file=sys.stderr)
        print(file=sys.stderr)


def _explain(report: Report, result: RepairResult) -> None:
    """Each error of the original plan with the repair's changes attached, then the rest."""
    from plancheck.smt.explain import attach_repair

    errors = [d for d in report.diagnostics if d.severity.label == "error"]
    attached, rest = attach_repair(errors, result)
    _render([report], attached)
    for action in rest:
        print(f"fixed: {action.message}", file=sys.stderr)
    changes = len(result.actions)
    if changes:
        from plancheck.render.text import counted

        print(f"plancheck fix: {counted(changes, 'change')} "
              f"({counted(len(result.edits), 'edit')}, weight {result.cost}); the repaired "
              "plan checks clean"
              + (" once its placeholders are filled in" if result.placeholders else ""),
              file=sys.stderr)
    else:
        print("plancheck fix: nothing to repair", file=sys.stderr)


def _write_in_place(path: str, report: Report, result: RepairResult, text: str) -> int:
    from plancheck.dsl.printer import dump_json
    from plancheck.smt.explain import apply_edits

    if not path.endswith(".json") or report.value is None:
        print("plancheck: error: --in-place rewrites JSON plan files only", file=sys.stderr)
        return EXIT_ERROR
    document = report.value
    if not isinstance(document, list):
        # A wrapper object: edit the plan inside it, keep everything else.
        try:
            document = apply_edits(document, result.edits)
        except (KeyError, IndexError, ValueError, TypeError):
            print("plancheck: error: cannot rewrite this document in place", file=sys.stderr)
            return EXIT_ERROR
        text = dump_json(document) + "\n"
    from plancheck.fileio import write_text_atomically

    try:
        # Through a temporary file renamed over the plan: a full disk or a Ctrl-C mid-write
        # never leaves the user's plan half-written.
        write_text_atomically(path, text)
    except OSError as error:
        print(f"plancheck: error: cannot write {path}: {error.strerror}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK
