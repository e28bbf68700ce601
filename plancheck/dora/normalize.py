"""String, key and tool-name normalisation as DORA's evaluator applies it.

These are the equivalences DORA's scoring rests on, so they are kept exact, quirks included:
underscores are word characters and survive :func:`normalize_text` (``"minor_damage"`` is not
``"minor damage"``), and a tool name without a dot gets one at its first underscore
(``"seg_building_damage"`` is ``"seg.building_damage"``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_NOT_WORD_OR_SPACE = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")

_YES = frozenset({"true", "yes"})
_NO = frozenset({"false", "no"})
# Phase / tier labels in the spellings models use; the first group is the canonical suffix.
_PHASE_T = re.compile(r"^phase[\s_]*(t\d+)$")
_PHASE_N = re.compile(r"^phase[\s_]*(\d+)$")
_T_SPACED = re.compile(r"^t[\s_]+(\d+)$")
_P_SPACED = re.compile(r"^p[\s_]+(\d+)$")
_T_ANY = re.compile(r"^t[\s_]*(\d+)$")
_P_ANY = re.compile(r"^p[\s_]*(\d+)$")
_RANK = re.compile(r"^rank[\s_]*(\d+)$")
_SEPARATORS = re.compile(r"[\s\-_]+")


def normalize_text(value: Any) -> str:
    """NFKC, lower case, punctuation to spaces, runs of spaces collapsed (``str()`` first)."""
    text = value if isinstance(value, str) else str(value)
    text = unicodedata.normalize("NFKC", text).lower().strip()
    text = _NOT_WORD_OR_SPACE.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def normalize_tool_name(name: Any) -> str:
    """``"seg_x(a=1)"`` -> ``"seg.x"``: the name before any argument list, with a dot at the
    first underscore when it has none. A falsy name is ``""``; a truthy non-string one cannot
    be read (DORA raises), see :class:`plancheck.dora.errors.DoraInputError`."""
    if not name:
        return ""
    if not isinstance(name, str):
        raise TypeError(f"a tool name must be a string, not {type(name).__name__}")
    base = name.split("(")[0].strip()
    if "." not in base and "_" in base:
        head, tail = base.split("_", 1)
        return f"{head}.{tail}"
    return base


def canonical_exact(value: Any) -> str:
    """The form two exact-match answers are compared in: booleans and yes/no as
    ``true``/``false``, integral numbers without a fraction, phase labels as ``pN``/``tN``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    text = normalize_text(value)
    if not text:
        return text
    if text in _YES:
        return "true"
    if text in _NO:
        return "false"
    for pattern, prefix in ((_PHASE_T, ""), (_PHASE_N, "p"), (_T_SPACED, "t"), (_P_SPACED, "p")):
        match = pattern.match(text)
        if match:
            return prefix + match.group(1)
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() else text


def normalize_key(key: Any) -> str:
    """The form dict keys are matched in: phase / tier / rank labels canonical, separators as
    one underscore, a plural last word made singular (``"Damaged Buildings"`` ->
    ``"damaged_building"``)."""
    if not isinstance(key, str):
        return str(key).lower().strip()
    text = key.lower().strip()
    for pattern, prefix in (
        (_PHASE_T, ""),
        (_PHASE_N, "p"),
        (_T_ANY, "t"),
        (_P_ANY, "p"),
        (_RANK, ""),
    ):
        match = pattern.match(text)
        if match:
            return prefix + match.group(1)
    tokens = _SEPARATORS.sub("_", text).strip("_").split("_")
    last = tokens[-1]
    if len(last) > 3 and last.endswith("s") and not last.endswith("ss"):
        tokens[-1] = last[:-1]
    return "_".join(tokens)
