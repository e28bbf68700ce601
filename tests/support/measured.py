"""Run one command and measure that command only: its CPU time and peak RSS come from
``os.wait4`` on its own process (the rusage of that child and the children it waited for),
never from ``RUSAGE_CHILDREN`` of the test process, which holds the largest child pytest ever
had (a fresh clone's first run, a DORA reference process) and every earlier child's CPU.

The command is started by a small launcher process, not by pytest itself: on Linux a child's
``ru_maxrss`` starts at the resident size of the process it was forked from (the copied memory
map's high-water mark is kept across ``exec``), so a command forked from a test process of
500 MB measured 500 MB whatever it used."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
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


# Forks the command from this small process, waits for it and writes its exit status, CPU
# seconds and peak RSS (KiB) to the file named first.
_LAUNCH = """
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as report:
    report.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_utime + usage.ru_stime} "
                 f"{usage.ru_maxrss}")
"""


def run_measured(argv: Sequence[str], *, timeout: float, cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> Measured:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "measured"
        started = time.monotonic()
        process = subprocess.Popen([sys.executable, "-S", "-c", _LAUNCH, str(report), *argv],
                                   stdout=out, stderr=err, cwd=cwd, env=env,
                                   start_new_session=True)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise subprocess.TimeoutExpired(list(argv), timeout) from None
        wall = time.monotonic() - started
        code, cpu, peak_kb = report.read_text(encoding="utf-8").split()
        out.seek(0)
        err.seek(0)
        return Measured(int(code), out.read().decode("utf-8", "replace"),
                        err.read().decode("utf-8", "replace"), wall, float(cpu),
                        int(peak_kb) / 1024)
