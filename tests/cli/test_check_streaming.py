"""``plancheck check`` streams: a batch is checked and reported a record at a time, in flat
memory, with the output of rendering the whole run at once; an input over ``--max-size`` is
refused with PC006."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plancheck.cli import main
from plancheck.cli.check import name_the_default_pool
from plancheck.compiler.driver import CheckOptions, check_paths
from plancheck.corpus.builtin import builtin_toolset
from plancheck.fileio import DEFAULT_MAX_SIZE, format_size, parse_size
from plancheck.render.registry import FORMATS, RenderContext, Sources, renderer
from plancheck.render.statistics import render_statistics
from tests.support.completions import generate_completions

ROOT = Path(__file__).resolve().parents[2]


def _records(gold_tasks: list[dict[str, Any]], count: int, seed: int = 7) -> list[str]:
    tasks = [(task["task_id"], task["structured_plan"]) for task in gold_tasks]
    lines = []
    for made in generate_completions(tasks, per_task=max(1, count // len(tasks) + 1), seed=seed):
        record = {"id": made.id, "task_id": made.task_id, "completion": made.completion}
        lines.append(json.dumps(record))
        if len(lines) == count:
            break
    return lines


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory,
          gold_tasks: list[dict[str, Any]]) -> Path:
    """A batch with what a batch may hold besides records: a BOM, blank lines, CRLF line ends,
    a line that is not JSON, a bare plan, a record with no plan, a non-ASCII id."""
    lines = _records(gold_tasks, 300)
    lines[3] += "\r"
    lines[10] = '{"id": "broken", "task_id": 1, "completion": '
    lines[20] = json.dumps(gold_tasks[0]["structured_plan"])
    lines[30] = json.dumps({"id": "nothing", "task_id": 2})
    lines[40] = json.dumps({"id": "é-ü", "task_id": 3, "plan": [{"agent": "Nope", "step": 0}]},
                           ensure_ascii=False)
    lines.insert(50, "")
    lines.insert(51, "   ")
    path = tmp_path_factory.mktemp("batch") / "batch.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode("utf-8") + b"\n")
    return path


def _whole_run(files: list[str], format_name: str, *, quiet: bool = False,
               statistics: bool = False) -> str:
    """The output as ``check`` produced it before it streamed: every report first, then one
    rendering of the whole run over every source."""
    toolset = builtin_toolset()
    reports = list(check_paths(files, toolset, CheckOptions(), own_pool=True))
    for report in reports:  # what check adds when no pool was asked for
        report.diagnostics = name_the_default_pool(report.diagnostics, toolset)
    diagnostics = [d for r in reports for d in r.diagnostics]
    if statistics:
        return render_statistics(diagnostics, format_name) + "\n"
    sources = Sources()
    for report in reports:
        sources.add(report.file, report.record, report.lines, report.positions)
    context = RenderContext(diagnostics, sources, files=len({r.file for r in reports}),
                            plans=sum(1 for r in reports if r.plan is not None
                                      or r.value is not None), quiet=quiet)
    rendered = renderer(format_name)(context)
    return rendered + "\n" if rendered else ""


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", "--no-config", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("format_name", sorted(FORMATS))
def test_streamed_output_is_the_whole_run_s(batch: Path, format_name: str,
                                            capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(batch.parent)
    code, out, _ = _run(capsys, batch.name, "examples-missing.json", "--format", format_name)
    expected = _whole_run([batch.name, "examples-missing.json"], format_name)
    assert out == expected
    assert code == 2  # the missing file is a PC001


@pytest.mark.parametrize("extra", [["-q"], ["--statistics"], ["--format", "concise", "-q"],
                                   ["--format", "jsonl", "--statistics"]])
def test_quiet_and_statistics_are_the_whole_run_s(batch: Path, extra: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(batch), *extra)
    format_name = extra[extra.index("--format") + 1] if "--format" in extra else "text"
    expected = _whole_run([str(batch)], format_name, quiet="-q" in extra,
                          statistics="--statistics" in extra)
    assert out == expected
    assert code == 1


def test_output_file_gets_the_same_report(batch: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    code, out, _ = _run(capsys, str(batch), "--format", "json", "-o", str(report),
                        "--statistics")
    assert report.read_text(encoding="utf-8") == _whole_run([str(batch)], "json")
    assert out == _whole_run([str(batch)], "json", statistics=True)
    assert code == 1


@pytest.mark.slow
def test_a_batch_over_the_limit_on_stdin_is_read_a_record_at_a_time(
        tmp_path: Path, gold_tasks: list[dict[str, Any]]) -> None:
    """Over the limit, a batch without a .jsonl name (standard input, a .txt file) is still
    checked, record by record, with the same diagnostics as when it is read whole."""
    batch = tmp_path / "batch.jsonl"
    batch.write_text("\n".join(_records(gold_tasks, 300, seed=3)) + "\n")
    copy = tmp_path / "batch.txt"
    copy.write_bytes(batch.read_bytes())
    command = [sys.executable, "-m", "plancheck", "check", "--no-config", "--format", "concise"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    whole = subprocess.run([*command, str(copy)], capture_output=True, text=True, env=env,
                           check=False)
    assert batch.stat().st_size > 64 * 1024  # so that 64K is a limit it is over
    for source in ("-", str(copy)):
        streamed = subprocess.run([*command, "--max-size", "64K", source],
                                  stdin=batch.open("rb"), capture_output=True, text=True,
                                  env=env, check=False)
        name = "<stdin>" if source == "-" else str(copy)
        assert streamed.stdout == whole.stdout.replace(str(copy), name)
        assert streamed.returncode == whole.returncode == 1


def test_a_file_over_the_limit_is_refused_and_a_raised_limit_lets_it_through(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    completion = tmp_path / "big.txt"
    plan = [{"agent": "GeoChat", "step": i, "dependence": [-1], "dependence_content": None,
             "inputs": {"image_path": "a.tif", "user_query_path": "q.txt"},
             "outputs": ["contextual_description_path"]} for i in range(400)]
    completion.write_text("The structured task plan is: " + repr(plan))
    size = completion.stat().st_size
    assert 64 * 1024 < size < 1024 * 1024
    code, out, _ = _run(capsys, str(completion), "--max-size", "64K")
    assert code == 2
    assert f"error[PC006]: {completion} is {size:,} bytes, over the size limit of 64K" in out
    assert "--max-size" in out
    code, out, _ = _run(capsys, str(completion), "--max-size", "1M", "--format", "concise")
    assert code == 0 and "PC006" not in out and "(1 plan in 1 file checked)" in out
    for limit in ("1M", "1m", "1MB", "1MiB", str(size)):  # exactly the size is within it
        assert _run(capsys, str(completion), "--max-size", limit, "-q")[0] == 0
    code, out, _ = _run(capsys, str(completion), "--max-size", str(size - 1), "--format", "json")
    document = json.loads(out)
    assert code == 2 and document["summary"]["by_code"] == {"PC006": 1}
    assert document["diagnostics"][0]["data"] == {"path": str(completion), "size": size,
                                                  "limit": size - 1}


def test_standard_input_over_the_limit_is_refused(tmp_path: Path) -> None:
    text = "The structured task plan is: [" + "x" * 200_000
    result = subprocess.run(
        [sys.executable, "-m", "plancheck", "check", "--no-config", "--max-size", "100K", "-"],
        input=text, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2
    assert "error[PC006]: <stdin> is over the size limit of 100K" in result.stdout


def test_a_record_over_the_limit_is_refused_and_the_others_are_checked(
        tmp_path: Path, gold_tasks: list[dict[str, Any]],
        capsys: pytest.CaptureFixture[str]) -> None:
    lines = _records(gold_tasks, 3)
    lines.insert(1, json.dumps({"id": "huge", "task_id": 1, "completion": "x" * 5000}))
    batch = tmp_path / "b.jsonl"
    batch.write_text("\n".join(lines) + "\n")
    code, out, _ = _run(capsys, str(batch), "--max-size", "4K", "--format", "jsonl")
    found = [json.loads(line) for line in out.splitlines()]
    refused = [d for d in found if d["code"] == "PC006"]
    assert code == 2
    assert [d["record"] for d in refused] == ["line 2"]
    assert refused[0]["data"]["size"] == len(lines[1])
    assert refused[0]["message"].startswith(f"the record is {len(lines[1]):,} bytes")
    others = tmp_path / "others.jsonl"
    others.write_text("\n".join(lines[:1] + lines[2:]) + "\n")
    plans = _run(capsys, str(others), "-q")[1].rsplit("(", 1)[1]
    code, out, _ = _run(capsys, str(batch), "--max-size", "4K", "-q")
    assert out.rsplit("(", 1)[1] == plans  # the others are checked; the refused one is no plan
    assert "plan" in plans


@pytest.mark.parametrize("value", ["", "abc", "12X", "0", "-5", "1.5M", "M"])
def test_bad_sizes_are_usage_errors(value: str, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "p.json"
    plan.write_text("[]")
    code, _, err = _run(capsys, str(plan), "--max-size", value)
    assert code == 2
    assert "--max-size" in err


def test_sizes() -> None:
    assert parse_size("16M") == DEFAULT_MAX_SIZE == 16 * 1024 * 1024
    assert parse_size("3k") == 3072 and parse_size("2G") == 2 << 30 and parse_size("10") == 10
    assert format_size(DEFAULT_MAX_SIZE) == "16M" and format_size(1000) == "1,000 bytes"
    with pytest.raises(ValueError, match="not a size"):
        parse_size("1.5M")


def _peak_rss_kb(command: list[str], stdout: Path) -> int:
    """Peak RSS of ``command`` run from a fresh process (so that no earlier child of the test
    run counts)."""
    probe = ("import resource, subprocess, sys\n"
             f"with open({str(stdout)!r}, 'wb') as out:\n"
             f"    subprocess.run({command!r}, stdout=out, check=False)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return int(result.stdout)


@pytest.mark.slow
def test_memory_is_flat_in_the_size_of_the_batch(tmp_path: Path,
                                                 gold_tasks: list[dict[str, Any]]) -> None:
    """A 6 MB batch: checking it whole took 130 MB (peak RSS, plain Python); streamed it takes
    what a small batch takes (30 MB)."""
    lines = _records(gold_tasks, 2000, seed=11)
    text = "\n".join(lines) + "\n"
    big = tmp_path / "big.jsonl"
    with big.open("w") as handle:
        while handle.tell() < 6_000_000:
            handle.write(text)
    out = tmp_path / "out.jsonl"
    peak = _peak_rss_kb([sys.executable, "-m", "plancheck", "check", "--no-config", "--format",
                         "jsonl", str(big)], out)
    assert out.stat().st_size > 1_000_000  # it did check and report
    assert peak < 75_000, f"peak RSS {peak} KB"


def test_the_limit_from_the_configuration_file(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    plan = tmp_path / "answer.txt"
    plan.write_text("The structured task plan is: " + "[" * 3000)
    config = tmp_path / "plancheck.toml"
    config.write_text('max-size = "2K"\n')
    code, out, _ = main(["check", "answer.txt", "--format", "concise"]), *capsys.readouterr()
    assert code == 2 and "over the size limit of 2K" in out
    code, out, _ = main(["check", "answer.txt", "--max-size", "4K", "-q"]), *capsys.readouterr()
    assert code != 2 and "PC006" not in out  # the command line wins
    config.write_text("max-size = 4096\n")  # a number of bytes
    assert main(["check", "answer.txt", "-q"]) != 2
    capsys.readouterr()
    config.write_text('max-size = "big"\n')
    code, out, err = main(["check", "answer.txt"]), *capsys.readouterr()
    assert code == 2 and out == ""
    assert "error[PC003]" in err and "`max-size`" in err and "not a size" in err
