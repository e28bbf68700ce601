"""Profiles: which diagnostic codes block, chosen by where plancheck runs.

======== ====================================================================================
profile  what blocks (is an error)
======== ====================================================================================
default  the codes' own severities (``plancheck explain``): a literal that breaks its
         parameter's JSON Schema (``PC302``) is a warning, as a linter reports it
guard    every schema violation (``PC302``; a number written as a string, ``PC305``, which
         the schema rejects too), a placeholder where a value belongs (``PC209``),
         a reference whose value is not known yet (``PC206``) and, given the request,
         a value the user must supply that the request does not give (``PC901``), and a
         plan written with doubled braces (``PC121``), a call object that reads as two
         calls (``PC122``) or an object that holds a key twice (``PC118``), which its
         consumer may read otherwise:
         in an agent loop a call that breaks its tool's schema fails when it runs, one
         whose values are not known must not run, and what runs must be what was checked
strict   every warning; notes (a number written as a string, ``PC305``) stay notes
======== ====================================================================================

A profile is a set of severity overrides on :class:`~plancheck.compiler.driver.CheckOptions`;
overrides the caller gives win over the profile's.
"""

from __future__ import annotations

from plancheck.diagnostics.codes import CODES
from plancheck.diagnostics.severity import Severity

PROFILE_NAMES = ("default", "guard", "strict")

_GUARD = ("PC118", "PC121", "PC122", "PC206", "PC209", "PC302", "PC305", "PC901")


def profile_overrides(profile: str) -> tuple[tuple[str, Severity], ...]:
    """The severity overrides of ``profile``; raises ``ValueError`` naming the profiles for an
    unknown name."""
    if profile == "default":
        return ()
    if profile == "guard":
        return tuple((code, Severity.ERROR) for code in _GUARD)
    if profile == "strict":
        return tuple((code, Severity.ERROR) for code, info in CODES.items()
                     if info.severity is Severity.WARNING)
    raise ValueError(f"unknown profile {profile!r}: expected one of {', '.join(PROFILE_NAMES)}")


def severity_in(profile_codes: tuple[tuple[str, Severity], ...], code: str,
                severity: Severity) -> Severity:
    """The severity a diagnostic of ``code`` has under a profile's overrides."""
    for pattern, overridden in profile_codes:
        if code.startswith(pattern):
            return overridden
    return severity
