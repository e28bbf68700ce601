"""The compiled build's C files are compiled on every core: mypyc writes one C file per module
(``multi_file``) into one extension, whose sources setuptools compiles one after another, so
``setup.py`` hands them to the C compiler ``jobs`` at a time (docs/install.md measures it)."""

from __future__ import annotations

import ast
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _setup_function(name: str) -> Any:
    """A function of ``setup.py``, from its source (importing setup.py builds)."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    (node,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    namespace: dict[str, Any] = {}
    exec(f"import os\nfrom typing import Any\n{ast.unparse(node)}", namespace)
    return namespace[name]


def test_the_c_files_are_compiled_jobs_at_a_time_and_every_object_is_returned(
        tmp_path: Path) -> None:
    sources = []
    for i, size in enumerate([10, 5000, 300, 70, 2000, 1, 900, 40]):
        path = tmp_path / f"m{i}.c"
        path.write_text("x" * size, encoding="utf-8")
        sources.append(str(path))
    lock = threading.Lock()
    running, most, started = 0, 0, []

    def compile(sources: list[str], **options: Any) -> list[str]:  # one compiler process
        nonlocal running, most
        assert len(sources) == 1 and options == {"output_dir": "build"}
        with lock:
            running += 1
            most = max(most, running)
            started.append(sources[0])
        time.sleep(0.05)
        with lock:
            running -= 1
        return [sources[0][:-2] + ".o"]

    in_parallel = _setup_function("_in_parallel")(compile, 2)
    objects = in_parallel(sources, output_dir="build")
    assert objects == [source[:-2] + ".o" for source in sources]  # in the sources' order
    assert most == 2
    assert started[0] == sources[1]  # the largest file first
    # The shims (one C file each) share the same two slots.
    assert in_parallel([sources[0]], output_dir="build") == [sources[0][:-2] + ".o"]
    assert in_parallel([], output_dir="build") == []
