"""``plancheck score``: batch scoring, per-item output, malformed records, jobs, the official
detailed-predictions shape, and the metric implications on every item."""

from __future__ import annotations

import copy
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancheck.cli import main
from plancheck.compiler.lowering import lower_plan
from plancheck.diagnostics.span import Span
from plancheck.interp.canonical import canonical_form, equivalent, trace_form
from plancheck.interp.engine import run
from plancheck.records import replace
from plancheck.scoring.batch import (
    PER_ITEM_FIELDS,
    ItemScorer,
    RawRecord,
    ScoreOptions,
    Summary,
    score_records,
)
from plancheck.scoring.gold import GoldIndex
from plancheck.scoring.metrics import PredictionAnalyzer
from plancheck.scoring.reference import prepare_gold, score_plan
from tests.strategies import TOOLSET, well_typed_plan
from tests.support.completions import generate_completions

SPEC_FIELDS = [
    "id",
    "task_id",
    "em",
    "tool_acc",
    "param_acc",
    "dep_acc",
    "exec_equiv",
    "fpof_type",
    "fpof_step",
    "fpof_category",
    "diagnostics",
]
CATEGORIES = {"Tool Mismatch", "Parameter Binding Error", "Structural Error"}


def _non_int_dependence(plan: Any) -> bool:
    """Whether some step's dependence (or its alias `dependencies`, which the reference reads
    as it) lists a member that is not an int."""
    steps = plan if isinstance(plan, list) else []
    return any(
        isinstance(step, dict)
        and isinstance(dependence := step.get("dependence", step.get("dependencies")), list)
        and any(type(member) is not int for member in dependence)
        for step in steps
    )


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def score_with_per_item(gold: Path, predictions: Path, per_item: Path, *options: str) -> int:
    """``plancheck score --gold GOLD PREDICTIONS --per-item PER_ITEM OPTIONS...``."""
    return main(["score", "--gold", str(gold), str(predictions), "--per-item", str(per_item),
                 *options])


def assert_item_invariants(item: dict[str, Any], prediction: Any = None) -> None:
    """``prediction`` (the plan scored, when known) explains the one documented exception."""
    assert list(item) == SPEC_FIELDS
    for name in ("em", "tool_acc", "param_acc", "dep_acc", "exec_equiv"):
        assert type(item[name]) is bool, name
    # The implications (the paper's Appendix F.3, and exact match => same workflow).
    if item["em"]:
        assert item["param_acc"] and item["exec_equiv"], item
        if not item["dep_acc"]:
            # The reference's EM compares `dependence` with plain == ([0.0] equals [0]) where
            # Dependency Accuracy is type-exact: EM without Dep happens exactly then.
            assert prediction is not None and _non_int_dependence(prediction), item
    if item["param_acc"] or item["dep_acc"]:
        assert item["tool_acc"], item
    if item["fpof_type"] is None:
        assert item["fpof_step"] is None and item["fpof_category"] is None
        assert item["param_acc"] and item["dep_acc"]
    else:
        assert item["fpof_category"] in CATEGORIES
        assert item["diagnostics"][0]["code"].startswith("PC6")
    assert isinstance(item["diagnostics"], list)


# --------------------------------------------------------------------------- the CLI


def test_per_item_fields_and_verdicts_match_the_reference(
    tmp_path: Path, parity_cases: Path, benchmark_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with parity_cases.open(encoding="utf-8") as lines:
        cases = [json.loads(line) for line in itertools.islice(lines, 0, None, 5)]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": c["id"], "task_id": c["task_id"], "completion": c["completion"]})
            + "\n"
            for c in cases
        )
    )
    per_item = tmp_path / "per_item.jsonl"
    code = score_with_per_item(benchmark_path, predictions, per_item, "--bootstrap", "0")
    assert code == 0
    out = capsys.readouterr().out
    assert "Exact match (EM)" in out and "First point of failure" in out
    items = read_lines(per_item)
    assert len(items) == len(cases)
    for case, item in zip(cases, items, strict=True):
        assert_item_invariants(item)
        assert item["id"] == case["id"] and item["task_id"] == case["task_id"]
        expected = case["expected"]
        for name in ("em", "tool_acc", "param_acc", "dep_acc", "fpof_type", "fpof_step"):
            assert item[name] == expected[name], (case["id"], name)


def test_malformed_records_are_format_errors_and_never_stop_the_batch(
    tmp_path: Path,
    benchmark_path: Path,
    gold_tasks: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = gold_tasks[0]
    lines = [
        json.dumps({"id": "ok", "task_id": good["task_id"], "plan": good["structured_plan"]}),
        '{"id": "broken", "task_id": 3, "completion": "[{"',  # not JSON: ids salvaged
        json.dumps([1, 2, 3]),  # not an object
        json.dumps({"id": "no-field", "task_id": good["task_id"]}),
        json.dumps({"id": "no-task", "completion": "[]"}),
        json.dumps({"id": "number", "task_id": good["task_id"], "completion": 7}),
        json.dumps({"id": "null", "task_id": good["task_id"], "completion": None}),
        json.dumps({"id": "last", "task_id": good["task_id"], "plan": good["structured_plan"]}),
    ]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("\n".join(lines) + "\n")
    per_item = tmp_path / "per_item.jsonl"
    code = score_with_per_item(
        benchmark_path, predictions, per_item, "--format", "json", "--bootstrap", "0"
    )
    assert code == 1  # findings: records that could not be read
    summary = json.loads(capsys.readouterr().out)["total"]
    items = read_lines(per_item)
    assert [i["id"] for i in items] == [
        "ok",
        "broken",
        None,
        "no-field",
        "no-task",
        "number",
        "null",
        "last",
    ]
    for item in items:
        assert_item_invariants(item)
    assert items[0]["em"] and items[-1]["em"]
    for item in items[1:6]:
        assert item["fpof_type"] == "format_error" and item["fpof_step"] == 0
        assert item["fpof_category"] == "Structural Error" and not item["em"]
    assert items[1]["task_id"] == 3
    assert items[6]["fpof_type"] == "empty_output"  # no completion at all: the reference's view
    assert summary["malformed"] == 5 and summary["predictions"] == 8


def test_predictions_without_gold_are_reported_not_scored(
    tmp_path: Path,
    benchmark_path: Path,
    gold_tasks: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        json.dumps({"task_id": 123456, "plan": []})
        + "\n"
        + json.dumps({"task_id": gold_tasks[0]["task_id"], "plan": []})
        + "\n"
    )
    per_item = tmp_path / "per_item.jsonl"
    code = score_with_per_item(benchmark_path, predictions, per_item, "--bootstrap", "0")
    captured = capsys.readouterr()
    assert code == 1 and "123456" in captured.err
    (item,) = read_lines(per_item)
    assert item["id"] == gold_tasks[0]["task_id"] and item["fpof_type"] == "early_stop"


def test_strict_scoring_reads_no_leniency(
    tmp_path: Path,
    benchmark_path: Path,
    gold_tasks: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The reference reads a wrapped plan with an alias key and a trailing comma as the gold
    plan; --scoring strict (and its short form --strict) reads it as a format error."""
    task = gold_tasks[0]
    plan = copy.deepcopy(task["structured_plan"])
    plan[0]["agent_name"] = plan[0].pop("agent")
    lenient = json.dumps({"structured_plan": plan})[:-2] + ",]}"
    records = [
        {"id": "lenient", "task_id": task["task_id"], "completion": lenient},
        {"id": "clean", "task_id": task["task_id"],
         "completion": json.dumps(task["structured_plan"])},
    ]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in records))
    results = {}
    for mode in (["--scoring", "reference"], ["--scoring", "strict"], ["--strict"]):
        per_item = tmp_path / f"{'_'.join(mode)}.jsonl"
        score_with_per_item(benchmark_path, predictions, per_item, "--bootstrap", "0", *mode)
        results[" ".join(mode)] = {i["id"]: (i["em"], i["fpof_type"]) for i in read_lines(per_item)}
    capsys.readouterr()
    assert results["--scoring reference"] == {"lenient": (True, None), "clean": (True, None)}
    assert results["--scoring strict"] == {
        "lenient": (False, "format_error"), "clean": (True, None)
    }
    assert results["--strict"] == results["--scoring strict"]


def test_usage_and_io_errors(
    tmp_path: Path, benchmark_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("")
    assert main(["score", str(predictions)]) == 2  # --gold is required
    assert main(["score", "--gold", str(tmp_path / "nope.jsonl"), str(predictions)]) == 2
    assert main(["score", "--gold", str(benchmark_path), str(tmp_path / "nope.jsonl")]) == 2
    assert main(["score", "--gold", str(benchmark_path), str(predictions), "--jobs", "0"]) == 2
    err = capsys.readouterr().err
    assert "PC001" in err and "Traceback" not in err


def _generated(gold_tasks: list[dict[str, Any]], per_task: int) -> list[dict[str, Any]]:
    tasks = [(t["task_id"], t["structured_plan"]) for t in gold_tasks]
    return [
        {"id": c.id, "task_id": c.task_id, "completion": c.completion}
        for c in generate_completions(tasks, per_task=per_task, seed=11)
    ]


def test_jobs_two_equals_jobs_one(
    tmp_path: Path,
    benchmark_path: Path,
    gold_tasks: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    records = _generated(gold_tasks, 3)
    lines = [json.dumps(r) for r in records]
    lines.insert(100, "{not json")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("\n".join(lines) + "\n")
    outputs = []
    for jobs in ("1", "2"):
        per_item = tmp_path / f"per_item_{jobs}.jsonl"
        score_with_per_item(
            benchmark_path, predictions, per_item, "--jobs", jobs, "--format", "json"
        )
        outputs.append((per_item.read_bytes(), json.loads(capsys.readouterr().out)))
    assert outputs[0][0] == outputs[1][0]
    assert outputs[0][1] == outputs[1][1]
    summary = outputs[0][1]["total"]
    assert summary["predictions"] == len(records) + 1
    assert set(summary["metrics"]) == {
        "em",
        "tool_acc",
        "param_acc",
        "dep_acc",
        "exec_equiv",
        "gap",
    }
    em = summary["metrics"]["em"]
    assert em["ci_low"] <= em["value"] <= em["ci_high"]
    assert 0 < summary["static"]["valid"]["value"] < 1
    assert summary["static"]["lint_rates"]  # per-code rates
    assert set(summary["taskbench"]) == {"node_f1", "edge_f1", "arg_name_f1", "arg_value_f1"}
    assert summary["missing_tasks"] == 0


def test_official_detailed_predictions_are_rescored(
    tmp_path: Path,
    benchmark_path: Path,
    gold_tasks: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The harness's ``*_detailed_predictions.json``: a JSON array of records with
    ``model_answer`` (what it scored) and ``raw_selected_completion``."""
    first, second = gold_tasks[0], gold_tasks[1]
    wrong = copy.deepcopy(second["structured_plan"])
    wrong[0]["agent"] = "GeoChat" if wrong[0]["agent"] != "GeoChat" else "Event_detection"
    log = [
        {
            "task_id": first["task_id"],
            "task_desc": "...",
            "gt_solution": first["structured_plan"],
            "model_answer": first["structured_plan"],
            "raw_selected_completion": "```json\n" + json.dumps(first["structured_plan"]) + "\n```",
            "metrics": {"is_perfect_match": True},
            "error_analysis": {},
        },
        {
            "task_id": second["task_id"],
            "task_desc": "...",
            "gt_solution": second["structured_plan"],
            "model_answer": wrong,
            "raw_selected_completion": None,
            "metrics": {},
            "error_analysis": {},
        },
        {
            "task_id": second["task_id"],
            "task_desc": "...",
            "gt_solution": second["structured_plan"],
            "model_answer": None,
            "raw_selected_completion": "no plan",
            "metrics": {},
            "error_analysis": {},
        },
    ]
    path = tmp_path / "dp_detailed_predictions.json"
    path.write_text(json.dumps(log, indent=4))
    answers, raws = tmp_path / "answers.jsonl", tmp_path / "raws.jsonl"
    main(["score", "--gold", str(benchmark_path), str(path), "--per-item", str(answers)])
    main(["score", "--gold", str(benchmark_path), str(path), "--per-item", str(raws), "--raw"])
    capsys.readouterr()
    by_answer, by_raw = read_lines(answers), read_lines(raws)
    assert [i["id"] for i in by_answer] == [first["task_id"], second["task_id"], second["task_id"]]
    assert [i["fpof_type"] for i in by_answer] == [None, "agent_mismatch", "empty_output"]
    assert [i["fpof_type"] for i in by_raw] == [None, "empty_output", "empty_output"]
    assert by_answer[0]["em"] and by_raw[0]["em"]


def test_interrupt_keeps_the_old_file_and_writes_the_partial_one(
    tmp_path: Path, benchmark_path: Path, gold_tasks: list[dict[str, Any]]
) -> None:
    records = _generated(gold_tasks, 2)
    predictions = tmp_path / "predictions.jsonl"
    with predictions.open("w") as out:
        for _ in range(60):  # long enough to be interrupted half-way
            out.writelines(json.dumps(r) + "\n" for r in records)
    per_item = tmp_path / "per_item.jsonl"
    per_item.write_text("the previous run's lines\n", encoding="utf-8")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "plancheck",
            "score",
            "--gold",
            str(benchmark_path),
            str(predictions),
            "--per-item",
            str(per_item),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )
    deadline = time.monotonic() + 60

    def written() -> int:  # the lines go to a temporary file, renamed into place at the end
        return sum(p.stat().st_size for p in tmp_path.glob(".pc-*.tmp"))

    while time.monotonic() < deadline and written() < 200_000:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert per_item.read_text(encoding="utf-8") == "the previous run's lines\n"
    partial = tmp_path / "per_item.jsonl.partial"
    text = partial.read_text(encoding="utf-8")
    assert text.endswith("\n")
    items = [json.loads(line) for line in text.splitlines()]
    assert 0 < len(items) < 60 * len(records)
    assert f"{per_item} is left as it was".encode() in err and b".partial" in err
    assert b"Traceback" not in err
    assert not list(tmp_path.glob(".pc-*.tmp"))  # no temporary file left behind


# --------------------------------------------------------------------------- properties


def _mutate(plan: list[dict[str, Any]], data: st.DataObject) -> tuple[dict[str, Any], Any]:
    """A prediction near the gold plan, including odd spellings the reference accepts: the
    record's plan field, and the plan in it."""
    plan = copy.deepcopy(plan)
    for _ in range(data.draw(st.integers(0, 3))):
        operation = data.draw(
            st.sampled_from(
                [
                    "tool",
                    "literal",
                    "drop",
                    "extra",
                    "swap",
                    "alias",
                    "bare_dependence",
                    "float_dependence",
                    "float_step",
                    "string_step",
                    "reverse",
                    "outputs",
                    "content",
                ]
            )
        )
        if not plan:
            break
        step = plan[data.draw(st.integers(0, len(plan) - 1))]
        if operation == "tool":
            step["agent"] = data.draw(st.sampled_from(sorted(TOOLSET.tools)))
        elif operation == "literal" and step["inputs"]:
            key = data.draw(st.sampled_from(sorted(step["inputs"])))
            step["inputs"][key] = data.draw(st.sampled_from(["/x.tif", 1, None, "/data/y.npy"]))
        elif operation == "drop":
            plan.pop()
        elif operation == "extra":
            plan.append(copy.deepcopy(step))
        elif operation == "swap" and len(plan) > 1:
            plan[0], plan[-1] = plan[-1], plan[0]
        elif operation == "alias" and "agent" in step and "dependence" in step:
            step["agent_name"] = step.pop("agent")
            step["dependencies"] = step.pop("dependence")
        elif operation == "bare_dependence" and step.get("dependence") == [-1]:
            step["dependence"] = -1
        elif operation == "float_dependence" and isinstance(step.get("dependence"), list):
            step["dependence"] = [float(x) for x in step["dependence"]]
        elif operation == "float_step" and isinstance(step.get("step"), int):
            step["step"] = float(step["step"])
        elif operation == "string_step" and isinstance(step.get("step"), int):
            step["step"] = str(step["step"])
        elif operation == "reverse":
            plan.reverse()
        elif operation == "outputs" and step.get("outputs"):
            step["outputs"] = list(reversed(step["outputs"]))
        elif operation == "content":
            step["dependence_content"] = {}
    style = data.draw(st.sampled_from(["plan", "json", "fence", "wrapped", "prose"]))
    if style == "plan":
        return {"plan": plan}, plan
    text = json.dumps(plan, indent=data.draw(st.sampled_from([None, 2])))
    if style == "fence":
        text = f"Here it is:\n```json\n{text}\n```"
    elif style == "wrapped":
        text = json.dumps({"structured_plan": plan})
    elif style == "prose":
        text = f"Thought: plan the steps.\nFinal plan: {text}\nDone."
    return {"completion": text}, plan


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=well_typed_plan(max_steps=5), data=st.data())
def test_metric_implications_hold_on_every_item(
    gold: list[dict[str, Any]], data: st.DataObject
) -> None:
    index = GoldIndex.parse(json.dumps(gold), "gold.json")
    scorer = ItemScorer(index, TOOLSET, ScoreOptions())
    fields, prediction = _mutate(gold, data)
    record = {"id": "x", "task_id": 1, **fields}
    item = json.loads(scorer.score(RawRecord("p.jsonl", 1, value=record)).line or "null")
    assert_item_invariants(item, prediction)
    assert tuple(item) == PER_ITEM_FIELDS
    # Strict scoring reads no float dependence, so there every implication holds outright,
    # EM => Dep included (no prediction is passed: no exception is allowed).
    strict = ItemScorer(index, TOOLSET, ScoreOptions(strict=True))
    strict_item = strict.score(RawRecord("p.jsonl", 1, value=record)).line
    assert_item_invariants(json.loads(strict_item or "null"))


@settings(max_examples=60, deadline=None)
@given(gold=well_typed_plan(max_steps=5), data=st.data())
def test_independent_steps_in_another_order_are_equivalent(
    gold: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Renumbering the steps (and every reference to them) in any topological order keeps the
    workflow: execution-equivalent, whatever EM says."""
    order = list(range(len(gold)))
    for _ in range(data.draw(st.integers(0, 6))):
        i = data.draw(st.integers(0, len(order) - 1))
        if i + 1 < len(order) and not _depends(gold[order[i + 1]], order[i]):
            order[i], order[i + 1] = order[i + 1], order[i]
    new_number = {old: new for new, old in enumerate(order)}
    moved = []
    for old in order:
        step = copy.deepcopy(gold[old])
        step["step"] = new_number[old]
        step["dependence"] = [new_number.get(d, d) for d in step["dependence"]]
        if step["dependence_content"]:
            step["dependence_content"] = {
                str(new_number[int(k)]): v for k, v in step["dependence_content"].items()
            }
        for key, value in step["inputs"].items():
            if isinstance(value, str) and value.startswith("<GENERATED>-"):
                _, number, output = value.split("-", 2)
                step["inputs"][key] = f"<GENERATED>-{new_number[int(number)]}-{output}"
        moved.append(step)
    scorer = ItemScorer(
        GoldIndex.parse(json.dumps(gold), "gold.json"),
        TOOLSET,
        ScoreOptions(static=False, extended=False),
    )
    item = json.loads(
        scorer.score(RawRecord("p", 1, value={"task_id": 1, "plan": moved})).line or "null"
    )
    assert item["exec_equiv"]
    if order == sorted(order):
        assert item["em"]


def _depends(step: dict[str, Any], on: int) -> bool:
    return on in step["dependence"]


# --------------------------------------------------------------------------- levels and speed


def _score_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    main(["score", *args, "--format", "json", "--bootstrap", "0"])
    return dict(json.loads(capsys.readouterr().out)["total"])


def test_parity_only_is_the_full_scoring_without_the_extras(
    tmp_path: Path,
    benchmark_path: Path,
    gold_tasks: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--parity-only`` computes the reference's metrics and FPoF exactly as the full scoring
    does and nothing else (execution equivalence is null, not a guess); ``--no-extended``
    differs from the full scoring only by the F1s and trajectory metrics."""
    records = _generated(gold_tasks, 2)
    lines = [json.dumps(r) for r in records] + ["{not json"]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("\n".join(lines) + "\n")
    outputs = {}
    for name, extra in {
        "full": [],
        "parity": ["--parity-only"],
        "checked": ["--no-extended"],
    }.items():
        per_item = tmp_path / f"{name}.jsonl"
        summary = _score_cli(
            ["--gold", str(benchmark_path), str(predictions), "--per-item", str(per_item), *extra],
            capsys,
        )
        outputs[name] = (summary, read_lines(per_item))
    full_summary, full_items = outputs["full"]
    parity_summary, parity_items = outputs["parity"]
    checked_summary, checked_items = outputs["checked"]
    assert checked_items == full_items
    assert "taskbench" not in checked_summary and "trajectory" not in checked_summary
    assert checked_summary == {
        k: v for k, v in full_summary.items() if k not in ("taskbench", "trajectory")
    }
    assert parity_summary["metrics"]["exec_equiv"] is None
    assert "static" not in parity_summary and "taskbench" not in parity_summary
    for name in ("em", "tool_acc", "param_acc", "dep_acc", "gap"):
        assert parity_summary["metrics"][name] == full_summary["metrics"][name]
    assert parity_summary["fpof"] == full_summary["fpof"]
    assert len(parity_items) == len(full_items) == len(records) + 1
    for parity, full in zip(parity_items, full_items, strict=True):
        assert list(parity) == SPEC_FIELDS
        assert parity["exec_equiv"] is None
        for name in SPEC_FIELDS:
            if name not in ("exec_equiv", "diagnostics"):
                assert parity[name] == full[name], name
        # The gold comparison's diagnostic (first, when there is one) is the same; the static
        # checker's findings are not there.
        fpof = [d for d in full["diagnostics"] if d["code"].startswith("PC6")]
        assert parity["diagnostics"][: len(fpof)] == fpof
        if parity["fpof_type"] != "format_error":
            assert parity["diagnostics"] == fpof


@pytest.mark.slow
def test_caching_and_line_rendering_change_no_result(
    benchmark_path: Path, gold_tasks: list[dict[str, Any]]
) -> None:
    """The caches (static results, canonical forms, FPoF entries by prediction) and leaving
    the per-item lines out change nothing: every item and the summary are the same."""
    gold = GoldIndex.load(str(benchmark_path))
    records = [RawRecord("p", i, value=r) for i, r in enumerate(_generated(gold_tasks, 6))]
    records.append(RawRecord("p", len(records), text='{"task_id": 1, "completion": 7}'))

    def run(options: ScoreOptions) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
        summary = Summary()
        seen = []
        for item in score_records(records, gold, TOOLSET, options):
            summary.add(item)
            seen.append((item.line, item.em, item.exec_equiv, item.static_valid, item.lint_codes))
        return seen, summary.to_dict(gold, resamples=0)

    cached = run(ScoreOptions())
    uncached = run(ScoreOptions(cache_size=0))
    assert cached == uncached
    tiny = run(ScoreOptions(cache_size=3))  # evicting all the time
    assert tiny == cached
    lineless_items, lineless_summary = run(ScoreOptions(lines=False))
    assert lineless_summary == cached[1]
    assert [item[1:] for item in lineless_items] == [item[1:] for item in cached[0]]
    assert all(item[0] is None for item in lineless_items)


def test_per_item_lines_are_exactly_json_encoded(
    tmp_path: Path,
    benchmark_path: Path,
    gold_tasks: list[dict[str, Any]],
) -> None:
    """Lines are written out directly, field by field; they must be exactly what json.dumps
    makes of the same object (odd ids and task ids included)."""
    plan = gold_tasks[0]["structured_plan"]
    task_id = gold_tasks[0]["task_id"]
    odd_ids: list[Any] = ['q"uo\\te', "ünï\u2028code", 1.5, -0.0, None, [1, {"a": None}], True]
    lines = [
        json.dumps({"id": ident, "task_id": task_id, "completion": json.dumps(plan[:-1])})
        for ident in odd_ids
    ]
    lines.append(json.dumps({"id": "as float", "task_id": float(task_id), "plan": plan}))
    lines.append(json.dumps({"id": "as text", "task_id": f" {task_id} ", "plan": []}))
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    per_item = tmp_path / "per_item.jsonl"
    score_with_per_item(benchmark_path, predictions, per_item)
    # JSONL lines end at "\n" only (str.splitlines would also split at U+2028).
    written = per_item.read_text(encoding="utf-8").split("\n")
    assert written.pop() == ""
    assert len(written) == len(lines)
    for line in written:
        assert line == json.dumps(json.loads(line), ensure_ascii=False)
    items = [json.loads(line) for line in written]
    assert [item["id"] for item in items[: len(odd_ids)]] == [
        odd_ids[0],
        odd_ids[1],
        1.5,
        -0.0,
        task_id,  # no id: the task id stands for it
        [1, {"a": None}],
        True,
    ]
    # However the record writes the task id, the line names the gold plan's task.
    assert items[-2]["task_id"] == task_id and type(items[-2]["task_id"]) is int
    assert items[-2]["em"] and items[-2]["id"] == "as float"
    assert items[-1]["task_id"] == task_id and items[-1]["fpof_type"] == "early_stop"


def test_jobs_rotate_chunks_between_processes_in_order(
    tmp_path: Path,
    benchmark_path: Path,
    gold_tasks: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With ``--jobs 3`` (as many as the usable CPUs allow) the chunks go round the workers
    and this process; the per-item file and the summary are those of one job, in input
    order."""
    records = _generated(gold_tasks, 7)  # > 3 chunks
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in records))
    outputs = []
    for jobs in ("1", "3"):
        per_item = tmp_path / f"per_item_{jobs}.jsonl"
        summary = _score_cli(
            [
                "--gold",
                str(benchmark_path),
                str(predictions),
                "--per-item",
                str(per_item),
                "--no-extended",
                "--jobs",
                jobs,
            ],
            capsys,
        )
        outputs.append((per_item.read_bytes(), summary))
    assert outputs[0] == outputs[1]
    ids = [json.loads(line)["id"] for line in outputs[0][0].decode().splitlines()]
    assert ids == [r["id"] for r in records]


def test_task_ids_are_matched_however_written(benchmark_path: Path) -> None:
    gold = GoldIndex.load(str(benchmark_path))
    task = next(iter(gold))
    number = int(task.task_id)
    assert gold.get(number) is task
    assert gold.get(float(number)) is task
    assert gold.get(str(number)) is task and gold.get(f" {number} ") is task
    assert gold.get(True) is None and gold.get(None) is None
    assert gold.get(10**9) is None and gold.get(-number) is None


# --------------------------------------------------------------------------- fast paths agree


def _lowered(value: Any) -> Any:
    plan, _ = lower_plan(value, Span("<test>", pointer=""))
    return plan


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=well_typed_plan(max_steps=5), data=st.data())
def test_execution_equivalence_shortcuts_agree_with_canonical_forms(
    gold: list[dict[str, Any]], data: st.DataObject
) -> None:
    """The analyzer settles most predictions without the interpreter (the same calls in
    place, different tools, different call signatures); whatever it answers is what comparing
    canonical forms answers. (It reads predictions as the reference compares them: the
    verdict's normalised steps.)"""
    _, mutated = _mutate(gold, data)
    prediction = score_plan(mutated, prepare_gold(gold)).prediction
    if prediction is None:
        return
    analyzer = PredictionAnalyzer(TOOLSET, cache_size=data.draw(st.sampled_from([0, 8])))
    mine, theirs = _lowered(prediction), _lowered(gold)
    expected = (
        mine is not None and theirs is not None and equivalent(mine, theirs, TOOLSET)
    )
    assert analyzer.equivalent(prediction, gold, em=False) == expected
    again, static = analyzer.assess(prediction, gold, em=False, static=True)
    assert again == expected and static is not None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=well_typed_plan(max_steps=5), data=st.data())
def test_canonical_form_is_the_interpreters(
    gold: list[dict[str, Any]], data: st.DataObject
) -> None:
    """The one-pass canonical form writes the very terms of the interpreter's run (unknown
    values aside: each is a fresh token either way)."""
    _, prediction = _mutate(gold, data)
    plan = _lowered(prediction)
    if plan is None:
        return
    fast, traced = canonical_form(plan, TOOLSET), trace_form(run(plan, TOOLSET))
    if any("?" in term for term in traced):  # unknown tokens differ between the two runs
        assert len(fast) == len(traced)
        assert any("?" in term for term in fast)
        return
    assert fast == traced


@settings(max_examples=100, deadline=None)
@given(gold=well_typed_plan(max_steps=5), extra=st.booleans())
def test_well_formed_steps_lower_alike_on_both_paths(
    gold: list[dict[str, Any]], extra: bool
) -> None:
    """Lowering takes a shortcut for steps with exactly the schema's fields, well typed; a
    field it does not know sends a step down the general path, which must build the same
    step (but for the extra field) and report only that field."""
    steps = copy.deepcopy(gold)
    if extra:
        for step in steps:
            step["thought"] = "..."
    plan, diagnostics = lower_plan(steps, Span("<test>", pointer=""))
    reference, reference_diagnostics = lower_plan(gold, Span("<test>", pointer=""))
    assert plan is not None and reference is not None and reference_diagnostics == []
    assert [replace(step, extra_fields=()) for step in plan.steps] == list(reference.steps)
    assert [d.code for d in diagnostics] == (["PC111"] * len(gold) if extra else [])
