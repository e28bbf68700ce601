"""Every code block of the README and of docs/ runs in the suite, or is marked as output.

The fence's language says which:

``python title="PATH"``
    an excerpt of the file PATH, which must exist: compiled, not run.
``python``
    run, the blocks of one page in order in one namespace, in a scratch directory that holds
    ``examples/``; a ``# -> TEXT`` comment promises that a printed line contains TEXT.
``console``
    a transcript: each ``$ COMMAND`` (a line ending in ``\\`` goes on) is run by bash with
    ``plancheck`` on the path, and the lines after it are what it must print, in order; a line
    ``...`` stands for any number of lines. The scratch directory holds ``examples/`` and has
    the shared data at ``../shared`` (a block naming it is skipped when the data is absent).
``json``, ``toml``, ``yaml``, ``wf``
    data: each must parse (``wf`` with plancheck's DSL parser).
``sh``
    install commands only (``python3 -m venv``, ``pip install``, ``pytest``); the extras they
    name must exist, and the README's first block is what CI runs (``.ci/run``).
``text``
    output, or anything else shown and not run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
RUN = {"python", "console", "python-excerpt"}
DATA = {"json", "toml", "yaml", "wf"}
LANGUAGES = RUN | DATA | {"sh", "text"}

_FENCE = re.compile(r"^(?P<indent> *)(?P<ticks>`{3,})(?P<lang>[\w-]*)(?P<info>[^\n]*)\n"
                    r"(?P<body>.*?)^(?P=indent)(?P=ticks)[ \t]*$", re.MULTILINE | re.DOTALL)
_TITLE = re.compile(r'title="([^"]+)"')


def documents() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("**/*.md"))]


def blocks(path: Path) -> list[tuple[int, str, str]]:
    """(line, language, body) of each fenced block, the body dedented."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        indent = len(match["indent"])
        body = "".join(line[indent:] if line[:indent].strip() == "" else line
                       for line in match["body"].splitlines(keepends=True))
        lang = match["lang"]
        title = _TITLE.search(match["info"])
        if lang == "python" and title:  # an excerpt of a source file: PATH must exist
            lang = "python-excerpt"
            body = f"# {title.group(1)}\n{body}"
        found.append((text.count("\n", 0, match.start()) + 1, lang, body))
    return found


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


ALL = [(doc, line, lang, body) for doc in documents() for line, lang, body in blocks(doc)]


@pytest.mark.parametrize("doc", documents(), ids=_id)
def test_every_block_says_what_it_is(doc: Path) -> None:
    wrong = [f"{_id(doc)}:{line}: ```{lang or '(none)'}" for line, lang, _ in blocks(doc)
             if lang not in LANGUAGES]
    assert not wrong, f"fence languages must be one of {sorted(LANGUAGES)}: {wrong}"


def test_fences_are_found() -> None:
    """The parser above finds the blocks (a test that found none would pass vacuously)."""
    langs = [lang for _doc, _line, lang, _body in ALL]
    assert langs.count("python") >= 5 and langs.count("console") >= 3


# ------------------------------------------------------------------------------ data


def _parse_dsl(text: str) -> None:
    from plancheck.dsl.parser import parse_dsl

    module = parse_dsl(text, "block.wf")
    assert not module.diagnostics, module.diagnostics


PARSERS = {"json": json.loads, "toml": tomllib.loads, "yaml": yaml.safe_load, "wf": _parse_dsl}


@pytest.mark.parametrize(("doc", "line", "lang", "body"),
                         [b for b in ALL if b[2] in DATA],
                         ids=[f"{_id(b[0])}:{b[1]}" for b in ALL if b[2] in DATA])
def test_data_blocks_parse(doc: Path, line: int, lang: str, body: str) -> None:
    PARSERS[lang](body)


def test_excerpts_compile_and_name_files_that_exist() -> None:
    for doc, line, lang, body in ALL:
        if lang == "python-excerpt":
            path = body.splitlines()[0][2:]
            assert (ROOT / path).exists(), f"{_id(doc)}:{line}: no file {path}"
            # A fragment may be a dictionary's or a call's items: compiled in its brackets.
            errors = []
            for wrapped in (body, f"{{\n{body}\n}}", f"(\n{body}\n)", f"[\n{body}\n]"):
                try:
                    compile(wrapped, f"{_id(doc)}:{line}", "exec")
                    break
                except SyntaxError as error:
                    errors.append(error)
            else:
                raise errors[0]


# ------------------------------------------------------------------------------ sh


def _extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(project["project"]["optional-dependencies"])


_ALLOWED_SH = re.compile(r"^(python3 -m venv \S+|(\S*/)?pip install .*|(\S*/)?python -m pytest.*|"
                         r"(\S*/)?plancheck \S+.*)$")


def test_sh_blocks_only_install() -> None:
    extras = _extras()
    for doc, line, lang, body in ALL:
        if lang != "sh":
            continue
        for command in (c.strip() for text in body.splitlines() for c in text.split("&&")):
            if not command or command.startswith("#"):
                continue
            command = re.sub(r"^(\w+=\S+ )+", "", command)  # environment settings
            assert _ALLOWED_SH.match(command), f"{_id(doc)}:{line}: not an install: {command}"
            for named in re.findall(r"\[([\w,-]+)\]", command):
                assert set(named.split(",")) <= extras, f"{_id(doc)}:{line}: extras {named}"


def test_the_readme_setup_is_what_ci_runs() -> None:
    """The README's first block: the install CI runs, then the test command it runs."""
    line, lang, body = blocks(README)[0]
    assert (line, lang) == (3, "sh")
    first, second = body.strip().splitlines()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install = first.split(" && .venv/bin/plancheck ")[0]
    assert install.split(" && ")[0] == "python3 -m venv .venv"
    pip = install.split(" && ")[1]
    # CI sets PLANCHECK_COMPILE=1 before the same pip command, and runs the same pytest.
    assert pip in ci.replace("PLANCHECK_COMPILE=1 ", "")
    assert second in ci.replace("PLANCHECK_EXPECT_COMPILED=1 ", "")
    # The tests the README's command leaves out (marked slow) run in CI too, on both builds.
    assert f"{second} -m slow" in ci.replace("PLANCHECK_EXPECT_COMPILED=1 ", "")
    assert '-m "not llm"' in ci


# ------------------------------------------------------------------------------ python


def _scratch(tmp_path: Path) -> Path:
    """A directory holding examples/, with the shared data at ../shared when there is any."""
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copytree(ROOT / "examples", work / "examples")  # a command may rewrite a file
    from plancheck.corpus.paths import release_dir

    shared = release_dir().parent
    if shared.exists():
        (tmp_path / "shared").symlink_to(shared)
    return work


PYTHON_DOCS = sorted({doc for doc, _line, lang, _body in ALL if lang == "python"})


@pytest.mark.parametrize("doc", PYTHON_DOCS, ids=_id)
def test_python_blocks_run_and_print_what_they_say(doc: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_scratch(tmp_path))
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for line, lang, body in blocks(doc):
        if lang != "python":
            continue
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            exec(compile("\n" * (line) + body, str(doc), "exec"), namespace)
        printed = output.getvalue().splitlines()
        for claim in re.findall(r"#\s*->\s*(.+)$", body, re.MULTILINE):
            claim = claim.split("   (")[0].strip()
            assert any(claim in text for text in printed), (f"{_id(doc)}:{line}", claim, printed)


# ------------------------------------------------------------------------------ console


def transcript(body: str) -> list[tuple[str, list[str]]]:
    """The (command, expected lines) of a console block."""
    steps: list[tuple[str, list[str]]] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        text = lines[i]
        if text.startswith("$ "):
            command = text[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            steps.append((command, []))
        elif steps:
            steps[-1][1].append(text.rstrip())
        else:
            raise ValueError(f"output before any command: {text!r}")
        i += 1
    return steps


def _line_matches(expected: str, actual: str) -> bool:
    if "..." not in expected:
        return expected == actual
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is ``expected`` with each ``...`` line standing for any lines, and
    ``...`` inside a line for any text."""
    if not expected:
        return True
    if expected[0].strip() == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and _line_matches(expected[0], actual[0]) and matches(expected[1:],
                                                                             actual[1:])


CONSOLE = [b for b in ALL if b[2] == "console"]


@pytest.mark.parametrize(("doc", "line", "lang", "body"), CONSOLE,
                         ids=[f"{_id(b[0])}:{b[1]}" for b in CONSOLE])
def test_console_blocks_print_what_they_show(doc: Path, line: int, lang: str, body: str,
                                             tmp_path: Path,
                                             request: pytest.FixtureRequest) -> None:
    if "../shared/" in body:
        request.getfixturevalue("parity_cases")  # skips (or fails in CI) without the data
    work = _scratch(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "plancheck"
    shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m plancheck \"$@\"\n")
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "100",
           "PLANCHECK_CACHE_DIR": str(tmp_path / "cache")}
    for command, expected in transcript(body):
        done = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True,
                              text=True, timeout=300, check=False)
        actual = [text.rstrip() for text in (done.stdout + done.stderr).splitlines()]
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
        assert matches(expected, actual), (
            f"{_id(doc)}:{line}: $ {command}\nexpected:\n" + "\n".join(expected)
            + "\nprinted:\n" + "\n".join(actual))
