"""No module of plancheck can deserialise code (issue 33): pickle, shelve, marshal loading and
Lark's pickling cache (``cache=True``, ``Lark.load``) are absent from the package's code, so no
file, in a shared directory or not, is ever read by something that can run what it holds.
``marshal.dumps`` (a hash key, never read back) is allowed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "plancheck"
MODULES = {"pickle", "_pickle", "cPickle", "shelve", "dill", "cloudpickle", "joblib"}
LOADERS = {("marshal", "load"), ("marshal", "loads"), ("Lark", "load"), ("lark", "load")}


def forbidden(source: str) -> list[int]:
    """The lines of ``source`` that deserialise (or could) with code-running machinery."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            names = []
        if any(name.split(".")[0] in MODULES for name in names):
            lines.append(node.lineno)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                (node.value.id, node.attr) in LOADERS:
            lines.append(node.lineno)
        if isinstance(node, ast.keyword) and node.arg == "cache" and \
                not (isinstance(node.value, ast.Constant) and node.value.value in (False, None)):
            lines.append(node.lineno)
    return lines


@pytest.mark.slow
def test_nothing_in_the_package_can_deserialise_code() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{line}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for line in forbidden(path.read_text(encoding="utf-8"))]
    assert not found, found


def test_the_check_itself_can_fail() -> None:
    assert forbidden("lark.Lark(g, parser='lalr', cache=True)")
    assert forbidden("import pickle")
    assert forbidden("from shelve import open")
    assert forbidden("x = marshal.loads(data)")
    assert forbidden("p = Lark.load(f)")
    assert not forbidden("key = marshal.dumps(value, 2)\n'''cache=True in a docstring'''")
