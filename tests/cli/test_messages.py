"""Messages that said less, or other, than the truth (issue 25, item 11): a long enum cut to
eight, control characters printed raw, a sentence without its end, deep JSON on standard input,
an empty toolset file, a DSL gold file, plurals, a `$ref` schema, help to a full disk, one file
named three times."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.cli import main
from plancheck.corpus.toolsets import ToolsetError
from tests.support.samples import FOG_CHAIN

PLANCHECK = str(Path(sys.executable).with_name("plancheck"))


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _mcp_pool(tmp_path: Path, input_schema: dict[str, Any]) -> Path:
    path = tmp_path / "pool.json"
    path.write_text(json.dumps({"tools": [
        {"name": "pick", "description": "pick one", "inputSchema": input_schema}]}))
    return path


def _call(tmp_path: Path, inputs: dict[str, Any]) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps([{"agent": "pick", "step": 0, "dependence": [-1],
                                 "dependence_content": None, "inputs": inputs,
                                 "outputs": []}]))
    return path


def test_a_long_enum_does_not_read_as_a_list_of_eight(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = _mcp_pool(tmp_path, {"type": "object", "required": ["x"], "properties": {
        "x": {"type": "string", "enum": [f"v{i}" for i in range(10_000)]}}})
    _, out, _ = _run(capsys, "--tools", str(pool), str(_call(tmp_path, {"x": "nope"})))
    assert 'must be one of "v0", "v1"' in out
    assert '"v7", ... (9,992 more)' in out


def test_control_characters_in_names_are_escaped(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    plan = [{**FOG_CHAIN[0], "agent": "Weather\x1b[2J\x07Restoration"}]
    path = tmp_path / "esc.json"
    path.write_text(json.dumps(plan))  # (JSON escapes: the file itself is plain text)
    for format_name in ("text", "concise"):
        code, out, _ = _run(capsys, "--format", format_name, str(path))
        assert code == 1
        assert "\x1b" not in out and "\x07" not in out
        assert "Weather\\x1b[2J\\x07Restoration" in out


def test_repeated_outputs_are_named_in_a_whole_sentence(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = [{**FOG_CHAIN[0], "outputs": ["restored_image_path", "restored_image_path"]}]
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(plan))
    _, out, _ = _run(capsys, "--format", "concise", str(path))
    assert "the outputs of step 0 repeat `restored_image_path`" in out
    plan = [{**FOG_CHAIN[0], "outputs": []}]
    path.write_text(json.dumps(plan))
    _, out, _ = _run(capsys, "--format", "concise", str(path))
    assert "the outputs of step 0 lack `restored_image_path`" in out


def test_deep_json_on_standard_input_is_nested_too_deeply(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(deep.encode())))
    code, out, _ = _run(capsys, "-")
    assert code == 1
    assert "invalid JSON: nested too deeply" in out and "no JSON plan" not in out


def test_an_empty_toolset_file_is_called_empty() -> None:
    with pytest.raises(ToolsetError, match="/dev/null is empty: it defines no toolset"):
        plancheck.load_toolset("/dev/null")


def test_a_dsl_gold_file_is_named_as_dsl(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    gold = tmp_path / "gold.wf"
    gold.write_text('plan { step 0 = GeoChat(image_path = "a.tif") }\n')
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(FOG_CHAIN))
    code, out, err = _run(capsys, "--gold", str(gold), str(plan))
    assert code == 2
    assert "the gold file is workflow DSL" in out + err and "not JSON" not in out + err


def test_counts_agree_with_their_nouns(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    pool = _mcp_pool(tmp_path, {"type": "object", "properties": {"x": {"type": "string"}}})
    code, out, _ = _run(capsys, "toolset", "show", "--tools", str(pool))
    assert code == 0 and ": 1 tool, " in out and "1 tools" not in out
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{**FOG_CHAIN[0], "outputs": []}]))
    code, _, err = _run(capsys, "fix", str(plan))
    assert "(1 edit," in err and "(1 edits" not in err


def test_a_schema_plancheck_cannot_read_gives_no_false_unknown_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`inputSchema: {"$ref": "#"}` listed no input, so every input was PC202."""
    for schema in ({"$ref": "#"}, {"type": "object", "additionalProperties": True},
                   {"type": "object", "anyOf": [{"properties": {"x": {}}}]}):
        pool = _mcp_pool(tmp_path, schema)
        code, out, _ = _run(capsys, "--tools", str(pool), str(_call(tmp_path, {"x": "a"})))
        assert "PC202" not in out, (schema, out)
        assert code == 0, out
    pool = _mcp_pool(tmp_path, {"type": "object", "properties": {"y": {}}})
    code, out, _ = _run(capsys, "--tools", str(pool), str(_call(tmp_path, {"x": "a"})))
    # a plain schema still lists its inputs: an unlisted one is a warning where the schema
    # admits it (no additionalProperties), an error where it does not
    assert code == 0 and "warning[PC202]" in out
    pool = _mcp_pool(tmp_path, {"type": "object", "properties": {"y": {}},
                                "additionalProperties": False})
    code, out, _ = _run(capsys, "--tools", str(pool), str(_call(tmp_path, {"x": "a"})))
    assert code == 1 and "error[PC202]" in out


@pytest.mark.parametrize("argv", [["--help"], ["check", "--help"], ["--version"]])
def test_help_to_a_full_disk_is_an_error(argv: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run([PLANCHECK, *argv], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert "No space left on device" in done.stderr


def test_one_file_named_three_times_is_checked_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.json").write_text(json.dumps(FOG_CHAIN))
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "check", "a.json", "a.json", "./a.json")
    assert code == 0
    assert "(1 plan in 1 file)" in out
    assert err.count("is the same file as a.json; checked once") == 2


def test_a_tool_that_admits_unlisted_inputs_compiles_to_a_stub_that_takes_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As plancheck reports no unlisted input of such a tool, mypy must not either."""
    from mypy import api as mypy_api

    pool = _mcp_pool(tmp_path, {"type": "object", "properties": {"other": {"type": "string"}},
                                "required": ["other"], "additionalProperties": True})
    module = tmp_path / "compiled.py"
    assert main(["compile", "--to", "python", "--tools", str(pool), "-o", str(module),
                 str(_call(tmp_path, {"other": "a", "x": "b"}))]) == 0
    source = module.read_text(encoding="utf-8")
    assert "    other: String,\n    **other_: object,\n" in source
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n")
    out, _, status = mypy_api.run(["--strict", "--no-incremental", "--config-file", str(config),
                                   "--cache-dir", str(tmp_path / ".cache"), str(module)])
    assert status == 0, out
