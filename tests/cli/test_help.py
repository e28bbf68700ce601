"""Help and errors a newcomer meets: each command's --help ends with examples (which run) and
its exit statuses; an unknown tool checked against the built-in pool by default says so and
names --tools; an unknown option with a near neighbour points to it; `plancheck fix`'s notes
number steps as the diagnostics above them do."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from plancheck.cli import SUBCOMMANDS, main
from plancheck.cli.helptext import examples

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command", [None, *SUBCOMMANDS])
def test_every_help_ends_with_examples_and_exit_statuses(command: str | None) -> None:
    status, out, _ = run(*([command] if command else []), "--help")
    assert status == 0
    assert "\nexamples:\n  plancheck " in out
    statuses = out.split("\nexit status:\n", 1)[1]
    assert re.match(r"  0  ", statuses), statuses
    # Laid out as written, not wrapped into one paragraph.
    assert all(line.startswith(("  0", "  1", "  2", "  130")) for line in statuses.splitlines())


# Examples that need what a test cannot have: a model, an MCP server, a file of the user's;
# and the scoring of the shared parity cases, the README's quick start, which
# tests/docs/test_code_blocks.py runs.
_NOT_RUN = ("plancheck plan", "plancheck mcp-proxy", "calls.json", "batch.jsonl", "plan.wf",
            "results/m/cot", "--plots", "../shared/parity/cases.jsonl")


@pytest.mark.parametrize("line", [line for command in ("", *SUBCOMMANDS)
                                  for line in examples(command)
                                  if not any(skip in line for skip in _NOT_RUN)])
def test_the_examples_run(line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copytree(ROOT / "examples", work / "examples")  # an example may rewrite a file
    from plancheck.corpus.paths import release_dir

    (tmp_path / "shared").symlink_to(release_dir().parent)
    monkeypatch.chdir(work)
    monkeypatch.setenv("NO_COLOR", "1")
    args = shlex.split(line)[1:]
    if ">" in args:
        args = args[:args.index(">")]
    status, _, err = run(*args)
    command = args[0] if args and args[0] in SUBCOMMANDS else "check"
    _, help_text, _ = run(command, "--help")
    allowed = {int(s) for s in re.findall(r"^  (\d+)  ", help_text.split("exit status:")[1],
                                          re.MULTILINE)}
    assert status in allowed, (line, status, err[-2000:])
    assert "internal error" not in err and "Traceback" not in err


CALLS = {"tool_calls": [{"id": "call_1", "type": "function", "function": {
    "name": "read_text_file", "arguments": json.dumps({"path": "notes.txt"})}}]}


def test_an_unknown_tool_names_the_default_pool_and_tools(tmp_path: Path) -> None:
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps(CALLS), encoding="utf-8")
    status, out, _ = run("check", str(calls), "--format", "json")
    (diagnostic,) = json.loads(out)["diagnostics"]
    assert (status, diagnostic["code"]) == (1, "PC201")
    assert any("built-in DisasterBench pool (26 tools)" in h and "`--tools POOL`" in h
               for h in diagnostic["help"]), diagnostic["help"]
    # A pool that was asked for is the pool meant: no such help.
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps({"tools": [{"name": "write_file", "inputSchema": {
        "type": "object", "properties": {}}}]}), encoding="utf-8")
    _, out, _ = run("check", str(calls), "--tools", str(pool), "--format", "json")
    assert not any("--tools" in h for d in json.loads(out)["diagnostics"] for h in d["help"])


def test_a_near_name_in_the_default_pool_keeps_its_did_you_mean_alone() -> None:
    _, out, _ = run("check", str(ROOT / "examples" / "flood_plan.json"), "--format", "json")
    (unknown,) = [d for d in json.loads(out)["diagnostics"] if d["code"] == "PC201"]
    assert unknown["help"] == ["did you mean `depth_speed_model`?"]


@pytest.mark.parametrize(("args", "hint"), [
    (["check", "--fix", "examples/fog_plan.json"], "did you mean `plancheck fix`?"),
    (["examples/fog_plan.json", "--fix"], "did you mean `plancheck fix`?"),
    (["check", "--formt", "json", "examples/fog_plan.json"], "did you mean `--format`?"),
    (["fix", "--explain", "examples/fog_plan.json"], "did you mean `plancheck check --explain`?"),
    (["score", "--gold", "g.jsonl", "--per-itme", "x", "p.jsonl"], "did you mean `--per-item`?"),
])
def test_an_unknown_option_points_to_its_neighbour(args: list[str], hint: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    status, _, err = run(*args)
    assert status == 2
    assert "unrecognized arguments: " in err
    assert hint in err, err


def test_an_unknown_option_without_a_neighbour_gets_no_guess(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    status, _, err = run("check", "--zzzz", "examples/fog_plan.json")
    assert status == 2 and "unrecognized arguments: --zzzz" in err and "did you mean" not in err


def test_fix_notes_number_steps_as_the_diagnostics_above_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The repair inserts a conversion step before step 1: the notes under the errors about
    steps 1 and 2 name them so, with their numbers in the repaired plan beside."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")
    status, _, err = run("fix", "examples/flood_plan.json")
    assert status == 0
    blocks = {block.split("\n", 1)[0]: block for block in err.split("\n\n") if block}
    (pc301,) = [b for head, b in blocks.items() if head.startswith("error[PC301]: step 1 ")]
    assert ("for `precipitation_data_path` of step 1 (step 2 of the repaired plan)"
            in pc301), pc301
    (pc401,) = [b for head, b in blocks.items() if head.startswith("error[PC401]: step 2 ")]
    assert "= fix: write dependence [2] in step 2 (step 3 of the repaired plan)" in pc401, pc401
    # A step the repair does not move is named by its number alone.
    status, _, err = run("fix", "examples/fog_plan.json")
    assert "in step 2\n" in err and "repaired plan)" not in err


def test_the_tools_option_names_every_pool_it_takes() -> None:
    """`check --tools` named a DSL file, a release directory and a manifest only: not `dora`,
    nor the JSON pools of the registry."""
    from plancheck.corpus.pool_registry import POOL_FORMATS

    _, out, _ = run("check", "--help")
    text = " ".join(out.split("\n  --tools TOOLSET", 1)[1].split("\n  --", 1)[0].split()).lower()
    assert "`dora`" in text and ".wf" in text and "release directory" in text
    for pool_format in POOL_FORMATS:
        # mcp, openai, gemini, taskbench, disasterbench-manifest: each named in the help
        assert pool_format.name.split("-")[-1] in text or pool_format.name in text, \
            pool_format.name


def test_a_usage_error_points_to_the_help_of_its_command(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    _, _, err = run("fix")
    assert "Run `plancheck fix --help` for usage." in err
    _, _, err = run("scroe", "x.json")
    assert "Run `plancheck --help` for usage." in err
