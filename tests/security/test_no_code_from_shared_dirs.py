"""No pickle is read from a directory another user can write, and no link planted there is
followed (issue 33): Lark's ``cache=True`` unpickled ``$TMPDIR/.lark_cache_*`` before checking
anything, so a file planted in the shared ``/tmp`` ran code on ``check --policy``, ``toolset
show --tools x.wf``, ``Guard(policies=...)`` and a plain ``plancheck plan.json`` whenever the
built-in pool had to be parsed; a link there made plancheck overwrite the link's target.

Each entry point runs in a child under an audit hook (``driver.py``) with a pickle payload and
a link planted at every name plancheck (or its old code) reads in the temporary directory and
in the cache directory: nothing is unpickled, nothing the payload would do happens, no link's
target changes, and nothing under the temporary directory is opened at all."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from tests.corpus.test_toolset_cache import _Payload  # unpickling it creates its marker

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("driver.py")
EXAMPLES = ROOT / "examples"
POLICY = EXAMPLES / "flood_policy.wf"
BUILTIN_WF = ROOT / "plancheck" / "corpus" / "disasterbench.wf"

# Each entry point the issue found reading the Lark cache.
ENTRY_POINTS = {
    "check --policy": ["cli", "check", str(EXAMPLES / "policy_plan.json"), "--policy", str(POLICY)],
    "toolset show --tools x.wf": ["cli", "toolset", "show", "--tools", str(BUILTIN_WF)],
    "Guard(policies=...)": ["guard", str(POLICY)],
    "plancheck plan.json": ["cli", str(EXAMPLES / "flood_plan.json")],
}


def _lark_cache_name(scratch: Path) -> str:
    """The name under which Lark's ``cache=True`` (the old parser's) reads its cache: the
    file Lark writes when it builds plancheck's grammar with the old options."""
    scratch.mkdir()
    code = ("import lark, pathlib\n"
            "from plancheck.dsl.tables import GRAMMAR_PATH, OPTIONS\n"
            "lark.Lark(GRAMMAR_PATH.read_text(encoding='utf-8'), cache=True, **OPTIONS)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120,
                   env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch)})
    (written,) = scratch.glob(".lark_cache_*")
    return written.name


def _run(entry: list[str], tmp: Path, cache: Path, log: Path
         ) -> tuple[subprocess.CompletedProcess[str], list[list[str]]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp),
           "PLANCHECK_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, str(DRIVER), str(log), *entry], capture_output=True,
                          text=True, check=False, env=env, timeout=180)
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return done, events


@pytest.fixture(scope="module")
def lark_cache_name(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _lark_cache_name(tmp_path_factory.mktemp("lark") / "scratch")


@pytest.mark.parametrize("name", list(ENTRY_POINTS))
@pytest.mark.parametrize("planted", ["pickle", "link"])
def test_a_file_planted_in_the_temporary_directory_is_never_read(
        tmp_path: Path, lark_cache_name: str, name: str, planted: str) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp
    marker, victim = tmp_path / "marker", tmp_path / "victim"
    victim.write_text("precious", encoding="utf-8")
    crafted = b"x\n" + pickle.dumps(_Payload(marker))  # Lark unpickled before any check
    planted_at = shared / lark_cache_name
    if planted == "pickle":
        planted_at.write_bytes(crafted)
    else:
        planted_at.symlink_to(victim)
    # An empty cache directory: the built-in pool is parsed from its DSL, as after an install.
    done, events = _run(ENTRY_POINTS[name], shared, tmp_path / "cache", tmp_path / "log")
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    assert not marker.exists()
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not [e for e in events if e[0] == "pickle.find_class"]
    assert not [e for e in events if e[0] == "open" and e[1].startswith(str(shared))], events
    assert sorted(p.name for p in shared.iterdir()) == [lark_cache_name]


def _entry(cache: Path) -> Path:
    (entry,) = cache.glob("toolset-disasterbench-*.json")
    return entry


def _planted_entry(good: bytes) -> bytes:
    """A well-formed entry (key and checksum hold) whose pool says what a planter wants."""
    header, _, payload = good.partition(b"\n")
    payload = payload.replace(b"The 26 DisasterBench disaster-response tools", b"PLANTED")
    head = json.loads(header)
    head["crc"] = zlib.crc32(payload)
    return json.dumps(head).encode() + b"\n" + payload


SHOW = ["cli", "toolset", "show"]


def test_a_link_or_pickle_at_the_cache_entry_is_not_followed(tmp_path: Path) -> None:
    cache, log = tmp_path / "cache", tmp_path / "log"
    cache.mkdir(mode=0o700)
    first, _ = _run(SHOW, tmp_path, cache, log)
    entry = _entry(cache)
    good = entry.read_bytes()
    marker, victim = tmp_path / "marker", tmp_path / "victim"
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(_planted_entry(good))
    for target, contents in ((victim, b"precious"), (elsewhere, elsewhere.read_bytes())):
        if target == victim:
            target.write_bytes(contents)
        entry.unlink()
        entry.symlink_to(target)
        done, events = _run(SHOW, tmp_path, cache, log)
        assert (done.returncode, done.stdout) == (first.returncode, first.stdout), done.stderr
        assert "PLANTED" not in done.stdout
        assert target.read_bytes() == contents  # the link's target is neither read nor written
        assert not entry.is_symlink() and entry.read_bytes() == good  # replaced by a real entry
    entry.write_bytes(b"x\n" + pickle.dumps(_Payload(marker)))
    done, events = _run(SHOW, tmp_path, cache, log)
    assert done.stdout == first.stdout and not marker.exists()
    assert not [e for e in events if e[0] == "pickle.find_class"]


def test_a_cache_directory_others_can_write_is_not_used(tmp_path: Path) -> None:
    private, shared, log = tmp_path / "private", tmp_path / "shared", tmp_path / "log"
    first, _ = _run(SHOW, tmp_path, private, log)
    shared.mkdir()
    shared.chmod(0o1777)
    planted = shared / _entry(private).name
    planted.write_bytes(_planted_entry(_entry(private).read_bytes()))
    done, events = _run(SHOW, tmp_path, shared, log)
    assert (done.returncode, done.stdout) == (first.returncode, first.stdout), done.stderr
    assert "PLANTED" not in done.stdout
    assert sorted(shared.iterdir()) == [planted]  # nothing written there either
    assert not [e for e in events if e[0] == "open" and e[1].startswith(f"{shared}/")]
