"""Helpers shared by subcommands: loading toolsets, parsing code lists, printing reports."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

from plancheck.cli import UsageError
from plancheck.diagnostics.codes import BY_NAME, CODES
from plancheck.diagnostics.model import Diagnostic
from plancheck.ir.nodes import Toolset

if TYPE_CHECKING:
    pass


def toolset_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tools",
        metavar="TOOLSET",
        default=None,
        help="the tool pool: a DSL toolset (.wf); a JSON pool (an MCP tools/list result, "
        "OpenAI, Gemini or TaskBench tool definitions, a DisasterBench manifest); a Python "
        "module of tool functions (.py); an official "
        "DisasterBench release directory; or `dora` (DORA's 108 tools). Default: the built-in "
        "DisasterBench pool (DORA's for documents in DORA's formats), or `tools` in the "
        "configuration",
    )


def reference_syntax_option(parser: argparse.ArgumentParser) -> None:
    """``--reference-syntax``: read references to earlier results in one syntax only (``auto``:
    those the calls' shapes declare; ``none``: no reference at all). Its value is what
    :func:`forced_syntax` gives :func:`plancheck.compiler.forced_formats.forced`."""
    from plancheck.formats.plugins import Choices

    # The syntaxes' registry is read only when the option is given (or the help shown):
    # checking a plain plan loads none (tests/cli/test_startup.py).
    parser.add_argument("--reference-syntax", choices=Choices(("auto", "none"), _syntaxes),
                        default="auto", metavar="SYNTAX",
                        help="read references to earlier results in this syntax only: "
                        "%(choices)s (default: auto, detected per input)")


def _syntaxes() -> tuple[str, ...]:
    from plancheck.compiler.call_formats import SYNTAXES

    return tuple(SYNTAXES)


def forced_syntax(args: argparse.Namespace) -> str | None:
    """The reference syntax ``--reference-syntax`` forces (None: detected, ``auto``)."""
    syntax: str = args.reference_syntax
    return None if syntax == "auto" else syntax


def stdin_filename_option(parser: argparse.ArgumentParser) -> None:
    """``--stdin-filename NAME`` (as ruff has): the name of the file standard input holds."""
    parser.add_argument("--stdin-filename", metavar="NAME", default=None,
                        help="the name of the file standard input (-) holds: its suffix picks "
                        "the rules it is read by (.jsonl: a batch, a record a line; .json; "
                        ".wf), and diagnostics name it (as ruff's option)")


def stdin_name(args: argparse.Namespace, files: list[str]) -> str | None:
    """The ``--stdin-filename`` given, refused (UsageError) when no file is ``-``."""
    name: str | None = getattr(args, "stdin_filename", None)
    if name is not None and "-" not in files:
        raise UsageError("--stdin-filename names standard input; give - among the files")
    return name


def max_size_option(parser: argparse.ArgumentParser) -> None:
    """``--max-size``: the most any file the command reads may hold (one place for all)."""
    parser.add_argument("--max-size", metavar="SIZE", default=None,
                        help="refuse any input file larger than SIZE (bytes, or with K, M or "
                             "G; default 16M) instead of reading it")


def parse_codes(text: str, option: str) -> tuple[str, ...]:
    from plancheck.checks.registry import rules

    rules()  # the codes rules declare themselves (their modules', plugins') registered
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
        return None, locate_toolset_problems(spec, error.diagnostics)


def locate_toolset_problems(spec: str | None,
                            diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """The problems of the toolset ``spec`` names, with its file name, lines and columns."""
    from plancheck.compiler.driver import CheckOptions, finish
    from plancheck.diagnostics.positions import LineIndex, Positions

    text = read_toolset_text(spec)
    region = (0, len(text)) if spec and spec.lower().endswith(".json") else None
    label = spec or "<built-in>"
    positions = Positions(label, LineIndex(text), json_region=region)
    return finish(diagnostics, positions, label, None, CheckOptions())


def read_toolset_text(spec: str | None) -> str:
    if not spec:
        return ""
    from plancheck.fileio import read_text_limited

    try:
        return read_text_limited(spec, "utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return ""  # a directory, a built-in name, or unreadable: loading already said why


def print_plain(diagnostics: Iterable[Diagnostic], stream: TextIO | None = None) -> None:
    """Print diagnostics without a source excerpt (toolset and usage problems): where, what,
    and the help."""
    out = stream or sys.stderr
    for diagnostic in diagnostics:
        span = diagnostic.span
        where = f"{diagnostic.file}: " if diagnostic.file else ""
        if diagnostic.file and span is not None and span.start_line:
            where = f"{diagnostic.file}:{span.start_line}:{span.start_col}: "
        print(f"{where}{diagnostic.severity.label}[{diagnostic.code}]: {diagnostic.message}",
              file=out)
        for text in diagnostic.help:
            print(f"  = help: {text}", file=out)


def per_item_writer(path: str, *, state: bool = False) -> Any:
    """The writer of ``--per-item`` (a :class:`~plancheck.scoring.batch.PerItemWriter`: the
    file is replaced whole when the run ends well, and locked against a second run meanwhile),
    or False after saying why it cannot be written."""
    from plancheck.locks import LockHeld
    from plancheck.scoring.batch import PerItemWriter

    try:
        return PerItemWriter(path, state=state)
    except LockHeld as error:
        print(f"plancheck: error: {error}; wait for it to finish, or write elsewhere",
              file=sys.stderr)
    except OSError as error:
        print(f"plancheck: error[PC001]: cannot write {path}: {error.strerror or error}",
              file=sys.stderr)
    return False


def once_each(paths: list[str], done: str) -> list[str]:
    """The files named, each once: the same file named twice (``a.json ./a.json``) would be
    read twice and count double; each repeat is said on stderr (``done``: "checked once")."""
    import os

    seen: dict[str, str] = {}
    kept = []
    for path in paths:
        key = path if path == "-" else os.path.realpath(path)
        if key in seen:
            print(f"plancheck: warning: {path} is the same file as {seen[key]}; {done}",
                  file=sys.stderr)
            continue
        seen[key] = path
        kept.append(path)
    return kept


def policy_option(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    parser.add_argument("--policy", metavar="FILE", default=None,
                        help=help or "check every plan against the policies of FILE (a .wf "
                        "file with `policy NAME { ... }` blocks): a violation is a finding "
                        "(exit 1), a policy that cannot be used exit 2")


def load_policies_or_exit(spec: str, toolset: Toolset, timeout_ms: int) -> Any:
    """The :class:`~plancheck.policy.loader.PolicySet` of ``spec``, or None after printing why
    it cannot be used (with positions in the policy file; contradictions explained by Z3)."""
    from plancheck.policy.loader import PolicyError
    from plancheck.smt.policy_lint import usable_policies

    try:
        return usable_policies(spec, toolset, timeout_ms=timeout_ms)
    except PolicyError as error:
        _print_policy_problems(error.diagnostics, error.name or spec, error.text)
        return None


def _print_policy_problems(diagnostics: list[Diagnostic], name: str, text: str) -> None:
    from plancheck.diagnostics.positions import LineIndex
    from plancheck.render.text import TextRenderer, use_colour

    source = LineIndex(text)
    renderer = TextRenderer(colour=use_colour(sys.stderr), lines_for=lambda _file: source)
    for diagnostic in diagnostics:
        print(renderer.render(diagnostic.with_context(file=name, record=None)),
              file=sys.stderr)
    print(f"plancheck: the policy file {name} cannot be used; nothing was checked",
          file=sys.stderr)


def overwrites_an_input(args: argparse.Namespace, dest: str, option: str) -> bool:
    """Whether the file the ``dest`` option names is one the command reads (another of its
    arguments names the same file: same device and inode), after saying so; the command then
    exits 2 and writes nothing. ``preds.jsonl --per-item preds.jsonl`` would replace the
    predictions with their scores."""
    import os

    output = getattr(args, dest, None)
    if not isinstance(output, str) or output == "-":
        return False
    try:
        target = os.stat(output)
    except OSError:
        return False  # a new file is no input
    for name, value in vars(args).items():
        if name == dest:
            continue
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, str) or item == "-":
                continue
            try:
                found = os.stat(item)
            except (OSError, ValueError):
                continue
            if (found.st_dev, found.st_ino) == (target.st_dev, target.st_ino):
                print(f"plancheck: error: {option} {output} is the file {item} this command "
                      "reads; writing it would destroy the input: write elsewhere",
                      file=sys.stderr)
                return True
    return False
