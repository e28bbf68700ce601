"""Where the official DisasterBench release and the parity cases live on this machine.

The project never ships copies of the release; tests, benchmarks and the CLI read it from a
directory named by ``PLANCHECK_DATA`` (default: ``../shared/disasterbench`` next to the
checkout, which is how the development machines and CI are laid out).
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_ENV = "PLANCHECK_DATA"
PARITY_ENV = "PLANCHECK_PARITY_CASES"

_REPO_ROOT = Path(__file__).resolve().parents[2]


def release_dir() -> Path:
    """The release directory: ``benchmark.jsonl``, ``tools_manifest.json``, ``graph_desc.json``."""
    configured = os.environ.get(DATA_ENV)
    if configured:
        return Path(configured).expanduser().resolve()
    return (_REPO_ROOT.parent / "shared" / "disasterbench").resolve()


def parity_cases_path() -> Path:
    """The reference evaluator's verdicts on model-style completions (``parity/cases.jsonl``)."""
    configured = os.environ.get(PARITY_ENV)
    if configured:
        return Path(configured).expanduser().resolve()
    return release_dir().parent / "parity" / "cases.jsonl"


DORA_REFERENCE_ENV = "PLANCHECK_DORA_REFERENCE"


def dora_reference_dir() -> Path:
    """DORA's released code (``dora/evaluation.py``, ``dora/tools/*.py``, ...)."""
    configured = os.environ.get(DORA_REFERENCE_ENV)
    if configured:
        return Path(configured).expanduser().resolve()
    return release_dir().parent / "dora-reference"
