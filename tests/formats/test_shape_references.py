"""A call shape declares the reference syntaxes its calls are read with (issue 35: "a call
shape owns ... its references' syntax"): names of the reference-syntax registry. The calls of
a chat API's format declare none, so their strings are text to ``plancheck check`` by default,
as they are to the guard over a foreign pool (docs/guard.md, "text stays text"); a syntax
forced with ``--reference-syntax`` still reads them. The generic shape, what tool-use corpora
write, declares every syntax those corpora use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.cli import main
from plancheck.compiler.refsyntax import REFERENCE_SYNTAXES
from plancheck.formats.shapes import call_shapes

ROOT = Path(__file__).resolve().parents[2]
POOL = ROOT / "tests" / "data" / "real" / "mcp" / "server-filesystem.json"

# Chat APIs' formats: their arguments are the model's strings, never a corpus's references.
CHAT_SHAPES = ("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock",
               "mcp-jsonrpc", "name-keyed", "bfcl-answer")


def test_each_shape_declares_registered_syntaxes() -> None:
    shapes = call_shapes()
    for shape in shapes.values():
        assert set(shape.references) <= set(REFERENCE_SYNTAXES), shape.name
    assert all(shapes[name].references == () for name in CHAT_SHAPES)
    assert set(shapes["generic"].references) == set(REFERENCE_SYNTAXES)


CALLS: dict[str, Any] = {
    "openai-chat": [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {
            "name": "write_file", "arguments": json.dumps({"path": "notes.md",
                                                           "content": "TEXT"})}}]}],
    "anthropic": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "write_file",
         "input": {"path": "notes.md", "content": "TEXT"}}]},
    "gemini": {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "write_file",
                          "args": {"path": "notes.md", "content": "TEXT"}}}]}}]},
}


@pytest.mark.parametrize("shape", CALLS)
@pytest.mark.parametrize("text", ["{{steps.5.output.dir}}", "<node-5>", "API_call_5",
                                  "mask from trajectory[5].obs", "<GENERATED>-5-<dir>"])
def test_a_chat_calls_strings_are_text_unless_a_syntax_is_forced(
        shape: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "calls.json"
    path.write_text(json.dumps(CALLS[shape]).replace("TEXT", text), encoding="utf-8")

    def codes(*options: str) -> list[str]:
        main(["check", str(path), "--tools", str(POOL), "--format", "json", *options])
        return [d["code"] for d in json.loads(capsys.readouterr().out)["diagnostics"]]

    # By default the text is text (was PC206, a reference to a call 5 the transcript lacks),
    # as the guard over this pool reads it.
    assert codes() == []
    guard = plancheck.Guard(plancheck.load_toolset(POOL), provenance=False)
    assert guard.propose(_call(shape, text)).diagnostics == []
    # A syntax forced reads it (the one that spells it).
    syntax = next(name for name, entry in REFERENCE_SYNTAXES.items() if entry.read(text))
    assert "PC206" in codes("--reference-syntax", syntax)


def _call(shape: str, text: str) -> Any:
    document = json.loads(json.dumps(CALLS[shape]).replace("TEXT", text))
    if shape == "openai-chat":
        return document[0]["tool_calls"][0]
    if shape == "anthropic":
        return document["content"][0]
    return document["candidates"][0]["content"]["parts"][0]


@pytest.mark.parametrize("text", ["{{steps.5.output.dir}}", "<node-5>", "API_call_5"])
def test_the_generic_shape_still_reads_its_corpora_references(
        text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "calls.json"
    path.write_text(json.dumps({"tool_calls": [
        {"name": "write_file", "arguments": {"path": "notes.md", "content": text}}]}),
        encoding="utf-8")
    main(["check", str(path), "--tools", str(POOL), "--format", "json"])
    printed = json.loads(capsys.readouterr().out)["diagnostics"]
    assert [d["code"] for d in printed] == ["PC206"], printed
