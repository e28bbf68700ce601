"""The DORA command line prints DORA's numbers and table where DORA's ``scripts/evaluate.py``
prints one: a tasks directory holding none of the five task files (DORA: score 0.000000) and
a run in which no dimension is scored (DORA's table closes with three rules under its header).
Both checked against DORA's own evaluator, run from ``PLANCHECK_DORA_REFERENCE``. Nothing
scored is a finding (exit 1), never a pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.dora_runs import TASK_FILES, dora_reference, dora_verdicts, run_plancheck

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "dora"


def _cases(root: Path) -> dict[str, tuple[Path, Path]]:
    """Gold directory and run directory of each case."""
    empty_tasks = root / "no-tasks"
    empty_tasks.mkdir()
    other_run = root / "other-run"  # answers t2 only; the gold has t1 only
    (other_run / TASK_FILES["t2"]).mkdir(parents=True)
    shutil.copy(EXAMPLE / "run" / TASK_FILES["t1"] / "benchmark.jsonl",
                other_run / TASK_FILES["t2"] / "benchmark.jsonl")
    return {"no task files": (empty_tasks, EXAMPLE / "run"),
            "no dimension scored": (EXAMPLE / "tasks", other_run)}


@pytest.fixture(scope="module")
def dora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path, dict]]:
    reference = dora_reference()
    root = tmp_path_factory.mktemp("dora-cases")
    cases = _cases(root)
    jobs = [[str(tasks), str(run), str(root / f"{name}.json")]
            for name, (tasks, run) in cases.items()]
    verdicts = dora_verdicts(reference, jobs, root / "stub")
    assert verdicts == [None, None], verdicts  # DORA scores both (and prints its table)
    return {name: (tasks, run, json.loads((root / f"{name}.json").read_text()))
            for name, (tasks, run) in cases.items()}


@pytest.mark.parametrize("case", ["no task files", "no dimension scored"])
def test_the_table_and_score_are_dora_s(dora: dict[str, tuple[Path, Path, dict]],
                                        case: str) -> None:
    tasks, run, expected = dora[case]
    code, out, err = run_plancheck(["score", "--gold", str(tasks), str(run)])
    assert code == 1, err  # nothing scored: a finding
    table = expected["summary_table"]
    width = max(len(line) for line in table.splitlines())
    assert [line[:width].rstrip() for line in out.rstrip("\n").splitlines()] == \
        [line.rstrip() for line in table.splitlines()]
    code, out, _ = run_plancheck(["score", "--gold", str(tasks), str(run), "--format", "json"])
    assert json.loads(out)["dora_score"] == expected["dora_score"] == 0.0
