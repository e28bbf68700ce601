"""An output path that is not a regular file is written, never replaced: a pipe (what
`-o /dev/stdout` or `-o /dev/null` is to a writer that renames a temporary file over its
target: the device itself would be replaced) and a symbolic link (the link stays, its target
gets the text)."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from plancheck.cli import main

# The bundled example, which has 3 errors (exit 1).
EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "flood_plan.json")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_output_to_a_named_pipe_writes_into_it(tmp_path: Path) -> None:
    pipe = tmp_path / "out.pipe"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    reader.start()
    assert main(["check", "--format", "json", "--output", str(pipe), EXAMPLE]) == 1
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(pipe).st_mode), "the pipe was replaced by a file"
    assert json.loads(received[0])["summary"]["errors"] == 3
    assert [p.name for p in tmp_path.iterdir()] == ["out.pipe"]  # no temporary left


def test_output_through_a_symbolic_link_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "report.json"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    assert main(["check", "--format", "json", "--output", str(link), EXAMPLE]) == 1
    assert link.is_symlink()
    assert json.loads(target.read_text(encoding="utf-8"))["summary"]["errors"] == 3
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]
