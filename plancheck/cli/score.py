"""``plancheck score``: score predictions against gold plans (the reference's metrics, FPoF,
execution equivalence, static validity, F1s), streaming, with per-item output.

Levels: ``--parity-only`` (the reference's metrics and FPoF), ``--no-extended`` (plus execution
equivalence and static checks), or everything (plus TaskBench F1s and DORA trajectories)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, NamedTuple

from plancheck.cli import EXIT_ERROR, UsageError
from plancheck.cli.common import (
    forced_syntax,
    max_size_option,
    overwrites_an_input,
    policy_option,
    reference_syntax_option,
    toolset_option,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    max_size_option(parser)
    parser.add_argument(
        "predictions",
        nargs="*",
        metavar="PRED",
        help="JSONL of {id?, task_id, completion | plan} records (e.g. "
        "results/<model>/<method>/predictions.jsonl, or that directory: the runner's output), "
        "or an official *_detailed_predictions.json",
    )
    parser.add_argument(
        "--gold",
        required=True,
        nargs="+",
        action="extend",
        metavar="GOLD",
        help="the benchmark JSONL (records matched by task_id), or one gold plan "
        "(.json) every prediction is compared with; or DORA's task files (or their "
        "directory), then PRED is a DORA run directory or benchmark.jsonl",
    )
    parser.add_argument(
        "--per-item",
        metavar="FILE",
        default=None,
        help="write one JSON line per prediction to FILE",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=1,
        metavar="N",
        help="score in N processes, at most one per usable CPU (default 1)",
    )
    parser.add_argument(
        "--raw",
        action="store_true",
        help="detailed predictions: re-score raw_selected_completion instead of model_answer",
    )
    parser.add_argument(
        "--scoring",
        choices=("reference", "strict"),
        default=None,
        help="reference: read answers exactly as the reference evaluator does (json-repair, "
        "wrappers, alias keys; the default); strict: no leniency, one JSON document of "
        "schema-exact steps, or it is a format error",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="the same as --scoring strict",
    )
    parser.add_argument(
        "--parity-only",
        action="store_true",
        help="only the reference evaluator's metrics and the first point of failure: no "
        "execution equivalence (written as null), static checks, F1s or trajectory metrics; "
        "fastest",
    )
    parser.add_argument(
        "--no-extended",
        action="store_true",
        help="skip the TaskBench F1s and the DORA trajectory metrics (the reference's "
        "metrics, FPoF, execution equivalence and static checks remain)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="summary format")
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="B",
        help="bootstrap resamples for the 95%% intervals (0: none)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run from the FILE.partial it left (--per-item FILE): "
        "the predictions it scored are not scored again, and the result is the one an "
        "uninterrupted run gives",
    )
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (it is shown only on a terminal anyway)")
    toolset_option(parser)
    policy_option(parser)
    # As check's: a chat API's calls declare no syntax, so predictions in those shapes that
    # write references (templates, say) are read with them only when it is named.
    reference_syntax_option(parser)


def run(args: argparse.Namespace) -> int:
    """Score with the first scorer of :data:`SCORERS` that the gold data is for, every input
    read with the reference syntax ``--reference-syntax`` forces (if any)."""
    if overwrites_an_input(args, "per_item", "--per-item"):
        return EXIT_ERROR
    from plancheck.compiler.forced_formats import forced

    with forced(None, forced_syntax(args)):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    golds = list(args.gold)
    from plancheck.formats.sniff import is_dora_gold

    # What the inputs are is the recogniser's to say (the gold first, then the rest: a DORA
    # gold directory is told by the run too).
    kind = "dora" if is_dora_gold([*golds, *args.predictions]) else None
    for scorer in SCORERS:
        if scorer.kind is not None and scorer.kind == kind:
            return scorer.run(args, golds)
    # One benchmark file: whatever argparse gathered after it (`--gold G P1 P2`) is PRED.
    args.predictions = [*args.predictions, *golds[1:]]
    if not args.predictions:
        raise UsageError("score needs at least one PRED")
    args.gold = golds[0]
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.bootstrap < 0:
        raise UsageError("--bootstrap must be 0 or more")
    if args.strict and args.scoring == "reference":
        raise UsageError("--strict and --scoring reference contradict each other")
    from plancheck.cli.common import once_each

    args.predictions = once_each(args.predictions, "scored once")
    from plancheck.cli.common import print_plain
    from plancheck.compiler.frontends import read_text

    gold_text, problem = read_text(args.gold)
    if gold_text is None:
        assert problem is not None
        print_plain([problem.with_context(file=args.gold, record=None)])
        return EXIT_ERROR
    for scorer in SCORERS:
        if scorer.reads_text is not None:
            found = scorer.reads_text(gold_text, args.gold)
            if found is not None:
                return scorer.run(args, found)
    raise AssertionError("the last scorer takes any gold file")


class Scorer(NamedTuple):
    """One kind of gold data ``plancheck score`` scores against. A kind is told either by its
    gold paths, as the recogniser (:mod:`plancheck.formats.sniff`) names them (``kind``:
    ``"dora"`` for DORA's task files, a directory of them), or by the text of one gold file
    (``reads_text``: what the kind's ``run`` needs of it, or None when the file is not of that
    kind). Adding a scorer: its module, and one line in :data:`SCORERS`."""

    name: str
    run: Callable[[argparse.Namespace, Any], int]
    kind: str | None = None
    reads_text: Callable[[str, str], Any] | None = None


def _score_dora_runs(args: argparse.Namespace, golds: list[str]) -> int:
    _no_resume(args, "DORA runs")
    if "tools" in getattr(args, "configured", ()):
        args.tools = None  # a project's pool is not DORA's: DORA runs are read against DORA's
    if args.policy is not None and "policy" in getattr(args, "configured", ()):
        import sys

        print(f"plancheck: warning: the configured policy {args.policy} is not decided on DORA "
              "runs by `score`; check their trajectories with `plancheck check RUN`",
              file=sys.stderr)
        args.policy = None
    if args.policy is not None:
        raise UsageError("--policy is not decided on DORA runs by `score`; check their "
                         "trajectories with `plancheck check RUN --policy FILE`")
    if not args.predictions and len(golds) > 1:
        args.predictions = [golds.pop()]  # `--gold A B RUN`: the last one is the run
    if not args.predictions:
        raise UsageError("score needs at least one PRED")
    from plancheck.cli.dora_score import run_score

    return run_score(args, golds)


def _call_gold(text: str, file: str) -> Any:
    from plancheck.scoring.callscore import call_gold

    return call_gold(text, file)


def _score_calls(args: argparse.Namespace, calls: Any) -> int:
    """Tool-call gold plans: the metrics defined on calls."""
    _no_resume(args, "tool calls")
    from plancheck.cli.common import load_toolset_or_exit, print_plain
    from plancheck.cli.score_calls import run_calls

    pool, pool_problems = load_toolset_or_exit(args.tools)
    if pool is None:
        print_plain(pool_problems)
        return EXIT_ERROR
    return run_calls(args, calls, pool)


def _no_resume(args: argparse.Namespace, what: str) -> None:
    if args.resume:
        raise UsageError(f"--resume continues DisasterBench scoring; scoring {what} is quick "
                         "to rerun from the start")


def _any_gold_file(text: str, _file: str) -> str:
    return text


def _score_benchmark(args: argparse.Namespace, gold_text: str) -> int:
    from plancheck.cli.score_benchmark import run_benchmark

    return run_benchmark(args, gold_text)


# In the order they are tried: the last takes any gold file (and says what is wrong with it).
SCORERS: tuple[Scorer, ...] = (
    Scorer("DORA runs", _score_dora_runs, kind="dora"),
    Scorer("tool calls", _score_calls, reads_text=_call_gold),
    Scorer("DisasterBench", _score_benchmark, reads_text=_any_gold_file),
)
