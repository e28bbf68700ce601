"""Argument definitions of every subcommand (kept apart so ``--help`` imports nothing heavy)."""

from __future__ import annotations

import argparse

FORMATS = ("text", "json")


def _toolset_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tools",
        metavar="TOOLSET",
        default=None,
        help="a DSL toolset file, an official release directory or a tool manifest "
        "(default: the built-in DisasterBench pool)",
    )


def check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="plan files (.json, .jsonl, .txt completions, .wf DSL), or - for "
                        "standard input")
    _toolset_option(parser)
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format")
    parser.add_argument("--select", default="", metavar="CODES",
                        help="comma-separated codes or prefixes to report (default: all)")
    parser.add_argument("--ignore", default="", metavar="CODES",
                        help="comma-separated codes or prefixes not to report")
    parser.add_argument("--fail-level", choices=("error", "warning", "info"), default="error",
                        help="lowest severity that makes the exit code 1 (default: error)")
    parser.add_argument("--strict-json", action="store_true",
                        help="do not repair damaged JSON or read alias keys")
    parser.add_argument("--no-types", action="store_true", help="skip type checking")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="print only the summary line (text format)")


def fmt_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a plan (JSON, completion, DSL) or -")
    parser.add_argument("--to", choices=("dsl", "json"), required=True, help="target notation")
    _toolset_option(parser)
    parser.add_argument("--strict-json", action="store_true",
                        help="do not repair damaged JSON or read alias keys")


def explain_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", nargs="?", metavar="CODE",
                        help="a diagnostic code (PC201) or name (unknown-tool); omit to list all")
