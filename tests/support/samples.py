"""Small, well-formed plans over the built-in pool, shared by the tests."""

from __future__ import annotations

from typing import Any

# Restore a foggy image, then detect objects in it: a clean two-step chain.
FOG_CHAIN: list[dict[str, Any]] = [
    {"agent": "Weather_Degraded_Image_Restoration", "step": 0, "dependence": [-1],
     "dependence_content": None, "inputs": {"weather_degraded_image_path": "/d/fog.jpg"},
     "outputs": ["restored_image_path"]},
    {"agent": "Foggy_Scenario_Object_Detection", "step": 1, "dependence": [0],
     "dependence_content": {"0": ["restored_image_path"]},
     "inputs": {"image_path": "<GENERATED>-0-<restored_image_path>"},
     "outputs": ["detected_objects_path"]},
]

# The same chain, described by GeoChat: a clean three-step chain.
FOG_CHAIN_DESCRIBED: list[dict[str, Any]] = [
    *FOG_CHAIN,
    {"agent": "GeoChat", "step": 2, "dependence": [1],
     "dependence_content": {"1": ["detected_objects_path"]},
     "inputs": {"image_path": "<GENERATED>-1-<detected_objects_path>",
                "user_query_path": "/d/q.txt"},
     "outputs": ["contextual_description_path"]},
]
