"""DORA's symbolic references to earlier results: ``"<key> from trajectory[N].obs"``.

DORA's gold trajectories write an argument that depends on an earlier call's output as a
symbolic reference (DORA paper, section 3.4: "e.g., <mask_path> from trajectory[2].obs"): the
member ``key`` of the observation (the structured result) of call ``N``. ``N`` indexes the
trajectory list, so it counts from 0 unless the calls are numbered from 1 (see
:mod:`plancheck.dora.trajectory`).

Accepted spellings (whitespace is free, the angle brackets are optional)::

    <mask_path> from trajectory[2].obs      mask_path from trajectory[2].obs
    trajectory[2].obs.mask_path             trajectory[2].obs["mask_path"]
    trajectory[2].obs                       (the whole observation: no key)

Any other string that mentions ``trajectory[...]`` is a malformed reference.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_FROM = re.compile(
    r"^\s*<?\s*(?P<key>[^<>\s](?:[^<>]*[^<>\s])?)\s*>?\s+from\s+trajectory\s*\[\s*(?P<step>-?\d+)"
    r"\s*\]\s*\.\s*obs\s*$",
    re.IGNORECASE,
)
_PATH = re.compile(
    r"^\s*trajectory\s*\[\s*(?P<step>-?\d+)\s*\]\s*\.\s*obs\s*"
    r"(?:\.\s*(?P<key>[A-Za-z_][\w-]*)|\[\s*(?P<quote>[\"'])(?P<quoted>[^\"']*)(?P=quote)\s*\])?"
    r"\s*$",
    re.IGNORECASE,
)
_MENTION = re.compile(r"\btrajectory\s*\[", re.IGNORECASE)


class TrajectoryReference(NamedTuple):
    """A parsed reference: call number ``step`` as written, and the observation ``key``
    (``None`` for the whole observation)."""

    step: int
    key: str | None


class Malformed(NamedTuple):
    """A string that mentions ``trajectory[...]`` but is not a reference."""

    text: str


def parse_reference(text: str) -> TrajectoryReference | Malformed | None:
    """The reference ``text`` spells, :class:`Malformed`, or ``None`` for a plain string."""
    if "trajectory" not in text.lower():
        return None
    match = _FROM.match(text)
    if match:
        return TrajectoryReference(int(match.group("step")), match.group("key").strip())
    match = _PATH.match(text)
    if match:
        key = match.group("key") or match.group("quoted")
        return TrajectoryReference(int(match.group("step")), key if key else None)
    if _MENTION.search(text):
        return Malformed(text)
    return None


def format_reference(step: int, key: str) -> str:
    """DORA's spelling of a reference to ``key`` of call ``step``."""
    return f"<{key}> from trajectory[{step}].obs"
