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
from typing import TYPE_CHECKING, Any

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from plancheck.cli.common import (
    forced_syntax,
    load_policies_or_exit,
    load_toolset_or_exit,
    max_size_option,
    policy_option,
    print_plain,
    reference_syntax_option,
    stdin_filename_option,
    stdin_name,
    toolset_option,
)

if TYPE_CHECKING:
    from plancheck.compiler.driver import Report
    from plancheck.diagnostics.model import Diagnostic
    from plancheck.ir.nodes import Toolset
    from plancheck.smt.repair import RepairResult


def add_arguments(parser: argparse.ArgumentParser) -> None:
    max_size_option(parser)
    parser.add_argument("file", metavar="FILE", help="a plan (JSON, completion, DSL) or -")
    parser.add_argument("--in-place", action="store_true",
                        help="rewrite FILE (a JSON plan) instead of printing the repaired plan")
    toolset_option(parser)
    stdin_filename_option(parser)
    reference_syntax_option(parser)
    policy_option(parser)
    parser.add_argument("--timeout-ms", type=int, default=None, metavar="N",
                        help="time limit of the solver in milliseconds (default: 2000)")


def run(args: argparse.Namespace) -> int:
    from plancheck.compiler.forced_formats import forced

    with forced(None, forced_syntax(args)):  # read and written back in the syntax asked for
        return _run(args)


def _run(args: argparse.Namespace) -> int:
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
    if args.in_place and not args.file.endswith(".json"):  # said before any repair is sought
        print("plancheck: error: --in-place rewrites JSON plan files only", file=sys.stderr)
        return EXIT_ERROR
    if args.in_place and (_hard_linked(args.file) or _not_writable(args.file)):
        return EXIT_ERROR
    toolset, problems = load_toolset_or_exit(args.tools)
    if toolset is None:
        print_plain(problems)
        return EXIT_ERROR
    reports = list(check_paths([args.file], toolset, CheckOptions(),
                               stdin_name=stdin_name(args, [args.file])))
    io_errors = [d for r in reports for d in r.diagnostics if d.code in ("PC001", "PC002", "PC006")]
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
    repaired = result.plan
    if args.policy is not None:
        if args.in_place and not isinstance(report.value, list):
            print("plancheck: error: --in-place with --policy rewrites JSON plan arrays only",
                  file=sys.stderr)
            return EXIT_ERROR
        policies = load_policies_or_exit(args.policy, toolset, timeout_ms)
        if policies is None:
            return EXIT_ERROR
        kept = _repair_policies(repaired, toolset, policies, timeout_ms)
        if kept is None:
            return EXIT_FINDINGS
        repaired = kept
    from plancheck.compiler.call_writeback import write_back

    calls = write_back(report.value, report.plan, repaired, file=args.file)  # in their shape
    text = dump_json(repaired if calls is None else calls) + "\n"
    if not args.in_place:
        sys.stdout.write(text)
        return EXIT_OK
    if not result.edits and repaired == report.value:
        return EXIT_OK  # nothing to repair: the file is not touched
    return _write_in_place(args.file, report, result, text, calls=calls is not None)


def _hard_linked(path: str) -> bool:
    """Whether ``path`` has other names (then ``--in-place``, which replaces the file, would
    leave them the old plan), after saying so."""
    import os

    try:
        links = os.stat(path).st_nlink
    except OSError:
        return False  # the read reports why
    if links > 1:
        print(f"plancheck: error: {path} has {links} hard links; rewriting it in place would "
              "leave the other names the old plan: repair a copy, or write the repair to "
              "standard output (without --in-place)", file=sys.stderr)
        return True
    return False


def _not_writable(path: str) -> bool:
    """Whether this user may not write ``path`` (its mode says so, even to root, as an
    editor asks before it overrides a read-only file), after saying so: replacing it through
    a rename would only need the directory's permission."""
    import os
    import stat

    try:
        status = os.stat(path)
    except OSError:
        return False  # the read reports why
    allowed = (os.access(path, os.W_OK) if os.geteuid() != 0
               else bool(status.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)))
    if not allowed:
        print(f"plancheck: error[PC001]: cannot write {path}: Permission denied (mode "
              f"{stat.S_IMODE(status.st_mode):04o}, owner {status.st_uid}: read-only to this "
              "user); it is left as it was", file=sys.stderr)
        return True
    return False


def _repair_policies(document: list[dict[str, Any]], toolset: Toolset, policies: Any,
                     timeout_ms: int) -> list[dict[str, Any]] | None:
    """``document`` with the fewest deletions and value changes that keep every policy, or
    None after saying why there is none."""
    from plancheck.compiler.driver import check_in_memory
    from plancheck.smt.policy_repair import repair_policies

    plan = check_in_memory(document, toolset, name="<repaired>").plan
    if plan is None:
        print("plancheck fix: the repaired plan cannot be read for its policies",
              file=sys.stderr)
        return None
    repair = repair_policies(plan, document, policies, timeout_ms=timeout_ms)
    if repair.status == "timeout":
        print(f"plancheck fix: the policy repair did not finish within {timeout_ms} ms; "
              "raise --timeout-ms", file=sys.stderr)
        return None
    if repair.status == "unrepairable" or repair.document is None:
        print("plancheck fix: no deletion of steps or change of values satisfies every "
              "policy (a `require` no step meets needs a call the plan lacks)", file=sys.stderr)
        return None
    for position in repair.deleted:
        print(f"policy: deleted step {position} (`{document[position].get('agent')}`)",
              file=sys.stderr)
    for position, name, old, new in repair.changed:
        print(f"policy: changed `{name}` of step {position} from {old!r} to {new!r}",
              file=sys.stderr)
    if repair.status == "repaired":
        from plancheck.smt.policy_check import policy_phase

        again = check_in_memory(repair.document, toolset, name="<repaired>",
                                extra_phases=[policy_phase(policies, timeout_ms=timeout_ms)])
        if not again.ok:  # say so rather than print a plan that still fails
            _render([again], again.errors)
            print("plancheck fix: the plan the policy repair left does not check clean",
                  file=sys.stderr)
            return None
        print(f"plancheck fix: {repair.cost} policy edit{'s' if repair.cost != 1 else ''}; "
              "the plan keeps every policy", file=sys.stderr)
    return repair.document


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


def _write_in_place(path: str, report: Report, result: RepairResult, text: str, *,
                    calls: bool = False) -> int:
    """``text`` over ``path`` (``calls``: it is the document with its calls written back)."""
    from plancheck.dsl.printer import dump_json
    from plancheck.smt.explain import apply_edits

    if not path.endswith(".json") or (report.value is None and not calls):
        print("plancheck: error: --in-place rewrites JSON plan files only", file=sys.stderr)
        return EXIT_ERROR
    document = report.value
    if not calls and not isinstance(document, list):
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
        write_text_atomically(path, text, keep_owner=True)
    except OSError as error:
        print(f"plancheck: error[PC001]: cannot write {path}: {error.strerror}",
              file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK
