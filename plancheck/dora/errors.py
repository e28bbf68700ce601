"""The errors DORA scoring raises instead of a traceback from deep inside a metric.

DORA's ``evaluation.py`` crashes on some malformed inputs (a gold answer that is not an
object, a tool name that is a number, an integer too large for a float, a ranking of
unhashable values, ...). plancheck scores exactly what DORA scores and fails exactly where
DORA fails, but with one exception type that callers (the CLI) turn into a diagnostic.
"""

from __future__ import annotations


class DoraInputError(ValueError):
    """An input on which DORA's evaluator raises: it cannot be scored."""


class MissingExtraError(ImportError):
    """An optional dependency of DORA scoring is not installed."""

    def __init__(self, module: str, extra: str = "dora") -> None:
        super().__init__(
            f"{module} is needed to score this DORA answer: "
            f"install it with `pip install 'plancheck[{extra}]'`"
        )
        self.module = module
        self.extra = extra


class DoraRunError(Exception):
    """The gold task files or the run cannot be read (a file missing or unreadable, gold that
    is not DORA's task files)."""
