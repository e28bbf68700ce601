"""Run Python code in a child under CPU, memory and wall-clock caps (issue 33's tests).

The caps are resource limits set in the child (``RLIMIT_CPU``, ``RLIMIT_AS``), and the peak
memory is what the child measures of itself (the high-water mark of its own memory map,
``VmHWM`` of ``/proc/self/status``, printed as the last line of its output), never
``RUSAGE_CHILDREN`` of the test process, which holds the largest of every child it ever ran,
nor the child's own ``ru_maxrss``, which on Linux starts at the size of the test process it
was forked from."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MB = 1 << 20
_PEAK = """
def _peak_kb():
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("PEAK_KB", _peak_kb())
"""


@dataclass
class Capped:
    returncode: int
    stdout: str
    stderr: str
    peak_bytes: int  # the child's own peak resident set (0 when it did not finish)

    @property
    def output(self) -> str:
        return self.stdout.rsplit("PEAK_KB", 1)[0]


def run_capped(code: str, *, cpu_seconds: int = 60, memory_bytes: int = 2 << 30,
               timeout: float = 120, env: dict[str, str] | None = None,
               cwd: Path | None = None) -> Capped:
    """Run ``code`` in a fresh interpreter with the caps; a child past the wall-clock timeout
    is killed and reported as return code -9."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    try:
        done = subprocess.run([sys.executable, "-c", code + _PEAK], capture_output=True,
                              text=True, check=False, env=environment, preexec_fn=cap,
                              timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired as expired:
        out = expired.stdout.decode() if isinstance(expired.stdout, bytes) else ""
        return Capped(-9, out, "timed out", 0)
    peak = 0
    if "PEAK_KB" in done.stdout:
        peak = int(done.stdout.rsplit("PEAK_KB", 1)[1].split()[0]) * 1024
    return Capped(done.returncode, done.stdout, done.stderr, peak)


def last_json(done: Capped) -> Any:
    """The JSON the child printed last (its verdict), after checking it finished cleanly."""
    import json

    assert done.returncode == 0, done.stderr
    return json.loads(done.output.strip().splitlines()[-1])
