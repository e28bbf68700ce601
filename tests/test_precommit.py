"""The pre-commit hook (``.pre-commit-hooks.yaml``) on a repository of plan files.

Two levels:

* the hook definition, run the way pre-commit runs it: the files its ``files``/``types``
  filters select, passed to its ``entry`` in one call (``require_serial``). Needs neither
  pre-commit nor a network.
* ``pre-commit try-repo`` for real, with ``PRE_COMMIT_HOME`` in a temporary directory. pre-commit
  builds the hook's environment by pip-installing this project from a local path; pip then
  fetches the project's dependencies through the package index configured on the machine (two
  of them, json-repair and json-source-map, are not in this machine's local wheel index, so a
  machine with no package index at all cannot build the environment). ``try-repo`` takes only
  committed and tracked files of a repository, so the test copies the project's installable
  files into a fresh temporary git repository first: it tests the working tree as it is.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.samples import FOG_CHAIN

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / ".pre-commit-hooks.yaml"

GOOD = FOG_CHAIN


def hook() -> dict[str, Any]:
    (definition,) = yaml.safe_load(HOOKS.read_text())
    assert isinstance(definition, dict)
    return definition


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def plans_repository(root: Path) -> Path:
    """A git repository of plans: one clean, one with an unknown tool, a JSONL batch, a DSL
    plan, and files the hook must not touch (a completion, a README)."""
    root.mkdir()
    bad = copy.deepcopy(GOOD)
    bad[1]["agent"] = "Foggy_Object_Detection"
    (root / "plans").mkdir()
    (root / "plans" / "good.json").write_text(json.dumps(GOOD, indent=2))
    (root / "plans" / "bad.json").write_text(json.dumps(bad, indent=2))
    (root / "plans" / "batch.jsonl").write_text(
        json.dumps({"task_id": 1, "plan": GOOD}) + "\n")
    (root / "plans" / "chain.wf").write_text(
        "plan uses disasterbench {\n"
        "  step 0 = Weather_Degraded_Image_Restoration(\n"
        "    weather_degraded_image_path = \"/d/fog.jpg\",\n"
        "  ) -> [restored_image_path]\n"
        "}\n")
    (root / "completions").mkdir()
    (root / "completions" / "answer.txt").write_text("I could not make a plan, sorry.")
    (root / "README.md").write_text("# plans\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plans")
    return root


# --------------------------------------------------------------------------- the definition


def test_hook_definition_is_well_formed() -> None:
    definition = hook()
    assert definition["id"] == "plancheck"
    assert definition["language"] == "python"
    assert definition["require_serial"] is True
    assert shlex.split(definition["entry"])[0] == "plancheck"
    pattern = re.compile(definition["files"])
    assert all(pattern.search(name) for name in ("a.json", "dir/b.jsonl", "c.wf"))
    assert not any(pattern.search(name) for name in ("a.txt", "a.json.bak", "README.md"))
    clientlib = pytest.importorskip("pre_commit.clientlib")
    clientlib.load_manifest(str(HOOKS))  # pre-commit's own schema check of the manifest


def selected_files(repository: Path, definition: dict[str, Any]) -> list[str]:
    """The files pre-commit hands the hook with --all-files: tracked files that match ``files``
    and are text (``types: [text]``)."""
    listed = subprocess.run(["git", "ls-files"], cwd=repository, capture_output=True,
                            text=True, check=True).stdout.split()
    pattern = re.compile(definition["files"])
    assert definition.get("types") == ["text"]
    return [name for name in listed if pattern.search(name)
            and b"\0" not in (repository / name).read_bytes()[:1024]]


def test_hook_entry_runs_as_pre_commit_would(tmp_path: Path) -> None:
    repository = plans_repository(tmp_path / "plans-repo")
    definition = hook()
    files = selected_files(repository, definition)
    assert sorted(files) == ["plans/bad.json", "plans/batch.jsonl", "plans/chain.wf",
                             "plans/good.json"]
    entry = shlex.split(definition["entry"])
    executable = shutil.which(entry[0], path=str(Path(sys.executable).parent))
    assert executable is not None, "plancheck is not installed next to this interpreter"
    command = [executable, *entry[1:], *definition.get("args", []), *files]
    result = subprocess.run(command, cwd=repository, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "plans/bad.json:" in result.stdout and "error[PC201]" in result.stdout
    assert "(4 plans in 4 files checked)" in result.stdout
    clean = [name for name in files if name != "plans/bad.json"]
    result = subprocess.run([executable, *entry[1:], *clean], cwd=repository,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


# --------------------------------------------------------------------------- pre-commit itself


def project_copy(destination: Path) -> Path:
    """The installable part of this working tree, committed to a fresh git repository."""
    destination.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "plancheck", destination / "plancheck", ignore=ignore)
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, destination / name)
    git(destination, "init", "-q")
    git(destination, "add", "-A")
    git(destination, "commit", "-q", "-m", "plancheck")
    return destination


@pytest.mark.slow  # 15-40 s: pip installs the project and its dependencies into a new env
def test_pre_commit_try_repo_lints_a_repository_of_plans(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit", reason="pre-commit is part of the test extras")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    project = project_copy(tmp_path / "plancheck-src")
    repository = plans_repository(tmp_path / "plans-repo")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "PRE_COMMIT_COLOR": "never", "NO_COLOR": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PIP_NO_COMPILE"] = "1"  # (no .pyc of the hook's dependencies: 10 of the test's 50 s)
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(project), "plancheck",
               "--all-files", "--verbose"]

    def try_repo() -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, cwd=repository, env=env, capture_output=True,
                              text=True, timeout=600, check=False)

    first = try_repo()
    log = tmp_path / "pre-commit-home" / "pre-commit.log"
    details = first.stdout + first.stderr + (log.read_text() if log.exists() else "")
    assert first.returncode == 1, details
    assert re.search(r"^plancheck\.+Failed$", first.stdout, re.MULTILINE), details
    assert "plans/bad.json:" in first.stdout and "error[PC201]" in first.stdout
    assert "(4 plans in 4 files checked)" in first.stdout  # one serial run, .txt not linted
    assert "answer.txt" not in first.stdout

    (repository / "plans" / "bad.json").write_text(json.dumps(GOOD, indent=2))
    git(repository, "commit", "-q", "-am", "fix the plan")
    second = try_repo()  # reuses the hook environment built above
    assert second.returncode == 0, second.stdout + second.stderr
    assert re.search(r"^plancheck\.+Passed$", second.stdout, re.MULTILINE)
