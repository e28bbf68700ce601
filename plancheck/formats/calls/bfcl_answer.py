"""BFCL's possible answers, ``{"tool_name": {"arg": [alternatives]}}`` (inside
``ground_truth``, or when forced): an argument whose alternatives include ``""`` may be left
out, so it is; the others take their first alternative."""

from __future__ import annotations

from typing import Any

from plancheck.formats.calls import name_keyed
from plancheck.formats.found import FoundCall
from plancheck.formats.shape import CallShape
from plancheck.records import replace


def read(item: dict[str, Any], pointer: str) -> FoundCall | None:
    found = name_keyed.read(item, pointer)
    if found is None or not all(isinstance(v, list) for v in found.arguments.values()):
        return None
    return replace(found, shape="bfcl-answer")


SHAPE = CallShape("bfcl-answer", read, detected=False, answers=True, order=960,
                  description="BFCL's possible answers, `{tool_name: {arg: [alternatives]}}`")
