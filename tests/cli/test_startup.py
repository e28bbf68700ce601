"""Start-up stays light (issue 15): each command imports what it needs and nothing more.

Times are measured by ``bench/bench_startup.py``; what keeps them low is what these tests hold
fixed, exactly and on any machine: the modules a run imports. Each run is a fresh process
(``python -c``), and only modules the interpreter had not imported before plancheck count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.samples import FOG_CHAIN

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "flood_plan.json"

PROBE = """
import contextlib, io, json, sys
before = set(sys.modules)
from plancheck.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(json.loads(sys.argv[1]))
print(json.dumps({"code": code, "modules": sorted(set(sys.modules) - before)}))
"""

# What a plan check must never load: solvers, model clients, parsers and formatters of other
# inputs, the scorer.
NEVER_FOR_A_PLAN = ("z3", "openai", "httpx", "lark", "pydantic", "tabulate", "json_repair",
                    "plancheck.smt", "plancheck.scoring", "plancheck.planners",
                    "plancheck.dsl.parser")


def imported(tmp_path: Path, *args: str) -> tuple[int, set[str]]:
    """The exit code of ``plancheck ARGS`` and the modules it imported, in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PLANCHECK_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(args))],
                          capture_output=True, text=True, check=True, cwd=tmp_path, env=env)
    result = json.loads(done.stdout)
    return result["code"], set(result["modules"])


def _under(modules: set[str], *prefixes: str) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)}


@pytest.mark.parametrize("option", ["--version", "--help"])
def test_version_and_help_import_no_command(tmp_path: Path, option: str) -> None:
    code, modules = imported(tmp_path, option)
    assert code == 0
    # (--help also reads the examples and exit statuses it prints, plancheck.cli.helptext.)
    assert _under(modules, "plancheck") <= {"plancheck", "plancheck.cli", "plancheck.build_info",
                                            "plancheck.cli.helptext"}
    # Nor the standard library's dearest imports (every command module pays for them).
    assert not modules & {"dataclasses", "inspect", "typing", "json", "pathlib", "difflib",
                          "shutil"}


def test_import_plancheck_imports_nothing_else(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", "import json, sys; before = set(sys.modules); import plancheck; "
         "print(json.dumps(sorted(set(sys.modules) - before)))"],
        capture_output=True, text=True, check=True, cwd=tmp_path, env=env)
    assert json.loads(done.stdout) == ["plancheck"]


def test_a_command_help_imports_that_command_only(tmp_path: Path) -> None:
    code, modules = imported(tmp_path, "check", "--help")
    assert code == 0
    commands = {m for m in _under(modules, "plancheck.cli") if m.count(".") == 2}
    assert commands <= {"plancheck.cli.check", "plancheck.cli.common",
                        "plancheck.cli.helptext"}, commands
    assert not _under(modules, *NEVER_FOR_A_PLAN)


def test_checking_a_clean_plan_imports_only_the_checker(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(FOG_CHAIN), encoding="utf-8")
    imported(tmp_path, str(plan))  # fills the toolset cache (parsing the DSL loads Lark)
    code, modules = imported(tmp_path, str(plan))
    assert code == 0
    assert not _under(modules, *NEVER_FOR_A_PLAN)
    # DORA's code is for DORA's documents, the readers of tool calls and their reference
    # syntaxes for tool calls; the other commands' modules are not loaded.
    assert not _under(modules, "plancheck.dora", "plancheck.compiler.dora_native",
                      "plancheck.compiler.callshapes",
                      "plancheck.compiler.refsyntax", "plancheck.cli.score",
                      "plancheck.cli.fmt", "plancheck.cli.fix", "plancheck.render.sarif")
    # Standard modules only some paths need: suggestions for misspelt names, digests of long
    # terms, atomic writes, tracebacks of internal errors; and dataclasses (with inspect), which
    # the classes on this path do without (plancheck.records says why).
    assert not modules & {"difflib", "hashlib", "tempfile", "traceback", "dataclasses",
                          "inspect"}


def test_checking_the_example_plan_imports_no_solver_or_client(tmp_path: Path) -> None:
    imported(tmp_path, str(EXAMPLE))
    code, modules = imported(tmp_path, str(EXAMPLE))
    assert code == 1  # the example has three errors
    assert not _under(modules, *NEVER_FOR_A_PLAN)
