"""The package is ``mypy --strict`` and ``ruff`` clean (part of the test suite so that the
README's one test command checks everything)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> list[str]:
    return [sys.executable, "-m", name]


def test_ruff_is_clean() -> None:
    result = subprocess.run([*_tool("ruff"), "check", "."], cwd=ROOT, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.early  # (a minute without mypy's cache: a fresh clone's first run)
def test_mypy_strict_is_clean() -> None:
    result = subprocess.run(_tool("mypy"), cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_py_typed_is_shipped() -> None:
    assert (ROOT / "plancheck" / "py.typed").exists()
    assert shutil.which("git") is None or "py.typed" in (ROOT / "pyproject.toml").read_text()


def test_plancheck_imports_nothing_mypy_is_told_to_skip() -> None:
    """mypy skips parts of dependencies plancheck never imports (pyproject.toml, to keep a cold
    run short): an import of one would be typed Any without a word, so none is allowed."""
    import ast
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    skipped = [pattern.removesuffix(".*")
               for override in config["tool"]["mypy"]["overrides"]
               if override.get("follow_imports") == "skip" for pattern in override["module"]]
    assert "agents.run_internal" in skipped  # (the section this test reads is there)
    found = []
    for path in sorted((ROOT / "plancheck").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and \
                not node.level else []
            found.extend(f"{path.relative_to(ROOT)}: {name}" for name in names
                         if any(name == s or name.startswith(s + ".") for s in skipped))
    assert not found, found
