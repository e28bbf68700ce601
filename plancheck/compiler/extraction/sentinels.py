"""Markers the readers return instead of a value: no answer found, and "cannot tell
cheaply" (take the general path)."""

from __future__ import annotations

from typing import Final


class _NoAnswer:
    """Sentinel: the reference found nothing to score (``empty_output``)."""


NO_ANSWER: Final = _NoAnswer()


class Unknown:
    """Marker: stage (a) of the isolation has not been run yet."""


UNKNOWN: Final = Unknown()
