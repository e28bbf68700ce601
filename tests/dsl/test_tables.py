"""The parser's shipped tables (``plancheck/dsl/tables.json``, issue 33) are those of the
grammar: read back as data they parse every DSL file in the repository, and fail on bad source,
exactly as the parser built from ``grammar.lark`` does. After editing the grammar, rewrite them
with ``python -m plancheck.dsl.tables``."""

from __future__ import annotations

import json
from pathlib import Path

import lark
import pytest

from plancheck.dsl import tables
from plancheck.dsl.parser import parse_dsl

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for p in ROOT.rglob("*.wf") if ".venv" not in p.parts)
GRAMMAR = tables.GRAMMAR_PATH.read_text(encoding="utf-8")


def test_the_shipped_tables_are_the_grammars() -> None:
    stamp = json.loads(tables.TABLES_PATH.read_bytes())["stamp"]
    assert {k: v for k, v in stamp.items() if k != "lark"} == {
        k: v for k, v in tables._stamp(GRAMMAR).items() if k != "lark"
    }, "grammar.lark changed: run `python -m plancheck.dsl.tables`"
    if stamp["lark"] == lark.__version__:
        assert tables.load_parser(GRAMMAR) is not None
    else:  # another Lark release: the grammar is built instead, never tables it did not write
        assert tables.load_parser(GRAMMAR) is None


BAD = ["toolset {", "plan uses x { step 0 = f(a = ) }", "policy p { require a.b matches }",
       "\x00", "step0.x", "plan { step 0 = f(a = [1, {]) }"]


@pytest.mark.skipif(tables.load_parser(GRAMMAR) is None, reason="tables of another Lark")
def test_the_loaded_parser_parses_as_the_built_one() -> None:
    loaded, built = tables.load_parser(GRAMMAR), tables.build_parser(GRAMMAR)
    assert len(SOURCES) >= 5
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        assert loaded.parse(text) == built.parse(text), path
    for text in BAD:
        outcomes = [_outcome(parser, text) for parser in (loaded, built)]
        assert outcomes[0] == outcomes[1], text
        assert outcomes[0] is not None, text


def _outcome(parser: lark.Lark, text: str) -> object:
    try:
        parser.parse(text)
    except lark.exceptions.UnexpectedInput as error:
        expected = getattr(error, "accepts", None) or getattr(error, "expected", None) or ()
        return (type(error), error.line, error.column, sorted(expected))
    return None


def test_tables_of_another_grammar_are_not_used(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "TABLES_PATH", tmp_path / "tables.json")
    for contents in (tables.serialise(GRAMMAR + "\n// edited\n"), "{", "[]", '{"stamp": 1}'):
        (tmp_path / "tables.json").write_text(contents, encoding="utf-8")
        assert tables.load_parser(GRAMMAR) is None
    (tmp_path / "tables.json").unlink()
    assert tables.load_parser(GRAMMAR) is None
    assert tables.parser().parse("toolset t { }") is not None  # built from the grammar
    assert not parse_dsl("toolset t { }").diagnostics
