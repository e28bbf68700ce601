"""Run one command and measure that command only: its CPU time and peak RSS come from
``os.wait4`` on its own process (the rusage of that child and the children it waited for),
never from ``RUSAGE_CHILDREN`` of the test process, which holds the largest child pytest ever
had (a fresh clone's first run, a DORA reference process) and every earlier child's CPU."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple


class Measured(NamedTuple):
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float  # user + system
    peak_rss_mb: float


def run_measured(argv: Sequence[str], *, timeout: float, cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> Measured:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        process = subprocess.Popen(list(argv), stdout=out, stderr=err, cwd=cwd, env=env)
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                os.wait4(process.pid, 0)
                raise subprocess.TimeoutExpired(list(argv), timeout)
            time.sleep(0.01)
        wall = time.monotonic() - started
        process.returncode = os.waitstatus_to_exitcode(status)  # (already reaped by wait4)
        out.seek(0)
        err.seek(0)
        return Measured(process.returncode, out.read().decode("utf-8", "replace"),
                        err.read().decode("utf-8", "replace"), wall,
                        usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)
