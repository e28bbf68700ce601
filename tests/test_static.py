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
