"""The plan against the request it answers (PC901-PC905): through the Python API and the CLI,
and each rule's precision on the gold plans of real corpora, given their requests."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.api import check_trajectory
from plancheck.cli import main

REAL = Path(__file__).parents[1] / "data" / "real"
REQUEST_CODES = ("PC901", "PC902", "PC903", "PC904", "PC905")


def _gold(gold_tasks: list[dict[str, Any]], task_id: int) -> dict[str, Any]:
    return next(task for task in gold_tasks if task["task_id"] == task_id)


def test_the_request_finds_what_the_plan_alone_cannot(gold_tasks: list[dict[str, Any]]) -> None:
    task = _gold(gold_tasks, 1)
    plan, request = task["structured_plan"], task["task_desc"]
    assert plancheck.check(plan, task=request).codes == []
    typo = json.loads(json.dumps(plan))
    typo[1]["inputs"]["image_path"] = "/data/satellite_images/hsr_imag.tif"
    assert plancheck.check(typo).ok  # well typed: nothing to see without the request
    report = plancheck.check(typo, task=request)
    invented = next(d for d in report.diagnostics if d.code == "PC901")
    assert invented.data["closest"] == "/data/satellite_images/hsr_image.tif"
    fix = invented.suggestions[0].edits[0]
    assert (fix.pointer, fix.value) == ("/1/inputs/image_path",
                                        "/data/satellite_images/hsr_image.tif")
    assert "PC902" in report.codes  # and the file it should have read is read by none
    stopped = plancheck.check(plan[:1], task=request)
    assert sorted(d.data["input"] for d in stopped.diagnostics if d.code == "PC902") == [
        "/data/satellite_images/hsr_image.tif", "/data/user_queries/user_query.txt"]
    swapped = plancheck.check([plan[1], plan[0], plan[2]], task=request)
    assert "PC904" in swapped.codes


def test_values_the_schema_names_or_results_hold_are_not_invented(tmp_path: Path) -> None:
    pool = tmp_path / "tools.json"
    pool.write_text(json.dumps([{"type": "function", "function": {
        "name": "book", "description": "Book a ticket.",
        "parameters": {"type": "object", "properties": {
            "ticket_id": {"type": "string"},
            "class_name": {"type": "string", "enum": ["economy", "first"]}},
            "required": ["ticket_id"]}}}]), encoding="utf-8")
    request = "Book ticket TK-1 in economy."
    calls = [{"type": "function", "function": {"name": "book", "arguments": json.dumps(
        {"ticket_id": "TK-1", "class_name": "first"})}}]
    assert plancheck.check(calls, pool, task=request).codes == []
    made_up = [{"type": "function", "function": {"name": "book", "arguments": json.dumps(
        {"ticket_id": "G1234"})}}]
    assert plancheck.check(made_up, pool, task=request).codes == ["PC901"]


def test_a_place_to_write_is_the_model_s_to_choose(tmp_path: Path) -> None:
    """The official filesystem MCP server's write_file takes the path to write; a path the
    request does not give is no invention there, while read_file's is."""
    pool = REAL / "mcp" / "server-filesystem.json"
    request = "Summarize /home/me/notes.md into a short file."
    write = [{"name": "write_file", "arguments": {"path": "/home/me/summary.md",
                                                  "content": "..."}}]
    assert "PC901" not in plancheck.check(write, pool, task=request).codes
    read = [{"name": "read_file", "arguments": {"path": "/home/me/notes2.md"}}]
    assert "PC901" in plancheck.check(read, pool, task=request).codes


def test_a_value_copied_from_an_earlier_result_is_not_invented(tmp_path: Path) -> None:
    pool = tmp_path / "tools.json"
    pool.write_text(json.dumps([
        {"type": "function", "function": {"name": "find", "description": "Find a ticket.",
                                          "parameters": {"type": "object", "properties": {
                                              "train": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "book", "description": "Book it.",
                                          "parameters": {"type": "object", "properties": {
                                              "ticket_id": {"type": "string"}}}}}]),
        encoding="utf-8")
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Book the ticket for train G12."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "find", "arguments": "{\"train\": \"G12\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"ticket_id\": \"TK-88213\"}"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c2", "type": "function",
             "function": {"name": "book", "arguments": "{\"ticket_id\": \"TK-88213\"}"}}]},
    ]
    request = "Book the ticket for train G12."
    assert plancheck.check(messages, pool, task=request).codes == []
    messages[3]["tool_calls"][0]["function"]["arguments"] = "{\"ticket_id\": \"G12-1\"}"
    assert plancheck.check(messages, pool, task=request).codes == ["PC901"]


def test_a_medium_of_the_wrong_kind_with_the_request_s_file_as_fix() -> None:
    """TaskBench's pool types a parameter `video`: an audio file there is PC905, and the one
    video the request gives is the suggested fix."""
    record = {"id": "1", "result": {"task_nodes": [
        {"task": "Video Speed Changer", "arguments": ["example.wav", "2"]}]}}
    request = "Please speed up my video 'example.mp4' twice; the voiceover is example.wav."
    report = plancheck.check(record, REAL / "taskbench" / "tool_desc.json", task=request)
    (kind,) = [d for d in report.diagnostics if d.code == "PC905"]
    assert kind.data["expected"] == "video" and kind.data["actual"] == "audio"
    assert kind.suggestions[0].edits[0].value == "example.mp4"
    fine = {"id": "1", "result": {"task_nodes": [
        {"task": "Video Speed Changer", "arguments": ["example.mp4", "2"]}]}}
    assert "PC905" not in plancheck.check(fine, REAL / "taskbench" / "tool_desc.json",
                                          task=request).codes


def test_check_trajectory_takes_the_request() -> None:
    steps = [{"call": "seg.flood", "args": {"pre_image_path": "/d/pre.tif",
                                            "post_image_path": "/d/post.tif"}}]
    request = "Map the flood from /d/pre.tif and /d/post2.tif."
    report = check_trajectory(steps, "dora", task=request)
    assert [d.code for d in report.diagnostics if d.code.startswith("PC9")] == \
        ["PC901", "PC902"]
    assert not [d for d in check_trajectory(steps, "dora").diagnostics
                if d.code.startswith("PC9")]


def test_the_request_is_text() -> None:
    with pytest.raises(TypeError):
        plancheck.check([], task=["not", "text"])  # type: ignore[arg-type]


def check_json(capsys: pytest.CaptureFixture[str], *args: str
               ) -> tuple[int, list[dict[str, Any]]]:
    code = main(["check", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)["diagnostics"]


def _codes(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Counter[str]]:
    code, diagnostics = check_json(capsys, *args)
    return code, Counter(d["code"] for d in diagnostics)


def test_cli_task_text_file_and_table(tmp_path: Path, gold_tasks: list[dict[str, Any]],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    task = _gold(gold_tasks, 1)
    short = tmp_path / "short.json"
    short.write_text(json.dumps(task["structured_plan"][:1]), encoding="utf-8")
    request = tmp_path / "request.txt"
    request.write_text(task["task_desc"], encoding="utf-8")
    assert _codes(capsys, str(short))[1]["PC902"] == 0  # no request: no request rules
    assert _codes(capsys, str(short), "--task", task["task_desc"])[1]["PC902"] == 2
    assert _codes(capsys, str(short), "--task", str(request))[1]["PC902"] == 2
    batch = tmp_path / "batch.jsonl"
    batch.write_text("\n".join(json.dumps({"task_id": t["task_id"], "plan": plan}) for t, plan in
                               ((task, task["structured_plan"][:1]),
                                (_gold(gold_tasks, 2), _gold(gold_tasks, 2)["structured_plan"])))
                     + "\n", encoding="utf-8")
    benchmark = tmp_path / "benchmark.jsonl"
    benchmark.write_text("".join(json.dumps(t) + "\n" for t in gold_tasks[:5]), encoding="utf-8")
    _, found = _codes(capsys, str(batch), "--tasks", str(benchmark))
    assert found["PC902"] >= 2


def test_cli_task_fields_of_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = tmp_path / "records.jsonl"
    plan = [{"agent": "Weather_Degraded_Image_Restoration", "step": 0, "dependence": [-1],
             "dependence_content": None,
             "inputs": {"weather_degraded_image_path": "/d/b.jpg"},
             "outputs": ["restored_image_path"]}]
    lines = [{"task_id": n, field: "Restore the image at /d/a.jpg.", "plan": plan}
             for n, field in enumerate(("task", "query", "user_request", "question"))]
    records.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    assert _codes(capsys, str(records))[1]["PC901"] == 0
    assert _codes(capsys, str(records), "--task-fields")[1]["PC901"] == 4


def test_cli_dora_samples_and_run_records(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """DORA's task files hold samples whose tasks are named `<sample_id>_task<i>`; a run
    record names its task by `question_id`. Both join a DORA sample's request, and a task's
    own `question` is read with --task-fields."""
    trajectory = [{"call": "seg.flood", "args": {"pre_image_path": "/img/pre.tif",
                                                  "post_image_path": "/img/post2.tif"},
                   "obs": {}}]
    sample = {"sample_id": "beirut_1", "tasks": [
        {"task_category": "t1", "question": "Map the flood from /img/pre.tif and /img/post.tif.",
         "trajectory": trajectory}]}
    tasks = tmp_path / "beirut_1.json"
    tasks.write_text(json.dumps(sample), encoding="utf-8")
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"question_id": "beirut_1_task0", "task_category": "t1",
                               "trajectory": trajectory}) + "\n", encoding="utf-8")
    for args in ([str(tasks), "--task-fields"], [str(tasks), "--tasks", str(tasks)],
                 [str(run), "--tasks", str(tasks)]):
        _, found = _codes(capsys, *args, "--tools", "dora")
        assert (found["PC901"], found["PC902"]) == (1, 1), args


@pytest.mark.parametrize("args", [["--task", " "], ["--tasks", "missing.jsonl"]])
def test_cli_bad_task_options_are_usage_errors(tmp_path: Path, args: list[str],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text("[]", encoding="utf-8")
    assert main(["check", str(plan), *args]) == 2
    assert "--task" in capsys.readouterr().err


# --------------------------------------------------------------------------- precision


def test_each_rule_on_the_disasterbench_gold_plans(
        benchmark_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The official 233 gold plans with their own requests: no request rule reports an error,
    and each warns on fewer than 1 plan in 10 (measured: PC901 4, PC902 23, PC904 4 of 233;
    docs/task-checks.md)."""
    main(["check", str(benchmark_path), "--task-fields", "--format", "json"])
    diagnostics = json.loads(capsys.readouterr().out)["diagnostics"]
    request = [d for d in diagnostics if d["code"] in REQUEST_CODES]
    assert not [d for d in request if d["severity"] == "error"]
    per_rule = Counter(d["code"] for d in request)
    assert all(count / 233 < 0.1 for count in per_rule.values()), per_rule
    assert per_rule["PC901"] <= 4 and per_rule["PC904"] <= 4
    assert per_rule["PC903"] == 0 and per_rule["PC905"] == 0


def test_each_rule_on_real_gold_of_other_corpora(capsys: pytest.CaptureFixture[str]) -> None:
    """TaskBench's gold (its `instruction`) and Seal-Tools' (its `query`): silent but for two
    Seal-Tools gold values the query does not give (a `vpc_id` and a product name)."""
    _, taskbench = _codes(capsys, "--tools", str(REAL / "taskbench" / "tool_desc.json"),
                          str(REAL / "taskbench" / "data_multimedia.excerpt.jsonl"),
                          "--task-fields")
    assert not {code for code in taskbench if code in REQUEST_CODES}
    _, seal = _codes(capsys, "--tools", str(REAL / "sealtools" / "tool.jsonl"),
                     str(REAL / "sealtools" / "test_in_domain.jsonl"), "--task-fields")
    assert {code: n for code, n in seal.items() if code in REQUEST_CODES} == {"PC901": 2}


def test_each_rule_on_bfcl_gold_with_its_questions(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """BFCL's gold calls (42 records of four files), each with its question's user turns as
    the request: silent."""
    bfcl = REAL / "bfcl"
    lines = []
    for name in ("BFCL_v4_multiple", "BFCL_v4_live_parallel", "BFCL_v4_parallel_multiple",
                 "BFCL_v4_live_simple"):
        answers = {record["id"]: record["ground_truth"] for record in map(
            json.loads, (bfcl / f"{name}.possible_answer.json").read_text().splitlines())}
        for question in map(json.loads, (bfcl / f"{name}.json").read_text(
                encoding="utf-8").splitlines()):
            lines.append(json.dumps({"id": question["id"], "function": question["function"],
                                     "question": question["question"],
                                     "ground_truth": answers[question["id"]]}))
    batch = tmp_path / "bfcl.jsonl"
    batch.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert len(lines) == 42
    assert _codes(capsys, str(batch), "--task-fields") == (0, Counter())


def test_taskbench_model_outputs_against_their_requests(
        capsys: pytest.CaptureFixture[str]) -> None:
    """MiniMax-Text-01's TaskBench outputs: a URL the request never gave, passed to Audio
    Downloader in place of the one it did (28095039: PC901, and the request's URL unused),
    and `example.wav`, which the request asks to synchronize with the video, never used
    (27780863: the video is synchronized with its own audio; no error without the request).
    `transcript.txt` is the name of a file to write ("transcribed into a text file called"),
    not an input."""
    _, diagnostics = check_json(capsys, "--tools", str(REAL / "taskbench" / "tool_desc.json"),
                                str(REAL / "taskbench" / "MiniMax-Text-01.excerpt.jsonl"),
                                "--task-fields")
    found = sorted((d["record"], d["code"]) for d in diagnostics
                   if d["code"] in REQUEST_CODES)
    assert found == [("27780863", "PC902"), ("28095039", "PC901"), ("28095039", "PC902")]
    assert not [d for d in diagnostics if d["record"] == "27780863"
                and d["code"] not in REQUEST_CODES and d["severity"] == "error"]


# --------------------------------------------------------------------------- the guard


def _ticket_pool(tmp_path: Path) -> Path:
    pool = tmp_path / "tools.json"
    pool.write_text(json.dumps([
        {"type": "function", "function": {"name": "find", "description": "Find a ticket.",
                                          "parameters": {"type": "object", "properties": {
                                              "train": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "book", "description": "Book a ticket.",
                                          "parameters": {"type": "object", "properties": {
                                              "ticket_id": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "read", "description": "Read a file.",
                                          "parameters": {"type": "object", "properties": {
                                              "path": {"type": "string"}}}}}]),
        encoding="utf-8")
    return pool


def test_the_guard_refuses_an_invented_id_given_the_request(tmp_path: Path) -> None:
    """A train number used as a ticket id: refused with the request, allowed without it; the
    id an earlier result returned is allowed."""
    from plancheck.guard import Guard

    pool = _ticket_pool(tmp_path)
    request = "Book the ticket for train G12, and read /d/notes.txt."
    guard = Guard(pool, task=request)
    assert guard.propose({"id": "c1", "name": "find", "arguments": {"train": "G12"}}).allowed
    assert guard.record("c1", {"ticket_id": "TK-88213"}) == []
    invented = guard.propose({"id": "c2", "name": "book", "arguments": {"ticket_id": "G12-1"}})
    assert not invented.allowed
    assert [d.code for d in invented.diagnostics] == ["PC901"]
    assert "call c2 `book.ticket_id` is `G12-1`" in invented.feedback
    assert guard.propose({"id": "c3", "name": "book",
                          "arguments": {"ticket_id": "TK-88213"}}).allowed
    assert [d.code for d in guard.finish()] == ["PC902"]  # /d/notes.txt was never read
    assert Guard(pool).propose({"name": "book", "arguments": {"ticket_id": "G12-1"}}).allowed
    warned = Guard(pool, task=request, profile="default").propose(
        {"name": "book", "arguments": {"ticket_id": "G12-1"}})
    assert warned.allowed and [d.code for d in warned.diagnostics] == ["PC901"]
