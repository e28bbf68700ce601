"""Diagnostics as the lines of ``plancheck score --per-item`` list them, encoded: code, name,
severity, message, the step position when known and, for the gold-comparison codes, the notes.
(Apart from the static checker, so that scoring with the reference's metrics alone never
imports it.)"""

from __future__ import annotations

import json
from typing import Any, Final

from plancheck.diagnostics.model import Diagnostic

__all__ = ["compact_entry", "compact_text", "diagnostic_text", "entry_text"]


_ENCODE: Final = json.JSONEncoder(ensure_ascii=False).encode  # built once, not per call
# What that encoder does with a string (it calls this directly), without its dispatch.
_ENCODE_STRING: Final = json.encoder.encode_basestring


def compact_entry(diagnostic: Diagnostic) -> dict[str, Any]:
    """A diagnostic as a per-item line lists it: code, name, severity, message, the step
    position when known, and (for the gold-comparison codes, ``PC6xx``) the notes."""
    entry: dict[str, Any] = {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity.label,
        "message": diagnostic.message,
    }
    position = diagnostic.data.get("position")
    if position is not None:
        entry["position"] = position
    if diagnostic.code.startswith("PC6"):
        entry["notes"] = list(diagnostic.notes)
    return entry


def compact_text(
    code: Any, name: Any, severity: Any, message: Any, position: Any, notes: Any
) -> str:
    """``_ENCODE`` of the compact entry ``{code, name, severity, message, position?,
    notes?}`` (``position`` left out when None, ``notes`` when None), as :func:`compact_entry`
    and the gold comparison's entries are written, without building the dictionary or going
    through the encoder's dispatch: the prefix up to the message is the same for every
    diagnostic of a code, and the other values are usually a string, an integer and strings.
    ``tests/scoring/test_compact_text.py`` checks it against the encoder."""
    prefix = _PREFIXES.get((code, name, severity)) if type(code) is str else None
    if prefix is None:
        if not (type(code) is str and type(name) is str and type(severity) is str):
            entry: dict[str, Any] = {"code": code, "name": name, "severity": severity,
                                     "message": message}
            if position is not None:
                entry["position"] = position
            if notes is not None:
                entry["notes"] = notes
            return _ENCODE(entry)
        prefix = (f'{{"code": {_ENCODE_STRING(code)}, "name": {_ENCODE_STRING(name)}, '
                  f'"severity": {_ENCODE_STRING(severity)}, "message": ')
        if len(_PREFIXES) < 4096:
            _PREFIXES[(code, name, severity)] = prefix
    text = prefix + (_ENCODE_STRING(message) if type(message) is str else _ENCODE(message))
    if position is not None:
        text += ', "position": ' + (
            int.__repr__(position) if type(position) is int else _ENCODE(position)
        )
    if notes is not None:
        if (type(notes) is list or type(notes) is tuple) and all(
            type(note) is str for note in notes
        ):
            text += ', "notes": [' + ", ".join([_ENCODE_STRING(note) for note in notes]) + "]"
        else:
            text += ', "notes": ' + _ENCODE(notes)
    return text + "}"


def diagnostic_text(diagnostic: Diagnostic) -> str:
    """``_ENCODE(compact_entry(diagnostic))``, by :func:`compact_text`."""
    code = diagnostic.code
    return compact_text(
        code,
        diagnostic.name,
        diagnostic.severity.label,
        diagnostic.message,
        diagnostic.data.get("position"),
        list(diagnostic.notes) if code.startswith("PC6") else None,
    )


def entry_text(entry: dict[str, Any]) -> str:
    """``_ENCODE(entry)`` of a compact entry dictionary (as :func:`compact_entry` and the
    gold comparison build them), by :func:`compact_text` when it has their shape."""
    if len(entry) >= 4:
        keys = tuple(entry)
        if keys[:4] == _ENTRY_KEYS and entry.get("position", 0) is not None and (
            entry.get("notes", 0) is not None
        ) and (len(keys) == 4 or keys[4:] in _ENTRY_TAILS):
            return compact_text(entry["code"], entry["name"], entry["severity"],
                                entry["message"], entry.get("position"), entry.get("notes"))
    return _ENCODE(entry)


_ENTRY_KEYS: Final = ("code", "name", "severity", "message")
_ENTRY_TAILS: Final = (("position",), ("notes",), ("position", "notes"))
_PREFIXES: dict[tuple[Any, Any, Any], str] = {}
