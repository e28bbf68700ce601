"""``plancheck compile FILE --to python [--tools T] [-o OUT]``: a plan as a typed Python module.

The module holds the toolset's typed stubs and one function per plan (``run_plan`` for a single
plan), one assignment per step; see :mod:`plancheck.compiler.emit_python`.

Like a compiler that emits despite type errors, a plan whose only errors are name, type or
dependency errors is still compiled (mypy then rejects the same bindings) and the errors are
printed with exit code 1. A plan that cannot be represented (unreadable steps, references or
JSON, duplicate step numbers or inputs) is refused with its diagnostics and exit code 1; in a
file of several plans the others are still compiled. With ``--policy FILE``, so is a plan that
breaks a deny rule (the module would run what the policy forbids); a warn rule's violation is
printed and the plan compiled.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from plancheck.cli.common import (
    load_toolset_or_exit,
    max_size_option,
    overwrites_an_input,
    policy_option,
    print_plain,
    stdin_filename_option,
    stdin_name,
    toolset_option,
)
from plancheck.cli.policy_verdicts import VERDICT_CODES

# Errors after which the plan has no faithful Python rendering: unreadable input or shape,
# unreadable references (PC109, steps numbered out of order, compiles fine); and, with
# --policy, the violations of a deny rule (VERDICT_CODES).
_UNCOMPILABLE = ("PC001", "PC002", "PC006", "PC1", "PC205")

if TYPE_CHECKING:
    from plancheck.compiler.driver import Report
    from plancheck.diagnostics.model import Diagnostic


def add_arguments(parser: argparse.ArgumentParser) -> None:
    max_size_option(parser)
    parser.add_argument("file", metavar="FILE", help="a plan (JSON, completion, JSONL, DSL) or -")
    parser.add_argument("--to", choices=("python",), required=True, help="target language")
    toolset_option(parser)
    stdin_filename_option(parser)
    parser.add_argument("-o", "--output", metavar="OUT", default=None,
                        help="write the module to this file (default: standard output)")
    parser.add_argument("--strict-json", action="store_true",
                        help="do not repair damaged JSON or read alias keys")
    policy_option(parser)


def run(args: argparse.Namespace) -> int:
    if overwrites_an_input(args, "output", "--output"):
        return EXIT_ERROR
    from plancheck.compiler.driver import CheckOptions, check_paths
    from plancheck.compiler.emit_python import (
        CompileError,
        compile_plans,
        encoding_gaps,
        identifier,
    )
    from plancheck.diagnostics.model import Severity

    toolset, problems = load_toolset_or_exit(args.tools)
    if toolset is None:
        print_plain(problems)
        return EXIT_ERROR
    phases: list[Any] = []
    if args.policy is not None:
        # A plan that breaks a deny rule is not compiled: the module would run what the
        # policy forbids. Warn rules are said, and the plan compiled.
        from plancheck.cli.policy_verdicts import PolicyVerdicts

        verdicts = PolicyVerdicts.load(args.policy, toolset)
        if verdicts is None:
            return EXIT_ERROR
        phases.append(verdicts.of_plan)
    reports = list(check_paths([args.file], toolset, CheckOptions(strict_json=args.strict_json),
                               phases, stdin_name=stdin_name(args, [args.file])))
    refused = [r for r in reports if any(_blocks(d) for d in r.diagnostics)]
    if refused:
        _render(refused, [d for r in refused for d in r.diagnostics if _blocks(d)])
    compilable = [r for r in reports if r.plan is not None and r not in refused]
    if not compilable:
        if refused:
            print("plancheck compile: not compiled; fix the errors above first",
                  file=sys.stderr)
            codes = {d.code for r in refused for d in r.diagnostics}
            return EXIT_ERROR if codes & {"PC001", "PC002", "PC006"} else EXIT_FINDINGS
        print(f"plancheck compile: no plan found in {args.file}", file=sys.stderr)
        return EXIT_FINDINGS
    plans = [r.plan for r in compilable if r.plan is not None]
    functions = None
    if len(plans) > 1:
        # One function per plan, named after its task, its name or its record.
        labels = [r.task_id if r.task_id is not None else
                  (r.plan.name if r.plan is not None and r.plan.name else r.record)
                  for r in compilable]
        functions = [identifier(f"plan_{label if label is not None else i}")
                     for i, label in enumerate(labels)]
    try:
        module = compile_plans(plans, toolset, functions=functions)
    except CompileError as error:
        print(f"plancheck compile: cannot compile {args.file}: {error}", file=sys.stderr)
        return EXIT_FINDINGS
    for tool, output, expected in encoding_gaps(toolset):
        print(f"plancheck compile: note: mypy accepts `{tool}.{output}` where `{expected}` is "
              "expected and plancheck does not (a polymorphic output whose subtypes have "
              "other parents)", file=sys.stderr)
    if args.output is None:
        sys.stdout.write(module.source)
    else:
        from plancheck.fileio import write_text_atomically

        try:
            write_text_atomically(args.output, module.source)
        except OSError as error:
            print(f"plancheck compile: cannot write {args.output}: {error.strerror or error}",
                  file=sys.stderr)
            return EXIT_ERROR
        count = f"{len(plans)} plan{'s' if len(plans) != 1 else ''}"
        print(f"plancheck compile: wrote {args.output} ({count})", file=sys.stderr)
    warned = [d for r in compilable for d in r.diagnostics
              if d.code in VERDICT_CODES and d.severity is not Severity.ERROR]
    if warned:
        _render(compilable, warned)
    errors = [d for r in compilable for d in r.diagnostics if d.severity is Severity.ERROR]
    if errors:
        _render(compilable, errors)
        print(f"plancheck compile: compiled with {len(errors)} error"
              f"{'s' if len(errors) != 1 else ''}; a type checker rejects the module too",
              file=sys.stderr)
    if refused:
        print(f"plancheck compile: {len(refused)} plan{'s' if len(refused) != 1 else ''} "
              "not compiled (errors above)", file=sys.stderr)
    return EXIT_FINDINGS if errors or refused else EXIT_OK


def _blocks(diagnostic: Diagnostic) -> bool:
    """An error after which the plan has no faithful Python rendering."""
    from plancheck.diagnostics.model import Severity

    return diagnostic.severity is Severity.ERROR and diagnostic.code != "PC109" and \
        (diagnostic.code.startswith(_UNCOMPILABLE) or diagnostic.code in VERDICT_CODES)


def _render(reports: list[Report], diagnostics: list[Diagnostic]) -> None:
    from plancheck.render.text import TextRenderer, use_colour

    lines = {r.file: r.lines for r in reports if r.lines is not None}
    renderer = TextRenderer(colour=use_colour(sys.stderr), lines_for=lines.get)
    for diagnostic in diagnostics:
        print(renderer.render(diagnostic), file=sys.stderr)
        print(file=sys.stderr)
