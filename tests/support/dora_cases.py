"""Recorded DORA scoring cases: laying out their polygon files and reading them back.

``scripts/record_dora_verdicts.py`` stores each polygon case's GeoJSON files as data
(``{"files": {relative path: {"json": value} or {"text": raw}}}``) and writes paths that must
be absolute with the placeholder :data:`ROOT`; the recorder and ``tests/dora/test_dora_parity.py``
both lay the files out under a fresh directory and substitute it for the placeholder.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = "{ROOT}"


def write_files(files: dict[str, Any], root: Path) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if "text" in content:
            path.write_text(content["text"], encoding="utf-8")
        else:
            path.write_text(json.dumps(content["json"]), encoding="utf-8")


def with_root(value: Any, root: Path) -> Any:
    """``value`` with :data:`ROOT` in every string replaced by ``root``."""
    if isinstance(value, str):
        return value.replace(ROOT, str(root))
    if isinstance(value, list):
        return [with_root(v, root) for v in value]
    if isinstance(value, dict):
        return {k: with_root(v, root) for k, v in value.items()}
    return value


def read_cases(path: Path) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """The header line and the cases of a recorded verdicts file."""
    lines = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
    return json.loads(lines[0]), (json.loads(line) for line in lines[1:] if line)
