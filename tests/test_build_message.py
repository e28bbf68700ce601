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
