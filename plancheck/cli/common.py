"""Helpers shared by subcommands: loading toolsets, parsing code lists, printing reports."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TextIO

from plancheck.cli import UsageError
from plancheck.diagnostics.codes import BY_NAME, CODES
from plancheck.diagnostics.model import Diagnostic
from plancheck.ir.nodes import Toolset


def toolset_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tools",
        metavar="TOOLSET",
        default=None,
        help="a DSL toolset file, an official release directory or a tool manifest "
        "(default: the built-in DisasterBench pool)",
    )


def parse_codes(text: str, option: str) -> tuple[str, ...]:
    items = tuple(part.strip() for part in text.split(",") if part.strip())
    for item in items:
        upper = item.upper()
        if upper in CODES or item in BY_NAME:
            continue
        if upper.startswith("PC") and any(code.startswith(upper) for code in CODES):
            continue
        raise UsageError(f"{option}: `{item}` is not a diagnostic code, prefix or name")
    return tuple(item.upper() if item.upper().startswith("PC") else item for item in items)


def load_toolset_or_exit(spec: str | None) -> tuple[Toolset | None, list[Diagnostic]]:
    """The toolset, or (None, diagnostics explaining why it could not be loaded)."""
    from plancheck.corpus.toolsets import ToolsetError, load_toolset

    try:
        return load_toolset(spec)
    except ToolsetError as error:
        return None, error.diagnostics


def print_plain(diagnostics: Iterable[Diagnostic], stream: TextIO | None = None) -> None:
    """Print diagnostics that have no source excerpt (toolset and usage problems)."""
    out = stream or sys.stderr
    for diagnostic in diagnostics:
        where = f"{diagnostic.file}: " if diagnostic.file else ""
        print(f"{where}{diagnostic.severity.label}[{diagnostic.code}]: {diagnostic.message}",
              file=out)
