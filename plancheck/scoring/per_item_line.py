"""The per-item line of ``plancheck score --per-item``: exactly the fields of
:data:`PER_ITEM_FIELDS`, written out as ``json.dumps`` writes the object, without building it
(most fields are booleans and short strings; tens of thousands of lines a second)."""

from __future__ import annotations

import json
from typing import Any, Final

from plancheck.scoring.fpof import fpof_category

__all__ = ["PER_ITEM_FIELDS", "clear_line_cache", "per_item_line"]

PER_ITEM_FIELDS: Final = (
    "id",
    "task_id",
    "em",
    "tool_acc",
    "param_acc",
    "dep_acc",
    "exec_equiv",
    "fpof_type",
    "fpof_step",
    "fpof_category",
    "diagnostics",
)
# One encoder for every line: json.dumps with any option builds a new encoder per call.
_ENCODE: Final = json.JSONEncoder(ensure_ascii=False).encode
# What that encoder does with a string (it calls this directly), without its dispatch.
_ENCODE_STRING: Final = json.encoder.encode_basestring


_BOOL: Final = ("false", "true")
_MAYBE: Final = {True: "true", False: "false", None: "null"}


def per_item_line(
    ident: Any,
    task_id: Any,
    em: bool,
    tool: bool,
    param: bool,
    dep: bool,
    exec_equiv: bool | None,
    fpof_type: str | None,
    fpof_step: Any,
    entries: str,
) -> str:
    """One per-item line, exactly as ``json.dumps`` writes the object of
    :data:`PER_ITEM_FIELDS` (``entries``: the diagnostics, encoded and joined by ``", "``),
    written out directly: most fields are booleans and short strings."""
    tail: str | None
    if fpof_type is None:
        tail = '"fpof_type": null, "fpof_step": null, "fpof_category": null'
    else:
        tail = _FPOF_TAILS.get((fpof_type, fpof_step)) if type(fpof_step) is int else None
        if tail is None:
            tail = (
                f'"fpof_type": {_ENCODE(fpof_type)}, "fpof_step": {_ENCODE(fpof_step)}, '
                f'"fpof_category": {_ENCODE(fpof_category(fpof_type))}'
            )
            if type(fpof_step) is int and len(_FPOF_TAILS) < 4096:
                _FPOF_TAILS[(fpof_type, fpof_step)] = tail  # few types, few steps
    return (
        f'{{"id": {_scalar(ident)}, "task_id": {_scalar(task_id)}, "em": {_BOOL[em]}, '
        f'"tool_acc": {_BOOL[tool]}, "param_acc": {_BOOL[param]}, "dep_acc": {_BOOL[dep]}, '
        f'"exec_equiv": {_MAYBE[exec_equiv]}, {tail}, "diagnostics": [{entries}]}}'
    )


_FPOF_TAILS: dict[tuple[str, int], str] = {}


def clear_line_cache() -> None:
    """Forget the encoded FPoF fields (see ``batch.clear_caches``)."""
    _FPOF_TAILS.clear()


def _scalar(value: Any) -> str:
    """``_ENCODE(value)``, directly for the usual ids (a string, an integer)."""
    kind = type(value)
    if kind is str:
        return _ENCODE_STRING(value)
    if kind is int:
        return int.__repr__(value)
    return _ENCODE(value)
