"""The cache of the built-in pool holds data, never code (issue 25): an entry someone else
wrote (a pickle of earlier versions, crafted JSON, a corrupted file) is never executed, is
ignored and rebuilt, and a relative ``XDG_CACHE_HOME`` is ignored, as XDG says."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLAN = ROOT / "examples" / "fog_plan.json"


def _check(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "plancheck", "check", "--format", "json",
                           str(PLAN)], capture_output=True, text=True, check=False, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=120)


class _Payload:
    """What a crafted pickle holds: unpickling it would create ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, ...]:
        return (Path.write_text, (self.marker, "pwned"))


def test_a_crafted_pickle_in_the_cache_never_runs(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    marker = tmp_path / "marker"
    first = _check({"PLANCHECK_CACHE_DIR": str(cache)}, tmp_path)
    (entry,) = cache.glob("toolset-disasterbench-*")
    crafted = pickle.dumps(_Payload(marker))
    # The very entry a run reads, as a pickle (what earlier versions read), and in its place.
    entry.with_suffix(".pickle").write_bytes(crafted)
    entry.write_bytes(crafted)
    done = _check({"PLANCHECK_CACHE_DIR": str(cache)}, tmp_path)
    assert (done.returncode, done.stdout) == (first.returncode, first.stdout), done.stderr
    assert not marker.exists()
    assert not list(cache.glob("*.pickle"))  # earlier versions' entries are removed
    assert entry.read_bytes() != crafted  # rebuilt


def test_a_bad_entry_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _check({"PLANCHECK_CACHE_DIR": str(cache)}, tmp_path)
    (entry,) = cache.glob("toolset-disasterbench-*.json")
    good = entry.read_bytes()
    header, _, payload = good.partition(b"\n")
    crafted = json.loads(payload)
    crafted["fields"][0] = {"record": "system", "fields": ["touch pwned"]}  # not an IR class
    for bad in (good[: len(good) // 2],  # cut short
                header + b"\n" + json.dumps(crafted).encode(),  # checksum no longer holds
                b"\x00\xff" * 10):
        entry.write_bytes(bad)
        again = _check({"PLANCHECK_CACHE_DIR": str(cache)}, tmp_path)
        assert again.stdout == first.stdout and again.returncode == first.returncode
        assert entry.read_bytes() == good  # rebuilt
    assert not (tmp_path / "pwned").exists()


def test_a_relative_xdg_cache_home_is_ignored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {"XDG_CACHE_HOME": "relative-cache", "HOME": str(home)}
    env.pop("PLANCHECK_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-m", "plancheck", "check", str(PLAN)],
                          capture_output=True, text=True, check=False, cwd=work, timeout=120,
                          env={**{k: v for k, v in os.environ.items()
                                  if k != "PLANCHECK_CACHE_DIR"},
                               "PYTHONPATH": str(ROOT), **env})
    assert done.returncode in (0, 1), done.stderr
    assert not (work / "relative-cache").exists()
    assert list((home / ".cache" / "plancheck").glob("toolset-disasterbench-*.json"))


def test_the_cached_pool_is_the_parsed_pool(tmp_path: Path) -> None:
    code = ("from plancheck.corpus.builtin import builtin_toolset, parse_builtin_toolset\n"
            "t = builtin_toolset()\n"
            "print(t == parse_builtin_toolset() and t.tools == parse_builtin_toolset().tools)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PLANCHECK_CACHE_DIR": str(tmp_path)}
    for _ in range(2):  # written, then read
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env=env, timeout=120)
        assert done.stdout.strip() == "True"
    assert len(list(tmp_path.glob("toolset-disasterbench-*.json"))) == 1
