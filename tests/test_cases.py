"""Fixture cases: one small input per diagnostic code, with the exact diagnostics expected.

The cases live in ``tests/data/cases/check-*.test`` (in the style of mypy's
``test-data/unit/check-*.test``). A file holds many cases::

    -- A line starting with "--" is a comment, in every section.
    [case pc109_numbered_from_one]
    [
      {"agent": "GeoChat", "step": 1, ...}
    ]
    [out]
    plan.json:2:29: error PC109 step-numbering ~ is numbered 1

Sections of a case (each header on a line of its own):

``[case NAME]``
    starts a case; NAME is the pytest id. The lines after it, up to the next section, are the
    main input, written to ``plan.json``.
``[file NAME]``, ``[file NAME encoding=ENCODING]``
    the lines after it are written to ``NAME`` (the first ``[file]`` of a case with no body
    right after ``[case]`` is its main input), in UTF-8 or in ``ENCODING`` (``latin-1`` makes
    a file that is not UTF-8 out of a fixture that is); with only blank lines after it, the
    file holds just those line breaks (none: an empty file).
``[tools]``
    an inline DSL toolset, written to ``tools.wf`` and passed as ``--tools tools.wf``.
``[gold]``
    a gold plan (or benchmark JSONL), written to ``gold.json`` and passed as ``--gold gold.json``.
``[flags ARGS]``
    options appended to the default command.
``[cmd ARGS]``
    the whole command line instead of the default ``check MAIN``; ``$DATA`` stands for the
    official release directory (``PLANCHECK_DATA``; the case is skipped when it is absent and
    the variable unset). ``check`` and ``toolset lint`` get ``--format json``; ``score`` gets
    ``--per-item items.jsonl --bootstrap 0``; ``check``/``score``/``fix`` get the
    ``[tools]``/``[gold]`` options when those sections are present.
``[exit N]``
    the expected exit status (default: 1 if an expected line is an error, else 0).
``[api]``
    also run the main input through ``plancheck.check(Path(MAIN), toolset)``, which must report
    the same diagnostics.
``[python]``
    instead of a command: Python code run with ``plancheck`` imported, in the case's directory,
    that sets ``report`` to a report of the Python API; its diagnostics are compared. (For
    what only the API can be given, such as an IR plan built in memory.)
``[out]``
    the expected diagnostics, one a line, the whole set: a case fails when one is missing or
    another is reported (``pytest tests/test_cases.py --update-cases`` rewrites the section of
    each failing case to what is reported, keeping the lines that still match). A line reads::

        FILE[RECORD]:LINE:COL: SEVERITY CODE NAME ~ MESSAGE FRAGMENT

    ``[RECORD]`` only for a diagnostic on one record of a batch; ``:LINE:COL`` only when the
    diagnostic has a resolved position; ``~ FRAGMENT`` is optional and must occur in the
    message. FILE is relative to the case's directory, ``$DATA/...`` in the release, and
    ``<input>`` when the diagnostic names no file.

Diagnostics are read from what the command writes: the JSON report on standard output, the
per-item lines of ``plancheck score`` (whose FILE is the per-item file ``items.jsonl``, and
RECORD the item's id), and diagnostics printed on standard error (``error[PC001]: ...``,
followed by ``--> FILE:LINE:COL`` when rendered with a location). Names of codes printed
without one come from ``plancheck explain``.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import plancheck
from plancheck.cli import main
from plancheck.diagnostics.codes import CODES

CASES_DIR = Path(__file__).parent / "data" / "cases"
MAIN = "plan.json"
TOOLS_FILE = "tools.wf"
GOLD_FILE = "gold.json"
ITEMS_FILE = "items.jsonl"

_SECTION = re.compile(
    r"^\[(?P<kind>case|file|tools|gold|flags|cmd|exit|api|python|out)(?: (?P<arg>.*))?\]$"
)
_OUT_LINE = re.compile(
    r"^(?P<file>[^\[\]]*?)(?:\[(?P<record>[^\]]*)\])?(?::(?P<line>\d+):(?P<col>\d+))?: "
    r"(?P<severity>error|warning|info) (?P<code>PC\d{3}) (?P<name>[a-z][a-z-]*)"
    r"(?: ~ (?P<fragment>.+))?$"
)
# A diagnostic printed on standard error: `[plancheck: ][FILE[:LINE:COL]: ]error[PC001]: message`.
_ERR_HEAD = re.compile(
    r"^(?:plancheck: )?(?:(?P<file>\S[^\[]*?)(?::(?P<line>\d+):(?P<col>\d+))?: )?"
    r"(?P<severity>error|warning|info)"
    r"\[(?P<code>PC\d{3})\]:? ?(?P<message>.*)$"
)
_ERR_WHERE = re.compile(
    r"^\s+--> (?P<file>.*?)(?::(?P<line>\d+):(?P<col>\d+))?(?: \(record (?P<record>.*)\))?$"
)


# --------------------------------------------------------------------------- the cases


@dataclass
class Case:
    name: str
    source: str  # "check-names.test:12", for failure messages
    files: dict[str, str] = field(default_factory=dict)
    encodings: dict[str, str] = field(default_factory=dict)  # files not written in UTF-8
    main: str | None = None
    tools: str | None = None
    gold: str | None = None
    flags: list[str] = field(default_factory=list)
    command: list[str] | None = None
    exit: int | None = None
    api: bool = False
    python: str | None = None
    out: list[str] = field(default_factory=list)


def _body(lines: list[str]) -> str:
    return "\n".join(lines).strip("\n") + "\n"


def parse_cases(path: Path) -> Iterator[Case]:
    case: Case | None = None
    target: str | None = None  # where body lines go: a file name, "out", or None
    body: list[str] = []

    def flush() -> None:
        if case is None or target is None:
            return
        if target == "out":
            case.out.extend(line for line in body if line.strip())
        elif target == "<tools>":
            case.tools = _body(body)
        elif target == "<gold>":
            case.gold = _body(body)
        elif target == "<python>":
            case.python = _body(body)
        elif body and any(line.strip() for line in body):
            case.files[target] = _body(body)
            case.main = case.main or target
        elif target != MAIN:  # a [file] with nothing in it: an empty file (blank lines kept)
            case.files[target] = "\n" * len(body)
            case.main = case.main or target

    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        header = _SECTION.match(line)
        if header is None:
            if line.startswith("--"):
                continue  # a comment, in any section (so no input line may start with --)
            if target is not None:
                body.append(line)
            elif line.strip():
                raise ValueError(f"{path.name}:{number}: text outside a section: {line!r}")
            continue
        kind, arg = header["kind"], (header["arg"] or "").strip()
        if kind == "case":
            flush()
            if case is not None:
                yield case
            case, target, body = Case(arg, f"{path.name}:{number}"), MAIN, []
            continue
        if case is None:
            raise ValueError(f"{path.name}:{number}: [{kind}] before any [case]")
        if kind in ("file", "tools", "gold", "python", "out"):
            flush()
            if kind == "file" and " encoding=" in arg:
                arg, encoding = arg.split(" encoding=", 1)
                case.encodings[arg] = encoding.strip()
            target = {"file": arg, "tools": "<tools>", "gold": "<gold>", "python": "<python>",
                      "out": "out"}[kind]
            body = []
        elif kind == "flags":
            case.flags.extend(shlex.split(arg))
        elif kind == "cmd":
            case.command = shlex.split(arg)
        elif kind == "exit":
            case.exit = int(arg)
        elif kind == "api":
            case.api = True
    flush()
    if case is not None:
        yield case


def all_cases() -> list[Case]:
    return [case for path in sorted(CASES_DIR.glob("check-*.test")) for case in parse_cases(path)]


CASES = all_cases()


# --------------------------------------------------------------------------- diagnostics


@dataclass(frozen=True)
class Expected:
    file: str
    record: str | None
    line: int | None
    col: int | None
    severity: str
    code: str
    name: str
    fragment: str | None

    @classmethod
    def parse(cls, text: str) -> Expected:
        found = _OUT_LINE.match(text.strip())
        if found is None:
            raise ValueError(f"not an [out] line: {text!r}")
        line = found["line"]
        return cls(found["file"], found["record"], int(line) if line else None,
                   int(found["col"]) if line else None, found["severity"], found["code"],
                   found["name"], found["fragment"])

    def key(self) -> tuple[Any, ...]:
        return (self.file, self.record, self.line, self.col, self.severity, self.code,
                self.name)


@dataclass(frozen=True)
class Actual:
    file: str
    record: str | None
    line: int | None
    col: int | None
    severity: str
    code: str
    name: str
    message: str

    def key(self) -> tuple[Any, ...]:
        return (self.file, self.record, self.line, self.col, self.severity, self.code,
                self.name)

    def render(self) -> str:
        record = f"[{self.record}]" if self.record is not None else ""
        where = f":{self.line}:{self.col}" if self.line is not None else ""
        return (f"{self.file}{record}{where}: {self.severity} {self.code} {self.name}"
                f" ~ {self.message}")


@pytest.fixture(scope="module")
def code_names() -> dict[str, str]:
    """Code -> name, as ``plancheck explain`` lists them."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["explain"]) == 0
    names = dict(re.findall(r"^\s+(PC\d{3})\s+([a-z][a-z-]*)\s", out.getvalue(), re.MULTILINE))
    assert names, "plancheck explain listed no codes"
    return names


class Paths:
    """Turns the paths a command printed into the fixture's notation."""

    def __init__(self, root: Path, data: Path | None) -> None:
        self.prefixes = [(str(root.resolve()) + "/", ""), (str(root) + "/", "")]
        if data is not None:
            self.prefixes.insert(0, (str(data) + "/", "$DATA/"))
            self.prefixes.insert(1, (str(data), "$DATA"))

    def show(self, file: str | None) -> str:
        if not file:
            return "<input>"
        for prefix, replacement in self.prefixes:
            if file.startswith(prefix):
                return replacement + file[len(prefix):]
        return file


def from_json(document: Any, paths: Paths) -> list[Actual]:
    found = []
    for item in document.get("diagnostics", []):
        span = item.get("span") or {}
        line = span.get("start_line") or None
        found.append(Actual(paths.show(item.get("file")), item.get("record"), line,
                            span.get("start_col") if line else None, item["severity"],
                            item["code"], item["name"], item["message"]))
    return found


def from_items(text: str) -> list[Actual]:
    found = []
    for line in text.splitlines():
        item = json.loads(line)
        record = item.get("id", item.get("task_id"))
        for entry in item.get("diagnostics") or []:
            found.append(Actual(ITEMS_FILE, None if record is None else str(record), None, None,
                                entry["severity"], entry["code"], entry["name"],
                                entry["message"]))
    return found


def from_stderr(text: str, paths: Paths, names: dict[str, str]) -> list[Actual]:
    found: list[Actual] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        head = _ERR_HEAD.match(line)
        if head is None:
            continue
        file, record = head["file"], None
        line_no = int(head["line"]) if head["line"] else None
        col = int(head["col"]) if head["col"] else None
        where = _ERR_WHERE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if where is not None:
            file = None if where["file"] == "<input>" else where["file"]
            record = where["record"]
            line_no = int(where["line"]) if where["line"] else None
            col = int(where["col"]) if where["col"] else None
        code = head["code"]
        found.append(Actual(paths.show(file), record, line_no, col, head["severity"], code,
                            names.get(code, "?"), head["message"]))
    return found


def from_report(report: Any, paths: Paths) -> list[Actual]:
    """Diagnostics of an API :class:`Report`, through its documented ``to_dict``."""
    return from_json(report.to_dict(), paths)


def compare(expected: list[Expected], actual: list[Actual]) -> tuple[list[str], list[str]]:
    """(expected lines not reported, reported diagnostics not expected)."""
    unused = list(actual)
    missing = []
    # Lines with a fragment first: they are the pickier ones.
    for want in sorted(expected, key=lambda e: e.fragment is None):
        match = next((a for a in unused if a.key() == want.key()
                      and (want.fragment is None or want.fragment in a.message)), None)
        if match is None:
            missing.append(want)
        else:
            unused.remove(match)
    return ([_render_expected(e) for e in missing], [a.render() for a in unused])


def _render_expected(want: Expected) -> str:
    record = f"[{want.record}]" if want.record is not None else ""
    where = f":{want.line}:{want.col}" if want.line is not None else ""
    tail = f" ~ {want.fragment}" if want.fragment else ""
    return f"{want.file}{record}{where}: {want.severity} {want.code} {want.name}{tail}"


# --------------------------------------------------------------------------- running


def command_line(case: Case, data: Path | None) -> list[str]:
    if case.command is None:
        assert case.main is not None, f"{case.name}: no input and no [cmd]"
        args = ["check", case.main, *case.flags]
    else:
        args = [*case.command, *case.flags]
    if data is not None:
        args = [a.replace("$DATA", str(data)) for a in args]
    verb = args[0]
    if verb in ("check", "score", "fix") and case.tools is not None and "--tools" not in args:
        args += ["--tools", TOOLS_FILE]
    if verb in ("check", "score") and case.gold is not None and "--gold" not in args:
        args += ["--gold", GOLD_FILE]
    if (verb == "check" or args[:2] == ["toolset", "lint"]) and "--format" not in args:
        args += ["--format", "json"]
    if verb == "score":
        args += ["--per-item", ITEMS_FILE, "--bootstrap", "0"]
    return args


def run_case(case: Case, root: Path, data: Path | None, names: dict[str, str]
             ) -> tuple[int, list[Actual], str]:
    """Write the case's files under ``root`` (the current directory), run its command and
    return the exit status, the diagnostics and the raw output (for failure messages)."""
    for name, text in case.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding=case.encodings.get(name, "utf-8"))
    if case.tools is not None:
        (root / TOOLS_FILE).write_text(case.tools, encoding="utf-8")
    if case.gold is not None:
        (root / GOLD_FILE).write_text(case.gold, encoding="utf-8")
    args = command_line(case, data)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(args)
    paths = Paths(root, data)
    found: list[Actual] = []
    stdout = out.getvalue()
    if "--format" in args and args[args.index("--format") + 1] == "json" and stdout.strip():
        found += from_json(json.loads(stdout), paths)
    items = root / ITEMS_FILE
    if args[0] == "score" and items.exists():
        found += from_items(items.read_text(encoding="utf-8"))
    found += from_stderr(err.getvalue(), paths, names)
    transcript = f"$ plancheck {shlex.join(args)}\n--- stdout\n{stdout}--- stderr\n{err.getvalue()}"
    return status, found, transcript


def _needs_data(case: Case) -> bool:
    return any("$DATA" in a for a in [*(case.command or []), *case.flags])


def _expected_exit(case: Case, expected: list[Expected]) -> int:
    if case.exit is not None:
        return case.exit
    return 1 if any(e.severity == "error" for e in expected) else 0


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              request: pytest.FixtureRequest, code_names: dict[str, str]) -> None:
    data: Path | None = request.getfixturevalue("release") if _needs_data(case) else None
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    expected = [Expected.parse(line) for line in case.out]
    if case.python is not None:
        scope: dict[str, Any] = {"plancheck": plancheck}
        exec(compile(case.python, case.source, "exec"), scope)
        missing, unexpected = compare(expected, from_report(scope["report"], Paths(tmp_path, data)))
        assert not missing and not unexpected, (
            f"{case.source}: case {case.name}\nmissing: {missing}\nunexpected: {unexpected}")
        return
    status, actual, transcript = run_case(case, tmp_path, data, code_names)
    assert "Traceback" not in transcript, transcript
    missing, unexpected = compare(expected, actual)
    if (missing or unexpected) and request.config.getoption("--update-cases"):
        update_out(case, expected, actual)
        expected = [Expected.parse(line) for line in _kept(expected, actual)]
        missing, unexpected = compare(expected, actual)
    want_exit = _expected_exit(case, expected)
    if missing or unexpected or status != want_exit:
        pytest.fail(
            f"{case.source}: case {case.name}\n"
            f"exit status {status}, expected {want_exit}\n"
            "expected, not reported:\n  " + "\n  ".join(missing or ["(none)"]) + "\n"
            "reported, not expected:\n  " + "\n  ".join(unexpected or ["(none)"]) + "\n"
            "all reported:\n  " + "\n  ".join(a.render() for a in actual) + "\n"
            + transcript,
            pytrace=False,
        )
    if case.api:
        assert case.main is not None
        toolset = plancheck.load_toolset(TOOLS_FILE) if case.tools is not None else None
        report = plancheck.check(Path(case.main), toolset)
        missing, unexpected = compare(expected, from_report(report, Paths(tmp_path, data)))
        assert not missing and not unexpected, (
            f"plancheck.check({case.main!r}) differs from the CLI\n"
            f"missing: {missing}\nunexpected: {unexpected}")


# --------------------------------------------------------------------------- --update-cases


def _kept(expected: list[Expected], actual: list[Actual]) -> list[str]:
    """The [out] lines for ``actual``: an expected line that still matches is kept as written
    (its fragment chosen by hand), any other diagnostic written out whole."""
    unused = list(expected)
    lines = []
    for found in actual:
        match = next((e for e in unused if e.key() == found.key()
                      and (e.fragment is None or e.fragment in found.message)), None)
        if match is None:
            lines.append(found.render())
        else:
            unused.remove(match)
            lines.append(_render_expected(match))
    return lines


def update_out(case: Case, expected: list[Expected], actual: list[Actual]) -> None:
    """Rewrite the [out] section of ``case`` in its file (its comments kept)."""
    path = CASES_DIR / case.source.split(":")[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"[case {case.name}]")
    out = next(i for i in range(start + 1, len(lines)) if lines[i] == "[out]")
    end = next((i for i in range(out + 1, len(lines)) if _SECTION.match(lines[i])), len(lines))
    comments = [line for line in lines[out + 1:end] if line.startswith("--")]
    new = [*comments, *_kept(expected, actual)]
    if end < len(lines):
        new.append("")  # a blank line before the next case
    lines[out + 1:end] = new
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- coverage


def _named_codes() -> set[str]:
    return {Expected.parse(line).code for case in CASES for line in case.out}


def test_every_code_is_named_by_a_fixture() -> None:
    missing = sorted(set(CODES) - _named_codes())
    assert not missing, f"codes no fixture [out] line names: {', '.join(missing)}"


def test_every_code_named_by_a_fixture_exists(code_names: dict[str, str]) -> None:
    for case in CASES:
        for line in case.out:
            want = Expected.parse(line)
            assert want.code in CODES, f"{case.source}: {case.name}: unknown code {want.code}"
            assert code_names[want.code] == want.name, (
                f"{case.source}: {case.name}: {want.code} is `{code_names[want.code]}`, "
                f"not `{want.name}`")


def test_case_names_are_unique() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
