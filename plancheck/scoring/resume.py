"""``score --resume``: what an interrupted run had scored, kept beside its ``.partial`` file so
that a rerun continues where it stopped instead of starting over.

The state file (:func:`~plancheck.scoring.per_item_writer.state_path`) is JSONL: a header that
says which run wrote it (the gold file, the prediction files, the scoring options: a resume
under other settings would mix two runs' numbers), then one line per prediction scored, in
input order, with every field of its :class:`~plancheck.scoring.item_scorer.ScoredItem`. The
summary of a resumed run is rebuilt from those items exactly, so that it is byte-identical to
the summary of a run that was never interrupted, and no prediction is scored twice.
"""

from __future__ import annotations

import json
import os
from dataclasses import fields
from typing import Any, Final

from plancheck.scoring.item_scorer import ScoredItem

__all__ = ["ResumeError", "header", "item_line", "load_state"]

_VERSION: Final = 1
_NAMES: Final = tuple(field.name for field in fields(ScoredItem))


class ResumeError(Exception):
    """The state cannot be continued from (the message says why and what to do)."""


def header(settings: dict[str, Any]) -> str:
    """The first line of a state file: the run's settings (paths made absolute)."""
    return json.dumps({"plancheck_resume": _VERSION, "settings": settings}, sort_keys=True)


def absolute(path: str) -> str:
    return path if path == "-" else os.path.abspath(path)


def item_line(item: ScoredItem) -> str:
    """The state of one item: its fields, its per-item line only as whether it has one (the
    line itself is in the ``.partial``, in the same order)."""
    return json.dumps([item.line is not None,
                       *(getattr(item, name) for name in _NAMES[1:])], ensure_ascii=False)


def _item(values: Any, line: str | None) -> ScoredItem:
    if not isinstance(values, list) or len(values) != len(_NAMES):
        raise ValueError("not a scored item")
    fields_ = dict(zip(_NAMES, values, strict=True))
    fields_["line"] = line
    fields_["lint_codes"] = tuple(fields_["lint_codes"])
    fields_["f1"] = tuple(fields_["f1"])
    fields_["trajectory"] = tuple(tuple(pair) for pair in fields_["trajectory"])
    return ScoredItem(**fields_)


def load_state(partial: str, settings: dict[str, Any]) -> list[ScoredItem]:
    """The items an interrupted run scored (from the state beside ``partial``, with their
    lines from ``partial``, as written); ResumeError when they cannot be read or were scored
    under other settings. An item whose line the ``.partial`` lacks ends the list (its
    record is scored again)."""
    from plancheck.scoring.per_item_writer import state_path

    path = state_path(partial)
    lines = _lines(path, "it is written beside the .partial file of an interrupted run")
    written = _lines(partial, "")
    if _header(lines[0] if lines else "") is None:
        raise ResumeError(f"{path} is not the state of an interrupted `plancheck score`")
    known = _header(lines[0]) or {}
    if known != settings:
        differ = sorted(key for key in {*settings, *known}
                        if settings.get(key) != known.get(key))
        raise ResumeError("the interrupted run was scored with other settings ("
                          + ", ".join(differ) + " differ); rerun it as it was, with --resume, "
                          "or score from the start without --resume")
    items = []
    next_line = iter(written)
    for number, text in enumerate(lines[1:], start=2):
        try:
            values = json.loads(text)
            line = (next(next_line, None) if isinstance(values, list) and values
                    and values[0] is True else None)
            if isinstance(values, list) and values and values[0] is True and line is None:
                break  # (stopped between its line and its state)
            items.append(_item(values, line))
        except (ValueError, TypeError) as error:
            raise ResumeError(f"{path}: line {number} is damaged ({error})") from None
    return items


def _lines(path: str, missing: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().splitlines()
    except FileNotFoundError:
        raise ResumeError(f"{path} is missing ({missing}); nothing to resume from"
                          if missing else f"{path} is missing") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ResumeError(f"cannot read {path}: {error}") from None


def _header(text: str) -> dict[str, Any] | None:
    """The settings a state file's first line records (None: it is no such line)."""
    try:
        first = json.loads(text)
    except ValueError:
        return None
    if not isinstance(first, dict) or first.get("plancheck_resume") != _VERSION:
        return None
    settings = first.get("settings")
    return settings if isinstance(settings, dict) else {}
