"""``plancheck score --gold TASK_FILES... RUN`` and ``plancheck report`` for DORA runs.

``score`` hands over here when its gold is DORA's task files (see
:mod:`plancheck.scoring.dora_run`): it prints DORA's results table (or the summary as JSON) and
writes one line per gold task with ``--per-item``; ``report`` renders the table again from
such lines (which files are DORA's, the recogniser says:
:func:`plancheck.formats.sniff.dora_per_item_files`).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from plancheck.fileio import read_bytes_limited


def run_score(args: argparse.Namespace, gold_paths: list[str]) -> int:
    from plancheck.cli.common import load_toolset_or_exit, per_item_writer, print_plain
    from plancheck.dora.errors import DoraInputError, DoraRunError
    from plancheck.dora.polygons import PolygonWarning
    from plancheck.scoring.dora_run import load_gold, load_run, score_run

    gold_warnings: list[str] = []
    try:
        gold, gold_roots = load_gold(gold_paths, gold_warnings)
        run = load_run(args.predictions, gold)
    except DoraRunError as error:
        print(f"plancheck: error[PC001]: {error}", file=sys.stderr)
        return EXIT_ERROR
    toolset, problems = load_toolset_or_exit(args.tools or "dora")
    if toolset is None:
        print_plain(problems)
        return EXIT_ERROR
    roots = [*dict.fromkeys(gold_roots), *run.roots]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PolygonWarning)
            results = score_run(gold, run, roots, toolset)
    except DoraInputError as error:
        print(f"plancheck: error[PC007]: {error}", file=sys.stderr)
        return EXIT_ERROR
    # A polygon file that cannot be read scores 0, as in DORA; say which, once each.
    for message in dict.fromkeys(str(w.message) for w in caught
                                 if issubclass(w.category, PolygonWarning)):
        print(f"plancheck: warning: {message}", file=sys.stderr)
    if args.per_item:
        writer = per_item_writer(args.per_item)
        if writer is False:
            return EXIT_ERROR
        try:
            with writer:
                for item in results.items:
                    writer.write(json.dumps(item, ensure_ascii=False, sort_keys=True))
        except OSError as error:
            print(f"plancheck: error[PC001]: cannot write {args.per_item}: "
                  f"{error.strerror or error}", file=sys.stderr)
            return EXIT_ERROR
    if args.format == "json":
        print(json.dumps({"schema_version": 1, "benchmark": "dora", "gold": gold_paths,
                          "run": args.predictions, **results.summary}, indent=2))
    else:
        from plancheck.scoring.dora_run import results_table

        sys.stdout.write(results_table(results.summary))
    for message in [*gold_warnings, *results.warnings]:
        print(f"plancheck: warning: {message}", file=sys.stderr)
    malformed = run.found.malformed
    for problem in malformed[:5]:
        print(f"plancheck: error[PC100]: {problem}; skipped", file=sys.stderr)
    if len(malformed) > 5:
        print(f"plancheck: and {len(malformed) - 5} more line(s) skipped", file=sys.stderr)
    unmatched = results.summary["unmatched_records"]
    if unmatched:
        print(f"plancheck: {unmatched} record(s) answer no gold task and were not scored",
              file=sys.stderr)
    _warn_repeated(run.records)
    # No dimension scored (no gold, or a run answering none of it): DORA's table, score 0,
    # and a finding, never a pass.
    nothing = not any(f.get("n_tasks", 0) for f in results.summary["dimensions"].values())
    return EXIT_FINDINGS if malformed or unmatched or nothing else EXIT_OK


def _warn_repeated(records: dict[str, list[dict[str, object]]]) -> None:
    """Several records for one task collapse into one (the last, as DORA merges them): say
    so, rather than score fewer answers than the run holds in silence."""
    from collections import Counter

    from plancheck.dora.predictions import record_task

    for dimension, found in records.items():
        counts = Counter(record_task(record) for record in found)
        repeated = {task: n for task, n in counts.items() if n > 1}
        for (sample, index), n in list(repeated.items())[:5]:
            print(f"plancheck: warning: {n} records of {dimension} answer task {index} of "
                  f"sample {sample}; the last one is scored (an answer or trajectory it lacks "
                  "is the one before)", file=sys.stderr)
        if len(repeated) > 5:
            print(f"plancheck: warning: and {len(repeated) - 5} more tasks of {dimension} "
                  "answered more than once", file=sys.stderr)


def run_report(args: argparse.Namespace, files: list[Path]) -> int:
    from plancheck.scoring.dora_run import iter_items, results_table, summary_from_items

    root = Path(args.results)
    documents = {}
    for file in files:
        items = list(iter_items(read_bytes_limited(file).decode("utf-8", errors="replace")))
        name = str(file.relative_to(root)) if root.is_dir() else file.name
        documents[name] = summary_from_items(items)
        if not items:
            print(f"plancheck: warning: {name} holds no per-item lines (a run in which nothing "
                  "was scored): its table is empty and its DORA score 0", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(documents, indent=2))
        return EXIT_OK
    for name, summary in documents.items():
        sys.stdout.write(f"{name}\n{results_table(summary)}\n")
    return EXIT_OK
