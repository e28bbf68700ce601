"""The guard: a verdict on each tool call of an agent loop before it runs (``plancheck.Guard``)."""

from plancheck.guard.guard import Guard
from plancheck.guard.verdict import TurnVerdict, Verdict

__all__ = ["Guard", "TurnVerdict", "Verdict"]
