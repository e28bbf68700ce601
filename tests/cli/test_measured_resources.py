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


def test_a_command_started_by_a_large_test_process_is_measured_alone() -> None:
    """On Linux a child's ``ru_maxrss`` starts at the size of the process it was forked from:
    the whole suite's pytest process (500 MB late in a run) made every budget test fail."""
    from tests.security.capped import run_capped

    held = bytearray(400 << 20)
    held[::4096] = b"x" * len(held[::4096])  # touched: 400 MB resident in this process
    measured = run_measured([sys.executable, "-m", "plancheck", "--version"], timeout=120)
    assert measured.returncode == 0 and measured.peak_rss_mb < 200, measured
    capped = run_capped("import plancheck", cpu_seconds=30, timeout=60)
    assert capped.returncode == 0 and capped.peak_bytes < 200 << 20, capped
    del held
