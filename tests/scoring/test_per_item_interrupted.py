"""A signal raises wherever it lands (Ctrl-C; SIGTERM and SIGHUP as the command line handles
them), and an interrupted scoring run then puts the lines it wrote in ``PATH.partial``: a
flush of the per-item file cut short before or after its write still leaves each line once,
in order, with no blank line (``score --resume`` continues from that file)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from plancheck.fileio import AtomicWriter
from plancheck.scoring.batch import PerItemWriter

LINES = [f'{{"id": "{number}-0", "em": {str(number % 2 == 0).lower()}}}' for number in range(700)]


@pytest.mark.parametrize("cut", ["before the write", "after the write"])
@pytest.mark.parametrize("flush", [1, 2])
def test_a_flush_cut_short_leaves_each_line_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 cut: str, flush: int) -> None:
    writer = PerItemWriter(str(tmp_path / "items.jsonl"), state=True)
    write = AtomicWriter.write
    seen = {"writes": 0}

    def interrupted(self: AtomicWriter, text: str) -> None:
        if self.path.endswith("items.jsonl"):  # (not the state file beside it)
            seen["writes"] += 1
            if seen["writes"] == flush and cut == "before the write":
                raise KeyboardInterrupt
            write(self, text)
            if seen["writes"] == flush:
                raise KeyboardInterrupt
            return
        write(self, text)

    monkeypatch.setattr(AtomicWriter, "write", interrupted)
    written: list[str] = []

    def score() -> None:
        for line in LINES:
            written.append(line)
            writer.write(line)

    with pytest.raises(KeyboardInterrupt):
        score()
    monkeypatch.undo()
    assert 0 < len(written) < len(LINES)
    partial, replaced = writer.close_partial()
    assert (partial, replaced) == (str(tmp_path / "items.jsonl.partial"), False)
    assert Path(partial).read_text(encoding="utf-8") == "".join(f"{line}\n" for line in written)
    assert not (tmp_path / "items.jsonl").exists()


def test_lines_written_after_a_flush_follow_it(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    writer = PerItemWriter(str(path))
    for line in LINES:
        writer.write(line)
    writer.close()
    assert path.read_text(encoding="utf-8") == "".join(f"{line}\n" for line in LINES)


def test_a_pipe_is_written_as_it_stands(tmp_path: Path) -> None:
    """A FIFO (as ``--per-item /dev/stdout`` into a pipe) cannot be sought: its lines are
    written in order as they come."""
    fifo = tmp_path / "items.fifo"
    os.mkfifo(fifo)
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    writer = PerItemWriter(str(fifo))
    for line in LINES:
        writer.write(line)
    writer.close()
    reader.join(timeout=30)
    assert read == ["".join(f"{line}\n" for line in LINES)]
