"""``plancheck synth``: enumerate type-correct workflows from typed inputs to a goal (Z3).

    plancheck synth --input data/radar.npy:RadarEchoSequence --input dem.tif:Topography \\
        --input roads.shp --goal depth_speed_model --max-steps 4

Workflows come shortest first, then with the fewest undeclared flows, then in a fixed order.
Exit 0 when at least one workflow was found, 1 when none exists within the bound, 2 on usage
errors (an unknown goal or type, an input without a type).
"""

from __future__ import annotations

import argparse
import sys

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from plancheck.cli.common import load_toolset_or_exit, max_size_option, print_plain, toolset_option
from plancheck.render.text import counted


def add_arguments(parser: argparse.ArgumentParser) -> None:
    max_size_option(parser)
    parser.add_argument("--input", action="append", default=[], metavar="PATH_OR_NAME:TYPE",
                        help="a typed input: PATH (type from its extension), PATH:Type or "
                        "name:Type; repeat for several")
    parser.add_argument("--goal", required=True, metavar="TOOL_OR_TYPE",
                        help="the tool the workflow ends with, or the type it must produce")
    parser.add_argument("--max-steps", type=int, default=3, metavar="K",
                        help="longest workflow to consider (default: 3)")
    parser.add_argument("--limit", type=int, default=10, metavar="N",
                        help="most workflows to print (default: 10)")
    parser.add_argument("--format", choices=("json", "dsl"), default="json",
                        help="print workflows as JSON plans (one per line) or as DSL")
    parser.add_argument("--timeout-ms", type=int, default=5000, metavar="N",
                        help="time limit of the solver in milliseconds (default: 5000)")
    toolset_option(parser)


def run(args: argparse.Namespace) -> int:
    from plancheck.smt.repair import SolverTimeout
    from plancheck.smt.synthesis import SynthesisError, synthesize

    if args.max_steps < 1 or args.limit < 1 or args.timeout_ms < 0:
        print("plancheck: error: --max-steps and --limit must be at least 1, --timeout-ms at "
              "least 0", file=sys.stderr)
        return EXIT_ERROR
    toolset, problems = load_toolset_or_exit(args.tools)
    if toolset is None:
        print_plain(problems)
        return EXIT_ERROR
    found = 0
    try:
        for plan in synthesize(args.input, args.goal, toolset, max_steps=args.max_steps,
                               limit=args.limit, timeout_ms=args.timeout_ms):
            _print(plan, found, args.format, toolset.name)
            found += 1
    except SynthesisError as error:
        print(f"plancheck: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except SolverTimeout:
        print(f"warning[PC405]: the constraint solver did not finish the synthesis within "
              f"{args.timeout_ms} ms ({counted(found, 'workflow')} printed)",
              file=sys.stderr)
        return EXIT_OK if found else EXIT_FINDINGS
    if not found:
        print(f"plancheck synth: no type-correct workflow of at most "
              f"{counted(args.max_steps, 'step')} "
              f"reaches `{args.goal}` from the given inputs", file=sys.stderr)
        return EXIT_FINDINGS
    return EXIT_OK


def _print(plan: list[dict[str, object]], number: int, form: str, toolset: str) -> None:
    import json

    if form == "json":
        print(json.dumps(plan, ensure_ascii=False))
        return
    from plancheck.compiler.lowering import lower_plan
    from plancheck.diagnostics.span import Span
    from plancheck.dsl.printer import plan_to_dsl

    lowered, _ = lower_plan(plan, Span("<synth>", pointer=""))
    assert lowered is not None
    print(plan_to_dsl(lowered, name=f"workflow {number + 1}", toolset=toolset))
