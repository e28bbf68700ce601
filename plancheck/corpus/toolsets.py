"""Load a toolset from what the user names: the built-in pool, a DSL file, a release directory,
a JSON pool in any format of the registry, or a file in a language a format owns (by its
suffix, :func:`plancheck.corpus.pool_registry.pool_format_for_suffix`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from plancheck.corpus.builtin import BUILTIN_NAME, builtin_toolset
from plancheck.corpus.dora_toolset import DORA_NAME, dora_toolset
from plancheck.corpus.pool_errors import ToolsetError
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span
from plancheck.fileio import not_utf8, read_text_limited
from plancheck.ir.nodes import Toolset

if TYPE_CHECKING:
    from plancheck.corpus.pool_format import PoolFormat

# ToolsetError is defined in .pool_errors (the loaders raise it) and offered here too, where
# users load pools.
__all__ = ["BUILTIN_ALIASES", "ToolsetError", "load_toolset"]

BUILTIN_ALIASES = {"builtin", BUILTIN_NAME, ""}


def load_toolset(spec: str | Path | None = None) -> tuple[Toolset, list[Diagnostic]]:
    """Return the toolset and the warnings loading it raised; raise ToolsetError if unusable."""
    if spec is None or str(spec) in BUILTIN_ALIASES:
        return builtin_toolset(), []
    if str(spec) == DORA_NAME:
        return dora_toolset(), []
    from plancheck.fileio import is_dir, path_exists, reason

    path = Path(spec)
    if is_dir(path):
        from plancheck.corpus.release import MANIFEST, release_toolset

        if not path_exists(path / MANIFEST):
            raise ToolsetError([make("PC706", f"{path} has no {MANIFEST}",
                                     data={"path": str(path)})])
        try:
            return release_toolset(path, typed_from=builtin_toolset())
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ToolsetError([make("PC706", f"cannot read the release in {path}: {error}")]
                               ) from None
    try:
        text = read_text_limited(path, "utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:  # unreadable, or not UTF-8 text
        why = ("no such file" if isinstance(error, FileNotFoundError)
               else reason(error) if isinstance(error, OSError) else not_utf8(error))
        raise ToolsetError([make("PC001", f"cannot read toolset {path}: {why}",
                                 data={"path": str(path), "error": why})]) from None
    if path.suffix.lower() == ".json":
        return _json_toolset(text, path)
    from plancheck.corpus.pool_registry import pool_format_for_suffix

    own = pool_format_for_suffix(path.suffix)
    if own is not None and own.parse is not None:  # a format in a language of its own
        return _parsed_toolset(own, text, path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        from plancheck.corpus.pool_formats import read_jsonl_pool  # one tool a line

        return read_jsonl_pool(text, path)
    return dsl_toolset(text, path)


def dsl_toolset(text: str, path: Path) -> tuple[Toolset, list[Diagnostic]]:
    from plancheck.dsl.parser import parse_dsl

    module = parse_dsl(text, str(path))
    errors = [d for d in module.diagnostics if d.severity.name == "ERROR"]
    if not module.toolsets:
        empty = "is empty: it " if not text.strip() else ""
        errors.append(make("PC706", f"{path} {empty}defines no toolset",
                           primary=Span(str(path), 1, 1, 1, 2)))
    if errors:
        raise ToolsetError(errors)
    toolset = module.toolsets[0]
    problems = toolset.problems()
    if any(d.severity.name == "ERROR" for d in problems):
        raise ToolsetError(problems)
    return toolset, module.diagnostics + problems


def _parsed_toolset(pool_format: PoolFormat, text: str, path: Path
                    ) -> tuple[Toolset, list[Diagnostic]]:
    assert pool_format.parse is not None
    try:
        data, spans = pool_format.parse(text, str(path))
    except ValueError as error:  # the format's parser says why it cannot read the file
        raise ToolsetError([make("PC706", f"{path} is not {pool_format.words}: {error}",
                                 primary=Span(str(path), pointer=""),
                                 data={"path": str(path)})]) from None
    from plancheck.corpus.foreign import foreign_toolset

    return foreign_toolset(data, path, pool_format=pool_format, spans=spans)


def _json_toolset(text: str, path: Path) -> tuple[Toolset, list[Diagnostic]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ToolsetError([make("PC706", f"{path} is not valid JSON: {error.msg}",
                                 primary=Span(str(path), error.lineno, error.colno,
                                              error.lineno, error.colno + 1))]) from None
    except (ValueError, RecursionError) as error:  # too deep, or an integer of 4,301+ digits
        raise ToolsetError([make("PC706", f"{path} is not usable JSON: {error}")]) from None
    from plancheck.corpus.foreign import foreign_toolset

    return foreign_toolset(data, path, typed_from=builtin_toolset())
