"""One read limit (``--max-size``, default 16M) on every file every command reads (issue 25):
an input over it is refused with a message naming the file and the limit, exit 2, quickly and
in bounded memory, never a MemoryError, a kill or an "internal error"."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "flood_plan.json")
ONE_GB = 1 << 30


def _run(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    def cap() -> None:  # what a kill used to need: a process that reads all of /dev/zero
        resource.setrlimit(resource.RLIMIT_AS, (ONE_GB, ONE_GB))

    return subprocess.run([sys.executable, "-m", "plancheck", *arguments], cwd=cwd,
                          capture_output=True, text=True, timeout=60, check=False,
                          preexec_fn=cap, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.fixture
def big(tmp_path: Path) -> str:
    path = tmp_path / "big.json"
    path.write_text(json.dumps([{"x": "y" * 100_000}]), encoding="utf-8")  # 100 KB
    return str(path)


@pytest.mark.parametrize("arguments", [
    ["score", "--gold", "{big}", EXAMPLE],
    ["score", "--gold", "{gold}", "{big}.jsonl"],
    ["check", "--gold", "{big}", EXAMPLE],
    ["check", "--tools", "{big}", EXAMPLE],
    ["toolset", "show", "--tools", "{big}"],
    ["toolset", "export", "--to", "mcp", "--tools", "{big}"],
    ["fmt", "--to", "dsl", "{big}"],
    ["fix", "{big}"],
    ["compile", "--to", "python", "{big}"],
    ["check", "{big}", "--policy", "{big}"],
], ids=lambda a: " ".join(x for x in a if not x.startswith(("{", "/"))))
def test_every_command_holds_every_file_to_the_limit(arguments: list[str], big: str,
                                                     tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    steps = json.loads(Path(EXAMPLE).read_text(encoding="utf-8"))
    gold.write_text(json.dumps({"task_id": 1, "structured_plan": steps}) + "\n", "utf-8")
    Path(big + ".jsonl").write_text(json.dumps({"task_id": 1, "plan": "y" * 100_000}) + "\n",
                                    encoding="utf-8")
    filled = [a.format(big=big, gold=gold) for a in arguments]
    done = _run([*filled, "--max-size", "64K"], tmp_path)
    said = done.stdout + done.stderr
    assert "internal error" not in said and "Traceback" not in said, said
    if filled[-1].endswith(".jsonl"):  # one record over the limit: one malformed record
        assert "1 malformed" in said, said
        return
    assert done.returncode == 2 and "64K limit" in said and "unrecognized" not in said, said


@pytest.mark.slow
@pytest.mark.parametrize("arguments", [
    ["score", "--gold", "/dev/zero", EXAMPLE],
    ["score", "--gold", "{gold}", "/dev/zero"],
    ["toolset", "show", "--tools", "/dev/zero"],
    ["check", "--tools", "/dev/zero", EXAMPLE],
    ["fmt", "--to", "json", "/dev/zero"],
    ["fix", "/dev/zero"],
])
def test_an_endless_input_is_refused_in_bounded_memory(arguments: list[str],
                                                       tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    steps = json.loads(Path(EXAMPLE).read_text(encoding="utf-8"))
    gold.write_text(json.dumps({"task_id": 1, "structured_plan": steps}) + "\n", "utf-8")
    done = _run([a.format(gold=gold) for a in arguments], tmp_path)
    said = done.stdout + done.stderr
    assert done.returncode == 2 and "/dev/zero" in said and "16M" in said, said
    assert "MemoryError" not in said and "internal error" not in said
