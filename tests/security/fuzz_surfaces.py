"""Hypothesis properties over every surface hostile input reaches (issue 33), each run by
``test_fuzz.py`` in a child under CPU, memory and time caps (so a hang or a blow-up fails the
test instead of stalling the suite). On every surface: never a traceback (only the documented
refusals), never a hang, and never a pass of what was not checked.

* the policy DSL (``parse_policies``, ``Guard(policies=...)``): text built from the language's
  own words, garbage, control characters and deep nesting;
* the DSL reader (``parse_dsl``) on the same, and literals nested past any limit;
* the policy and DSL file readers of the command line (``check --policy FILE``, ``check
  FILE.wf``) on arbitrary bytes: not UTF-8, a byte order mark, NUL;
* the guard's API, as a caller: arbitrary Python values as calls and results (sets, bytes,
  objects, non-string keys, NaN, lone surrogates, values inside themselves), and one guard
  shared by threads under a count limit.
"""

from __future__ import annotations

import contextlib
import io
import math
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancheck.corpus.builtin import builtin_toolset
from plancheck.corpus.pool_errors import ToolsetError
from plancheck.dsl.parser import parse_dsl
from plancheck.ir.json_data import json_data_problem
from plancheck.policy.loader import PolicyError, parse_policies

FAST = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
TOOLS = ["GeoChat", "Flood_depth_prediction", "Precipitation_Nowcasting", "depth_speed_model"]
WORDS = ["policy", "p", "{", "}", "require", "forbid", "before", "after", "at", "most", "per",
         "calls", "warn", "deny", "unless", "flow", "from", "to", "matches", "in", "not",
         "family", "hydrology", ".", "region_topography_path", "==", "<=", "!=", ">", "1",
         "-5", "3.5", "1e400", '"x"', '".*"', '"(a+)+$"', '"\\u0000"', "[", "]", ",", "true",
         "null", "*", "Flood_*", "#", "//", "step0.x", "toolset", "plan", "uses", "step",
         "=", "(", ")", *TOOLS]
CONTROL = st.sampled_from(["\x00", "\t", "\x1b", "\r", "\u2028", "\ufeff", "\ud800", "\x7f"])
TOKENS = st.one_of(st.sampled_from(WORDS), CONTROL, st.text(max_size=6))
SOURCE = st.one_of(
    st.lists(TOKENS, max_size=40).map(" ".join),
    st.text(max_size=200),
    st.integers(1, 3000).map(lambda n: 'plan { step 0 = GeoChat(a = ' + "[" * n + "]" * n + ") }"),
    st.integers(1, 3000).map(lambda n: "policy p { require GeoChat.a == " + "[" * n + "]" * n
                             + " }"),
)


def _rule() -> st.SearchStrategy[str]:
    tool = st.sampled_from(TOOLS)
    value = st.sampled_from(['"a.tif"', "1", "[1, 2]", '".*\\\\.tif"', "true", "null"])
    return st.one_of(
        st.tuples(tool, tool).map(lambda t: f"require {t[0]} before {t[1]}"),
        st.tuples(tool, tool).map(lambda t: f"forbid {t[0]} after {t[1]}"),
        st.tuples(st.integers(0, 5), tool).map(lambda t: f"at most {t[0]} {t[1]}"),
        st.tuples(st.sampled_from(["==", "!=", "in", "matches"]), value).map(
            lambda t: f"require Flood_depth_prediction.region_topography_path {t[0]} {t[1]}"),
        tool.map(lambda t: f"require {t}"),
    )


POLICIES = st.lists(_rule(), min_size=1, max_size=6).map(
    lambda rules: "policy p {\n" + "\n".join(rules) + "\n}\n")


@FAST
@given(st.one_of(SOURCE, POLICIES))
def policy_dsl(text: str) -> None:
    """A policy is used whole or refused whole, and a verdict under it never raises."""
    import plancheck

    toolset = builtin_toolset()
    try:
        policies = parse_policies(text, toolset)
    except PolicyError as error:
        refused = error.diagnostics
    else:
        refused = []
    if refused:  # refused whole, saying why
        return
    assert not parse_dsl(text).diagnostics  # nothing of it was dropped
    guard = plancheck.Guard(policies=policies)
    for tool in TOOLS:
        verdict = guard.propose({"name": tool, "arguments": {"region_topography_path": "a"}})
        assert isinstance(verdict.allowed, bool)


@FAST
@given(SOURCE)
def dsl_reader(text: str) -> None:
    """``parse_dsl`` never raises; what it cannot read it says."""
    module = parse_dsl(text, "fuzz.wf")
    for diagnostic in module.diagnostics:
        assert diagnostic.code.startswith("PC") and diagnostic.message


_JUNK = st.one_of(
    st.binary(max_size=300),
    SOURCE.map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.tuples(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\x00"]), POLICIES).map(
        lambda t: t[0] + t[1].encode()),
)


@settings(FAST, max_examples=40)
@given(_JUNK)
def file_readers(data: bytes) -> None:
    """``check --policy FILE`` and ``check FILE.wf`` on any bytes: an exit status and a
    message, never a traceback; a policy file that cannot be used checks nothing (exit 2)."""
    from plancheck.cli import main

    plan = Path(__file__).resolve().parents[2] / "examples" / "policy_plan.json"
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "fuzz.wf"
        path.write_bytes(data)
        for arguments in (["check", str(plan), "--policy", str(path)], ["check", str(path)]):
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                try:
                    code = main(arguments)
                except SystemExit as done:
                    code = done.code if isinstance(done.code, int) else 2
            assert code in (0, 1, 2), (code, err.getvalue())
            assert "Traceback" not in err.getvalue(), err.getvalue()
            if arguments[2:3] == ["--policy"]:
                try:
                    parse_policies(data.decode("utf-8-sig"), builtin_toolset())
                except (PolicyError, UnicodeDecodeError):
                    assert code == 2, err.getvalue()


class _Opaque:
    pass


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
    st.sampled_from(["\ud800", "\x00", "a" * 300, math.inf]), st.binary(max_size=4),
    st.builds(_Opaque),
)
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner), st.frozensets(st.integers(), max_size=2),
    st.dictionaries(st.one_of(st.text(max_size=4), st.integers(), st.none()), inner, max_size=4),
), max_leaves=12)
_POOL = {"tools": [{"name": "t", "inputSchema": {"type": "object", "properties": {
    "a": {"type": "string"}, "b": {}}}}]}


def _self_containing(value: Any) -> Any:
    holder: dict[str, Any] = {"a": "x", "b": [value]}
    holder["b"].append(holder)
    return holder


def _is_json_arguments(arguments: Any) -> bool:
    if not isinstance(arguments, dict) or json_data_problem(arguments) is not None:
        return False
    import json

    try:
        json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError):
        return False
    try:
        json.dumps(arguments).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@FAST
@given(st.one_of(
    _VALUES,
    st.builds(lambda a: {"name": "t", "arguments": a}, _VALUES),
    st.builds(lambda a: {"name": "t", "arguments": {"a": "x", "b": a}}, _VALUES),
    st.builds(lambda a: {"name": "t", "arguments": _self_containing(a)}, _VALUES),
), _VALUES)
def guard_values(call: Any, result: Any) -> None:
    """A call of arbitrary Python values gets a verdict, never an exception; one whose
    arguments are not JSON data is never allowed; recording any result never raises."""
    import plancheck

    guard = plancheck.Guard(_POOL)
    verdict = guard.propose(call)
    verdicts = getattr(verdict, "verdicts", [verdict])
    if isinstance(call, dict) and "arguments" in call and not _is_json_arguments(
            call["arguments"]):
        assert not any(v.allowed for v in verdicts), call
    for one in verdicts:
        guard.record(one.call_id, result)
    guard.finish()


@settings(FAST, max_examples=15)
@given(st.integers(1, 6), st.integers(2, 8))
def guard_threads(limit: int, threads: int) -> None:
    """One guard shared by threads under ``at most N``: never more than N calls allowed,
    and no thread sees an exception."""
    import plancheck

    guard = plancheck.Guard(_POOL, policies=f"policy p {{ at most {limit} t }}")
    allowed: list[bool] = []
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def worker(number: int) -> None:
        try:
            start.wait(timeout=30)
            for position in range(10):
                verdict = guard.propose({"name": "t", "id": f"c{number}_{position}",
                                         "arguments": {"a": "x"}})
                allowed.append(verdict.allowed)
        except BaseException as error:
            errors.append(error)

    workers = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(timeout=60)
    assert not errors, errors
    assert sum(allowed) == limit, (sum(allowed), limit)


SURFACES = {"policy_dsl": policy_dsl, "dsl_reader": dsl_reader, "file_readers": file_readers,
            "guard_values": guard_values, "guard_threads": guard_threads}

if __name__ == "__main__":
    with contextlib.suppress(ToolsetError):
        builtin_toolset()
    SURFACES[sys.argv[1]]()
    print("ok")
