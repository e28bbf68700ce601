"""``plancheck explain CODE``: what a diagnostic means."""

from __future__ import annotations

import argparse
import textwrap

from plancheck.cli import EXIT_ERROR, EXIT_OK
from plancheck.diagnostics.codes import BY_NAME, CODES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", nargs="?", metavar="CODE",
                        help="a diagnostic code (PC201) or name (unknown-tool); omit to list all")


def run(args: argparse.Namespace) -> int:
    from plancheck.checks.registry import rules

    rules()  # the codes rules declare themselves (their modules', plugins') registered
    if not args.code:
        current = None
        for code, entry in CODES.items():
            if entry.phase != current:
                current = entry.phase
                print(f"\n{current}:")
            print(f"  {code}  {entry.name:<34} {entry.severity.label:<8} {entry.summary}")
        return EXIT_OK
    found = CODES.get(args.code.upper()) or BY_NAME.get(args.code)
    if found is None:
        print(f"plancheck: error: unknown diagnostic code `{args.code}`; "
              "run `plancheck explain` for the list")
        return EXIT_ERROR
    info = found
    print(f"{info.code} {info.name}")
    print(f"phase: {info.phase}   default severity: {info.severity.label}")
    if info.fpof_type:
        print(f"FPoF type: {info.fpof_type} ({info.fpof_category})")
    print()
    print(textwrap.fill(info.summary, 88))
    print()
    print(textwrap.fill(info.explanation, 88))
    return EXIT_OK
