"""Project configuration: ``[tool.plancheck]`` in pyproject.toml, or a ``plancheck.toml``.

Discovery walks up from the current directory; in each directory ``plancheck.toml`` wins over
``pyproject.toml``, and a pyproject.toml without a ``[tool.plancheck]`` table is passed over (as
ruff does). ``--config FILE`` names the file instead. Keys (kebab-case)::

    select = ["PC2", "PC301"]          # codes, prefixes or names to report
    ignore = ["alias-key"]             # ... not to report
    severity = { PC302 = "error", "PC1" = "info" }
    tools = "tools/pool.wf"            # default toolset, relative to the config file
    fail-level = "warning"
    format = "concise"
    strict-json = true
    max-size = "64M"                   # largest input `check` reads (an integer: bytes)
    policy = "policies/agent.wf"       # policies every plan is checked against (--policy)
    provenance = false                 # no flows inferred from tool results (--no-provenance)

Start-up time matters (``plancheck plan.json`` must stay fast), so pydantic is imported only
when a configuration table has actually been found, and a pyproject.toml that never mentions
plancheck is not even parsed.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any, NamedTuple

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.severity import Severity
from plancheck.diagnostics.span import Span
from plancheck.fileio import not_utf8, read_bytes_limited, read_text_limited

CONFIG_NAMES = ("plancheck.toml", "pyproject.toml")  # precedence within one directory
_MAY_HAVE_TABLE = re.compile(r"""tool\s*\.\s*["']?plancheck|^\s*\[\s*tool\s*\]""", re.MULTILINE)
KEYS = ("select", "ignore", "severity", "tools", "fail-level", "format", "strict-json",
        "max-size", "policy", "provenance")


class Config(NamedTuple):
    """Settings read from a file; ``None`` means "not set" (the command line or default wins).

    (A named tuple: cheaper to define at start-up than a dataclass.)
    """

    path: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    severity: tuple[tuple[str, Severity], ...] = ()
    tools: str | None = None
    fail_level: Severity | None = None
    format: str | None = None
    strict_json: bool | None = None
    max_size: int | None = None
    policy: str | None = None
    provenance: bool | None = None


EMPTY = Config()


class ConfigError(Exception):
    """The configuration file is unreadable or invalid; ``diagnostics`` are PC003 (or PC001)."""

    def __init__(self, diagnostics: list[Diagnostic], text: str = "") -> None:
        super().__init__("; ".join(f"{d.file}: {d.message}" if d.file else d.message
                                   for d in diagnostics))
        self.diagnostics = diagnostics
        self.text = text  # the file's text, for source excerpts


# --------------------------------------------------------------------------- discovery


def find_config(start: Path | None = None) -> Path | None:
    """The nearest configuration file at or above ``start`` (default: the current directory)."""
    from plancheck.fileio import is_file

    directory = (start or Path.cwd()).resolve()
    for candidate in (directory, *directory.parents):
        for name in CONFIG_NAMES:
            path = candidate / name
            if is_file(path) and (name != "pyproject.toml" or _has_plancheck_table(path)):
                return path
    return None


def _has_plancheck_table(path: Path) -> bool:
    try:
        data = read_bytes_limited(path)
    except OSError:
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        # Not UTF-8 (one stray byte, or UTF-16): whether the table is there cannot be read,
        # but a file that names plancheck is taken as ours, and load_config says why it
        # cannot be read (PC001), as for a plancheck.toml, rather than pass it over unsaid.
        return any(word in data for word in _PLANCHECK_SPELLINGS)
    # Cheap pre-check, because importing and running a TOML parser costs start-up time: the
    # table can only be there if the file says `tool.plancheck` (a header or a dotted key) or
    # has a bare `[tool]` table.
    if not _MAY_HAVE_TABLE.search(text):
        return False
    import tomllib

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        # A broken pyproject.toml that visibly has our table is ours, and load_config reports
        # the TOML error; one that does not is somebody else's problem and is passed over.
        return bool(re.search(r"^\s*\[\s*tool\s*\.\s*plancheck\b", text, re.MULTILINE))
    tool = document.get("tool")
    return isinstance(tool, dict) and "plancheck" in tool


_PLANCHECK_SPELLINGS = tuple("plancheck".encode(codec)
                             for codec in ("utf-8", "utf-16-le", "utf-16-be"))


def _not_utf8(error: UnicodeDecodeError) -> str:
    """Why a configuration file cannot be read as TOML text, in words."""
    return f"{not_utf8(error)}; TOML files are UTF-8"


def discover(explicit: str | None = None, start: Path | None = None) -> Config:
    """The configuration to use: ``explicit`` if given, else the nearest file, else defaults."""
    if explicit is not None:
        return load_config(Path(explicit), explicit=True)
    found = find_config(start)
    return load_config(found) if found is not None else EMPTY


# --------------------------------------------------------------------------- loading


def load_config(path: Path, *, explicit: bool = False) -> Config:
    """Read and validate one configuration file; raise ConfigError naming the file and key."""
    import tomllib

    file = str(path)
    try:
        text = read_text_limited(path)
    except FileNotFoundError:
        raise ConfigError([make("PC001", f"cannot read configuration {file}: no such file",
                                data={"path": file}).with_context(file=file, record=None)]
                          ) from None
    except (OSError, UnicodeDecodeError) as error:
        why = _not_utf8(error) if isinstance(error, UnicodeDecodeError) else error
        raise ConfigError([make("PC001", f"cannot read configuration {file}: {why}",
                                data={"path": file}).with_context(file=file, record=None)]
                          ) from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line, col = _toml_error_position(str(error))
        raise ConfigError([_error(file, f"invalid TOML: {error}",
                                  _point(file, text, line, col))], text) from None
    in_pyproject = path.name == "pyproject.toml"
    if in_pyproject:
        tool = document.get("tool")
        table = tool.get("plancheck") if isinstance(tool, dict) else None
        if table is None:
            if explicit:
                raise ConfigError([_error(file, "this pyproject.toml has no [tool.plancheck] table",
                                          None)], text)
            return Config(path=path)
        if not isinstance(table, dict):
            raise ConfigError([_error(file, "`tool.plancheck` must be a table",
                                      _locate(text, "plancheck", in_pyproject))], text)
    else:
        table = document
    return _validate(table, path, text, in_pyproject)


def _validate(table: dict[str, Any], path: Path, text: str, in_pyproject: bool) -> Config:
    from pydantic import ValidationError

    file = str(path)
    try:
        settings = _settings_model().model_validate(table)
    except ValidationError as failure:
        diagnostics = []
        for problem in failure.errors():
            parts = [part for part in problem["loc"] if part != "[key]"]
            names = [str(part) for part in parts if not isinstance(part, int)]
            key = "".join(f"[{part}]" if isinstance(part, int) else f".{part}"
                          for part in parts).lstrip(".") or "(table)"
            if problem["type"] == "extra_forbidden":
                message = (f"unknown key `{key}` (plancheck understands "
                           + ", ".join(f"`{k}`" for k in KEYS) + ")")
            else:
                message = f"`{key}`: {_clean(problem['msg'])}"
                if problem["type"] != "value_error" and "input" in problem:
                    message += f" (got {_show(problem['input'])})"
            where = _locate(text, names[-1] if names else "", in_pyproject)
            diagnostics.append(_error(file, message, where, key=key))
        raise ConfigError(diagnostics, text) from None
    tools = settings.tools
    if tools is not None:
        from plancheck.corpus.dora_toolset import DORA_NAME
        from plancheck.corpus.toolsets import BUILTIN_ALIASES

        # A named toolset (`dora`, as `--tools dora`) is a name, not a file beside the config.
        if tools not in BUILTIN_ALIASES and tools != DORA_NAME and not Path(tools).is_absolute():
            tools = str(path.parent / tools)  # relative to the file, not to where we run
    policy = settings.policy
    if policy is not None and not Path(policy).is_absolute():
        policy = str(path.parent / policy)
    return Config(
        path=path,
        policy=policy,
        select=tuple(settings.select) if settings.select is not None else None,
        ignore=tuple(settings.ignore) if settings.ignore is not None else None,
        severity=_ordered_overrides(settings.severity),
        tools=tools,
        fail_level=Severity.parse(settings.fail_level) if settings.fail_level else None,
        format=settings.format,
        strict_json=settings.strict_json,
        max_size=settings.max_size,
        provenance=settings.provenance,
    )


def _ordered_overrides(table: dict[str, str]) -> tuple[tuple[str, Severity], ...]:
    """Most specific first: CheckOptions.severity_for takes the first pattern that matches, so
    ``PC302 = "error"`` must win over ``PC3 = "info"`` whatever order the file lists them in."""

    def specificity(pattern: str) -> tuple[int, int]:
        is_prefix = pattern.startswith("PC") and len(pattern) < 5
        return (1 if is_prefix else 0, -len(pattern))

    return tuple(
        (pattern, Severity.parse(level))
        for pattern, level in sorted(table.items(), key=lambda item: specificity(item[0]))
    )


# --------------------------------------------------------------------------- the schema


@functools.cache
def _settings_model() -> Any:
    """The pydantic model, built on first use so that importing this module stays cheap."""
    from typing import Annotated, Literal

    from pydantic import (
        AfterValidator,
        BaseModel,
        ConfigDict,
        Field,
        StrictBool,
        StrictInt,
        StrictStr,
    )

    from plancheck.render.registry import format_choices

    level = Literal["error", "warning", "info"]
    # Codes are checked one by one (not by a validator of the whole list or table), so that a
    # bad code and a bad severity in the same table are both reported.
    code = Annotated[StrictStr, AfterValidator(_code_pattern)]

    def format_name(name: str) -> str:
        formats = format_choices()  # `--format`'s list: the registry's, then the plugins'
        if name not in formats:
            raise ValueError("must be one of " + ", ".join(formats))
        return name

    class Settings(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        select: list[code] | None = None
        ignore: list[code] | None = None
        severity: dict[code, level] = Field(default_factory=dict)
        tools: StrictStr | None = None
        fail_level: level | None = Field(default=None, alias="fail-level")
        format: Annotated[StrictStr, AfterValidator(format_name)] | None = None
        strict_json: StrictBool | None = Field(default=None, alias="strict-json")
        max_size: Annotated[StrictStr | StrictInt, AfterValidator(_size)] | None = Field(
            default=None, alias="max-size")
        policy: StrictStr | None = None
        provenance: StrictBool | None = None

    return Settings


def _size(value: str | int) -> int:
    """A size as ``--max-size`` takes it (``64M``), or a number of bytes; else ValueError."""
    from plancheck.fileio import parse_size

    return parse_size(str(value))


def _code_pattern(item: str) -> str:
    """A code (PC201), a prefix (PC2) or a name (unknown-tool), normalised; else ValueError."""
    from plancheck.diagnostics.codes import BY_NAME, CODES

    text = item.strip()
    upper = text.upper()
    if text in BY_NAME:
        return text
    if upper in CODES or (upper.startswith("PC") and any(c.startswith(upper) for c in CODES)):
        return upper
    raise ValueError(f"`{item}` is not a diagnostic code, prefix or name")


# --------------------------------------------------------------------------- messages


def _error(file: str, message: str, span: Span | None, key: str | None = None) -> Diagnostic:
    data: dict[str, Any] = {"path": file}
    if key is not None:
        data["key"] = key
    if span is not None:
        span = span._replace(file=file)
    return make("PC003", message, primary=span, data=data).with_context(file=file, record=None)


def _clean(message: str) -> str:
    # pydantic prefixes messages raised by validators with "Value error, ".
    return message.removeprefix("Value error, ")


def _show(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _point(file: str, text: str, line: int, col: int) -> Span | None:
    if line < 1:
        return None
    lines = text.splitlines()
    width = len(lines[line - 1]) if line <= len(lines) else 0
    col = max(1, min(col, width + 1))
    return Span(file, line, col, line, col + 1)


def _toml_error_position(message: str) -> tuple[int, int]:
    found = re.search(r"\(at line (\d+), column (\d+)\)", message)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def _locate(text: str, key: str, in_pyproject: bool) -> Span | None:
    """Best effort: where ``key = ...`` is written in the plancheck table (None if not found).

    Only for pointing at the offending line in an error message; the values themselves come
    from tomllib.
    """
    lines = text.splitlines()
    start = 0
    if in_pyproject:
        header = re.compile(r"^\s*\[\s*tool\s*\.\s*plancheck\b")
        start = next((i for i, line in enumerate(lines) if header.match(line)), 0)
    if not key:
        return Span("", start + 1, 1, start + 1, len(lines[start]) + 1) if lines else None
    pattern = re.compile(r"""(^|[\s{,.])(["']?)""" + re.escape(key) + r"""\2\s*=""")
    for number in range(start, len(lines)):
        found = pattern.search(lines[number])
        if found:
            col = found.start(2) + 1
            end = len(lines[number].rstrip())
            return Span("", number + 1, col, number + 1, max(end + 1, col + 1))
    return None
