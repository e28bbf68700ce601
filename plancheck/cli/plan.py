"""``plancheck plan``: generate plans for benchmark tasks with a planning method, resumably.

    plancheck plan --tasks ../shared/disasterbench/benchmark.jsonl --out results/solver
    plancheck plan --method cot --model gpt-4o-mini --check --out results/gpt-4o-mini/cot-check

The output directory gets ``predictions.jsonl`` (one record per task, for ``plancheck score``)
and ``config.json``; rerunning the same command resumes where it stopped.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from plancheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OK, UsageError
from plancheck.cli.common import max_size_option, policy_option, toolset_option
from plancheck.planners.base import DEFAULT_MAX_REQUESTS

# Method choices, spelled out here so that --help stays cheap (registry.METHODS is the truth;
# tests/planners/test_planners.py checks that they agree).
_METHODS = ("solver", "dp", "cot", "tot", "rap", "react",
            "shortest_path", "oracle_random", "dag_greedy_tfidf", "dag_beam_tfidf")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    max_size_option(parser)
    parser.add_argument("--method", default="solver", choices=_METHODS,
                        help="planning method (default: solver, which needs no model)")
    parser.add_argument("--tasks", metavar="BENCHMARK", default=None,
                        help="benchmark JSONL of {task_id, task_desc[, structured_plan]} "
                        "(default: benchmark.jsonl of the release in $PLANCHECK_DATA)")
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="output directory (default: results/<model>/<method>)")
    parser.add_argument("--limit", type=int, metavar="N", default=None,
                        help="only the first N tasks of the file")
    parser.add_argument("--concurrency", type=int, metavar="N", default=4,
                        help="tasks planned at once by the LLM methods (default 4; the "
                        "model-free planners run one at a time)")
    parser.add_argument("--retry-errors", action="store_true",
                        help="run again the tasks whose earlier result is an error")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (it is shown only on a terminal anyway)")
    toolset_option(parser)
    policy_option(parser, "decide the policies of FILE on every plan in the results (read "
                  "and refused, exit 2, before anything is planned): the plans that break a "
                  "deny rule are counted and make the exit status 1")

    model = parser.add_argument_group("model (the LLM methods)")
    model.add_argument("--model", default=None, help="model name sent to the endpoint")
    model.add_argument("--base-url", default=None,
                       help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL or OpenAI)")
    model.add_argument("--api-key-env", default=None, metavar="VAR",
                       help="environment variable holding the API key (default: "
                       "OPENAI_API_KEY, then OPENROUTER_API_KEY; loopback needs none)")
    model.add_argument("--temperature", type=float, default=None,
                       help="override the paper's per-method temperature (0.0 for dp, cot, "
                       "react; 0.5 for tot, rap)")
    model.add_argument("--max-tokens", type=int, default=2048, help="per completion (2048)")
    model.add_argument("--timeout", type=float, default=60.0, help="seconds per request (60)")
    model.add_argument("--max-retries", type=int, default=5,
                       help="retries on timeouts, 429 and 5xx (5)")
    model.add_argument("--max-requests", type=int, default=DEFAULT_MAX_REQUESTS, metavar="N",
                       help="HTTP requests one task may send, retries included; a task that "
                       f"needs more ends with an error ({DEFAULT_MAX_REQUESTS:,})")
    model.add_argument("--cache", metavar="FILE", default=None,
                       help="sqlite response cache (default: OUT/cache.sqlite)")
    model.add_argument("--no-cache", action="store_true", help="do not cache responses")
    model.add_argument("--price-in", type=float, default=None, metavar="USD",
                       help="price per million prompt tokens, for cost_usd")
    model.add_argument("--price-out", type=float, default=None, metavar="USD",
                       help="price per million completion tokens, for cost_usd")

    prompts = parser.add_argument_group("prompts")
    prompts.add_argument("--prompts", metavar="FILE", default=None,
                         help="YAML prompt templates laid out like the reference's "
                         "baseline_prompts/*.yaml (sections it lacks keep plancheck's own)")
    prompts.add_argument("--no-few-shot", action="store_true",
                         help="leave out the few-shot examples")
    prompts.add_argument("--postprocess", choices=("none", "reference"), default="none",
                         help="'reference': rewrite plans as the reference planners do before "
                         "scoring (the paper's numbers include it); default none")

    checker = parser.add_argument_group("checker in the loop")
    checker.add_argument("--check", action="store_true",
                         help="check every plan and feed the diagnostics back for a repair")
    checker.add_argument("--max-repairs", type=int, default=3, metavar="K",
                         help="repair rounds per task with --check (3)")
    checker.add_argument("--schema", action="store_true",
                         help="send the toolset's JSON Schema as response_format with the calls "
                         "that ask for a whole plan (dp, cot, react, repair rounds); falls back "
                         "to json_object, then to none, when the server refuses")

    method = parser.add_argument_group("method parameters (defaults: the reference's)")
    method.add_argument("--samples", type=int, default=16,
                        help="cot: self-consistency samples (16)")
    method.add_argument("--tot-steps", type=int, default=2, help="tot: search horizon (2)")
    method.add_argument("--tot-generate", type=int, default=7,
                        help="tot: candidates per active prefix (7)")
    method.add_argument("--tot-votes", type=int, default=5, help="tot: critic votes (5)")
    method.add_argument("--tot-select", type=int, default=1, help="tot: candidates kept (1)")
    method.add_argument("--rap-rollouts", type=int, default=5, help="rap: MCTS rollouts (5)")
    method.add_argument("--rap-depth", type=int, default=5, help="rap: maximum depth (5)")
    method.add_argument("--rap-subquestions", type=int, default=16,
                        help="rap: sub-questions sampled per expansion (16)")
    method.add_argument("--rap-confidence", type=int, default=32,
                        help="rap: answers sampled for self-consistency (32)")
    method.add_argument("--rap-w-exp", type=float, default=1.0,
                        help="rap: UCT exploration weight (1)")
    method.add_argument("--rap-alpha", type=float, default=0.5,
                        help="rap: reward r0^alpha * r1^(1-alpha) (0.5)")
    method.add_argument("--rap-r1-default", type=float, default=1.0,
                        help="rap: r1 of a node not yet evaluated (1)")
    method.add_argument("--rap-answer-rounds", type=int, default=32,
                        help="rap: sampling rounds before a sub-answer counts as failed (32)")
    method.add_argument("--seed", type=int, default=42, help="structural baselines: seed (42)")
    method.add_argument("--beam-width", type=int, default=3, help="dag_beam_tfidf: width (3)")
    method.add_argument("--topk-per-step", type=int, default=8,
                        help="dag_beam_tfidf: candidates per step (8)")
    method.add_argument("--global-topk", type=int, default=15,
                        help="dag_beam_tfidf: tools considered (15; 0 for all)")


def _parameters(args: argparse.Namespace) -> dict[str, Any]:
    """Every method parameter, keyed by the planners' own names."""
    return {
        "samples": args.samples,
        "steps": args.tot_steps, "generate_samples": args.tot_generate,
        "vote_samples": args.tot_votes, "select": args.tot_select,
        "rollouts": args.rap_rollouts, "max_depth": args.rap_depth,
        "subquestions": args.rap_subquestions, "confidence_samples": args.rap_confidence,
        "w_exp": args.rap_w_exp, "alpha": args.rap_alpha, "r1_default": args.rap_r1_default,
        "max_answer_rounds": args.rap_answer_rounds,
        "seed": args.seed, "beam_width": args.beam_width, "topk_per_step": args.topk_per_step,
        "global_topk": args.global_topk,
    }


def _validate(args: argparse.Namespace) -> None:
    positive = {"--concurrency": args.concurrency, "--max-tokens": args.max_tokens,
                "--max-requests": args.max_requests,
                "--samples": args.samples, "--tot-steps": args.tot_steps,
                "--tot-generate": args.tot_generate, "--tot-votes": args.tot_votes,
                "--tot-select": args.tot_select, "--rap-rollouts": args.rap_rollouts,
                "--rap-depth": args.rap_depth, "--rap-subquestions": args.rap_subquestions,
                "--rap-confidence": args.rap_confidence,
                "--rap-answer-rounds": args.rap_answer_rounds}
    for option, value in positive.items():
        if value < 1:
            raise UsageError(f"{option} must be at least 1")
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be 0 or more")
    if args.max_repairs < 0:
        raise UsageError("--max-repairs must be 0 or more")
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if args.max_retries < 0:
        raise UsageError("--max-retries must be 0 or more")
    if (args.price_in is None) != (args.price_out is None):
        raise UsageError("give both --price-in and --price-out, or neither")
    if args.no_cache and args.cache is not None:
        raise UsageError("--no-cache and --cache contradict each other")
    if args.temperature is not None and not 0.0 <= args.temperature <= 2.0:
        raise UsageError("--temperature must be between 0 and 2")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from plancheck.cli.common import load_toolset_or_exit, print_plain
    from plancheck.planners import registry
    from plancheck.planners.tasks import TaskFileError, load_tasks

    _validate(args)
    method = args.method
    llm = registry.needs_model(method)
    if llm and not args.model:
        raise UsageError(f"--method {method} needs --model (and usually --base-url)")
    if llm and not _openai_installed():
        print(f"plancheck: error: --method {method} needs the `openai` package, which is not "
              "installed; install it with `pip install 'plancheck[llm]'` (or `pip install "
              "openai`)", file=sys.stderr)
        return EXIT_ERROR
    if not llm:
        # --model too: a model-free run filed under results/<model>/ would pass for that
        # model's results.
        unused = [flag for flag, given in (("--model", args.model is not None),
                                           ("--base-url", args.base_url is not None),
                                           ("--check", args.check), ("--schema", args.schema),
                                           ("--prompts", args.prompts is not None),
                                           ("--postprocess", args.postprocess != "none"))
                  if given]
        if unused:
            raise UsageError(f"{', '.join(unused)} only apply to the LLM methods "
                             f"(dp, cot, tot, rap, react), not to {method}")
    toolset, problems = load_toolset_or_exit(args.tools)
    if toolset is None:
        print_plain(problems)
        return EXIT_ERROR
    verdicts = None
    if args.policy is not None:  # refused before OUT is touched
        from plancheck.cli.policy_verdicts import PolicyVerdicts

        verdicts = PolicyVerdicts.load(args.policy, toolset)
        if verdicts is None:
            return EXIT_ERROR
    tasks_path = Path(args.tasks) if args.tasks else _default_tasks()
    try:
        tasks, gold = load_tasks(tasks_path, limit=args.limit)
    except TaskFileError as error:
        print(f"plancheck: error[PC001]: {error}", file=sys.stderr)
        return EXIT_ERROR
    if registry.needs_gold(method):
        missing = [t.task_id for t in tasks if not gold.get(str(t.task_id))]
        if missing:
            print(f"plancheck: error: {method} is a structural baseline and needs the gold plan "
                  f"of every task; {tasks_path} has none for task {missing[0]}", file=sys.stderr)
            return EXIT_ERROR
    out = Path(args.out) if args.out else _default_out(args)
    try:
        spec = _spec(args, toolset, out, gold)
    except _SetupError as error:
        print(f"plancheck: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    status = _execute(args, spec, tasks, tasks_path, out)
    if verdicts is None or status not in (EXIT_OK, EXIT_FINDINGS):
        return status
    return max(status, _judge_results(verdicts, out / "predictions.jsonl"))


def _judge_results(verdicts: Any, path: Any) -> int:
    """The policies decided on every plan of the results (this run's and earlier ones'): the
    count of plans that break a deny rule, and the first violations."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        print(f"plancheck: error[PC001]: cannot read {path}: {error}", file=sys.stderr)
        return EXIT_ERROR
    for line in lines:
        if line.strip():
            verdicts.of_record(line, str(path))
    print(verdicts.summary())
    verdicts.print_first()
    return EXIT_FINDINGS if verdicts.breaking else EXIT_OK


class _SetupError(Exception):
    pass


def _openai_installed() -> bool:
    """Whether the LLM methods' client library imports (checked before OUT is touched)."""
    try:
        import openai  # noqa: F401
    except ImportError:
        return False
    return True


def _default_tasks() -> Any:
    from plancheck.corpus.paths import release_dir

    return release_dir() / "benchmark.jsonl"


def _method_dir(args: argparse.Namespace) -> str:
    suffix = ("-check" if args.check else "") + ("-schema" if args.schema else "")
    return f"{args.method}{suffix}"


def _default_out(args: argparse.Namespace) -> Any:
    from pathlib import Path

    model = args.model.replace("/", "-").replace(":", "_") if args.model else "model-free"
    return Path("results") / model / _method_dir(args)


def _spec(args: argparse.Namespace, toolset: Any, out: Any, gold: dict[str, Any]) -> Any:
    from plancheck.planners import registry

    spec = registry.PlannerSpec(args.method, toolset, parameters=_parameters(args), gold=gold)
    if not registry.needs_model(args.method):
        return spec
    from plancheck.planners.client import ClientConfig
    from plancheck.planners.llm import LLMOptions
    from plancheck.planners.prompts import PromptError, load_prompts

    try:
        spec.prompts = load_prompts(args.prompts)
    except PromptError as error:
        raise _SetupError(str(error)) from None
    cache = None if args.no_cache else (args.cache or str(out / "cache.sqlite"))
    from pathlib import Path

    spec.client = ClientConfig(model=args.model, base_url=args.base_url,
                               api_key_env=args.api_key_env, timeout_s=args.timeout,
                               max_retries=args.max_retries,
                               cache_path=Path(cache) if cache else None,
                               max_tokens=args.max_tokens)
    spec.options = LLMOptions(temperature=args.temperature, max_tokens=args.max_tokens,
                              few_shot=not args.no_few_shot, postprocess=args.postprocess,
                              check=args.check, max_repairs=args.max_repairs,
                              schema=args.schema, max_requests=args.max_requests)
    return spec


def _config(args: argparse.Namespace, spec: Any, tasks_path: Any) -> dict[str, Any]:
    """What ``config.json`` records: enough to rerun the experiment exactly."""
    import datetime
    import hashlib
    import json

    from plancheck import __version__
    from plancheck.planners import registry
    from plancheck.planners.endpoint import redact_url
    from plancheck.planners.prompts import manifest

    method = args.method
    toolset = spec.toolset
    tools_digest = hashlib.sha256(json.dumps(
        [manifest(toolset), sorted(toolset.flows)], sort_keys=True).encode()).hexdigest()
    if registry.needs_model(method):
        names = registry.METHOD_PARAMETERS[method]
    elif registry.needs_gold(method):
        names = registry.STRUCTURAL_PARAMETERS
    else:
        names = ()
    config: dict[str, Any] = {
        "method": method,
        "model": args.model if registry.needs_model(method) else None,
        "hyperparameters": {k: v for k, v in spec.parameters.items() if k in names},
        "toolset": {"name": toolset.name, "tools": len(toolset.tools), "sha256": tools_digest},
        "tasks": str(tasks_path),
        "limit": args.limit,
        "concurrency": args.concurrency,
        "plancheck_version": __version__,
        "created_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    if registry.needs_model(method):
        paper = registry.PAPER_TEMPERATURES[method]
        config.update({
            "base_url": redact_url(args.base_url),
            "temperature": paper if args.temperature is None else args.temperature,
            "paper_temperature": paper,
            "max_tokens": args.max_tokens,
            "max_requests": args.max_requests,
            "top_p": spec.client.top_p,
            "few_shot": not args.no_few_shot,
            "postprocess": args.postprocess,
            "check": args.check,
            "max_repairs": args.max_repairs if args.check else None,
            "schema": args.schema,
            "prompts": {"source": spec.prompts.source, "sha256": spec.prompts.digest,
                        "sections_from_file": list(spec.prompts.overridden)},
            "prices_usd_per_million": (None if args.price_in is None
                                       else {"prompt": args.price_in,
                                             "completion": args.price_out}),
        })
    return config


def _execute(args: argparse.Namespace, spec: Any, tasks: list[Any], tasks_path: Any,
             out: Any) -> int:
    from plancheck.planners import registry
    from plancheck.planners.client import ClientError
    from plancheck.planners.runner import Prices, RunError, RunOptions, run_tasks

    try:
        factory = registry.planner_factory(spec)
    except ModuleNotFoundError as error:
        print(f"plancheck: error: method {args.method} is not available: {error}",
              file=sys.stderr)
        return EXIT_ERROR
    if registry.needs_model(args.method):
        import os

        from plancheck.planners.endpoint import unreachable

        # Checked once, before OUT is touched: a server that is not up would otherwise cost
        # every task its retries and record nothing but "Connection error".
        endpoint = args.base_url or os.environ.get("OPENAI_BASE_URL")
        problem = unreachable(endpoint) if endpoint else None
        if problem is not None:
            print(f"plancheck: error: {problem}; nothing was planned", file=sys.stderr)
            return EXIT_ERROR
        endpoint_down = (lambda: unreachable(endpoint)) if endpoint else None
        # The first planner is made here, before OUT is touched: one that cannot be made
        # (no API key) leaves no OUT/config.json behind. It serves the first worker.
        try:
            made = [factory()]
        except ClientError as error:
            print(f"plancheck: error: {error}; nothing was planned", file=sys.stderr)
            return EXIT_ERROR
        first_factory = factory

        def factory() -> Any:
            return made.pop() if made else first_factory()
    else:
        endpoint_down = None
    prices = Prices(args.price_in, args.price_out) if args.price_in is not None else None
    limit = registry.max_workers(args.method)
    concurrency = args.concurrency if limit is None else min(args.concurrency, limit)
    options = RunOptions(
        out=out, method=args.method, model=args.model if registry.needs_model(args.method)
        else None, config=_config(args, spec, tasks_path), concurrency=concurrency,
        retry_errors=args.retry_errors, prices=prices,
        progress=not args.no_progress and sys.stderr.isatty(), stream=sys.stderr,
        endpoint_down=endpoint_down)
    try:
        summary = run_tasks(tasks, factory, options)
    except RunError as error:
        print(f"plancheck: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except ClientError as error:  # e.g. no API key: nothing was planned
        print(f"plancheck: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as error:
        print(f"plancheck: error[PC001]: {error}", file=sys.stderr)
        return EXIT_ERROR
    cost = "" if summary.cost_usd is None else f", ${summary.cost_usd:.4f}"
    print(f"{args.method}: {summary.done} task(s) planned, {summary.skipped} already done, "
          f"{summary.errors} with errors; {summary.prompt_tokens} prompt + "
          f"{summary.completion_tokens} completion tokens{cost}; {summary.elapsed_s:.1f}s")
    print(f"results: {out / 'predictions.jsonl'}")
    failed = summary.errors + summary.earlier_errors
    if failed and not summary.interrupted:
        print(f"{failed} task(s) ended with an error; rerun with --retry-errors to run them "
              "again", file=sys.stderr)
    if summary.endpoint_down is not None:
        print(f"plancheck: error: stopped after {summary.done} task(s): "
              f"{summary.endpoint_down}; rerun with --retry-errors once it is up",
              file=sys.stderr)
        return EXIT_ERROR
    if summary.interrupted:
        print("interrupted: rerun the same command to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_FINDINGS if summary.errors else EXIT_OK
