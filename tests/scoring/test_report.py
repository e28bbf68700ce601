"""``plancheck report``: the paper's tables from ``<model>/<method>/per_item.jsonl`` files, in
every format, and the plots."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main
from plancheck.scoring.gold import composition_of

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "results"


def item(task_id: int, *, em: bool, tool: bool, fpof: str | None) -> dict[str, Any]:
    category = {
        None: None,
        "agent_mismatch": "Tool Mismatch",
        "parameter_error": "Parameter Binding Error",
        "early_stop": "Structural Error",
    }[fpof]
    return {
        "id": task_id,
        "task_id": task_id,
        "em": em,
        "tool_acc": tool,
        "param_acc": em,
        "dep_acc": em,
        "exec_equiv": em,
        "fpof_type": fpof,
        "fpof_step": None if fpof is None else 0,
        "fpof_category": category,
        "diagnostics": [],
    }


def sample(gold_tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """40 tasks spread over the release (every depth and composition)."""
    return gold_tasks[::5][:40]


@pytest.fixture
def results(tmp_path: Path, gold_tasks: list[dict[str, Any]]) -> Path:
    """Two models x two methods over 40 tasks, with known outcomes."""
    root = tmp_path / "results"
    tasks = [t["task_id"] for t in sample(gold_tasks)]
    plans = {
        ("big", "dp"): lambda i: item(
            tasks[i], em=i % 4 != 0, tool=True, fpof=None if i % 4 else "parameter_error"
        ),
        ("big", "cot"): lambda i: item(
            tasks[i],
            em=i % 2 == 0,
            tool=i % 2 == 0 or i % 3 == 0,
            fpof=None if i % 2 == 0 else "agent_mismatch",
        ),
        ("small", "dp"): lambda i: item(
            tasks[i], em=i % 5 == 0, tool=i % 5 == 0, fpof=None if i % 5 == 0 else "early_stop"
        ),
        ("small", "cot"): lambda i: item(tasks[i], em=False, tool=False, fpof="agent_mismatch"),
    }
    for (model, method), make in plans.items():
        run = root / model / method
        run.mkdir(parents=True)
        (run / "per_item.jsonl").write_text(
            "".join(json.dumps(make(i)) + "\n" for i in range(len(tasks)))
        )
    return root


def report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["report", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_tables_hold_the_rates(
    results: Path,
    benchmark_path: Path,
    gold_tasks: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = report(capsys, str(results), "--gold", str(benchmark_path), "--format", "json")
    assert code == 0
    tables = {t["name"]: t for t in json.loads(out)["tables"]}
    assert set(tables) == {"em", "fpof", "tool_vs_em", "gap_by_method", "depth", "composition"}
    em_rows = {row["Model"]: row for row in tables["em"]["rows"]}
    assert em_rows["big"]["DP"]["value"] == 75.0 and em_rows["big"]["CoT"]["value"] == 50.0
    assert em_rows["small"]["DP"]["value"] == 20.0 and em_rows["small"]["CoT"]["value"] == 0.0
    cell = em_rows["big"]["DP"]
    assert cell["ci_low"] < 75.0 < cell["ci_high"] and cell["n"] == 40
    # Table 3: shares of each method's failures, pooled over models.
    fpof = {row["FPoF"]: row for row in tables["fpof"]["rows"]}
    dp_failures = 10 + 32  # big: every 4th; small: all but every 5th
    assert fpof["Failures (count)"]["DP"] == str(dp_failures)
    assert fpof["Parameter Binding Error"]["DP"]["value"] == round(100 * 10 / dp_failures, 2)
    assert fpof["-- Early Stop"]["DP"]["value"] == round(100 * 32 / dp_failures, 2)
    assert fpof["Tool Mismatch"]["CoT"]["value"] == 100.0
    # Table 17: A, EM and the gap.
    gap = {(r["Model"], r["Method"]): r for r in tables["tool_vs_em"]["rows"]}
    big_cot = gap[("big", "CoT")]
    tool = sum(1 for i in range(40) if i % 2 == 0 or i % 3 == 0)
    assert big_cot["A"]["value"] == round(100 * tool / 40, 2)
    assert big_cot["Gap (A-EM)"]["value"] == round(100 * (tool - 20) / 40, 2)
    # Depth and composition come from the gold plans of the tasks.
    depth_of = {t["task_id"]: min(len(t["structured_plan"]), 4) for t in sample(gold_tasks)}
    depth_rows = {row["Depth"]: row for row in tables["depth"]["rows"]}
    ones = [i for i, t in enumerate(sample(gold_tasks)) if depth_of[t["task_id"]] == 1]
    assert ones
    expected = (
        100 * (sum(1 for i in ones if i % 4) + sum(1 for i in ones if i % 5 == 0)) / (2 * len(ones))
    )
    assert depth_rows["1"]["DP"]["value"] == round(expected, 2)
    compositions = {row["Composition"]: row for row in tables["composition"]["rows"]}
    nodes = sum(1 for t in sample(gold_tasks) if composition_of(t["structured_plan"]) == "Node")
    assert nodes
    assert compositions["Node"]["n"] == 4 * nodes  # a count is a JSON number
    assert all(isinstance(row["n"], int) for name in ("depth", "composition", "tool_vs_em")
               for row in tables[name]["rows"])


def test_text_markdown_latex_and_csv(
    results: Path, benchmark_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text, _ = report(capsys, str(results), "--gold", str(benchmark_path))
    assert code == 0
    assert "Exact match (%) by model and planning method (Table 2)" in text
    assert "First-Point-of-Failure distribution" in text and "Figure 2" in text
    code, markdown, _ = report(
        capsys,
        str(results),
        "--gold",
        str(benchmark_path),
        "--format",
        "markdown",
        "--table",
        "em",
        "--ci",
    )
    assert code == 0 and "| Model" in markdown and "**75.0 [" in markdown
    code, latex, _ = report(
        capsys, str(results), "--gold", str(benchmark_path), "--format", "latex", "--table", "fpof"
    )
    assert code == 0 and "\\begin{tabular}" in latex and "\\caption{" in latex
    # Words left-aligned, numbers right-aligned.
    _, latex_em, _ = report(capsys, str(results), "--gold", str(benchmark_path), "--format",
                            "latex", "--table", "em")
    assert "\\begin{tabular}{lrr}" in latex_em
    assert "-- Parameter Error" in latex
    code, table, _ = report(capsys, str(results), "--gold", str(benchmark_path), "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(table)))
    assert set(rows[0]) == {"table", "row", "column", "value", "ci_low", "ci_high", "n"}
    big_dp = next(
        r for r in rows if r["table"] == "em" and r["row"] == "big" and r["column"] == "DP"
    )
    assert float(big_dp["value"]) == 75.0 and big_dp["n"] == "40"
    assert {r["table"] for r in rows} == {
        "em",
        "fpof",
        "tool_vs_em",
        "gap_by_method",
        "depth",
        "composition",
    }


def test_plots_are_png(
    results: Path, benchmark_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    plots = tmp_path / "plots"
    code, _, err = report(
        capsys, str(results), "--gold", str(benchmark_path), "--plots", str(plots)
    )
    assert code == 0, err
    for name in ("depth.png", "fpof.png"):
        assert (plots / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_gold_there_is_no_depth_table(
    results: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PLANCHECK_DATA", str(tmp_path / "no-release"))
    code, out, err = report(capsys, str(results), "--format", "json")
    assert code == 0 and "no depth and composition" in err
    names = {t["name"] for t in json.loads(out)["tables"]}
    assert names == {"em", "fpof", "tool_vs_em", "gap_by_method"}


def test_errors_exit_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = report(capsys, str(tmp_path))
    assert code == 2 and "plancheck score" in err
    code, _, err = report(capsys, str(tmp_path / "missing"))
    assert code == 2 and "neither a per-item file nor a directory" in err


def test_the_bundled_example_reports_in_one_command(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's one command: ``plancheck report examples/results``."""
    code, out, _ = report(capsys, str(EXAMPLE), "--table", "em")
    assert code == 0
    assert "sim-large" in out and "sim-small" in out and "ReAct" in out


def test_lines_the_tables_cannot_use_are_said_and_left_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`"em": "yes"` counted as a miss, unknown task ids and FPoF types passed in silence,
    and a `|` in a model's name split its Markdown row."""
    run = tmp_path / "results" / "gpt|4o" / "dp"
    run.mkdir(parents=True)
    lines = [item(1, em=True, tool=True, fpof=None),
             {**item(2, em=True, tool=True, fpof=None), "em": "yes"},
             {**item(3, em=False, tool=True, fpof=None), "fpof_type": "made_up_kind"},
             {**item(4, em=False, tool=False, fpof=None), "fpof_type": 7},
             item(99_999, em=False, tool=False, fpof="early_stop")]
    (run / "per_item.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"task_id": i, "task_desc": "t", "structured_plan": [
        {"agent": "GeoChat", "step": 0, "dependence": [-1], "dependence_content": None,
         "inputs": {}, "outputs": []}]}) + "\n" for i in (1, 2, 3, 4)))
    code, out, err = report(capsys, str(tmp_path / "results"), "--table", "em", "--format",
                            "json", "--gold", str(gold))
    assert code == 0
    assert "per_item.jsonl:2: `em` is \"yes\", not true, false or null; line left out" in err
    assert "per_item.jsonl:4: `fpof_type` is 7, not a string or null; line left out" in err
    assert "FPoF types plancheck does not know, counted as Structural Error: " \
           "`made_up_kind` (1)" in err
    assert "1 item(s) name no task of the gold file" in err
    (table,) = json.loads(out)["tables"]
    assert table["rows"][0]["DP"]["n"] == 3  # lines 1, 3 and 5
    _, out, _ = report(capsys, str(tmp_path / "results"), "--table", "em", "--format",
                       "markdown")
    (row,) = [line for line in out.splitlines() if "gpt" in line]
    assert row.startswith("| gpt\\|4o ") and row.count(" | ") == 1
