"""Usability: files after options, misspelt commands, an endpoint that refuses, credentials in
a base URL, the hint to --retry-errors, long JSONL lines, a reader that goes away."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from plancheck.cli import main
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.samples import FOG_CHAIN
from tests.support.scripted_planning import ScriptedPlanner
from tests.support.scripted_planning import write_tasks as write_task_file

SECRET = "sk-in-the-url-12345"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _plan(tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(FOG_CHAIN, indent=2))
    return str(path)


def test_files_may_follow_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = _plan(tmp_path, "a.json"), _plan(tmp_path, "b.json")
    for argv in (("check", first, "--quiet", second), (first, "--quiet", second)):
        code, out, err = _run(capsys, *argv)
        assert code == 0, err
        assert "(2 plans in 2 files)" in out
    gold = _plan(tmp_path, "gold.json")
    predictions = []
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text(json.dumps({"task_id": 1, "plan": FOG_CHAIN}) + "\n")
        predictions.append(str(tmp_path / name))
    code, out, err = _run(capsys, "score", predictions[0], "--gold", gold, predictions[1],
                          "--format", "json", "--bootstrap", "0")
    assert code == 0, err
    assert len(json.loads(out)["files"]) == 2


def test_a_misspelt_command_is_not_read_as_a_file(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "scroe", "x.json")
    assert code == 2
    assert "did you mean `plancheck score`" in err and "cannot read" not in out + err
    # A file that happens to be named like a command still is a file.
    Path("chek").write_text(json.dumps(FOG_CHAIN))
    code, out, _ = _run(capsys, "chek")
    assert code == 0 and "All checks passed" in out


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_refused_endpoint_fails_fast_naming_the_host_and_hiding_the_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl")
    port = _closed_port()
    started = time.monotonic()
    code, out, err = _run(capsys, "plan", "--method", "dp", "--model", "m", "--base-url",
                          f"http://user:{SECRET}@127.0.0.1:{port}/v1", "--tasks", str(tasks),
                          "--out", str(tmp_path / "out"), "--no-progress")
    assert code == 2
    assert time.monotonic() - started < 10
    assert f"127.0.0.1:{port} refused the connection" in err
    assert SECRET not in out + err
    assert not (tmp_path / "out").exists()


def test_credentials_in_the_base_url_stay_out_of_config_and_messages(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl")
    out = tmp_path / "out"
    failing = ScriptedPlanner(lambda task, kind, call: Reply(status=503, retry_after_s=0,
                                                             error=f"echo {SECRET}"))
    with ScriptedOpenAIServer(responder=failing) as server:
        url = server.base_url.replace("http://", f"http://user:{SECRET}@")
        code, stdout, err = _run(capsys, "plan", "--method", "dp", "--model", "m",
                                 "--base-url", url, "--tasks", str(tasks), "--out", str(out),
                                 "--no-progress", "--no-cache", "--max-retries", "0",
                                 "--limit", "1")
    assert code == 1
    for path in out.iterdir():
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path.name
    assert SECRET not in stdout + err
    assert json.loads((out / "config.json").read_text())["base_url"].startswith("http://***@")


def test_errors_point_to_retry_errors(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl")
    out = tmp_path / "out"
    failing = ScriptedPlanner(
        lambda task, kind, call: Reply(status=503, retry_after_s=0) if task == 103 else None)
    argv = ["plan", "--method", "dp", "--model", "m", "--tasks", str(tasks), "--out", str(out),
            "--no-progress", "--no-cache", "--max-retries", "0"]
    with ScriptedOpenAIServer(responder=failing) as server:
        code, _, err = _run(capsys, *argv, "--base-url", server.base_url)
        assert code == 1 and "1 task(s) ended with an error" in err and "--retry-errors" in err
        code, _, err = _run(capsys, *argv, "--base-url", server.base_url)
        assert code == 0 and "--retry-errors" in err  # the rerun skipped it: say how not to


def test_the_excerpt_of_a_long_jsonl_line_shows_the_reported_column(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = [dict(step) for step in FOG_CHAIN]
    plan[1] = {**plan[1], "agent": "Foggy_Object_Detection"}
    path = tmp_path / "batch.jsonl"
    path.write_text(json.dumps({"task_id": 1, "note": "x" * 300, "plan": plan}) + "\n")
    code, out, _ = _run(capsys, "check", str(path))
    assert code == 1
    lines = out.splitlines()
    caret = next(i for i, line in enumerate(lines) if "^" in line and "not a tool" in line)
    excerpt, underline = lines[caret - 1], lines[caret]
    column = underline.index("^")
    assert excerpt[column:].startswith('"Foggy_Object_Detection"'), (excerpt, underline)
    assert excerpt.endswith("…") or len(excerpt) < 200


def _terminal_columns(text: str) -> int:
    """Columns a terminal gives ``text`` (the test's own count: East Asian wide characters
    take two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


@pytest.mark.parametrize(("indent", "path"), [
    ("\t", "/d/fog.jpg"),  # a plan indented with tabs
    ("  ", "数据/雾天桥梁🌉.jpg"),  # wide characters before the label, on its line
])
def test_the_carets_stand_under_what_they_label(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], indent: str, path: str) -> None:
    """Tabs are shown as spaces and wide characters take two columns, so the marks line up
    with the text above them as a terminal shows it."""
    plan = [dict(step) for step in FOG_CHAIN]
    plan[0] = {**plan[0], "inputs": {"weather_degraded_image_path": path, "bogus": 1}}
    # The inputs on a short line of their own, indented: the wide path and the unknown input
    # share it, and the tabs before them are in the excerpt's window.
    first = {key: value for key, value in plan[0].items() if key != "inputs"}
    text = ("[\n" + indent + json.dumps(first)[:-1] + ",\n" + indent * 2 + '"inputs": '
            + json.dumps(plan[0]["inputs"], ensure_ascii=False) + "},\n"
            + ",\n".join(indent + json.dumps(step) for step in plan[1:]) + "\n]\n")
    file = tmp_path / "plan.json"
    file.write_text(text, encoding="utf-8")
    code, out, _ = _run(capsys, "check", "--select", "PC202", str(file))
    assert code == 1
    lines = out.splitlines()
    caret = next(i for i, line in enumerate(lines) if "^" in line and "unknown input" in line)
    excerpt, underline = lines[caret - 1], lines[caret]
    assert "\t" not in excerpt
    before = underline.index("^")
    # The excerpt's prefix that fills as many terminal columns as the underline's lead.
    shown = next(excerpt[:n] for n in range(len(excerpt) + 1)
                 if _terminal_columns(excerpt[:n]) >= before)
    assert _terminal_columns(shown) == before
    assert excerpt[len(shown):].startswith('"bogus"'), (excerpt, underline)
    assert underline.count("^") == len('"bogus"')


def test_the_toolset_cache_stays_bounded(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    cache = tmp_path / "cache"
    cache.mkdir()
    for i in range(20):  # entries left by earlier installs
        stale = cache / f"toolset-disasterbench-{i:020d}.json"
        stale.write_bytes(b"old")
        os.utime(stale, (1_000_000 + i, 1_000_000 + i))
    (cache / "toolset-disasterbench-0.pickle").write_bytes(b"old")  # earlier versions' format
    plan = _plan(tmp_path, "p.json")
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-m", "plancheck", "check", plan],
                            capture_output=True, text=True, check=False, cwd=tmp_path,
                            env={**os.environ, "PLANCHECK_CACHE_DIR": str(cache),
                                 "PYTHONPATH": str(root)})
    assert result.returncode == 0, result.stderr
    left = sorted(p.name for p in cache.iterdir())
    assert len(left) == 8  # the README's promise: the 8 newest entries are kept
    assert any(not name.startswith("toolset-disasterbench-000") for name in left)


def test_a_refused_call_names_the_host() -> None:
    from plancheck.planners.client import ChatClient, ClientConfig, TransportError

    port = _closed_port()
    client = ChatClient(ClientConfig(model="m", base_url=f"http://127.0.0.1:{port}/v1",
                                     max_retries=2, timeout_s=5, backoff_base_s=0.001,
                                     backoff_max_s=0.002))
    with pytest.raises(TransportError) as raised:
        client.complete("plan this", temperature=0.0)
    client.close()
    assert f"127.0.0.1:{port} refused the connection" in str(raised.value)
    assert raised.value.attempts == 3 and raised.value.status is None


@pytest.mark.parametrize("arguments", [
    ["examples/flood_plan.json"],  # findings, written when the check is done
    ["check", "--format", "jsonl", "examples/flood_plan.json"],  # written as found
    ["explain"],  # no plan at all
])
def test_a_reader_that_goes_away_is_an_error_not_a_pass(arguments: list[str]) -> None:
    """`plancheck plan.json | head` under `set -o pipefail`: the report was cut short, so the
    run must not exit 0 (read as "clean"), and it says nothing more (no traceback, no
    "Exception ignored")."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    read, write = os.pipe()
    os.close(read)  # nobody will read: the first write fails with EPIPE
    try:
        result = subprocess.run([sys.executable, "-m", "plancheck", *arguments],
                                stdout=write, stderr=subprocess.PIPE, text=True, check=False,
                                cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    finally:
        os.close(write)
    assert result.returncode == 2
    assert result.stderr == ""
