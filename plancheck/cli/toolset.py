"""``plancheck toolset``: show, lint and export tool pools.

    plancheck toolset show [--tools T] [--format text|json]
    plancheck toolset lint [TOOLSET ...] [--tools TOOLSET]
    plancheck toolset export --to mcp|openai|openai-responses|dsl [--tools T] [-o FILE] [--plain]

A toolset is anything ``--tools`` accepts: the built-in pool (default), a DSL file, a release
directory, a DisasterBench manifest, an MCP ``tools/list`` result, an OpenAI tools array or a
TaskBench tool/graph description.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from plancheck.cli.common import (
    load_toolset_or_exit,
    max_size_option,
    overwrites_an_input,
    print_plain,
    toolset_option,
)

EXPORT_TARGETS = ("mcp", "openai", "openai-responses", "dsl")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="toolset_command", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="list a toolset's tools and types",
                              description="List a toolset's tools, types and flows.")
    toolset_option(show)
    max_size_option(show)
    show.add_argument("--format", choices=("text", "json"), default="text",
                      help="output format")
    lint = actions.add_parser("lint", help="check toolset files",
                              description="Check toolsets in any format they can be written in "
                              "(DSL, manifest, MCP, OpenAI, TaskBench).")
    lint.add_argument("toolsets", nargs="*", metavar="TOOLSET",
                      help="toolset files or release directories (default: the built-in pool)")
    lint.add_argument("--format", choices=("text", "json"), default="text",
                      help="output format")
    max_size_option(lint)
    lint.add_argument("--tools", metavar="TOOLSET", action="append", default=[],
                      dest="more_toolsets",
                      help="a toolset to check, as the other commands name one (repeatable)")
    export = actions.add_parser("export", help="write a toolset as MCP, OpenAI tools or DSL",
                                description="Write a toolset in another format. The output "
                                "loads back (--tools FILE) into an equivalent toolset.")
    export.add_argument("--to", required=True, choices=EXPORT_TARGETS, dest="target",
                        help="mcp: a tools/list result; openai: chat-completions tools; "
                        "openai-responses: Responses-API tools; dsl: workflow DSL")
    toolset_option(export)
    max_size_option(export)
    export.add_argument("-o", "--output", metavar="FILE", default=None,
                        help="write to FILE instead of standard output")
    export.add_argument("--plain", action="store_true",
                        help="omit plancheck's extension fields (types, lattice, outputs of "
                        "OpenAI tools): the plain format, at the cost of a lossy round trip")


def run(args: argparse.Namespace) -> int:
    command = args.toolset_command
    if command == "export" and overwrites_an_input(args, "output", "--output"):
        return EXIT_ERROR
    if command == "lint":
        return _lint([*args.toolsets, *args.more_toolsets] or [None], args.format)
    toolset, diagnostics = load_toolset_or_exit(args.tools)
    if toolset is None:
        print_plain(diagnostics)
        return EXIT_ERROR
    print_plain(diagnostics)  # warnings raised while loading
    if command == "show":
        return _show(toolset, args.format)
    return _export(toolset, args.target, args.output, plain=args.plain)


# --------------------------------------------------------------------------- export


def _export(toolset: Any, target: str, output: str | None, *, plain: bool) -> int:
    from plancheck.corpus.export import ExportError, export_toolset
    from plancheck.diagnostics.model import make

    try:
        text = export_toolset(toolset, target, extensions=not plain)
    except ExportError as error:
        print_plain(error.diagnostics)
        return EXIT_ERROR
    if output is None:
        sys.stdout.write(text)
        return EXIT_OK
    from plancheck.fileio import write_text_atomically

    try:
        write_text_atomically(output, text)  # an old export stays whole until this one is
    except OSError as error:
        reason = error.strerror or str(error)
        print_plain([make("PC001", f"cannot write {output}: {reason}", data={"path": output})])
        return EXIT_ERROR
    return EXIT_OK


# --------------------------------------------------------------------------- show


def _show(toolset: Any, output_format: str) -> int:
    if output_format == "json":
        import json

        from plancheck.corpus.export import object_schema, toolset_meta

        value = toolset_meta(toolset)
        value["tools"] = [
            {"name": t.name, "description": t.description, "category": t.category,
             "family": t.family,
             "inputs": object_schema(t.inputs, extensions=True),
             "outputs": object_schema(t.outputs, extensions=True, outputs=True)}
            for t in toolset.tools.values()
        ]
        print(json.dumps(value, indent=2, ensure_ascii=False))
        return EXIT_OK
    from plancheck.render.text import counted

    print(f"toolset {toolset.name}: {counted(len(toolset.tools), 'tool')}, "
          f"{counted(len(toolset.types), 'type')}, {counted(len(toolset.flows), 'flow')}")
    if toolset.description:
        print(f"  {toolset.description}")
    if toolset.types:
        print("\ntypes:")
        for decl in toolset.types.values():
            line = f"  {decl.name}"
            if decl.parents:
                line += " <: " + ", ".join(decl.parents)
            if decl.converts_to:
                line += " ~> " + ", ".join(decl.converts_to)
            print(line + (f"  -- {decl.doc}" if decl.doc else ""))
    print("\ntools:")
    for tool in toolset.tools.values():
        where = " / ".join(x for x in (tool.category, tool.family) if x)
        print(f"  {tool.name}" + (f"  [{where}]" if where else ""))
        for param in tool.inputs:
            optional = "" if param.required else "?"
            print(f"    in  {param.name}{optional}: {param.type}")
        for param in tool.outputs:
            kind = "any " if param.polymorphic else ""
            print(f"    out {param.name}: {kind}{param.type}")
    return EXIT_OK


# --------------------------------------------------------------------------- lint


def _lint(specs: list[str | None], output_format: str) -> int:
    from plancheck.cli.common import locate_toolset_problems, read_toolset_text
    from plancheck.diagnostics.model import Diagnostic, Severity
    from plancheck.diagnostics.positions import LineIndex
    from plancheck.render.text import TextRenderer, counted, summary_line, use_colour

    found: list[Diagnostic] = []
    lines: dict[str, LineIndex] = {}
    for spec in specs:
        lines[spec or "<built-in>"] = LineIndex(read_toolset_text(spec))
        toolset, diagnostics = load_toolset_or_exit(spec)
        if toolset is None:
            found.extend(diagnostics)  # located already
            continue
        from plancheck.corpus.pool_lint import lint_pool  # suspicious, not wrong

        diagnostics = diagnostics + [d for d in toolset.problems() if d not in diagnostics]
        diagnostics += lint_pool(toolset)
        found.extend(locate_toolset_problems(spec, diagnostics))
    if output_format == "json":
        from plancheck.render.json_report import render_json

        print(render_json(found, files=len(specs), plans=0))
    else:
        renderer = TextRenderer(colour=use_colour(sys.stdout), lines_for=lines.get)
        for diagnostic in found:
            print(renderer.render(diagnostic))
            print()
        counts = {s: sum(1 for d in found if d.severity is s) for s in Severity}
        print(summary_line(counts[Severity.ERROR], counts[Severity.WARNING],
                           counts[Severity.INFO], 0, len(specs),
                           checked=counted(len(specs), "toolset")))
    if any(d.code == "PC001" for d in found):
        return EXIT_ERROR
    return EXIT_FINDINGS if any(d.severity is Severity.ERROR for d in found) else EXIT_OK


