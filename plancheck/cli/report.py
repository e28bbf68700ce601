"""``plancheck report``: the paper's tables (and plots) from per-item score files laid out as
``RESULTS_DIR/<model>/<method>/per_item.jsonl``."""

from __future__ import annotations

import argparse
import sys

from plancheck import TYPE_CHECKING
from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
from plancheck.cli.common import max_size_option

if TYPE_CHECKING:
    from plancheck.scoring.report import Results

_TABLE_CHOICES = ("em", "fpof", "tool_vs_em", "gap_by_method", "depth", "composition", "all")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    max_size_option(parser)
    parser.add_argument(
        "results",
        metavar="RESULTS_DIR",
        help="a directory of <model>/<method>/per_item.jsonl files (written by "
        "`plancheck score --per-item`), or one such file",
    )
    parser.add_argument(
        "--gold",
        metavar="BENCHMARK",
        default=None,
        help="the benchmark JSONL, for depth and composition (default: the "
        "release's benchmark.jsonl when present)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "markdown", "latex", "csv", "json"),
        default="text",
        help="output format (default text)",
    )
    parser.add_argument(
        "--table",
        action="append",
        choices=_TABLE_CHOICES,
        metavar="NAME",
        help="a table to print: em (Table 2), fpof (Table 3), tool_vs_em "
        "(Table 17), gap_by_method (Section 4.3), depth (Figure 2), composition; "
        "repeatable (default: all)",
    )
    parser.add_argument(
        "--ci",
        action="store_true",
        help="show bootstrap 95%% intervals in text, Markdown and LaTeX (CSV and "
        "JSON always carry them)",
    )
    parser.add_argument(
        "--plots",
        metavar="DIR",
        default=None,
        help="also write depth.png and fpof.png to DIR (needs matplotlib: "
        "pip install 'plancheck[plot]')",
    )
    parser.add_argument(
        "--depth-cap",
        type=int,
        default=4,
        metavar="D",
        help="pool depths >= D into one bucket (default 4)",
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="B",
        help="bootstrap resamples (default 1000; 0: no intervals)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")


def run(args: argparse.Namespace) -> int:
    from plancheck.cli.dora_score import run_report
    from plancheck.formats.sniff import dora_per_item_files
    from plancheck.scoring.gold import GoldError, GoldIndex
    from plancheck.scoring.report import (
        TABLES,
        ReportError,
        build_tables,
        load_results,
        render_tables,
    )

    dora = dora_per_item_files(args.results)
    if dora is not None:  # per-item lines of a DORA run
        return run_report(args, dora)
    if _empty_file(args.results):  # nothing tells whose: said, never reported as a pass
        print(f"plancheck: warning[PC117]: {args.results} holds no per-item lines (a run in "
              "which nothing was scored); there is nothing to report", file=sys.stderr)
        return EXIT_FINDINGS
    if args.depth_cap < 1:
        raise UsageError("--depth-cap must be at least 1")
    if args.bootstrap < 0:
        raise UsageError("--bootstrap must be 0 or more")
    gold = None
    gold_path = args.gold or _default_gold()
    if gold_path is not None:
        try:
            gold = GoldIndex.load(gold_path)
        except GoldError as error:
            from plancheck.cli.common import print_plain

            print_plain(error.diagnostics)
            return EXIT_ERROR
    names = TABLES if not args.table or "all" in args.table else tuple(dict.fromkeys(args.table))
    if gold is None and any(name in ("depth", "composition") for name in names):
        print(
            "plancheck: note: no gold plans (--gold BENCHMARK), so no depth and composition tables",
            file=sys.stderr,
        )
    try:
        results = load_results(args.results, gold)
    except ReportError as error:
        print(f"plancheck: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    if results.skipped_lines:
        print(
            f"plancheck: warning: skipped {results.skipped_lines} per-item line(s) that are "
            "not JSON objects",
            file=sys.stderr,
        )
    _warn_unusable(results)
    tables = build_tables(
        results, names=names, depth_cap=args.depth_cap, resamples=args.bootstrap, seed=args.seed
    )
    sys.stdout.write(render_tables(tables, args.format, ci=args.ci))
    if args.plots:
        from plancheck.scoring.plots import PlotError, write_plots

        try:
            for path in write_plots(tables, args.plots):
                print(f"wrote {path}", file=sys.stderr)
        except PlotError as error:
            print(f"plancheck: error: {error}", file=sys.stderr)
            return EXIT_ERROR
    return EXIT_OK


def _warn_unusable(results: Results) -> None:
    """Lines the tables leave out or read only in part, said rather than counted as misses."""
    for (model, method), run in results.runs.items():
        if not run.n:  # shown as "-": say why
            print(f"plancheck: warning: {model}/{method} holds no per-item lines (a run in "
                  "which nothing was scored)", file=sys.stderr)
    for problem in results.unusable[:5]:
        print(f"plancheck: warning: {problem}; line left out", file=sys.stderr)
    if len(results.unusable) > 5:
        print(f"plancheck: warning: and {len(results.unusable) - 5} more line(s) left out",
              file=sys.stderr)
    if results.unknown_fpof:
        kinds = ", ".join(f"`{k}` ({n})" for k, n in results.unknown_fpof.most_common(5))
        print(f"plancheck: warning: FPoF types plancheck does not know, counted as Structural "
              f"Error: {kinds}", file=sys.stderr)
    if results.unknown_tasks:
        print(f"plancheck: warning: {results.unknown_tasks} item(s) name no task of the gold "
              "file: left out of the depth and composition tables", file=sys.stderr)


def _empty_file(path: str) -> bool:
    import os

    try:
        with open(path, "rb") as handle:
            return os.fstat(handle.fileno()).st_size == 0 or not handle.read(1 << 16).strip()
    except OSError:
        return False  # a directory, or unreadable: the reader says


def _default_gold() -> str | None:
    from plancheck.corpus.paths import release_dir

    path = release_dir() / "benchmark.jsonl"
    from plancheck.fileio import is_file

    return str(path) if is_file(path) else None
