"""Plugins (issue 35): a package installed beside plancheck adds a call shape, a pool format, a
rule and an output format through entry points, and plancheck uses each without an edit.

The package is written here and installed into a temporary environment (``venv`` with the
system's packages, ``pip install --no-deps --no-build-isolation``: fast, offline); plancheck is
then run by that environment's Python, this checkout on its path. Its four entries are the
three trials of the issue written as plugins (a Bedrock-like call shape with ids and results,
a rule declaring its own code, a pool read from a Python-like text format) and a one-line-a-
diagnostic output format."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = '''
"""A plancheck plugin with one entry of each kind."""
from typing import Any

from plancheck.checks.rule import Rule
from plancheck.corpus.pool_format import PoolFormat
from plancheck.corpus.pools import mcp
from plancheck.diagnostics.codes import CodeInfo
from plancheck.diagnostics.model import make
from plancheck.diagnostics.severity import Severity
from plancheck.formats.found import FoundCall, child, plain_id
from plancheck.formats.shape import CallShape
from plancheck.render.stream import ReportStream


# A call shape: {"invoke": {"ref", "tool", "with": {...}}}, answered by {"answer": {"ref", ...}}.
def read(item: dict[str, Any], pointer: str) -> FoundCall | None:
    call = item.get("invoke")
    if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
        return None
    base = child(pointer, "invoke")
    return FoundCall(pointer, "invoke", call["tool"], child(base, "tool"), call.get("with"),
                     child(base, "with"), call_id=plain_id(call.get("ref")))


def result(item: dict[str, Any]) -> tuple[str | None, Any] | None:
    answer = item.get("answer")
    return None if not isinstance(answer, dict) else (plain_id(answer.get("ref")),
                                                      answer.get("value"))


SHAPE = CallShape("invoke", read, detected=True, order=160, result=result,
                  markers=('"answer"',), description="invoke blocks")


# A pool format: a `.tools` file, one tool a line: `name: required, optional?`.
def parse(text: str, file: str) -> tuple[Any, None]:
    tools = []
    for line in text.splitlines():
        if not line.strip():
            continue
        name, _, names = line.partition(":")
        params = [p.strip() for p in names.split(",") if p.strip()]
        tools.append({"name": name.strip(), "inputSchema": {
            "type": "object", "properties": {p.rstrip("?"): {"type": "string"} for p in params},
            "required": [p for p in params if not p.endswith("?")]}})
    return {"tools": tools}, None


FORMAT = PoolFormat("tools-lines", "a .tools file", lambda _: False, mcp.read,
                    outputs_are_fields=True, order=700, suffixes=(".tools",), parse=parse)


# A rule declaring its own code: a call to a tool whose name says it deletes.
PC298 = CodeInfo("PC298", "deleting-call", Severity.WARNING, "A step calls a deleting tool.",
                 "The tool's name says it deletes something.")


class DeletingCalls(Rule):
    def __init__(self) -> None:
        super().__init__("deleting calls", "names", (PC298,), hooks=("step",))

    def step(self, view: Any, context: Any) -> None:
        if view.tool is not None and "delete" in view.tool:
            context.findings.report("PC298", _deleting, context.facts, view.position)


def _deleting(facts: Any, position: int) -> Any:
    step = facts.step(position)
    return make("PC298", f"call {position} deletes (`{step.tool}`)",
                primary=step.tool_span or step.span, data={"position": position})


RULE = DeletingCalls()


# A rule of symbolic execution (its option: on wherever that runs, scoring too) whose code is
# an error, off by default: reported only when selected, never counted by the scorer.
PC297 = CodeInfo("PC297", "note-read", Severity.ERROR, "A step reads a note.",
                 "The tool's name says it reads a note.", default_enabled=False)


class NoteReads(Rule):
    def __init__(self) -> None:
        super().__init__("note reads", "early reads", (PC297,), hooks=("step",),
                         option="interpret")

    def step(self, view: Any, context: Any) -> None:
        if view.tool == "read_note":
            context.findings.report("PC297", _reading, context.facts, view.position)


def _reading(facts: Any, position: int) -> Any:
    step = facts.step(position)
    return make("PC297", f"call {position} reads a note", primary=step.tool_span or step.span,
                data={"position": position})


OFF_RULE = NoteReads()


# An output format: one line a diagnostic, `CODE position`.
class CodesStream(ReportStream):
    def plain(self, diagnostic: Any) -> str:
        return f"{diagnostic.code} {diagnostic.data.get('position')}"
'''

ENTRY_POINTS = '''
[project.entry-points."plancheck.call_shapes"]
invoke = "plancheck_trial_plugins:SHAPE"
[project.entry-points."plancheck.pool_formats"]
tools-lines = "plancheck_trial_plugins:FORMAT"
[project.entry-points."plancheck.rules"]
deleting-calls = "plancheck_trial_plugins:RULE"
note-reads = "plancheck_trial_plugins:OFF_RULE"
[project.entry-points."plancheck.output_formats"]
codes = "plancheck_trial_plugins:CodesStream"
'''

CALLS = {"turns": [], "messages": [
    {"role": "assistant", "content": [{"invoke": {"ref": "r1", "tool": "read_note",
                                                   "with": {"path": "/n.txt"}}}]},
    {"role": "user", "content": [{"answer": {"ref": "r1", "value": {"text": "buy milk"}}}]},
    {"role": "assistant", "content": [{"invoke": {"ref": "r2", "tool": "delete_note",
                                                   "with": {}}}]},
]}

CHECK = '''
import json, sys
import plancheck
from plancheck.formats.shapes import find_calls

calls = json.load(open(sys.argv[1]))
found = find_calls(calls)
assert [(c.shape, c.name, c.call_id) for c in found] == [
    ("invoke", "read_note", "r1"), ("invoke", "delete_note", "r2")], found
guard = plancheck.Guard(sys.argv[2])
verdict = guard.propose(calls["messages"][0]["content"][0])
assert verdict.allowed and verdict.call_id == "r1", verdict
assert guard.record("r1", {"text": "buy milk"}) == []
print("api ok")
'''


def _install(root: Path, name: str, module: str, entry_points: str
             ) -> tuple[Path, dict[str, str]]:
    """A temporary environment under ``root`` with a package installed whose one module
    (``name``) is ``module`` and whose entry points are ``entry_points`` (pyproject.toml's),
    and the environment variables that put this checkout (and its dependencies) on its
    path."""
    package = root / "package"
    package.mkdir()
    (package / f"{name}.py").write_text(textwrap.dedent(module), "utf-8")
    (package / "pyproject.toml").write_text(textwrap.dedent(f'''
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{name.replace("_", "-")}"
        version = "0.0.1"

        [tool.setuptools]
        py-modules = ["{name}"]
        ''') + textwrap.dedent(entry_points), encoding="utf-8")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *site.getsitepackages()]),
           "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "NO_COLOR": "1"}
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-deps",
                              "--no-build-isolation", "--quiet", str(package)],
                             capture_output=True, text=True, env=env, timeout=300, check=False)
    assert install.returncode == 0, install.stdout + install.stderr
    return python, env


@pytest.fixture(scope="module")
def plugin_python(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A temporary environment with the plugin package installed (see :func:`_install`)."""
    return _install(tmp_path_factory.mktemp("plugin"), "plancheck_trial_plugins", PLUGIN,
                    ENTRY_POINTS)


@pytest.mark.slow
def test_each_kind_of_plugin_is_used(plugin_python: tuple[Path, dict[str, str]],
                                     tmp_path: Path) -> None:
    python, env = plugin_python
    calls, pool = tmp_path / "calls.json", tmp_path / "notes.tools"
    calls.write_text(json.dumps(CALLS), encoding="utf-8")
    pool.write_text("read_note: path\ndelete_note: path, force?\n", encoding="utf-8")

    def plancheck(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(python), "-m", "plancheck", *args], capture_output=True,
                              text=True, env=env, timeout=120, check=False, cwd=tmp_path)

    # The shape finds the calls (and not the answer), the pool is read from its own format, the
    # rule reports its own code beside a built-in one, the output format writes them.
    run = plancheck("check", "--tools", str(pool), "--format", "codes", str(calls))
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.split("\n")[:2] == ["PC203 1", "PC298 1"], run.stdout
    forced = plancheck("check", "--tools", str(pool), "--call-format", "invoke",
                       "--select", "PC298", "--format", "codes", str(calls))
    assert forced.stdout.split("\n")[:1] == ["PC298 1"], forced.stdout + forced.stderr
    # A plugin's output format is one of the config file's `format`s too (one list: the
    # registry's, with the plugins').
    (tmp_path / "plancheck.toml").write_text('format = "codes"\n', encoding="utf-8")
    configured = plancheck("check", "--tools", str(pool), str(calls))
    assert configured.returncode == 1, configured.stdout + configured.stderr
    assert configured.stdout.split("\n")[:2] == ["PC203 1", "PC298 1"], configured.stdout
    (tmp_path / "plancheck.toml").write_text('format = "cods"\n', encoding="utf-8")
    misspelt = plancheck("check", "--tools", str(pool), str(calls))
    assert misspelt.returncode == 2 and "codes" in misspelt.stderr, misspelt.stderr
    (tmp_path / "plancheck.toml").unlink()
    explained = plancheck("explain", "deleting-call")
    assert explained.returncode == 0 and "PC298" in explained.stdout
    script = tmp_path / "api.py"
    script.write_text(CHECK, encoding="utf-8")
    api = subprocess.run([str(python), str(script), str(calls), str(pool)], capture_output=True,
                         text=True, env=env, timeout=120, check=False)
    assert api.returncode == 0 and "api ok" in api.stdout, api.stdout + api.stderr


def test_a_plugins_codes_are_scored_as_the_registry_says(
        plugin_python: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """What the scorer keeps of the static check reads the registry as it is when scoring,
    the plugins' codes included: an off-by-default error (its rule on with symbolic
    execution) is not counted, a warning is counted under its own name."""
    python, env = plugin_python
    pool = tmp_path / "notes.tools"
    pool.write_text("read_note: path\ndelete_note: path, force?\n", encoding="utf-8")
    record = {"task_id": "t1", "plan": [
        {"step": 0, "agent": "read_note", "inputs": {"path": "/n.txt"}, "outputs": [],
         "dependence": [-1], "dependence_content": None}]}
    gold, predictions = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    gold.write_text(json.dumps(record) + "\n", encoding="utf-8")
    deleting = {**record, "id": "t1-delete", "plan": [{**record["plan"][0],
                                                       "agent": "delete_note"}]}
    predictions.write_text(json.dumps({**record, "id": "t1-read"}) + "\n"
                           + json.dumps(deleting) + "\n", encoding="utf-8")

    def plancheck(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(python), "-m", "plancheck", *args], capture_output=True,
                              text=True, env=env, timeout=120, check=False, cwd=tmp_path)

    # The rule runs (its option is on) and its code is reported when selected...
    selected = plancheck("check", "--tools", str(pool), "--select", "PC297", "--format",
                         "codes", str(gold))
    assert selected.stdout.split("\n")[:1] == ["PC297 0"], selected.stdout + selected.stderr
    # ... and when scoring, it is off as the registry says: both predictions are statically
    # valid (PC297 is an error), and only PC298 is a lint code, named.
    items = tmp_path / "items.jsonl"
    scored = plancheck("score", "--tools", str(pool), "--gold", str(gold), str(predictions),
                       "--per-item", str(items), "--format", "json", "--bootstrap", "0")
    assert scored.returncode == 0, scored.stdout + scored.stderr
    static = json.loads(scored.stdout)["total"]["static"]
    assert static["valid"]["value"] == 1.0, static
    assert set(static["lint_rates"]) == {"PC298"}, static
    lines = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    assert [d["code"] for d in lines[0]["diagnostics"]] == []
    assert [(d["code"], d["name"]) for d in lines[1]["diagnostics"]][1:] == [
        ("PC298", "deleting-call")]


def test_without_plugins_nothing_is_loaded(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", textwrap.dedent('''
        import sys
        import plancheck
        report = plancheck.check([{"name": "f", "arguments": {}}])
        assert "importlib.metadata" not in sys.modules, "plugins were looked up the slow way"
        print("ok")
    ''')], capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.stdout.strip() == "ok", run.stdout + run.stderr


BAD_PHASE = '''
from typing import Any

from plancheck.checks.rule import Rule


class Misplaced(Rule):
    def __init__(self) -> None:
        super().__init__("misplaced", "nams", ("PC201",), hooks=("step",))

    def step(self, view: Any, context: Any) -> None:
        pass


RULE = Misplaced()
'''


@pytest.mark.slow
def test_a_rule_of_an_unknown_phase_is_a_plugin_error(tmp_path: Path) -> None:
    """A plugin rule naming a phase plancheck has not is the plugin's error, said as one (the
    plugin, the phase, the phases there are), exit 2: not an internal error of plancheck."""
    python, env = _install(tmp_path, "plancheck_bad_phase", BAD_PHASE, '''
        [project.entry-points."plancheck.rules"]
        misplaced = "plancheck_bad_phase:RULE"
        ''')
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"name": "read_note", "arguments": {"path": "/n.txt"}}]),
                    encoding="utf-8")
    for command in (["check", str(plan)], ["explain", "PC201"]):
        run = subprocess.run([str(python), "-m", "plancheck", *command], capture_output=True,
                             text=True, env=env, timeout=120, check=False, cwd=tmp_path)
        assert run.returncode == 2, run.stdout + run.stderr
        assert "internal error" not in run.stderr and "a bug in plancheck" not in run.stderr
        assert "Traceback" not in run.stderr, run.stderr
        assert "plugin `misplaced` of plancheck.rules" in run.stderr, run.stderr
        assert "unknown phase `nams`" in run.stderr and "references" in run.stderr, run.stderr
