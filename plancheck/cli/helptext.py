"""What ``plancheck [COMMAND] --help`` prints after the options: examples and exit statuses.

Only ``--help`` imports this module (``plancheck.cli._Parser.format_help``). The examples run
from a clone's root (``tests/cli/test_help.py`` runs each one whose files a clone has), and the
docs' command-line reference is these pages.
"""

from __future__ import annotations

_USAGE = "2  usage, I/O, configuration or internal error (never a traceback)"

# command -> (examples, exit statuses). An example is "COMMAND LINE  # what it does".
_PAGES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "": (
        ("plancheck examples/flood_plan.json                # lint a plan (= plancheck check)",
         "plancheck check --help                            # the options of one command",
         "plancheck explain PC301                           # what a diagnostic code means"),
        ("0  nothing reached the fail level (or the command succeeded)",
         "1  findings: diagnostics at the fail level, or what the command names",
         _USAGE, "130  interrupted"),
    ),
    "check": (
        ("plancheck check examples/flood_plan.json",
         "plancheck check examples/flood_plan.json --format concise --select PC2,PC3",
         "plancheck check examples/fog_plan.json --explain        # why dependencies conflict",
         "plancheck check examples/policy_plan.json --policy examples/flood_policy.wf --prefix",
         "plancheck check examples/dora/gold_trajectory.json --tools dora",
         "plancheck check calls.json --tools mcp_tools_list.json  # tool calls against an MCP pool",
         "plancheck check - < batch.jsonl                          # a JSONL batch on stdin"),
        ("0  nothing reached the fail level (--fail-level, default error)",
         "1  something did", _USAGE),
    ),
    "fmt": (
        ("plancheck fmt examples/fog_plan.json --to dsl",
         "plancheck fmt plan.wf --to json"),
        ("0  printed",
         "1  not printed: the plan has errors that keep it from being converted faithfully",
         _USAGE),
    ),
    "explain": (
        ("plancheck explain PC301", "plancheck explain unknown-tool", "plancheck explain"),
        ("0  explained (without CODE: every code listed)", "2  no such code"),
    ),
    "fix": (
        ("plancheck fix examples/flood_plan.json > fixed.json    # what changed: on stderr",
         "plancheck fix examples/fog_plan.json --in-place",
         "plancheck fix examples/policy_plan.json --policy examples/flood_policy.wf"),
        ("0  repaired (the repaired plan checks clean) or nothing to repair",
         "1  no repair found, or the solver ran out of time (--timeout-ms)", _USAGE),
    ),
    "synth": (
        ("plancheck synth --input data/radar.npy:RadarEchoSequence --input data/dem.tif "
         "--input roads.shp --goal depth_speed_model --max-steps 4 --limit 1 --format dsl",),
        ("0  at least one workflow found", "1  none within --max-steps",
         "2  usage error (an unknown goal or type, an input without a type)"),
    ),
    "compile": (
        ("plancheck compile examples/fog_plan.json --to python -o fog_plan.py",),
        ("0  compiled",
         "1  compiled despite errors (printed), or a plan that cannot be represented or "
         "breaks a deny policy was refused", _USAGE),
    ),
    "score": (
        ("plancheck score --gold ../shared/disasterbench/benchmark.jsonl "
         "../shared/parity/cases.jsonl --per-item items.jsonl",
         "plancheck score --gold ../shared/disasterbench/benchmark.jsonl results/m/cot "
         "--parity-only",
         "plancheck score --gold examples/dora/tasks examples/dora/run --per-item items.jsonl"),
        ("0  every prediction scored",
         "1  some predictions had no gold plan or could not be read, or broke a deny policy",
         "2  usage or I/O error, or no prediction could be paired with a gold plan"),
    ),
    "report": (
        ("plancheck report examples/results --table em --format markdown",
         "plancheck report examples/results --plots plots/        # needs plancheck[plot]"),
        ("0  printed", _USAGE),
    ),
    "plan": (
        ("plancheck plan --tasks ../shared/disasterbench/benchmark.jsonl --out results/solver",
         "plancheck plan --method cot --model gpt-4o-mini --check "
         "--tasks ../shared/disasterbench/benchmark.jsonl --out results/gpt-4o-mini/cot-check"),
        ("0  every task planned (a rerun resumes where a run stopped)",
         "1  some tasks ended in an error, or plans break a deny policy (--policy)", _USAGE,
         "130  interrupted: finished tasks are kept"),
    ),
    "toolset": (
        ("plancheck toolset show --tools dora",
         "plancheck toolset lint examples/flood_policy.wf",
         "plancheck toolset export --to mcp -o disasterbench.mcp.json"),
        ("0  done (lint: no error)", "1  lint found errors", _USAGE),
    ),
    "mcp-proxy": (
        ("plancheck mcp-proxy -- npx -y @modelcontextprotocol/server-filesystem /data",
         "plancheck mcp-proxy --policy rules.wf --profile strict -- python my_server.py"),
        ("0  the client closed the session",
         "2  the server could not be started or exited with an error status, a pool or policy "
         "cannot be used, or the MCP SDK is missing (pip install 'plancheck[mcp]')"),
    ),
}


def examples(command: str) -> tuple[str, ...]:
    """The example command lines of ``command`` ("" for ``plancheck`` itself)."""
    return tuple(line.split("  #")[0].rstrip() for line in _PAGES.get(command, ((), ()))[0])


def epilog(prog: str) -> str | None:
    """The text after the options of ``prog`` (``plancheck`` or ``plancheck COMMAND``)."""
    words = prog.split()
    page = _PAGES.get(" ".join(words[1:2]))
    if page is None or len(words) > 2:  # `plancheck toolset show`: its command's page
        return None
    lines = ["examples:", *(f"  {line}" for line in page[0]), "", "exit status:",
             *(f"  {line}" for line in page[1])]
    return "\n".join(lines)
