"""Locks and temporaries belong to the file itself: a link to a locked file is locked too, a
lock file planted as a link is refused (never followed to truncate its target), and a live
writer's temporary survives a second writer in the same directory even when its process id
means nothing there (another PID namespace: two containers sharing a directory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plancheck.cli import main
from plancheck.locks import FileLock, lock_path_for
from tests.support.samples import FOG_CHAIN

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "flood_plan.json"


def _score(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["score", "--bootstrap", "0", *args])
    return code, capsys.readouterr().err


@pytest.fixture
def inputs(tmp_path: Path) -> list[str]:
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(FOG_CHAIN))
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({"id": f"p{i}", "task_id": 1, "plan": FOG_CHAIN})
                                   + "\n" for i in range(3)))
    return ["--gold", str(gold), str(predictions)]


def test_a_link_to_a_locked_per_item_file_is_locked(
        tmp_path: Path, inputs: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    real = tmp_path / "pi.jsonl"
    real.write_text('{"old": true}\n')
    link = tmp_path / "link.jsonl"
    link.symlink_to(real.name)
    with FileLock(lock_path_for(real), what=str(real)):
        code, err = _score(capsys, *inputs, "--per-item", str(link))
    assert code == 2 and "in use" in err, err
    assert real.read_text() == '{"old": true}\n' and link.is_symlink()
    # and the other way round: a run through the link holds the real file's lock
    assert lock_path_for(link) == lock_path_for(real)


@pytest.mark.parametrize("planted", ["symlink", "hard link"])
def test_a_planted_lock_file_is_refused_not_followed(
        tmp_path: Path, inputs: list[str], planted: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    victim = tmp_path / "precious.txt"
    victim.write_text("years of work\n")
    per_item = tmp_path / "pi.jsonl"
    lock = Path(lock_path_for(per_item))
    if planted == "symlink":
        lock.symlink_to(victim)
    else:
        os.link(victim, lock)
    code, err = _score(capsys, *inputs, "--per-item", str(per_item))
    assert code == 2, err
    assert "lock file" in err and "left alone" in err
    assert victim.read_text() == "years of work\n"
    assert not per_item.exists()


def test_a_planted_lock_link_is_refused_for_plan_out_too(tmp_path: Path) -> None:
    """``plan``'s OUT/.lock is made by the same lock."""
    victim = tmp_path / "precious.txt"
    victim.write_text("years of work\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".lock").symlink_to(victim)
    with pytest.raises(OSError, match="symbolic link"):
        FileLock(out / ".lock", what=str(out)).acquire()
    assert victim.read_text() == "years of work\n"


_WRITER = """
import os, sys
os.getpid = lambda: {pid}  # what a writer in another PID namespace looks like from here
from plancheck.fileio import AtomicWriter
writer = AtomicWriter(sys.argv[1])
writer.write("the result of a long run\\n")
print("ready", flush=True)
sys.stdin.readline()
writer.commit()
print("committed", flush=True)
"""


def _dead_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    return int(child.stdout)


def test_a_live_writers_temporary_survives_a_second_writer(tmp_path: Path) -> None:
    target = tmp_path / "scores.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER.format(pid=_dead_pid()), str(target)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline() == "ready\n"
        temporaries = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert len(temporaries) == 1
        second = subprocess.run(
            [sys.executable, "-m", "plancheck", "check", str(EXAMPLE), "--no-config",
             "--output", str(tmp_path / "report.txt")],
            check=False, capture_output=True, text=True, env=env, timeout=120)
        assert second.returncode == 1, second.stderr
        assert temporaries[0].exists()  # a live writer's: kept
        out, _ = writer.communicate("\n", timeout=60)
        assert writer.returncode == 0 and out == "committed\n"
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait(timeout=30)
    assert target.read_text() == "the result of a long run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.txt", "scores.jsonl"]


def test_a_dead_writers_temporary_is_removed(tmp_path: Path) -> None:
    """The writer is gone (its flock went with it): its temporary is removed by the next."""
    target = tmp_path / "scores.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER.format(pid=os.getpid()), str(target)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert writer.stdout is not None
    assert writer.stdout.readline() == "ready\n"
    writer.kill()  # (as kill -9: no clean-up)
    writer.wait(timeout=30)
    assert [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert main(["check", str(EXAMPLE), "--no-config", "--output",
                 str(tmp_path / "report.txt")]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.txt"]
