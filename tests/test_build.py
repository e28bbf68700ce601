"""The build: compiled modules are current, the build is reported, and CI's compiled leg runs
compiled code (``PLANCHECK_EXPECT_COMPILED=1``, set by ``.ci/run``)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from plancheck.build_info import build_info

ROOT = Path(__file__).resolve().parents[1]


def _hot_path() -> list[str]:
    """The modules ``setup.py`` compiles, read from its source (not imported: it builds), and
    the rule and call-shape modules it finds."""
    text = (ROOT / "setup.py").read_text(encoding="utf-8")
    listed = text.split("HOT_PATH = [", 1)[1].split("]", 1)[0]
    named = [line.strip().strip('",')[:-3].replace("/", ".")
             for line in listed.splitlines() if line.strip().startswith('"plancheck/')]
    rules = sorted(f"plancheck.checks.rules.{path.stem}"
                   for path in (ROOT / "plancheck" / "checks" / "rules").glob("*.py")
                   if path.name != "__init__.py")  # setup.py adds every rule module
    shapes = sorted(f"plancheck.formats.calls.{path.stem}"  # and every shape's reader
                    for path in (ROOT / "plancheck" / "formats" / "calls").glob("*.py")
                    if path.name != "__init__.py"
                    and f"plancheck.formats.calls.{path.stem}" not in named)
    return named + rules + shapes


def test_no_compiled_module_is_stale() -> None:
    info = build_info()
    assert not info.stale, (
        f"compiled modules older than their sources: {', '.join(info.stale)}; "
        "install again (pip install -e .) or build plain Python (PLANCHECK_COMPILE=0)"
    )


@pytest.mark.skipif(os.environ.get("PLANCHECK_EXPECT_COMPILED") != "1",
                    reason="CI's compiled leg only (PLANCHECK_EXPECT_COMPILED=1)")
def test_the_hot_path_is_compiled_when_expected() -> None:
    info = build_info()
    assert sorted(info.compiled) == sorted(_hot_path())
    from plancheck.scoring import reference

    assert Path(reference.__file__).suffix != ".py"


def test_version_names_the_build() -> None:
    done = subprocess.run([sys.executable, "-m", "plancheck", "--version"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    info = build_info()
    assert done.stdout.startswith("plancheck ")
    assert ("compiled by" in done.stdout) == bool(info.compiled), done.stdout


def test_an_edited_source_is_reported_stale(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    fresh, edited, plain = (package / "sub" / f"{name}.py" for name in ("fresh", "edited", "plain"))
    for source in (fresh, edited, plain):
        source.write_text(f"# {source.stem}\n", encoding="utf-8")
    for source in (fresh, edited):
        source.with_name(source.stem + EXTENSION_SUFFIXES[0]).write_bytes(b"")
    record = {"compiler": "mypyc test", "sources": {
        "pkg.sub.fresh": hashlib.sha256(fresh.read_bytes()).hexdigest(),
        "pkg.sub.edited": hashlib.sha256(edited.read_bytes()).hexdigest(),
    }}
    (package / "_build.json").write_text(json.dumps(record), encoding="utf-8")
    assert build_info(package).stale == ()
    edited.write_text("# edited since\n", encoding="utf-8")
    info = build_info(package)
    assert info.compiled == ("pkg.sub.edited", "pkg.sub.fresh")
    assert info.stale == ("pkg.sub.edited",)
    assert "STALE" in info.label and "pkg.sub.edited" in info.label
    (package / "_build.json").unlink()  # no record: nothing vouches for any compiled module
    assert build_info(package).stale == ("pkg.sub.edited", "pkg.sub.fresh")


def test_plain_python_has_nothing_to_go_stale(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("", encoding="utf-8")
    info = build_info(tmp_path / "pkg")
    assert info == type(info)((), (), None)
    assert info.label == "plain Python"
