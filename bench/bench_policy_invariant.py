"""plancheck's policies side by side with invariant-ai's on the same traces (local only).

    python -m venv /tmp/inv-venv && /tmp/inv-venv/bin/pip install invariant-ai
    python bench/bench_policy_invariant.py [--invariant-python /tmp/inv-venv/bin/python]

invariant-ai is never a dependency of plancheck: it runs in its own environment, in a child
process, with its ``LocalPolicy`` (its ``Policy`` would call a remote service) and its default
settings (among them the cap of 100 evaluation steps, ``INVARIANT_MAX_ITERATIONS``).

The traces are the MCP trajectories of the policy suite (``tests/policy/traces.py``: GitHub,
filesystem, memory and fetch captures, allowed and violating, their violations labelled by hand)
plus long ones: the GitHub trajectories repeated to 40 and 120 calls, where the labels are those
of the repeated trace. The rules are the 29 of ``tests/policy/corpus/{github,filesystem,memory,
fetch}.wf``, each stated in invariant's language as closely as it allows (``INVARIANT`` below:
a window of calls becomes a plain count; a glob a regular expression; a flow a substring test
of the argument in an earlier output of the source tool, with no taint through other calls).

Each rule is its own invariant policy (one rule that invariant cannot evaluate, past its cap of
checking cycles, fails alone, and the failures are counted); an argument rule tests first that
the call passes the argument (invariant raises on a missing key). A verdict is per (trace,
rule): broken or not. The truth is the suite's labels (the test
``test_a_trace_draws_exactly_its_violations`` holds plancheck's online monitor to them, call by
call); a missed violation is a broken rule a checker does not report, a false one a rule it
reports that holds. The time is each checker's for all rules on one trace, median over traces.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from plancheck.api import load_toolset  # noqa: E402
from plancheck.policy.loader import load_policies  # noqa: E402
from plancheck.policy.monitor import PolicyMonitor  # noqa: E402
from tests.policy.traces import SUITE  # noqa: E402

POLICIES = ("github.wf", "filesystem.wf", "memory.wf", "fetch.wf")

_BEFORE = '''raise "{key}" if:
    (b: ToolCall)
    b is tool:{b}
    not count(min=1):
        (a: ToolCall)
        a is tool:{a}
        a -> b
'''
_AFTER = '''raise "{key}" if:
    (x: ToolCall) -> (y: ToolCall)
    x is tool:{b}
    y is tool:{a}
'''
_COUNT = '''raise "{key}" if:
    count(min={n}):
        (c: ToolCall)
        {match}
'''
_ARG = '''raise "{key}" if:
    (c: ToolCall)
    c is tool:{tool}
    "{arg}" in c.function.arguments
    {test}
'''
_FLOW = '''raise "{key}" if:
    (out: ToolOutput) -> (c: ToolCall)
    out is tool:{a}
    c is tool:{b}
    c.function.arguments["{arg}"] in out.content
'''
_REQUIRED = '''raise "{key}" if:
    not count(min=1):
        (c: ToolCall)
        c is tool:{a}
'''

# plancheck's rule (as it prints) -> the invariant rule that states it.
INVARIANT: dict[str, str] = {
    "require get_file_contents before create_or_update_file":
        _BEFORE.format(key="{key}", a="get_file_contents", b="create_or_update_file"),
    "require get_pull_request_status before merge_pull_request":
        _BEFORE.format(key="{key}", a="get_pull_request_status", b="merge_pull_request"),
    "forbid merge_pull_request after create_pull_request_review":
        _AFTER.format(key="{key}", a="merge_pull_request", b="create_pull_request_review"),
    "at most 3 create_* per 5 calls":
        _COUNT.format(key="{key}", n=4, match='match("create_.*$", c.function.name)'),
    "at most 1 fork_repository":
        _COUNT.format(key="{key}", n=2, match="c is tool:fork_repository"),
    'forbid create_branch.branch in ["main", "master"]':
        _ARG.format(key="{key}", arg="branch", tool="create_branch",
                    test='c.function.arguments["branch"] in ["main", "master"]'),
    'require create_issue.title matches "[A-Z].*" unless get_issue before':
        _ARG.format(key="{key}", arg="title", tool="create_issue",
                    test='not match("[A-Z].*$", c.function.arguments["title"])\n'
                         '    not count(min=1):\n        (g: ToolCall)\n'
                         '        g is tool:get_issue\n        g -> c'),
    "require list_issues.per_page <= 50":
        _ARG.format(key="{key}", arg="per_page", tool="list_issues",
                    test='c.function.arguments["per_page"] > 50'),
    'require merge_pull_request.merge_method in ["squash", "rebase"]':
        _ARG.format(key="{key}", arg="merge_method", tool="merge_pull_request",
                    test='not (c.function.arguments["merge_method"] in ["squash", "rebase"])'),
    "forbid flow from get_file_contents to create_issue.body":
        _FLOW.format(key="{key}", a="get_file_contents", b="create_issue", arg="body"),
    "forbid flow from search_code to add_issue_comment.body":
        _FLOW.format(key="{key}", a="search_code", b="add_issue_comment", arg="body"),
    'forbid push_files.message == ""':
        _ARG.format(key="{key}", arg="message", tool="push_files",
                    test='c.function.arguments["message"] == ""'),
    "require list_allowed_directories before write_file":
        _BEFORE.format(key="{key}", a="list_allowed_directories", b="write_file"),
    'forbid write_file.path matches "/etc/.*"':
        _ARG.format(key="{key}", arg="path", tool="write_file",
                    test='match("/etc/.*$", c.function.arguments["path"])'),
    'forbid edit_file.path matches ".*\\\\.(key|pem)"':
        _ARG.format(key="{key}", arg="path", tool="edit_file",
                    test='match(".*[.](key|pem)$", c.function.arguments["path"])'),
    "require read_file.head <= 200":
        _ARG.format(key="{key}", arg="head", tool="read_file",
                    test='c.function.arguments["head"] > 200'),
    "at most 2 move_file per 4 calls":
        _COUNT.format(key="{key}", n=3, match="c is tool:move_file"),
    "forbid move_file after write_file":
        _AFTER.format(key="{key}", a="move_file", b="write_file"),
    "forbid flow from read_file.content to write_file.content":
        _FLOW.format(key="{key}", a="read_file", b="write_file", arg="content"),
    'require search_files.pattern != "*"':
        _ARG.format(key="{key}", arg="pattern", tool="search_files",
                    test='c.function.arguments["pattern"] == "*"'),
    "require directory_tree": _REQUIRED.format(key="{key}", a="directory_tree"),
    "require read_graph before delete_entities":
        _BEFORE.format(key="{key}", a="read_graph", b="delete_entities"),
    "at most 1 delete_* per 3 calls":
        _COUNT.format(key="{key}", n=2, match='match("delete_.*$", c.function.name)'),
    "forbid flow from search_nodes to delete_entities.entityNames": (
        _FLOW.format(key="{key}", a="search_nodes", b="delete_entities", arg="entityNames")
        .replace('c.function.arguments["entityNames"] in out.content',
                 'any([n in out.content for n in c.function.arguments["entityNames"]])')),
    'require search_nodes.query != ""':
        _ARG.format(key="{key}", arg="query", tool="search_nodes",
                    test='c.function.arguments["query"] == ""'),
    "forbid create_entities after delete_entities":
        _AFTER.format(key="{key}", a="create_entities", b="delete_entities"),
    'require fetch.url matches "https://.*"':
        _ARG.format(key="{key}", arg="url", tool="fetch",
                    test='not match("https://.*$", c.function.arguments["url"])'),
    "require fetch.max_length <= 20000":
        _ARG.format(key="{key}", arg="max_length", tool="fetch",
                    test='c.function.arguments["max_length"] > 20000'),
    "at most 4 fetch per 5 calls": _COUNT.format(key="{key}", n=5, match="c is tool:fetch"),
}

_CHILD = r'''
import json, statistics, sys, time
from invariant.analyzer import LocalPolicy
from invariant.analyzer.traces import user, assistant, tool_call, tool

cases = json.load(open(sys.argv[1]))
out = []
for case in cases:
    messages = [user("go")]
    for i, (name, args, result) in enumerate(case["calls"]):
        messages.append(assistant(None, tool_call(f"call_{i}", name, args)))
        messages.append(tool(f"call_{i}", json.dumps(result)))
    # One policy a rule, so that a rule invariant cannot evaluate fails alone.
    policies = [LocalPolicy.from_string("from invariant import count\n\n" +
                                        source.replace("{key}", str(n)))
                for n, source in enumerate(case["rules"])]
    broken, failed = [], []
    start = time.perf_counter()
    for n, policy in enumerate(policies):
        try:
            if policy.analyze(messages).errors:
                broken.append(n)
        except Exception as error:  # a rule that could not be evaluated on this trace
            failed.append(f"{type(error).__name__}: {str(error).split('(')[0]}"[:80])
    out.append({"broken": broken, "ms": (time.perf_counter() - start) * 1000,
                "failed": failed})
print(json.dumps(out))
'''


def _cases() -> list[dict[str, Any]]:
    """Each trace: its name, policy file, pool and calls, and the trace whose labels it has
    (itself, or the trace it repeats)."""
    cases: list[dict[str, Any]] = []
    for name, pool, trace, calls, _ in SUITE:
        if name not in POLICIES:
            continue
        origin = len(cases)
        cases.append({"name": f"{name}-{trace}", "policy": name, "pool": pool,
                      "calls": [list(c[:3]) for c in calls], "origin": origin})
        if name == "github.wf":
            for length in (40, 120):
                repeated = [list(calls[i % len(calls)][:3]) for i in range(length)]
                cases.append({"name": f"{name}-{trace}-x{length}", "policy": name,
                              "pool": pool, "calls": repeated, "origin": origin})
    return cases


def _plancheck(case: dict[str, Any]) -> tuple[set[str], float]:
    policies = load_policies(ROOT / "tests" / "policy" / "corpus" / case["policy"],
                             load_toolset(ROOT / case["pool"]))
    start = time.perf_counter()
    monitor = PolicyMonitor(policies)
    broken: set[str] = set()
    for tool, arguments, result in case["calls"]:
        call = monitor.call(tool, arguments)
        broken.update(v.rule.body() for v in monitor.propose(call))
        monitor.accept(call)
        monitor.record(call.index, result)
    broken.update(v.rule.body() for v in monitor.finish())
    case["rule_list"] = [r.body() for r in policies.rules]
    return broken, (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--invariant-python", default="/tmp/inv-venv/bin/python")
    parser.add_argument("--verbose", action="store_true",
                        help="name the rules each checker missed or reported falsely")
    args = parser.parse_args()
    cases = _cases()
    ours = [_plancheck(case) for case in cases]
    # The truth: the hand labels of the suite (plancheck's online monitor meets them exactly,
    # which the test suite checks); a repeated trace breaks what its original breaks.
    truth = [set(ours[case["origin"]][0]) for case in cases]
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "cases.json"
        data.write_text(json.dumps([{"calls": c["calls"], "rules": [
            INVARIANT[r] for r in c["rule_list"]]} for c in cases]), encoding="utf-8")
        child = subprocess.run([args.invariant_python, "-c", _CHILD, str(data)],
                               capture_output=True, text=True, check=False, cwd=folder)
    if child.returncode != 0:
        print(child.stderr[-2000:], file=sys.stderr)
        return 2
    theirs = json.loads(child.stdout)
    missed_of = {"plancheck": 0, "invariant-ai": 0}
    false_of = {"plancheck": 0, "invariant-ai": 0}
    times_of: dict[str, list[float]] = {"plancheck": [], "invariant-ai": []}
    print(f"{'trace':<36} {'calls':>5} {'broken':>6}  plancheck miss/false ms  "
          "invariant miss/false ms")
    for case, (mine, my_ms), result, true in zip(cases, ours, theirs, truth, strict=True):
        reported = {case["rule_list"][n] for n in result["broken"]}
        rows = []
        for name, found, ms in (("plancheck", mine, my_ms),
                                ("invariant-ai", reported, result["ms"])):
            missed, false = len(true - found), len(found - true)
            missed_of[name] += missed
            false_of[name] += false
            times_of[name].append(ms)
            rows.append(f"{missed:>4}/{false:<5} {ms:>7.1f}")
        note = (f"  ({len(result['failed'])} rules failed: {sorted(set(result['failed']))})"
                if result["failed"] else "")
        if args.verbose:
            for name, found in (("plancheck", mine), ("invariant-ai", reported)):
                for rule in sorted(true - found):
                    note += f"\n    {name} missed: {rule}"
                for rule in sorted(found - true):
                    note += f"\n    {name} false: {rule}"
        print(f"{case['name']:<36} {len(case['calls']):>5} {len(true):>6}  "
              f"{rows[0]:>22}  {rows[1]:>22}{note}")
    for name, times in times_of.items():
        print(f"{name}: {missed_of[name]} missed, {false_of[name]} false over {len(cases)} "
              f"traces; median {statistics.median(times):.1f} ms a trace (all rules)")
    worse = missed_of["plancheck"] > missed_of["invariant-ai"] or \
        false_of["plancheck"] > false_of["invariant-ai"]
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
