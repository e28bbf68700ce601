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
    return json.dumps([getattr(item, name) for name in _NAMES], ensure_ascii=False)


def _item(values: Any) -> ScoredItem:
    if not isinstance(values, list) or len(values) != len(_NAMES):
        raise ValueError("not a scored item")
    fields_ = dict(zip(_NAMES, values, strict=True))
    fields_["lint_codes"] = tuple(fields_["lint_codes"])
    fields_["f1"] = tuple(fields_["f1"])
    fields_["trajectory"] = tuple(tuple(pair) for pair in fields_["trajectory"])
    return ScoredItem(**fields_)


def load_state(path: str, settings: dict[str, Any]) -> list[ScoredItem]:
    """The items an interrupted run scored (its state file at ``path``); ResumeError when it
    cannot be read or was written by a run with other settings."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        raise ResumeError(f"{path} is missing (it is written beside the .partial file of an "
                          "interrupted run); nothing to resume from") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ResumeError(f"cannot read {path}: {error}") from None
    try:
        first = json.loads(lines[0]) if lines else None
    except ValueError:
        first = None
    if not isinstance(first, dict) or first.get("plancheck_resume") != _VERSION:
        raise ResumeError(f"{path} is not the state of an interrupted `plancheck score`")
    if first.get("settings") != settings:
        differ = sorted(key for key in {*settings, *first.get("settings", {})}
                        if settings.get(key) != first["settings"].get(key))
        raise ResumeError("the interrupted run was scored with other settings ("
                          + ", ".join(differ) + " differ); rerun it as it was, with --resume, "
                          "or score from the start without --resume")
    items = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            items.append(_item(json.loads(line)))
        except (ValueError, TypeError) as error:
            raise ResumeError(f"{path}: line {number} is damaged ({error})") from None
    return items
