"""The build says what it is doing where the user sees it: pip keeps a build's output until it
ends (all of it only with ``-v``), so ``setup.py`` tells the terminal at once that it is
compiling (a minutes-long compile looked like a hang)."""

from __future__ import annotations

import ast
import os
import pty
import select
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _say_source() -> str:
    """``setup.py``'s ``_say``, read from its source (importing setup.py builds)."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    (say,) = [node for node in tree.body if isinstance(node, ast.FunctionDef)
              and node.name == "_say"]
    return ast.unparse(say)


def test_the_build_message_reaches_the_terminal_while_stderr_is_captured(
        tmp_path: Path) -> None:
    captured = tmp_path / "stderr.txt"
    # The child has the pty as its controlling terminal, and its stderr in a file, as under pip.
    program = (f"import sys\nsys.stderr = open({str(captured)!r}, 'w')\n{_say_source()}\n"
               "_say('compiling the scoring hot path with mypyc')\nsys.stderr.close()\n")
    pid, master = pty.fork()
    if pid == 0:  # the child
        os.execv(sys.executable, [sys.executable, "-c", program])
    seen = b""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if not ready:
            continue
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.waitpid(pid, 0)
    os.close(master)
    message = "plancheck build: compiling the scoring hot path with mypyc"
    assert message in seen.decode()
    assert message in captured.read_text(encoding="utf-8")  # and pip -v shows it too


@pytest.mark.slow
def test_the_metadata_steps_compile_nothing(tmp_path: Path) -> None:
    """pip runs setup.py for the build requirements and the metadata (egg_info, dist_info)
    before the build itself: mypyc ran at each, three times an install. Only a build compiles
    (with PLANCHECK_COMPILE=1 a step that compiled would take minutes, and say so)."""
    import shutil
    import subprocess

    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "plancheck", tmp_path / "plancheck",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__", "_build.json"))
    env = {**os.environ, "PLANCHECK_COMPILE": "1"}
    for command in (["egg_info"], ["dist_info", "--output-dir", str(tmp_path / "meta")]):
        (tmp_path / "meta").mkdir(exist_ok=True)
        done = subprocess.run([sys.executable, "setup.py", "-q", *command], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "plancheck build: compiling" not in done.stderr, command
