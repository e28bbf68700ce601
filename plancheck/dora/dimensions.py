"""DORA's five dimensions and the names its files carry (``scripts/evaluate.py``'s ``TASKS``).

Gold is ``<tasks>/<task>.json`` and a run ``<run>/<task>/benchmark.jsonl`` for each ``task``
below; DORA reads no other file of either directory.
"""

from __future__ import annotations

DIMENSIONS = {
    "t1": "t1_perception_and_assessment",
    "t2": "t2_spatial_relation_analysis",
    "t3": "t3_operational_planning",
    "t4": "t4_multi_temporal_reasoning",
    "t5": "t5_multi_modal_report_synthesis",
}
RECORDS = "benchmark.jsonl"


def task_file_name(dimension: str) -> str:
    """The gold task file of ``dimension`` (``t1`` -> ``t1_perception_and_assessment.json``)."""
    return f"{DIMENSIONS[dimension]}.json"
