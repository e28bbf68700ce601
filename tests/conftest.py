"""Shared fixtures. Tests that need the official release read it from ``PLANCHECK_DATA``
(default ``../shared/disasterbench``); when the variable is set and the data is missing the tests
fail rather than skip, so CI never skips them silently."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from plancheck.corpus.paths import DATA_ENV, parity_cases_path, release_dir


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-cases", action="store_true", default=False,
                     help="rewrite the [out] section of each failing case of "
                          "tests/data/cases/*.test to what plancheck reports (as mypy's "
                          "--update-data): review the diff before committing it")


def _ignore_hangup(signum: int, frame: object) -> None:
    pass


def pytest_configure(config: pytest.Config) -> None:
    """Tests that stop a command by a signal need the command to receive it. A suite started
    in the background or under nohup ignores SIGINT or SIGHUP, and an ignored signal stays
    ignored in every child process (a command honours that, as it should: then the test
    reads a finished run as an unstopped one). A handler, unlike SIG_IGN, is reset to the
    default in a child, so each ignored one gets a handler here: the suite itself still
    outlives a hangup."""
    # The suite starts hundreds of short Python processes (commands run as a user runs them).
    # Where the environment forbids bytecode caches, each would compile plancheck's modules
    # that are not compiled to C afresh (0.15 s a process on the plain build): they keep their
    # bytecode here, as on a machine that does not set PYTHONDONTWRITEBYTECODE. (Before the
    # xdist workers start: they inherit it.)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for name in ("SIGHUP", "SIGTERM"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) == signal.SIG_IGN:
            signal.signal(number, _ignore_hangup)


@contextmanager
def _turn(alone: bool) -> Iterator[None]:
    """Under pytest-xdist, a test marked ``alone`` (it bounds the time or CPU a command takes)
    runs while no other worker runs a test; the others share. A readers-writer lock of two
    files, fair to the writer: every test passes the turnstile to take its share, and a test
    that must run alone keeps the turnstile while it waits for the shares to end, so no new
    test starts meanwhile. Without xdist, one test runs at a time anyway."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run or not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    base = Path(tempfile.gettempdir()) / f"plancheck-pytest-{run}"
    with open(f"{base}.turn", "a") as turnstile, open(f"{base}.share", "a") as share:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        if alone:
            fcntl.flock(share, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(share, fcntl.LOCK_UN)
                fcntl.flock(turnstile, fcntl.LOCK_UN)
            return
        fcntl.flock(share, fcntl.LOCK_SH)
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(share, fcntl.LOCK_UN)


# A test past this many seconds belongs in the slow set (``@pytest.mark.slow``), which the
# README's test command leaves to CI: the run's summary names the unmarked ones.
SLOW_SECONDS = 10.0
_UNMARKED_SPENT: dict[str, float] = {}  # test -> its setup, call and teardown, in seconds


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that must run alone stops every other worker while it runs: it is slow by
    nature, and the README's quick run leaves it out. The tests marked early go first, the
    others keep their order (pytest-xdist hands tests out in this order: a minute-long test
    handed out last left one core idle for most of that minute)."""
    for item in items:
        if item.get_closest_marker("alone") and not item.get_closest_marker("slow"):
            raise pytest.UsageError(f"{item.nodeid} is marked alone but not slow")
    items.sort(key=lambda item: item.get_closest_marker("early") is None)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """(A fixture's setup counts for the test that ran it: a slow fixture makes its first user
    slow, in the quick run as much as a slow test.)"""
    if "slow" not in report.keywords:
        _UNMARKED_SPENT[report.nodeid] = _UNMARKED_SPENT.get(report.nodeid, 0.0) + \
            report.duration


def pytest_terminal_summary(terminalreporter: Any) -> None:
    long = sorted(((seconds, nodeid) for nodeid, seconds in _UNMARKED_SPENT.items()
                   if seconds > SLOW_SECONDS), reverse=True)
    if long:
        terminalreporter.write_sep("-", f"tests over {SLOW_SECONDS:.0f} s not marked slow")
        for seconds, nodeid in long:
            terminalreporter.write_line(f"{seconds:5.1f} s {nodeid}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    with _turn(item.get_closest_marker("alone") is not None):
        yield


def _require(path: Path, what: str) -> Path:
    if path.exists():
        return path
    message = f"{what} not found at {path}"
    if os.environ.get(DATA_ENV):
        pytest.fail(f"{message} (set by {DATA_ENV})")
    pytest.skip(f"{message}; set {DATA_ENV} to the release directory")


@pytest.fixture(scope="session")
def release() -> Path:
    return _require(release_dir(), "the DisasterBench release")


@pytest.fixture(scope="session")
def benchmark_path(release: Path) -> Path:
    return _require(release / "benchmark.jsonl", "benchmark.jsonl")


@pytest.fixture(scope="session")
def gold_tasks(benchmark_path: Path) -> list[dict[str, Any]]:
    with benchmark_path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="session")
def parity_cases() -> Path:
    return _require(parity_cases_path(), "parity/cases.jsonl")


@pytest.fixture(scope="session")
def toolset():  # type: ignore[no-untyped-def]
    from plancheck.corpus.builtin import builtin_toolset

    return builtin_toolset()
