"""``plancheck fmt FILE --to dsl|json``: print a plan in the other notation.

The DSL does not write dependencies: it derives them from references. A plan whose declared
dependencies disagree with its references (or whose references cannot be read) cannot be
printed faithfully, so it is reported, not silently rewritten.

``--policy FILE`` reads the policy file and refuses it (exit 2, naming what is wrong) as
``check`` would, without deciding it on the plan: formatting is no verdict. With ``--to dsl``
its policies are printed after the plan, in their canonical form, so that one ``.wf`` file
holds both; JSON has no place for them.
"""

from __future__ import annotations

import argparse
import sys

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from plancheck.cli.common import (
    load_policies_or_exit,
    load_toolset_or_exit,
    max_size_option,
    policy_option,
    print_plain,
    stdin_filename_option,
    stdin_name,
    toolset_option,
)
from plancheck.compiler.driver import CheckOptions, check_paths
from plancheck.diagnostics.model import Severity
from plancheck.dsl.printer import dump_json, plan_to_dsl, plan_to_json
from plancheck.render.text import TextRenderer, use_colour

# Errors after which the plan has no faithful rendering: shape errors, unreadable references,
# dependence fields that say something the references do not.
_UNPRINTABLE = ("PC1", "PC205", "PC401", "PC402", "PC001", "PC002", "PC006")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    max_size_option(parser)
    parser.add_argument("file", metavar="FILE", help="a plan (JSON, completion, DSL) or -")
    parser.add_argument("--to", choices=("dsl", "json"), required=True, help="target notation")
    toolset_option(parser)
    stdin_filename_option(parser)
    parser.add_argument("--strict-json", action="store_true",
                        help="do not repair damaged JSON or read alias keys")
    policy_option(parser, "read the policies of FILE and refuse them (exit 2) when they "
                  "cannot be used; with --to dsl, print them after the plan")


def run(args: argparse.Namespace) -> int:
    toolset, problems = load_toolset_or_exit(args.tools)
    if toolset is None:
        print_plain(problems)
        return EXIT_ERROR
    policies = None
    if args.policy is not None:
        from plancheck.smt.policy_check import DEFAULT_TIMEOUT_MS

        policies = load_policies_or_exit(args.policy, toolset, DEFAULT_TIMEOUT_MS)
        if policies is None:
            return EXIT_ERROR
    options = CheckOptions(strict_json=args.strict_json, types=False, interpret=False)
    reports = list(check_paths([args.file], toolset, options,
                               stdin_name=stdin_name(args, [args.file])))
    blocking = [d for r in reports for d in r.diagnostics
                if d.severity is Severity.ERROR and d.code.startswith(_UNPRINTABLE)]
    if blocking:
        lines = {r.file: r.lines for r in reports if r.lines is not None}
        renderer = TextRenderer(colour=use_colour(sys.stderr), lines_for=lines.get)
        for diagnostic in blocking:
            print(renderer.render(diagnostic), file=sys.stderr)
            print(file=sys.stderr)
        print("plancheck fmt: not converted; fix the errors above first", file=sys.stderr)
        return EXIT_ERROR if any(d.code in ("PC001", "PC002", "PC006") for d in blocking) else \
            EXIT_FINDINGS
    plans = [r for r in reports if r.plan is not None]
    if not plans:  # an empty batch, say: there is nothing to print, which must not pass
        print(f"plancheck fmt: no plan found in {args.file}", file=sys.stderr)
        return EXIT_FINDINGS
    for report in plans:
        assert report.plan is not None
        if args.to == "json":
            print(dump_json(plan_to_json(report.plan, toolset)))
        else:
            print(plan_to_dsl(report.plan, name=report.record or report.plan.name,
                              toolset=report.plan.toolset or toolset.name), end="")
    if policies is not None and args.to == "dsl":
        from plancheck.dsl.parser import parse_dsl
        from plancheck.dsl.printer import policy_to_dsl

        for policy in parse_dsl(policies.text, policies.name).policies:
            print()
            print(policy_to_dsl(policy), end="")
    return EXIT_OK
