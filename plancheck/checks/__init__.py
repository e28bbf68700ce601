"""The checker's rules: each a registered object with its phase, its codes, the facts it needs
and hooks over one view of a step (:mod:`.rule`, :mod:`.view`); the registry of them all
(:mod:`.registry`); the declared order of the phases (:mod:`.phases`); and the one walk over a
plan's steps that runs them (:mod:`.run`), which :mod:`plancheck.compiler.checker` drives.
"""
