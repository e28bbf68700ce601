"""The smaller findings of issue 34: duplicate record ids in a checked batch are said (as
``score`` says them); an empty ``.json`` and an empty ``.jsonl`` are alike (a warning);
``plan`` without an API key leaves nothing behind; records that cannot be paired with a gold
plan never score 100%; ``report`` takes a per-item file, and never leaves a run out unsaid."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plancheck.cli import main

REPO = Path(__file__).resolve().parents[2]
PLAN = json.loads((REPO / "examples" / "flood_plan.json").read_text(encoding="utf-8"))


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_warns_of_repeated_record_ids(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    batch = tmp_path / "b.jsonl"
    records = [{"id": name, "task_id": 1, "plan": PLAN} for name in ("a", "b", "a", "c", "b")]
    batch.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, err = _run(capsys, "check", "--no-config", "-q", str(batch))
    assert code == 1
    assert "5 plans" in out
    assert f"{batch}: 2 record(s) repeat the id of an earlier record" in err
    # Records that share a task (several predictions of one task) are no repeat.
    batch.write_text("".join(json.dumps({"task_id": 1, "plan": PLAN}) + "\n"
                             for _ in range(3)))
    _, _, err = _run(capsys, "check", "--no-config", "-q", str(batch))
    assert "repeat" not in err


@pytest.mark.parametrize("content", ["", "  \n\n"])
def test_an_empty_json_and_an_empty_jsonl_are_alike(
        tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = []
    for name in ("empty.json", "empty.jsonl"):
        path = tmp_path / name
        path.write_text(content)
        code, out, _ = _run(capsys, "check", "--no-config", "--format", "json", str(path))
        codes = [(d["code"], d["severity"]) for d in json.loads(out)["diagnostics"]]
        outcomes.append((code, codes))
    assert outcomes[0] == outcomes[1] == (0, [("PC117", "warning")])


def test_plan_without_an_api_key_leaves_no_config_behind(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": 1, "task_desc": "map the flood",
                                 "structured_plan": PLAN}) + "\n")
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "OPENROUTER_API_KEY", "OPENAI_BASE_URL")}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, "-m", "plancheck", "plan", "--method", "dp",
                           "--model", "gpt-4o", "--tasks", str(tasks), "--out", str(out),
                           "--no-cache"], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert done.returncode == 2 and "no API key" in done.stderr, done.stderr
    assert not out.exists()


@pytest.mark.parametrize("records", [
    [{"plan": []}, {"plan": []}],
    [{"id": "x", "plan": PLAN}],
])
def test_records_without_a_gold_plan_never_score_100(
        tmp_path: Path, benchmark_path: Path, records: list[dict[str, object]],
        capsys: pytest.CaptureFixture[str]) -> None:
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, _ = _run(capsys, "score", "--gold", str(benchmark_path), str(predictions),
                        "--bootstrap", "0")
    assert code == 1
    shown = {line.rsplit(None, 1)[0].strip(): line.rsplit(None, 1)[1]
             for line in out.splitlines() if line.startswith(("DORA", "Exact", "Tool"))}
    assert shown and all(value == "0.0" for value in shown.values()), shown


def test_report_takes_a_per_item_file(tmp_path: Path, benchmark_path: Path,
                                      parity_cases: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    cases = tmp_path / "cases.jsonl"
    with parity_cases.open(encoding="utf-8") as lines:
        cases.write_text("".join(line for _, line in zip(range(60), lines, strict=False)))
    run = tmp_path / "results" / "m" / "dp"
    run.mkdir(parents=True)
    assert main(["score", "--gold", str(benchmark_path), str(cases), "--per-item",
                 str(run / "per_item.jsonl"), "--bootstrap", "0"]) in (0, 1)
    capsys.readouterr()
    whole = _run(capsys, "report", str(tmp_path / "results"), "--table", "em",
                 "--bootstrap", "0")
    alone = _run(capsys, "report", str(run / "per_item.jsonl"), "--table", "em",
                 "--bootstrap", "0")
    assert whole[0] == alone[0] == 0, alone
    assert alone[1] == whole[1]  # the same run, named by its directories
    shutil.copy(run / "per_item.jsonl", tmp_path / "items.jsonl")
    code, out, err = _run(capsys, "report", str(tmp_path / "items.jsonl"), "--table", "em",
                          "--bootstrap", "0")
    assert code == 0 and "items" in out and "not a directory" not in err


def test_report_of_an_empty_per_item_file_says_so(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "items.jsonl"
    empty.write_text("")
    code, _, err = _run(capsys, "report", str(empty))
    assert code == 1 and "holds no per-item lines" in err and "not a directory" not in err


def test_report_of_dora_runs_keeps_the_one_that_scored_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example = REPO / "examples" / "dora"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert main(["score", "--gold", str(example / "tasks"), str(example / "run"),
                 "--per-item", str(tmp_path / "a" / "per_item.jsonl")]) in (0, 1)
    (tmp_path / "b" / "per_item.jsonl").write_text("")  # a run in which nothing was scored
    capsys.readouterr()
    code, out, err = _run(capsys, "report", str(tmp_path))
    assert code == 0
    assert "a/per_item.jsonl" in out and "b/per_item.jsonl" in out
    assert "b/per_item.jsonl holds no per-item lines" in err


def test_report_says_which_run_holds_no_lines(tmp_path: Path, parity_cases: Path,
                                             benchmark_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    cases = tmp_path / "cases.jsonl"
    with parity_cases.open(encoding="utf-8") as lines:
        cases.write_text("".join(line for _, line in zip(range(20), lines, strict=False)))
    for model in ("m1", "m2"):
        (tmp_path / "results" / model / "dp").mkdir(parents=True)
    assert main(["score", "--gold", str(benchmark_path), str(cases), "--per-item",
                 str(tmp_path / "results" / "m1" / "dp" / "per_item.jsonl"),
                 "--bootstrap", "0"]) in (0, 1)
    (tmp_path / "results" / "m2" / "dp" / "per_item.jsonl").write_text("")
    capsys.readouterr()
    code, out, err = _run(capsys, "report", str(tmp_path / "results"), "--table", "em",
                          "--bootstrap", "0")
    assert code == 0 and "m2" in out
    assert "m2/dp holds no per-item lines" in err
