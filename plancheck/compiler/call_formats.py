"""The tool-call shapes and reference syntaxes ``--call-format`` / ``--reference-syntax`` can
force, and the forcing itself (kept in :mod:`plancheck.compiler.forced_formats`, which a
frontend reads without loading the registries named here)."""

from __future__ import annotations

from plancheck.compiler.forced_formats import forced, forced_formats
from plancheck.compiler.refsyntax import SYNTAXES
from plancheck.formats.plugins import Choices
from plancheck.formats.shapes import CALL_SHAPES, call_shapes

# The tool-call shapes (plancheck.compiler.callshapes reads each) and the reference syntaxes
# (plancheck.compiler.refsyntax, SYNTAXES: its registry's names) that can be forced.
CALL_FORMATS = tuple(CALL_SHAPES)
__all__ = ["CALL_FORMATS", "SYNTAXES", "call_format_choices", "forced", "forced_formats"]


def call_format_choices() -> Choices:
    """What ``--call-format`` takes: ``auto``, the built-in shapes, then the plugins' (looked
    up only when a name is not built in)."""
    return Choices(("auto", *CALL_FORMATS), call_shapes)
