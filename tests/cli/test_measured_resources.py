"""Resource budgets measure the command under test only: a large process the test run had
earlier (a fresh clone's first build, another test's child) must not count against it, as it
did when budgets read ``RUSAGE_CHILDREN`` of the test process (the largest child pytest ever
had: the README's test command failed on a fresh clone and passed on a rerun)."""

from __future__ import annotations

import resource
import subprocess
import sys

from tests.support.measured import run_measured


def test_a_command_is_measured_alone() -> None:
    big = "b = bytearray(400 << 20); b[::4096] = b'x' * len(b[::4096])"  # 400 MB, touched
    subprocess.run([sys.executable, "-c", big], check=True, timeout=120)
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 > 400  # (the old way)
    measured = run_measured([sys.executable, "-m", "plancheck", "--version"], timeout=120)
    assert measured.returncode == 0 and "plancheck" in measured.stdout
    assert measured.peak_rss_mb < 200, measured
    assert 0 < measured.cpu_s < measured.wall_s + 1
