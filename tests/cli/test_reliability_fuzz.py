"""A fuzz of the whole command line: every subcommand, on files, standard input and
directories (empty, with unreadable entries, link loops, dangling links), with huge integers,
undecodable bytes and damaged JSON. No run may end in "internal error" or a traceback.

Each run's output is also kept in a corpus directory (``PLANCHECK_FUZZ_OUT``, else a temporary
one), so that ``rg "internal error" $PLANCHECK_FUZZ_OUT`` can be run over it afterwards.
(Permission errors need a second user; tests/test_reliability_inputs.py covers them.)
"""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancheck.cli import main
from tests.strategies import json_values
from tests.support.samples import FOG_CHAIN

BIG = "9" * 4400

_SETTINGS = settings(max_examples=int(os.environ.get("PLANCHECK_FUZZ_EXAMPLES", "80")),
                     deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture,
                                            HealthCheck.too_slow])


@pytest.fixture(scope="module")
def corpus() -> Iterator[Path]:
    """Where the fuzz writes what each run printed. Once the module's tests are done, the
    acceptance check over all of it: no internal error anywhere (a check here, not a test of
    its own: under pytest-xdist another worker ran such a test before or without the fuzz,
    and it skipped)."""
    kept = os.environ.get("PLANCHECK_FUZZ_OUT")
    path = Path(kept) if kept else Path(tempfile.mkdtemp(prefix="plancheck-fuzz-"))
    path.mkdir(parents=True, exist_ok=True)
    yield path
    log = path / "outputs.jsonl"
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    if not kept:
        shutil.rmtree(path, ignore_errors=True)
    assert "internal error" not in text


# --------------------------------------------------------------------------- inputs


def _damaged(text: str, cut: int) -> str:
    return text[: max(1, len(text) - cut)]


contents = st.one_of(
    st.builds(lambda v: json.dumps(v).encode(), json_values),
    st.builds(lambda v: (json.dumps(FOG_CHAIN)[:-1] + f", {v}]").encode(),
              st.sampled_from([BIG, "-" + BIG, "1e999", "NaN", "[[[[[[[[", '"x"'])),
    st.builds(lambda n, v: b"\n".join(
        json.dumps({"task_id": i, "plan": FOG_CHAIN}).encode() if i != n
        else v for i in range(3)) + b"\n",
        st.integers(0, 3),
        st.sampled_from([b'{"task_id": 9, "n": ' + BIG.encode() + b"}", b"caf\xe9 \xff",
                         b"{", b"[]", b"null", b'{"task_id": null, "completion": 5}'])),
    st.builds(lambda cut: _damaged(json.dumps(FOG_CHAIN), cut).encode(), st.integers(1, 80)),
    st.just(b'[{"agent": "X\\udc80", "step": 0, "dependence": [-1], "inputs": '
            b'{"a\\udc81": "x"}, "outputs": ["y\\ud800"]}]'),  # lone surrogates, escaped
    st.binary(max_size=64),
    st.builds(lambda depth: b"plan { step 0 = GeoChat(image_path = " + b"[" * depth
              + b"]" * depth + b") }", st.sampled_from([3, 399, 401, 5000])),  # DSL depths
    st.just(b'{"agent": "GeoChat", "agent": "x\x1b[2J", "step": 0}'),  # a key twice, ESC
    st.text(max_size=120).map(str.encode),
    st.just(b""),
)

suffixes = st.sampled_from([".json", ".jsonl", ".txt", ".wf", ""])


@st.composite
def layouts(draw: st.DrawFn) -> dict[str, Any]:
    """Where the input lives: a file, standard input, a directory, or nowhere."""
    kind = draw(st.sampled_from(["file", "stdin", "dir", "empty-dir", "loop-dir", "missing",
                                 "link", "long-name", "odd-name", "over-limit"]))
    return {"kind": kind, "content": draw(contents), "suffix": draw(suffixes),
            "extra": draw(contents)}


def _materialise(root: Path, layout: dict[str, Any]) -> tuple[str, bytes | None]:
    """The path argument (or ``-``) and the bytes for standard input."""
    kind, content, suffix = layout["kind"], layout["content"], layout["suffix"]
    if kind == "stdin":
        return "-", content
    if kind == "missing":
        return str(root / f"missing{suffix}"), None
    if kind in ("file", "over-limit"):  # (over-limit: run with --max-size 1K, see the test)
        path = root / f"input{suffix}"
        path.write_bytes(content + (b" " * 2048 if kind == "over-limit" else b""))
        return str(path), None
    if kind == "link":  # reached through a symbolic link
        path = root / f"input{suffix}"
        path.write_bytes(content)
        link = root / f"link{suffix}"
        link.symlink_to(path)
        return str(link), None
    if kind in ("long-name", "odd-name"):  # 250 bytes; spaces, accents, a leading dash
        stem = "n" * (250 - len(suffix)) if kind == "long-name" else "-plän ü n\u00efx"
        path = root / f"{stem}{suffix}"
        path.write_bytes(content)
        return str(path), None
    folder = root / "plans"
    folder.mkdir()
    if kind == "empty-dir":
        return str(folder), None
    (folder / f"a{suffix or '.json'}").write_bytes(content)
    (folder / "sub").mkdir()
    (folder / "sub" / "b.jsonl").write_bytes(layout["extra"])
    (folder / "dangling.json").symlink_to(root / "nowhere.json")
    if kind == "loop-dir":
        (folder / "sub" / "up").symlink_to(folder, target_is_directory=True)
        (folder / "self.json").symlink_to(folder / "self.json")
    return str(folder), None


def _commands(target: str, root: Path) -> list[list[str]]:
    gold = root / "gold.json"
    gold.write_text(json.dumps(FOG_CHAIN))
    return [
        ["check", target, "--format", "json"],
        [target, "--quiet"],
        ["check", "--explain", "--timeout-ms", "300", target],
        ["fmt", target, "--to", "dsl"],
        ["fmt", "--to", "json", target],
        ["fix", target, "--timeout-ms", "300"],
        ["compile", "--to", "python", target],
        ["score", target, "--gold", str(gold), "--bootstrap", "0",
         "--per-item", str(root / "items.jsonl")],
        ["score", "--gold", target, str(gold), "--bootstrap", "0"],
        ["toolset", "show", "--tools", target],
        ["toolset", "lint", target],
        ["report", target],
        ["plan", "--method", "shortest_path", "--tasks", target, "--out", str(root / "out"),
         "--no-progress"],
        ["check", "--gold", target, str(gold)],
        ["check", target, "--output", target],  # an output onto the input: refused
    ]


def _run(argv: list[str], stdin: bytes | None, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin),
                                                           encoding="utf-8",
                                                           errors="surrogateescape"))
    try:
        code = main(argv)
    finally:
        out, err = capsys.readouterr()
    return code, out, err


@_SETTINGS
@given(layout=layouts(), command=st.integers(0, 14))
def test_no_input_is_an_internal_error(layout: dict[str, Any], command: int, corpus: Path,
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        target, stdin = _materialise(root, layout)
        argv = _commands(target, root)[command]
        before = Path(target).read_bytes() if Path(target).is_file() else None
        if layout["kind"] == "over-limit":
            argv = [*argv, "--max-size", "1K"] if argv[0] != target else [*argv]
        if argv[0] == target and target.startswith("-") and target != "-":
            argv = ["check", "--", target]  # (a name that looks like an option)
        with monkeypatch.context() as patch:
            patch.chdir(root)
            code, out, err = _run(argv, stdin, patch, capsys)
    record = {"argv": argv, "layout": layout["kind"], "code": code, "out": out[-4000:],
              "err": err[-4000:]}
    with (corpus / "outputs.jsonl").open("a", encoding="utf-8") as log:
        log.write(json.dumps(record, ensure_ascii=False, default=repr) + "\n")
    assert code in (0, 1, 2, 130), record
    assert "internal error" not in out + err, record
    assert "Traceback" not in out + err, record
    if argv[-2:] == ["--output", target] and before is not None:
        assert code == 2 and "would destroy the input" in err, record
    if layout["kind"] == "over-limit" and argv[0] != target and code != 130:
        assert code in (1, 2), record  # refused (or a record over it: one finding)


# --------------------------------------------------------------------------- the process's setting
# Closed standard streams and locales exist only for a whole process, so these run plancheck as
# one (the fuzz above runs in-process).

PLANCHECK = str(Path(sys.executable).with_name("plancheck"))
ASCII_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def _process(argv: list[str], cwd: Path, *, shell_suffix: str = "",
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONIOENCODING"}
    environment.update(env or {})
    command = " ".join(shlex.quote(part) for part in [PLANCHECK, *argv]) + shell_suffix
    return subprocess.run(["/bin/sh", "-c", command], cwd=cwd, env=environment,
                          capture_output=True, timeout=120, check=False)


STREAM_COMMANDS = [["check", "{plan}"], ["fmt", "--to", "json", "{plan}"], ["fix", "{plan}"],
                   ["compile", "--to", "python", "{plan}"],
                   ["score", "{plan}", "--gold", "{plan}", "--bootstrap", "0"]]


@pytest.mark.parametrize("closed", ["input", "output"])
@pytest.mark.parametrize("command", STREAM_COMMANDS, ids=lambda c: c[0])
def test_a_closed_standard_stream_is_a_diagnostic(tmp_path: Path, command: list[str],
                                                  closed: str) -> None:
    """`- <&-` and `>&-` were AttributeErrors ("internal error") in these commands."""
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(FOG_CHAIN))
    target = "-" if closed == "input" else str(plan)
    argv = [part.format(plan=target) for part in command]
    if command[0] == "score":
        argv[argv.index("--gold") + 1] = str(plan)
    done = _process(argv, tmp_path, shell_suffix=" <&-" if closed == "input" else " >&-")
    err = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert done.returncode == 2, err
    assert f"standard {closed} is closed" in err
    assert "internal error" not in err and "Traceback" not in err


def test_a_closed_standard_error_changes_no_exit_code(tmp_path: Path) -> None:
    """With `2>&-` a warning had nowhere to go and turned a clean run into exit 1."""
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(FOG_CHAIN))
    done = _process(["check", str(plan), str(plan)], tmp_path, shell_suffix=" 2>&-")
    assert done.returncode == 0 and b"All checks passed (1 plan in 1 file)" in done.stdout
    plan.write_text(json.dumps([{**FOG_CHAIN[0], "agent": "Nope"}]))
    done = _process(["check", str(plan), str(plan)], tmp_path, shell_suffix=" 2>&-")
    assert done.returncode == 1 and b"PC201" in done.stdout


NON_ASCII_PLAN = [{**FOG_CHAIN[0], "inputs": dict.fromkeys(
    FOG_CHAIN[0]["inputs"], "bild_\u00fc\u20ac\U0001f30a.jpg")}, *FOG_CHAIN[1:]]


def test_json_output_is_valid_json_under_an_ascii_locale(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(NON_ASCII_PLAN, ensure_ascii=False), encoding="utf-8")
    done = _process(["fmt", "--to", "json", str(plan)], tmp_path, env=ASCII_LOCALE)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.decode("ascii")) == NON_ASCII_PLAN


@pytest.mark.parametrize("name", [b"pl\xc3\xa4n.json", b"b\xffd.json"])
def test_sarif_names_any_file_name_under_any_locale(tmp_path: Path, name: bytes) -> None:
    """A non-UTF-8 file name with `--format sarif`, and `plän.json` under an ASCII locale,
    were UnicodeEncodeErrors with no SARIF written."""
    path = os.path.join(os.fsencode(tmp_path), name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('[{"agent": "GeoChat", "step": 0}]')
    shown = os.fsdecode(name) if name.isascii() else name.decode("utf-8", "surrogateescape")
    for env in ({}, ASCII_LOCALE):
        done = _process(["--format", "sarif", shown], tmp_path, env=env)
        assert done.returncode == 1, done.stderr
        log = json.loads(done.stdout.decode("utf-8"))
        uris = {location["physicalLocation"]["artifactLocation"]["uri"]
                for result in log["runs"][0]["results"] for location in result["locations"]}
        assert uris == {urllib.parse.quote(name)}


# --------------------------------------------------------------------------- the Python API

odd_keys = st.one_of(st.integers(), st.none(), st.booleans(), st.tuples(st.text(max_size=3)),
                     st.floats(allow_nan=False))


@_SETTINGS
@given(key=odd_keys, where=st.sampled_from(["inputs", "dependence_content", "step", "plan"]))
def test_the_api_reports_keys_json_cannot_hold(key: Any, where: str) -> None:
    """`plancheck.check` of a plan whose `inputs` had a non-string key was a TypeError in
    lowering (an internal error)."""
    import plancheck

    plan: Any = json.loads(json.dumps(FOG_CHAIN))
    if where == "inputs":
        plan[1]["inputs"][key] = "x.tif"
    elif where == "dependence_content":
        plan[1]["dependence_content"] = {key: ["restored_image_path"]}
    elif where == "step":
        plan[0][key] = 1
    else:
        plan = {"plan": plan, key: 0}
    report = plancheck.check(plan)
    codes = [d.code for d in report.diagnostics]
    assert "PC002" not in codes
    assert codes == ["PC100"] and "is not a string" in report.diagnostics[0].message


# --------------------------------------------------------------------------- links


def test_a_dangling_link_in_a_walk_is_said(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """It was skipped without a word: a plan meant to be checked, silently not checked."""
    folder = tmp_path / "plans"
    folder.mkdir()
    (folder / "good.json").write_text(json.dumps(FOG_CHAIN))
    (folder / "moved.json").symlink_to(tmp_path / "elsewhere" / "moved.json")
    (folder / "notes").symlink_to(tmp_path / "nowhere")  # not a plan's name: nothing to say
    code = main(["check", "--format", "concise", str(folder)])
    out = capsys.readouterr().out
    assert code == 0  # a warning: nothing there failed a check
    assert (f"warning[PC117] {folder / 'moved.json'} is a dangling symbolic link (to "
            f"{tmp_path / 'elsewhere' / 'moved.json'}, which does not exist)") in out
    assert "notes" not in out
