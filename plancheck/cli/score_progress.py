"""The progress bar of ``plancheck score`` on a terminal (as ``plancheck plan`` shows one):
predictions scored, of how many, time gone and left. Silent when standard error is no
terminal, so that logs and pipes get only the report."""

from __future__ import annotations

import sys
import time
from typing import TextIO

_EVERY = 0.2  # seconds between redraws
_WIDTH = 24


class ScoreProgress:
    def __init__(self, total: int | None, stream: TextIO, enabled: bool) -> None:
        self.total = total
        self.stream = stream
        self.enabled = enabled
        self.count = 0
        self.started = time.monotonic()
        self._last = 0.0
        self._shown = False

    @classmethod
    def for_files(cls, paths: list[str], *, enabled: bool) -> ScoreProgress:
        """A bar over the records of ``paths`` (their non-blank lines, when all are JSONL
        files: counted only on a terminal); without a total it counts."""
        stream = sys.stderr
        enabled = enabled and stream.isatty()
        return cls(_count_records(paths) if enabled else None, stream, enabled)

    def tick(self) -> None:
        self.count += 1
        if self.enabled:
            now = time.monotonic()
            if now - self._last >= _EVERY:
                self._last = now
                self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = now - self.started
        if self.total:
            done = min(self.count, self.total)
            filled = _WIDTH * done // self.total
            left = elapsed / done * (self.total - done) if done else 0.0
            line = (f"\rscoring [{'#' * filled}{'.' * (_WIDTH - filled)}] {done}/{self.total}"
                    f"  {_clock(elapsed)} elapsed, {_clock(left)} left ")
        else:
            line = f"\rscoring: {self.count} predictions  {_clock(elapsed)} elapsed "
        self.stream.write(line)
        self.stream.flush()
        self._shown = True

    def finish(self) -> None:
        """The last state, and a new line (only when a bar was drawn)."""
        if self.enabled and self._shown:
            self._draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False


def _count_records(paths: list[str]) -> int | None:
    total = 0
    for path in paths:
        if path == "-" or not path.lower().endswith((".jsonl", ".ndjson")):
            return None
        try:
            with open(path, "rb") as handle:
                for line in handle:
                    total += bool(line.strip())
        except OSError:
            return None
    return total


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
