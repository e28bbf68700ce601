"""Generate the reference pages of the docs site from plancheck's own registries.

The pages are made when the site is built (``mkdocs build`` runs this through
``scripts/mkdocs_hooks.py``) and are never committed, so they cannot go stale:

* ``cli.md``: every command's ``--help``, from the argument parsers;
* ``codes/index.md`` and ``codes/PCxxx.md``: the diagnostic code registry, one page a code,
  each with an example from the fixture cases of ``tests/data/cases/`` (the same inputs
  ``tests/test_cases.py`` checks), run here and shown with what plancheck printed;
* ``call-shapes.md``, ``pool-formats.md``, ``reference-syntaxes.md``: the registries of tool-call
  shapes, tool-pool formats and reference syntaxes, each entry with an example read back
  through the registry.

``python scripts/gen_docs.py OUT_DIR`` writes the pages into a directory (to read them without
building the site).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script or loaded by mkdocs: the repository's plancheck
    sys.path.insert(0, str(ROOT))

# The width every generated --help is formatted at (argparse reads COLUMNS).
HELP_COLUMNS = "100"


def pages() -> dict[str, str]:
    """Every generated page: its path under docs/ -> its Markdown."""
    out = {"cli.md": cli_page(), "call-shapes.md": call_shapes_page(),
           "pool-formats.md": pool_formats_page(),
           "reference-syntaxes.md": reference_syntaxes_page()}
    out.update(code_pages())
    return out


# ------------------------------------------------------------------------------ command line


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def command_help(*words: str) -> str:
    """What ``plancheck [WORDS...] --help`` prints."""
    from plancheck import cli

    out = io.StringIO()
    with _environment(COLUMNS=HELP_COLUMNS, NO_COLOR="1"), contextlib.redirect_stdout(out):
        cli.main([*words, "--help"])
    return out.getvalue()


def subcommands(command: str) -> list[str]:
    """The subcommands of ``plancheck COMMAND`` (``toolset show``, ...), from its parser."""
    import importlib

    from plancheck import cli

    module = importlib.import_module(cli.SUBCOMMANDS[command][0])
    parser = cli.build_parser(command, module)
    (top,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    command_parser = top.choices[command]
    return [name for action in command_parser._actions
            if isinstance(action, argparse._SubParsersAction) for name in action.choices]


def cli_page() -> str:
    from plancheck import cli

    lines = ["# Command-line reference", "",
             "Generated from the argument parsers: what `plancheck [COMMAND] --help` prints, "
             "each command's examples and exit statuses at the end. `plancheck FILE...` is "
             "`plancheck check FILE...`.", "",
             "## plancheck", "", "```text", command_help().rstrip(), "```", ""]
    for name, (_module, summary) in cli.SUBCOMMANDS.items():
        lines += [f"## plancheck {name}", "", f"{summary[0].upper()}{summary[1:]}.", "",
                  "```text", command_help(name).rstrip(), "```", ""]
        for sub in subcommands(name):
            lines += [f"### plancheck {name} {sub}", "", "```text",
                      command_help(name, sub).rstrip(), "```", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------ codes


def _cases() -> list[Any]:
    """The fixture cases of tests/data/cases (read by the test module that runs them)."""
    from tests.test_cases import CASES

    return list(CASES)


def _example_case(code: str, cases: list[Any]) -> Any | None:
    """The first case named for ``code`` that runs without the official release (else any
    case whose expected diagnostics include the code)."""
    prefix = code.lower() + "_"
    usable = [case for case in cases if not any(
        "$DATA" in arg for arg in [*(case.command or []), *case.flags])]
    named = [case for case in usable if case.name.startswith(prefix)]
    expecting = [case for case in usable if any(f" {code} " in line for line in case.out)]
    for case in [*named, *expecting]:
        if any(f" {code} " in line for line in case.out):
            return case
    return None


def _case_command(case: Any) -> list[str]:
    """The case's command line as a user would type it (text output, the case's files)."""
    args = list(case.command) if case.command is not None else ["check", case.main]
    args += case.flags
    if args[0] in ("check", "score", "fix") and case.tools is not None and "--tools" not in args:
        args += ["--tools", "tools.wf"]
    if args[0] in ("check", "score") and case.gold is not None and "--gold" not in args:
        args += ["--gold", "gold.json"]
    return args


def run_case(case: Any) -> tuple[list[tuple[str, str]], str, str]:
    """Run a fixture case in a temporary directory: its files (name, text), the command or
    Python it ran, and what that printed."""
    from plancheck.cli import main

    files = [(name, text) for name, text in case.files.items()
             if case.encodings.get(name, "utf-8") == "utf-8"]
    if case.tools is not None:
        files.append(("tools.wf", case.tools))
    if case.gold is not None:
        files.append(("gold.json", case.gold))
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory).resolve()
        for name, text in case.files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding=case.encodings.get(name, "utf-8"))
        for name, text in files[len(case.files):]:
            (root / name).write_text(text, encoding="utf-8")
        out = io.StringIO()
        here = Path.cwd()
        os.chdir(root)
        try:
            with _environment(NO_COLOR="1", COLUMNS=HELP_COLUMNS), \
                    contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                if case.python is not None:
                    import plancheck

                    scope: dict[str, Any] = {"plancheck": plancheck}
                    exec(compile(case.python, case.source, "exec"), scope)
                    for diagnostic in scope["report"].diagnostics:
                        print(f"{diagnostic.severity.value}[{diagnostic.code}]: "
                              f"{diagnostic.message}")
                    ran = case.python.rstrip()
                else:
                    args = _case_command(case)
                    status = main(args)
                    ran = f"$ plancheck {shlex.join(args)}"
                    out.write(f"[exit status {status}]\n")
        finally:
            os.chdir(here)
        text = out.getvalue().replace(str(root) + os.sep, "").replace(str(root), ".")
    return files, ran, text


def _fence(language: str, text: str) -> list[str]:
    ticks = "````" if "```" in text else "```"
    return [f"{ticks}{language}", text.rstrip("\n"), ticks]


def code_page(info: Any, case: Any | None) -> str:
    lines = [f"# {info.code} {info.name}", "",
             f"**{info.severity.label}**, reported by the {info.phase} phase"
             + ("" if info.default_enabled else "; off unless selected (`--select "
                f"{info.code}`)") + ".", "", f"*{info.summary}*", "", info.explanation, ""]
    if info.fpof_type:
        lines += [f"First point of failure: `{info.fpof_type}` ({info.fpof_category}).", ""]
    if case is None:
        lines += ["No example: no fixture case of `tests/data/cases/` that names this code "
                  "runs without the official DisasterBench release. "
                  f"`plancheck explain {info.code}` prints this page's text.", ""]
        return "\n".join(lines)
    files, ran, output = run_case(case)
    lines += ["## Example", "", f"From the fixture case `{case.name}` "
              f"(`tests/data/cases/{case.source.split(':')[0]}`), which the test suite runs.", ""]
    for name, text in files:
        suffix = Path(name).suffix.lstrip(".")
        language = {"json": "json", "jsonl": "json", "wf": "text", "txt": "text"}.get(suffix,
                                                                                  "text")
        lines += [f"`{name}`:", "", *_fence(language, text), ""]
    if case.python is not None:
        lines += ["The Python that checks it:", "", *_fence("python", ran), "",
                  "What it reports:", "", *_fence("text", output), ""]
    else:
        lines += ["What plancheck prints:", "", *_fence("console", f"{ran}\n{output}"), ""]
    return "\n".join(lines)


def code_pages() -> dict[str, str]:
    from plancheck.diagnostics.codes import CODES

    cases = _cases()
    out: dict[str, str] = {}
    index = ["# Diagnostic codes", "",
             "Generated from the code registry (`plancheck/diagnostics/codes.py`). "
             "`plancheck explain CODE` prints one code's explanation; `--select` and `--ignore` "
             "take codes, prefixes (`PC3`) and names (`unknown-tool`). Each page shows an "
             "example run.", ""]
    by_phase: dict[str, list[Any]] = {}
    for info in CODES.values():
        by_phase.setdefault(info.phase, []).append(info)
    for phase, infos in by_phase.items():
        index += [f"## {phase[0].upper()}{phase[1:]}", "", "| code | name | severity | summary |",
                  "| --- | --- | --- | --- |"]
        for info in infos:
            index.append(f"| [{info.code}]({info.code}.md) | `{info.name}` | "
                         f"{info.severity.label} | {info.summary} |")
            out[f"codes/{info.code}.md"] = code_page(info, _example_case(info.code, cases))
        index.append("")
    out["codes/index.md"] = "\n".join(index)
    return out


# ------------------------------------------------------------------------------ registries


def _doc(function: Any, registry_module: str) -> str:
    """The first paragraph of the docstring of ``function``, else of its module when that
    module is the entry's own (not the registry's, whose docstring is about all entries), in
    Markdown."""
    text = getattr(function, "__doc__", None)
    module = getattr(function, "__module__", "")
    if not text and module != registry_module:
        text = getattr(sys.modules.get(module), "__doc__", None)
    paragraph = " ".join((text or "").strip().split("\n\n")[0].split())
    # reStructuredText roles and literals, as Markdown code spans.
    paragraph = re.sub(r":(?:func|mod|class|data|meth|attr):`~?([^`]+)`", r"`\1`", paragraph)
    return paragraph.replace("``", "`")


# One example each, read back through the registry when the page is made (a registry entry may
# carry its own ``example``, which wins).
CALL_SHAPE_EXAMPLES: dict[str, Any] = {
    "openai-chat": {"id": "call_1", "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
    "openai-responses": {"type": "function_call", "call_id": "call_1", "name": "get_weather",
                         "arguments": "{\"city\": \"Paris\"}"},
    "anthropic": {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                  "input": {"city": "Paris"}},
    "gemini": {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
    "mcp-jsonrpc": {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "get_weather", "arguments": {"city": "Paris"}}},
    "bedrock": {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather",
                            "input": {"city": "Paris"}}},
    "generic": {"tool": "get_weather", "args": {"city": "Paris"}},
    "name-keyed": {"get_weather": {"city": "Paris"}},
    "bfcl-answer": {"get_weather": {"city": ["Paris", "paris"]}},
}


def call_shapes_page() -> str:
    from plancheck.formats import shapes as registry
    from plancheck.formats.shapes import read_call

    # Every shape, plugins' too where the registry has them.
    listed: dict[str, Any] = getattr(registry, "call_shapes", lambda: registry.CALL_SHAPES)()

    lines = ["# Call shapes", "",
             "Generated from the registry `CALL_SHAPES` (`plancheck/formats/shapes.py`), in the "
             "order the shapes are tried. `--call-format NAME` reads one shape only; by default "
             "the detected shapes are tried on every object of an input. Each example below is "
             "read back through the registry when this page is made.", "",
             "See [adding a call shape](adding-a-call-shape.md).", ""]
    for name, shape in listed.items():
        where = ("detected in any input" if shape.detected else
                 "read only where answers are expected (BFCL `ground_truth`, decoded output)")
        described = getattr(shape, "description", None) or _doc(shape.read,
                                                                 "plancheck.formats.shapes")
        syntaxes = getattr(shape, "references", ())
        references = ("References (when `--reference-syntax` forces none): "
                      + ", ".join(f"[`{s}`](reference-syntaxes.md)" for s in syntaxes)
                      if syntaxes else "References: none by default, its strings are text "
                      "(`--reference-syntax NAME` reads one)")
        lines += [f"## `{name}`", "", *([described, ""] if described else []),
                  f"Read: {where}.", "", references + ".", ""]
        example = getattr(shape, "example", None) or CALL_SHAPE_EXAMPLES.get(name)
        if example is None:
            continue
        call = read_call(example, "", shape=name)
        if call is None or call.shape != name:
            raise ValueError(f"the example of call shape {name} is not read as one")
        arguments, how = call.arguments, ""
        if isinstance(arguments, str):  # OpenAI's: a JSON document in a string
            arguments, how = json.loads(arguments), " (written as a JSON string)"
        lines += ["```json", json.dumps(example, indent=2), "```", "",
                  f"is a call of `{call.name}` with arguments `{json.dumps(arguments)}`{how}.",
                  ""]
    return "\n".join(lines)


POOL_FORMAT_EXAMPLES: dict[str, Any] = {
    "mcp": {"tools": [{"name": "get_weather", "description": "The weather in a city.",
                       "inputSchema": {"type": "object",
                                       "properties": {"city": {"type": "string"}},
                                       "required": ["city"]}}]},
    "openai": [{"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}}],
    "gemini": {"tools": [{"functionDeclarations": [{
        "name": "get_weather", "description": "The weather in a city.",
        "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}},
                       "required": ["city"]}}]}]},
    "taskbench": {"nodes": [{"id": "Weather Lookup", "desc": "The weather in a city.",
                             "input-type": ["text"], "output-type": ["text"]}], "links": []},
}


def pool_formats_page() -> str:
    from plancheck.corpus import pool_registry as registry
    from plancheck.corpus.pool_registry import pool_format_of

    listed: tuple[Any, ...] = getattr(registry, "pool_formats", lambda: registry.POOL_FORMATS)()

    lines = ["# Tool-pool formats", "",
             "Generated from the registry `POOL_FORMATS` (`plancheck/corpus/pool_registry.py`), "
             "in the order they are tried on a JSON value given to `--tools`, "
             "`plancheck.load_toolset` or `plancheck.Guard`. Besides these, `--tools` takes "
             "plancheck's workflow DSL (`.wf`), an official DisasterBench release directory and "
             "`dora` (DORA's 108 tools). Each example below is recognised through the registry "
             "when this page is made.", "",
             "See [adding a pool format](adding-a-pool-format.md).", ""]
    for pool_format in listed:
        described = _doc(pool_format.sniff, "plancheck.corpus.pool_registry")
        lines += [f"## `{pool_format.name}`", "", *([described, ""] if described else [])]
        suffixes = getattr(pool_format, "suffixes", ())
        if suffixes:
            lines += ["Files: " + ", ".join(f"`{suffix}`" for suffix in suffixes)
                      + " (read by this format, not sniffed).", ""]
        if pool_format.outputs_are_fields:
            lines += ["A tool returns one JSON result; its outputs are that result's fields.", ""]
        example = getattr(pool_format, "example", None) or POOL_FORMAT_EXAMPLES.get(
            pool_format.name)
        if example is None:
            continue
        if pool_format_of(example) is not pool_format:
            raise ValueError(f"the example of pool format {pool_format.name} is not read as one")
        lines += ["```json", json.dumps(example, indent=2), "```", ""]
    return "\n".join(lines)


def _syntaxes() -> list[tuple[str, str, str | None]]:
    """(name, description, example) of each reference syntax: from the registry
    ``REFERENCE_SYNTAXES`` (an example is the first code span of a description), else from the
    syntax names and the table in ``plancheck.compiler.refsyntax``'s docstring."""
    from plancheck.compiler import refsyntax

    registry = getattr(refsyntax, "REFERENCE_SYNTAXES", None)
    if registry is not None:
        out = []
        for name, syntax in registry.items():
            spans = re.findall(r"`([^`]+)`", syntax.description)
            out.append((name, syntax.description, spans[0] if spans else None))
        return out
    from plancheck.compiler.call_formats import SYNTAXES

    table: dict[str, str] = {}
    for line in (refsyntax.__doc__ or "").splitlines():
        if line.startswith("``"):
            parts = line.split("``")
            table[parts[1]] = parts[3]
    return [(name, f"`{table[name]}`" if name in table else "", table.get(name))
            for name in SYNTAXES]


def reference_syntaxes_page() -> str:
    from plancheck.compiler import refsyntax

    lines = ["# Reference syntaxes", "",
             "How an argument names the result of an earlier call, in each corpus plancheck "
             "reads. Generated from the registry of syntaxes (`plancheck/compiler/refsyntax.py`; "
             "`--reference-syntax NAME` reads one only); each example is parsed by it when this "
             "page is made. By default every syntax is tried; whether calls count from 0 or 1 "
             "is read per plan from its references. Text that only looks like a reference "
             "(`\"<output of step 2>\"`) is a [PC209](codes/PC209.md) warning.", "",
             "| syntax | written | the example names the call | and its output |",
             "| --- | --- | --- | --- |"]
    for name, description, example in _syntaxes():
        if example is None:
            lines.append(f"| `{name}` | {description} | | |")
            continue
        match = refsyntax.parse(example, (name,))
        if not isinstance(match, refsyntax.RefMatch) or match.syntax != name:
            raise ValueError(f"the example of reference syntax {name} does not parse as one")
        call = f"number {match.number}" if match.number is not None else f"label `{match.label}`"
        key = f"`{match.key}`" if match.key else "its whole result"
        lines.append(f"| `{name}` | {description} | {call} | {key} |")
    return "\n".join([*lines, ""])


# ------------------------------------------------------------------------------ main


def write(out_dir: Path, generated: Callable[[], dict[str, str]] = pages) -> list[Path]:
    written = []
    for name, text in generated().items():
        path = out_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("out_dir", type=Path, help="where to write the pages")
    args = parser.parse_args(argv)
    written = write(args.out_dir)
    print(f"{len(written)} pages written under {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
