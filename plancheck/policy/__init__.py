"""Policies: rules users write on the calls of a plan or trajectory (``policy NAME { ... }``).

``semantics`` is what every rule means, decided a call at a time; ``loader`` reads policy files
and refuses unusable ones; ``monitor`` is the online check a guard calls per proposed call and
per recorded result; ``provenance`` infers flows from copied values; ``plan_calls`` reads a
plan's steps as calls; ``report`` turns violations into diagnostics. The static check with Z3
is :mod:`plancheck.smt.policy_check`. Nothing here imports z3.
"""
