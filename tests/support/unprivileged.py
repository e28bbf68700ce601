"""Run the command line in a child process, as an unprivileged user when the tests run as root
(root enters every directory, so a permission error can only be seen by someone else)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

NOBODY = 65534
ROOT = Path(__file__).resolve().parents[2]


def _as_other_user() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@contextmanager
def shared_directory() -> Iterator[Path]:
    """A scratch directory the unprivileged user may enter and write (pytest's is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="plancheck-rel-"))
    path.chmod(0o777)
    try:
        yield path
    finally:
        for below in sorted(path.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            if below.is_dir() and not below.is_symlink():
                below.chmod(0o755)
        shutil.rmtree(path, ignore_errors=True)


def lock_directory(path: Path) -> None:
    path.chmod(0o000)
    if not _as_other_user():
        try:
            os.listdir(path)
        except PermissionError:
            return
        pytest.skip("this user can read a mode-000 directory; no permission error to test")


def run_plancheck(*args: str, cwd: Path, stdin: str | None = None,
                  env: Mapping[str, str] | None = None, timeout: float = 120
                  ) -> subprocess.CompletedProcess[str]:
    """``python -m plancheck ARGS`` in ``cwd``, unprivileged when we are root."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    prefix: list[str] = []
    if _as_other_user():
        # setpriv drops root only at exec, so the interpreter (often under /root) still starts.
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: cannot drop privileges")
        prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        environment["HOME"] = str(cwd)
    return subprocess.run([*prefix, sys.executable, "-m", "plancheck", *args], cwd=cwd,
                          input=stdin, text=True, capture_output=True, env=environment,
                          timeout=timeout, check=False)
