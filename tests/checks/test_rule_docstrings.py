"""A rule declares its code, name and text once (issue 35): in the registry of codes
(``plancheck/diagnostics/codes.py``, or the ``CodeInfo`` a rule module declares). A rule
module's docstrings say why and how the rule works; what it reports is its codes' entries,
which ``plancheck explain`` prints, and is not restated.

Checked on the source of every module of ``plancheck/checks/rules/``: its own codes (the code
strings its code passes, to ``make``, ``report`` or a ``CodeInfo``) are named in no module or
class docstring, and no docstring of it holds one of their registered summaries.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from plancheck.checks.registry import rules
from plancheck.diagnostics.codes import CODES

RULES_DIR = Path(__file__).resolve().parents[2] / "plancheck" / "checks" / "rules"
MODULES = sorted(p for p in RULES_DIR.glob("*.py") if p.name != "__init__.py")
_CODE = re.compile(r"PC\d{3}")


def _docstrings(tree: ast.Module) -> tuple[list[str], list[str]]:
    """The module's and its classes' docstrings, and its functions'."""
    outer: list[str] = []
    inner: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=True)
            if text is not None:
                (inner if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                 else outer).append(text)
    return outer, inner


def _own_codes(tree: ast.Module) -> set[str]:
    """The codes named by string constants in the module's code (not its docstrings)."""
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docs and _CODE.fullmatch(node.value)}


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9_]+", text.lower()))


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_a_rule_module_does_not_restate_its_codes(module: Path) -> None:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    own = _own_codes(tree)
    assert own, f"{module.name} reports no code of its own"
    outer, inner = _docstrings(tree)
    for text in outer:
        named = own.intersection(_CODE.findall(text))
        assert not named, (f"{module.name}: a docstring names its own {sorted(named)}; what "
                           "the rule reports is its codes' registered entries")
    for text in outer + inner:
        for code in own:
            summary = _words(CODES[code].summary)
            assert summary not in _words(text), (
                f"{module.name}: a docstring restates {code}'s summary {summary!r}")


def test_every_rule_module_is_looked_at() -> None:
    # The modules read above are those the rules come from (the registry's, found there).
    found = {type(rule).__module__.rsplit(".", 1)[-1] for rule in rules()
             if type(rule).__module__.startswith("plancheck.checks.rules.")}
    assert found <= {p.stem for p in MODULES}
    assert found
