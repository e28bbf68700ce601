"""SIGTERM and SIGHUP stop ``score`` as Ctrl-C does (the old per-item file kept, a ``.partial``
written, no temporary or lock left); a ``.partial`` is never silently replaced; ``score
--resume`` continues from it, scoring no prediction twice, to the result of a run never
interrupted (byte for byte); a progress bar on a terminal. On the reference's parity cases."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory, parity_cases: Path) -> Path:
    """The first 2,500 parity cases (real completions of 115 tasks)."""
    path = tmp_path_factory.mktemp("cases") / "cases.jsonl"
    with parity_cases.open(encoding="utf-8") as lines:
        path.write_text("".join(line for _, line in zip(range(2500), lines, strict=False)),
                        encoding="utf-8")
    return path


def _argv(benchmark: Path, cases: Path, per_item: Path, *extra: str) -> list[str]:
    return ["score", "--gold", str(benchmark), str(cases), "--per-item", str(per_item),
            "--bootstrap", "50", *extra]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory, benchmark_path: Path,
                  cases: Path) -> tuple[bytes, bytes]:
    per_item = tmp_path_factory.mktemp("whole") / "items.jsonl"
    done = subprocess.run([sys.executable, "-m", "plancheck",
                           *_argv(benchmark_path, cases, per_item)],
                          capture_output=True, env=_env(), timeout=600, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return per_item.read_bytes(), done.stdout


def _under_way(directory: Path) -> bool:
    """Whether the run has scored something (its temporaries have grown)."""
    return any(p.name.endswith(".tmp") and p.stat().st_size > 100_000
               for p in directory.iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_keeps_the_work_and_resume_finishes_it(
        tmp_path: Path, benchmark_path: Path, cases: Path, signum: int,
        uninterrupted: tuple[bytes, bytes]) -> None:
    per_item = tmp_path / "items.jsonl"
    per_item.write_text('{"old": true}\n')
    run = subprocess.Popen([sys.executable, "-m", "plancheck",
                            *_argv(benchmark_path, cases, per_item)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    try:
        deadline = time.monotonic() + 300
        while not _under_way(tmp_path):
            assert run.poll() is None, "the run ended before it could be stopped"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        run.send_signal(signum)
        _, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(timeout=30)
    assert run.returncode == 128 + signum, err.decode()
    assert per_item.read_text() == '{"old": true}\n'
    partial = tmp_path / "items.jsonl.partial"
    scored = partial.read_bytes().splitlines(keepends=True)
    assert 0 < len(scored) < 2500
    assert uninterrupted[0].startswith(b"".join(scored))  # what it scored, as scored
    # no temporary, no lock: only the file, its .partial and the state to resume from
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".items.jsonl.partial.state", "items.jsonl", "items.jsonl.partial"]
    assert b"--resume" in err

    resumed = subprocess.run([sys.executable, "-m", "plancheck",
                              *_argv(benchmark_path, cases, per_item, "--resume")],
                             capture_output=True, env=_env(), timeout=600, check=False)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert per_item.read_bytes() == uninterrupted[0]
    assert resumed.stdout == uninterrupted[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.jsonl"]


class _StopAt:
    """Ctrl-C after ``count`` predictions (as a user's, at a known point)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, count: int) -> None:
        from plancheck.cli.score_progress import ScoreProgress

        original = ScoreProgress.tick

        def tick(progress: ScoreProgress) -> None:
            original(progress)
            if progress.count > count:
                raise KeyboardInterrupt

        monkeypatch.setattr(ScoreProgress, "tick", tick)


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_a_partial_is_never_silently_replaced_and_resume_scores_nothing_twice(
        tmp_path: Path, benchmark_path: Path, cases: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], uninterrupted: tuple[bytes, bytes]) -> None:
    small = tmp_path / "cases.jsonl"
    small.write_text("".join(cases.read_text(encoding="utf-8").splitlines(keepends=True)[:40]))
    per_item = tmp_path / "items.jsonl"
    partial = tmp_path / "items.jsonl.partial"
    with monkeypatch.context() as patch:
        _StopAt(patch, 10)
        assert main(_argv(benchmark_path, small, per_item)) == 130
    assert _lines(partial) == 10
    with monkeypatch.context() as patch:  # a second Ctrl-C, of a run that did not resume
        _StopAt(patch, 15)
        assert main(_argv(benchmark_path, small, per_item)) == 130
    err = capsys.readouterr().err
    assert _lines(partial) == 10, "the first .partial was replaced"
    assert _lines(tmp_path / "items.jsonl.partial.2") == 15
    assert "items.jsonl.partial.2" in err and "is kept" in err

    # What the scorer is handed, seen at the module the command imports it from (the scorer's
    # own class may be compiled, where a patched method is never called).
    from plancheck.scoring import batch

    scored: list[str] = []
    original = batch.score_records

    def counting(source: Any, *args: Any, **kwargs: Any) -> Any:
        def seen() -> Any:
            for raw in source:
                scored.append(getattr(raw, "text", "") or "")
                yield raw

        return original(seen(), *args, **kwargs)

    monkeypatch.setattr(batch, "score_records", counting)
    with monkeypatch.context() as patch:  # resumed, then stopped again: the .partial grows
        _StopAt(patch, 25)
        assert main(_argv(benchmark_path, small, per_item, "--resume")) == 130
    records = small.read_text(encoding="utf-8").splitlines()
    # It started at the 11th record (the 26th was being scored when it was stopped: lost).
    assert _lines(partial) == 25 and [text.rstrip("\n") for text in scored] == records[10:26]
    scored.clear()
    capsys.readouterr()
    assert main([*_argv(benchmark_path, small, per_item, "--resume"), "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert [text.rstrip("\n") for text in scored] == records[25:]  # none of the 25 again
    assert not partial.exists()
    assert (tmp_path / "items.jsonl.partial.2").exists()  # another run's: not this one's
    whole = tmp_path / "whole.jsonl"
    assert main([*_argv(benchmark_path, small, whole), "--format", "json"]) == 0
    assert per_item.read_bytes() == whole.read_bytes()
    assert json.loads(out)["files"] == json.loads(capsys.readouterr().out)["files"]


def test_resume_under_other_settings_is_refused(
        tmp_path: Path, benchmark_path: Path, cases: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    small = tmp_path / "cases.jsonl"
    small.write_text("".join(cases.read_text(encoding="utf-8").splitlines(keepends=True)[:20]))
    per_item = tmp_path / "items.jsonl"
    with monkeypatch.context() as patch:
        _StopAt(patch, 5)
        assert main(_argv(benchmark_path, small, per_item)) == 130
    capsys.readouterr()
    assert main(_argv(benchmark_path, small, per_item, "--resume", "--parity-only")) == 2
    assert "parity_only" in capsys.readouterr().err
    assert _lines(tmp_path / "items.jsonl.partial") == 5
    assert main(["score", "--gold", str(benchmark_path), str(small), "--resume"]) == 2


def test_score_shows_progress_on_a_terminal_only(tmp_path: Path, benchmark_path: Path,
                                                 cases: Path) -> None:
    small = tmp_path / "cases.jsonl"
    small.write_text("".join(cases.read_text(encoding="utf-8").splitlines(keepends=True)[:300]))
    argv = [sys.executable, "-m", "plancheck", "score", "--gold", str(benchmark_path),
            str(small), "--bootstrap", "0"]
    master, slave = pty.openpty()
    run = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave, env=_env())
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    data = os.read(master, 4096)
                except OSError:  # (EIO: the other end closed)
                    break
                if not data:
                    break
                shown += data
            elif run.poll() is not None:
                break
    finally:
        os.close(master)
        run.wait(timeout=60)
    assert run.returncode == 0
    assert b"scoring [" in shown and b"300/300" in shown, shown[-300:]
    piped = subprocess.run(argv, capture_output=True, env=_env(), timeout=300, check=False)
    assert piped.returncode == 0 and b"scoring [" not in piped.stderr


def test_resume_with_a_policy_gives_the_uninterrupted_result(
        tmp_path: Path, benchmark_path: Path, cases: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    small = tmp_path / "cases.jsonl"
    small.write_text("".join(cases.read_text(encoding="utf-8").splitlines(keepends=True)[:30]))
    policy = ["--policy", str(REPO / "examples" / "flood_policy.wf"), "--format", "json"]
    per_item = tmp_path / "items.jsonl"
    with monkeypatch.context() as patch:
        _StopAt(patch, 12)
        assert main([*_argv(benchmark_path, small, per_item), *policy]) == 130
    capsys.readouterr()
    code = main([*_argv(benchmark_path, small, per_item, "--resume"), *policy])
    resumed = capsys.readouterr().out
    whole = tmp_path / "whole.jsonl"
    assert main([*_argv(benchmark_path, small, whole), *policy]) == code
    assert per_item.read_bytes() == whole.read_bytes()
    assert b'"policy"' in whole.read_bytes() or "policy" in resumed
    assert resumed == capsys.readouterr().out


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_leaves_no_temporary_of_check_output(tmp_path: Path, signum: int) -> None:
    """``check --output`` holds its report in a temporary until it is done: a signal while it
    reads (here a pipe that stays open) removes it, as Ctrl-C does; the old report stays."""
    report = tmp_path / "report.txt"
    report.write_text("the last report\n")
    run = subprocess.Popen([sys.executable, "-m", "plancheck", "check", "--no-config", "-",
                            "--output", str(report)], stdin=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=_env())
    try:
        deadline = time.monotonic() + 120
        while not any(p.name.endswith(".tmp") for p in tmp_path.iterdir()):
            assert run.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        run.send_signal(signum)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(timeout=30)
    assert run.returncode == 128 + signum, err.decode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.txt"]
    assert report.read_text() == "the last report\n"
