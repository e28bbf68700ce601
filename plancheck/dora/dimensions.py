"""DORA's five dimensions and the names its files carry (``scripts/evaluate.py``'s ``TASKS``).

Gold is ``<tasks>/<task>.json`` and a run ``<run>/<task>/benchmark.jsonl`` for each ``task``
of :data:`DIMENSIONS`; DORA reads no other file of either directory. The names are kept with
the recogniser's field lists (:mod:`plancheck.formats.records`), which tells DORA's files from
others by them.
"""

from __future__ import annotations

from plancheck.formats.records import DORA_RUN_RECORDS, DORA_TASK_FILES

DIMENSIONS = DORA_TASK_FILES
RECORDS = DORA_RUN_RECORDS


def task_file_name(dimension: str) -> str:
    """The gold task file of ``dimension`` (``t1`` -> ``t1_perception_and_assessment.json``)."""
    return f"{DIMENSIONS[dimension]}.json"
