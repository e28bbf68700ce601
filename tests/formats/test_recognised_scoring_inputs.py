"""``plancheck score`` reads its inputs as the one recogniser of input kinds says (issue 35: "no
function outside the recogniser decides an input's kind"): DORA's task files, a directory of
them or a tasks directory without any (scored against a DORA run) are DORA's gold, and
anything else is one gold file whose text says what it is."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest

from plancheck.cli import main
from plancheck.formats.sniff import (
    dora_per_item_files,
    file_kind,
    is_dora_gold,
    is_dora_run_dir,
    is_dora_task_dir,
    is_jsonl_batch,
    is_jsonl_gold,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "dora"
TASK_FILE = EXAMPLES / "tasks" / "t1_perception_and_assessment.json"

GOLD_RECORD = {"task_id": "t1", "plan": [
    {"step": 0, "agent": "read_note", "inputs": {"path": "/n.txt"}, "outputs": ["text"],
     "dependence": [], "dependence_content": None}]}


def _inputs(tmp_path: Path, which: str) -> list[str]:
    run = str(EXAMPLES / "run")
    if which == "tasks directory":
        return [str(EXAMPLES / "tasks"), run]
    if which == "task file":
        return [str(TASK_FILE), run]
    if which == "task file under another name":  # told by its samples' `tasks`
        renamed = tmp_path / "gold.json"
        shutil.copy(TASK_FILE, renamed)
        return [str(renamed), run]
    if which == "empty tasks directory":  # DORA's --tasks-dir holding none: DORA scores 0
        empty = tmp_path / "tasks"
        empty.mkdir()
        return [str(empty), run]
    gold, predictions = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    gold.write_text(json.dumps(GOLD_RECORD) + "\n", encoding="utf-8")
    predictions.write_text(json.dumps(GOLD_RECORD) + "\n", encoding="utf-8")
    if which == "DisasterBench benchmark":
        return [str(gold), str(predictions)]
    assert which == "a run given as gold"  # not DORA's gold: a gold file, which it is not
    return [run, str(predictions)]


@pytest.mark.parametrize(("which", "dora"), [
    ("tasks directory", True), ("task file", True), ("task file under another name", True),
    ("empty tasks directory", True), ("DisasterBench benchmark", False),
    ("a run given as gold", False),
])
def test_score_reads_its_inputs_as_the_recogniser_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str, dora: bool) -> None:
    paths = _inputs(tmp_path, which)
    assert is_dora_gold(paths) is dora
    code = main(["score", "--tools", "builtin", "--gold", paths[0], paths[1]])
    out, err = capsys.readouterr()
    assert ("DORA Score" in out) is dora, out + err
    assert "internal error" not in err and code in (0, 1, 2)
    if not dora and which == "DisasterBench benchmark":
        assert code == 0 and "1 predictions scored" in out + err


def test_dora_directories_are_told_by_their_layout(tmp_path: Path) -> None:
    assert is_dora_task_dir(EXAMPLES / "tasks") and not is_dora_task_dir(EXAMPLES / "run")
    assert is_dora_run_dir(EXAMPLES / "run") and not is_dora_run_dir(EXAMPLES / "tasks")
    assert not is_dora_run_dir(tmp_path) and not is_dora_task_dir(tmp_path)


def test_report_reads_per_item_files_as_the_recogniser_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # score's per-item lines of a DORA run, beside an empty file (a run that scored nothing)
    # and a DisasterBench run's lines: the directory is DORA's, and only its DORA files are.
    dora = tmp_path / "results" / "dora.jsonl"
    dora.parent.mkdir()
    assert main(["score", "--tools", "builtin", "--gold", str(EXAMPLES / "tasks"),
                 str(EXAMPLES / "run"), "--per-item", str(dora)]) in (0, 1)
    (tmp_path / "results" / "empty.jsonl").write_text("", encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps(GOLD_RECORD) + "\n", encoding="utf-8")
    other = tmp_path / "other" / "items.jsonl"
    other.parent.mkdir()
    assert main(["score", "--tools", "builtin", "--gold", str(gold), str(gold),
                 "--per-item", str(other)]) == 0
    capsys.readouterr()
    found = dora_per_item_files(str(dora.parent))
    assert found == [dora, dora.parent / "empty.jsonl"]
    assert dora_per_item_files(str(other)) is None
    assert dora_per_item_files(str(other.parent)) is None
    assert main(["report", str(dora.parent)]) == 0
    out = capsys.readouterr().out
    assert "dora.jsonl" in out and "DORA Score" in out


@pytest.mark.parametrize("name", ["gold.jsonl", "gold.json", "gold"])
def test_a_gold_file_of_one_record_a_line_is_read_by_its_text(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    # Gold's plans under `gt_solution`: no batch of predictions (is_jsonl_batch), yet gold
    # written one record a line, whatever the file is named.
    second = {**GOLD_RECORD, "task_id": "t2"}
    gold = tmp_path / name
    gold.write_text("".join(json.dumps({"task_id": r["task_id"], "gt_solution": r["plan"]})
                            + "\n" for r in (GOLD_RECORD, second)), encoding="utf-8")
    text = gold.read_text(encoding="utf-8")
    assert is_jsonl_gold(str(gold), text) and not is_jsonl_batch(text)
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(json.dumps(GOLD_RECORD) + "\n" + json.dumps(second) + "\n",
                           encoding="utf-8")
    assert main(["score", "--tools", "builtin", "--gold", str(gold), str(predictions)]) == 0
    out, err = capsys.readouterr()
    assert "2 predictions scored" in out + err


def test_a_file_is_read_as_its_name_and_text_say() -> None:
    batch = json.dumps(GOLD_RECORD) + "\n" + json.dumps(GOLD_RECORD) + "\n"
    assert [file_kind(name, batch) for name in ("a.jsonl", "a.NDJSON", "a.json", "a.wf", "-")
            ] == ["jsonl", "jsonl", "json", "dsl", "jsonl"]
    assert file_kind("-", "# a comment\nplan p { }") == "dsl"
    assert file_kind("-", 'Here is the plan: {"a": 1}\n{"b": 2}') == "text"
    assert not is_jsonl_gold("gold.json", json.dumps([GOLD_RECORD], indent=1))


# A function whose name says it tells DORA's inputs (or a run directory, task files) apart.
_GUESS = re.compile(r"_?(is|looks_like|holds|claims)_?\w*(dora|run_dir|task_files?)\w*")


def test_no_module_but_the_recogniser_decides_whether_an_input_is_doras() -> None:
    found = []
    for file in sorted((ROOT / "plancheck").rglob("*.py")):
        if file.relative_to(ROOT).as_posix() == "plancheck/formats/sniff.py":
            continue
        tree = ast.parse(file.read_text(encoding="utf-8"))
        found += [f"{file.relative_to(ROOT)}:{node.lineno} {node.name}"
                  for node in ast.walk(tree)
                  if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                  and _GUESS.fullmatch(node.name)]
    assert found == [], found
