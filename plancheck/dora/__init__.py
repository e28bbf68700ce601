"""DORA (disaster-response agent benchmark) support: trajectories as a plan frontend.

* :func:`plancheck.dora.frontend.check_trajectory` lints a trajectory of tool calls against a
  toolset (an MCP ``tools/list`` pool, say); ``plancheck check traj.json --tools pool.json``
  does the same from the command line.
* :func:`plancheck.dora.score.score_trajectory` scores a predicted trajectory against a gold one
  with DORA's trajectory metrics (:mod:`plancheck.scoring.trajectory`).
* DORA's typed final-answer operators are in :mod:`plancheck.scoring.answers`.
"""
