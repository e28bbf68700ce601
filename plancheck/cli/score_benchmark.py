"""``plancheck score`` against DisasterBench gold plans (a benchmark JSONL, or one gold plan):
the reference's metrics, FPoF, execution equivalence, static validity and F1s, streaming, with
per-item output and a summary of each prediction file and of all of them."""

from __future__ import annotations

import argparse
import sys
from collections import deque
from pathlib import Path
from typing import Any

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError

_SHOWN_PROBLEMS = 5


def run_benchmark(args: argparse.Namespace, gold_text: str) -> int:
    """Score ``args.predictions`` against the gold plans of ``args.gold`` (its text read)."""
    from plancheck.cli.common import load_toolset_or_exit, per_item_writer, print_plain
    from plancheck.fileio import is_dir, path_exists
    from plancheck.formats.sniff import is_scored_line
    from plancheck.scoring.batch import (
        InputError,
        ScoreOptions,
        Summary,
        read_records,
        score_records,
    )
    from plancheck.scoring.gold import GoldError, GoldIndex

    try:
        gold = GoldIndex.parse(gold_text, args.gold)
    except GoldError as error:
        print_plain(error.diagnostics)
        return EXIT_ERROR
    toolset, toolset_problems = load_toolset_or_exit(args.tools)
    if toolset is None:
        print_plain(toolset_problems)
        return EXIT_ERROR
    from plancheck.cli.policy_verdicts import PolicyVerdicts, with_policy

    verdicts = None
    if args.policy is not None:
        verdicts = PolicyVerdicts.load(args.policy, toolset)
        if verdicts is None:
            return EXIT_ERROR
    # Each record's policy diagnostics, in record order: items come back in that order.
    judged: deque[list[Any]] = deque()
    # A directory stands for the planner runner's output in it.
    inside = {path: str(Path(path) / "predictions.jsonl") for path in args.predictions
              if path != "-" and is_dir(path)}
    folders = {file: folder for folder, file in inside.items()}
    args.predictions = [inside.get(path, path) for path in args.predictions]
    unreadable = {path: why for path in args.predictions
                  if path != "-" and (why := _unreadable(path)) is not None}
    if unreadable:
        for path, why in unreadable.items():
            if path in folders:
                why = (f"a directory stands for the predictions.jsonl that `plancheck plan "
                       f"--out {folders[path]}` writes there, and it has none")
            print(f"plancheck: error[PC001]: cannot read {path}: {why}", file=sys.stderr)
        return EXIT_ERROR
    options = ScoreOptions(
        strict=args.strict or args.scoring == "strict",
        raw=args.raw,
        static=not args.parity_only,
        extended=not (args.parity_only or args.no_extended),
        equivalence=not args.parity_only,
        lines=args.per_item is not None,  # no per-item file: no line is rendered
    )
    summaries = {path: Summary(name=path) for path in args.predictions}
    total = Summary(name="all")
    # With one file (every item is its), the total counts what the file's summary counts:
    # added up once, and copied when done.
    single = summaries[args.predictions[0]] if len(summaries) == 1 else None
    problems: list[str] = []
    from plancheck.scoring.per_item_writer import partial_path, state_path
    from plancheck.scoring.resume import ResumeError, absolute, header, item_line, load_state

    settings = {"gold": absolute(args.gold),
                "predictions": [absolute(path) for path in args.predictions],
                "scoring": "strict" if options.strict else "reference", "raw": args.raw,
                "parity_only": args.parity_only, "no_extended": args.no_extended,
                "policy": None if args.policy is None else absolute(args.policy),
                "tools": args.tools}
    resumed: list[Any] = []
    resumed_from = None
    if args.resume:
        if not args.per_item:
            raise UsageError("--resume continues the FILE.partial of --per-item FILE; give "
                             "--per-item")
        resumed_from = partial_path(args.per_item)
        if not path_exists(resumed_from):
            print(f"plancheck: note: there is no {resumed_from} to resume from; scoring "
                  "from the start", file=sys.stderr)
            resumed_from = None
        else:
            try:
                resumed = load_state(resumed_from, settings)
            except ResumeError as error:
                print(f"plancheck: error: cannot resume from {resumed_from}: {error}",
                      file=sys.stderr)
                return EXIT_ERROR

    runner_errors: dict[str, int] = {}
    repeated: dict[str, int] = {}
    scores: list[str] = []  # prediction files that hold scores (per-item lines), not predictions

    def records() -> Any:
        for path in args.predictions:
            ids: set[str] = set()
            for number, record in enumerate(read_records(path)):
                if number == 0 and record.text is not None and is_scored_line(record.text):
                    scores.append(path)
                    break
                if record.text is not None:
                    if _runner_error(record.text):
                        runner_errors[path] = runner_errors.get(path, 0) + 1
                    ident = _runner_id(record.text)
                    if ident is not None:
                        if ident in ids:
                            repeated[path] = repeated.get(path, 0) + 1
                        ids.add(ident)
                if verdicts is not None:
                    judged.append(_judge(verdicts, record))
                yield record

    def items() -> Any:
        """The items of the interrupted run resumed (their records read, not scored again),
        then the rest, scored."""
        source = records()
        for _ in resumed:
            if next(source, None) is None:
                raise InputError(f"the predictions hold fewer records than {resumed_from} "
                                 "scored: they changed since; score from the start")
        yield from resumed
        resumed.clear()
        yield from score_records(source, gold, toolset, options, jobs=args.jobs,
                                 gold_text=gold_text)

    from plancheck.cli.score_progress import ScoreProgress

    progress = ScoreProgress.for_files(args.predictions, enabled=not args.no_progress)
    tasks_scored: dict[str, dict[str, int]] = {}  # file -> task -> predictions scored
    replaying = len(resumed)  # the first items: resumed, their lines as written then
    writer = per_item_writer(args.per_item, state=True) if args.per_item else None
    if writer is False:
        return EXIT_ERROR
    try:  # (from the writer's creation on: a signal anywhere leaves no temporary or lock)
        if writer is not None:
            writer.write_state(header(settings))
        for item in items():
            progress.tick()
            found = judged.popleft() if verdicts is not None else []
            if writer is not None:
                # The line first, then the state: stopped between the two, the .partial has
                # a line the state lacks, which a resume drops (and scores its record again).
                if item.line is not None:
                    writer.write(item.line if replaying or verdicts is None
                                 else with_policy(item.line, found))
                writer.write_state(item_line(item))
            replaying = max(replaying - 1, 0)
            if item.scored and item.task_key is not None:
                per_task = tasks_scored.setdefault(item.source, {})
                per_task[item.task_key] = per_task.get(item.task_key, 0) + 1
            if single is not None:
                single.add(item)
            else:
                summary = summaries.get(item.source) or summaries.get(
                    "-" if item.source == "<stdin>" else item.source
                )
                if summary is not None:
                    summary.add(item)
                total.add(item)
            if item.problem is not None and len(problems) < _SHOWN_PROBLEMS:
                problems.append(f"{item.source}: {item.problem}")
    except InputError as error:
        progress.finish()
        if writer:
            writer.discard()  # the previous per-item file, if any, stays as it was
        print(f"plancheck: error[PC001]: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM, SIGHUP
        progress.finish()
        if writer:
            # The old file stays; the complete lines scored so far go beside it.
            partial, replaced = writer.close_partial(replaces=resumed_from)
            kept = "" if replaced or partial == partial_path(args.per_item) else (
                f" ({partial_path(args.per_item)}, of an earlier run, is kept)")
            print(f"plancheck: interrupted: {args.per_item} is left as it was; the "
                  f"{progress.count} predictions scored so far are in {partial}{kept}; "
                  "rerun the same command with --resume to continue",
                  file=sys.stderr)
        raise
    except BaseException:
        progress.finish()
        if writer:
            writer.discard()
        raise
    progress.finish()
    if writer:
        try:
            writer.close()
        except OSError as error:
            print(f"plancheck: error[PC001]: cannot write {args.per_item}: "
                  f"{error.strerror or error}", file=sys.stderr)
            return EXIT_ERROR
        if resumed_from is not None:  # continued to the end: the .partial is in the file now
            import contextlib
            import os

            for done in (resumed_from, state_path(resumed_from)):
                with contextlib.suppress(OSError):
                    os.unlink(done)
    for path in scores:
        print(f"plancheck: warning[PC117]: {path} holds the per-item lines `plancheck score` "
              "writes (scores, not predictions); nothing in it was scored", file=sys.stderr)
    for path, summary in summaries.items():
        if not summary.n and not summary.unmatched and path not in scores:  # never silent
            print(f"plancheck: warning[PC117]: {path} holds no records (no line that is not "
                  "blank); nothing was scored", file=sys.stderr)
    if single is not None:
        total = single.copy(name="all")
    documents = [
        s.to_dict(gold, resamples=args.bootstrap, seed=args.seed) for s in summaries.values()
    ]
    # The total is shown in JSON, and in text beside two files or more (with one file its
    # counts are the file's, so its intervals come from the bootstrap's memory).
    overall = (
        total.to_dict(gold, resamples=args.bootstrap, seed=args.seed)
        if args.format == "json" or len(documents) > 1
        else None
    )
    if args.format == "json":
        import json

        document: dict[str, Any] = {"schema_version": 1, "gold": args.gold,
                                    "files": documents, "total": overall}
        if verdicts is not None:
            document["policy"] = verdicts.to_dict()
        print(json.dumps(document, indent=2))
    else:
        from plancheck.scoring.report import render_score_summary

        for document in documents:
            print(render_score_summary(document, ci=args.bootstrap > 0))
        if overall is not None and len(documents) > 1:
            print(render_score_summary(overall, ci=args.bootstrap > 0))
    if verdicts is not None:
        if args.format != "json":
            print(verdicts.summary("predictions"))
        verdicts.print_first()
    for path, count in repeated.items():
        print(f"plancheck: warning: {path}: {count} record(s) repeat the id of an earlier "
              "record (two runs into one directory?); each was scored, so those tasks weigh "
              "more than once", file=sys.stderr)
    _warn_tasks_scored_twice(tasks_scored, repeated)
    for path, count in runner_errors.items():
        print(f"plancheck: warning: {path}: {count} record(s) hold no model output because "
              "the run failed (a transport or runner error, in their `error` field); they were "
              "scored as the model's empty output. Rerun them with `plancheck plan "
              "--retry-errors`", file=sys.stderr)
    if args.raw and total.malformed and total.malformed == total.n:
        print("plancheck: --raw scores `raw_selected_completion`, which no record has; --raw "
              "is for the official *_detailed_predictions.json files", file=sys.stderr)
    status = _exit_code(total, problems)
    return EXIT_FINDINGS if status == EXIT_OK and verdicts and verdicts.breaking else status


def _judge(verdicts: Any, record: Any) -> list[Any]:
    """The policy diagnostics of one prediction record (none for one that cannot be read:
    scoring counts it as a format error)."""
    import json

    if record.text is not None:
        text = record.text
    elif record.value is not None:
        text = json.dumps(record.value, ensure_ascii=False)
    else:
        return []
    return list(verdicts.of_record(text, record.source))


def _warn_tasks_scored_twice(tasks_scored: dict[str, dict[str, int]],
                             repeated: dict[str, int]) -> None:
    """Predictions that share a task (a repeated id, or two ids naming one task) are each
    scored, so the task weighs more than once: say so (once per file)."""
    for source, counts in tasks_scored.items():
        path = "-" if source == "<stdin>" else source
        twice = {task: n for task, n in counts.items() if n > 1}
        if not twice or path in repeated:  # (a repeated id of a run: said above)
            continue
        listed = ", ".join(f"{task} ({n} times)" for task, n in list(twice.items())[:5])
        more = f" and {len(twice) - 5} more" if len(twice) > 5 else ""
        print(f"plancheck: warning: {path}: {len(twice)} task(s) have more than one "
              f"prediction, each scored, so they weigh more than once: {listed}{more}",
              file=sys.stderr)


def _runner_id(line: str) -> str | None:
    """The id of a record as ``plancheck plan`` writes it (``{"id":"...",`` first), in O(1)."""
    if not line.startswith('{"id":"'):
        return None
    end = line.find('"', 7)
    return line[7:end] if end > 7 else None


def _runner_error(line: str) -> bool:
    """Whether a JSONL record is ``plancheck plan``'s record of a failed call (``error`` set,
    no completion). Most records say ``"error":null``; only the others are parsed."""
    if '"error"' not in line or '"error":null' in line or '"error": null' in line:
        return False
    import json

    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(record, dict) and bool(record.get("error")) and not record.get("completion")


def _unreadable(path: str) -> str | None:
    """Why ``path`` cannot be opened for reading (the system's words), or None."""
    try:
        with open(path, "rb"):
            return None
    except OSError as error:
        return error.strerror or str(error)


def _exit_code(total: Any, problems: list[str]) -> int:
    if total.unmatched:
        for problem in problems:
            print(f"plancheck: error[PC004]: {problem}", file=sys.stderr)
        print(
            f"plancheck: {total.unmatched} prediction(s) had no gold plan and were not scored",
            file=sys.stderr,
        )
    if total.malformed:
        print(
            f"plancheck: {total.malformed} record(s) could not be read and were scored as "
            "format_error",
            file=sys.stderr,
        )
    return EXIT_FINDINGS if total.unmatched or total.malformed else EXIT_OK
