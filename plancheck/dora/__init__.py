"""DORA (disaster-response agent benchmark): its trajectories, references and metrics.

* Trajectories of tool calls are read by :mod:`plancheck.dora.trajectory` and linted as plans
  by the compiler's DORA frontend (``plancheck check traj.json --tools pool.json``).
* :func:`plancheck.dora.score.score_trajectory` scores a predicted trajectory against a gold one
  with the trajectory metrics of :mod:`plancheck.dora.paper_metrics`.
* Typed final-answer operators are in :mod:`plancheck.dora.paper_answers`.
"""
