"""A scripted "model" for the planners: it reads each chat request like a model would (which
method is asking, for which task, at which stage) and answers from a table of plans.

Tasks are plancheck's own (small, self-contained, valid under the built-in pool), so the tests
need neither the release nor a network.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.openai_server import Reply

MARKER = "The structured task plan is:"


def _step(agent: str, i: int, inputs: dict[str, str], outputs: list[str],
          dep: int | None = None, keys: list[str] | None = None) -> dict[str, Any]:
    return {"agent": agent, "step": i, "dependence": [-1] if dep is None else [dep],
            "dependence_content": None if dep is None else {str(dep): keys},
            "inputs": inputs, "outputs": outputs}


TASKS: list[dict[str, Any]] = [
    {"task_id": 101,
     "task_desc": "Which towns does this line mention: 'The levee near Millbrook failed.'?",
     "structured_plan": [
         _step("Toponym_Detection", 0, {"sentence": "The levee near Millbrook failed."},
               ["detected_toponyms_path"])]},
    {"task_id": 102,
     "task_desc": "Clean the haze from /data/cam/harbor_fog.jpg and count the crowd on the pier.",
     "structured_plan": [
         _step("Weather_Degraded_Image_Restoration", 0,
               {"weather_degraded_image_path": "/data/cam/harbor_fog.jpg"},
               ["restored_image_path"]),
         _step("Crowd_Counting_in_Adverse_Weather", 1,
               {"image_path": "<GENERATED>-0-<restored_image_path>"},
               ["density_map_path", "crowd_count_path"], 0, ["restored_image_path"])]},
    {"task_id": 103,
     "task_desc": "Forecast rain from the radar frames in /data/radar/storm.npy and turn the "
                  "forecast into precipitation series a flood model can read.",
     "structured_plan": [
         _step("Precipitation_Nowcasting", 0, {"radar_echo_frames_path": "/data/radar/storm.npy"},
               ["predicted_radar_echo_frames_path"]),
         _step("precipitation_data_convert_tool", 1,
               {"radar_echo_frames_path": "<GENERATED>-0-<predicted_radar_echo_frames_path>"},
               ["time_series_array_path"], 0, ["predicted_radar_echo_frames_path"])]},
    {"task_id": 104,
     "task_desc": "Find forest anomalies in /data/sat/forest_tile.tif.",
     "structured_plan": [
         _step("Anomaly_Detection_Forest", 0, {"image_path": "/data/sat/forest_tile.tif"},
               ["anomaly_map_path"])]},
]
GOLD = {t["task_id"]: t["structured_plan"] for t in TASKS}


def write_tasks(path: Path, tasks: list[dict[str, Any]] | None = None) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in (tasks or TASKS)), encoding="utf-8")
    return path


def plan_text(plan: Any) -> str:
    return f"{MARKER} {json.dumps(plan)}"


def wrong_tool(plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same plan with a misspelt tool in step 0 (a checker error with a did-you-mean)."""
    damaged = json.loads(json.dumps(plan))
    damaged[0]["agent"] = damaged[0]["agent"] + "_v2"
    return damaged


def last_user(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    return str(messages[-1].get("content", "")) if messages else ""


class ScriptedPlanner:
    """A responder for :class:`ScriptedOpenAIServer` that plays every planning method.

    ``answer(task_id, kind, round)`` may override the text of an answer; ``kind`` is one of
    plan, repair, format, vote, tot-reason, tot-plan, rap-question, rap-answer, rap-useful.
    """

    def __init__(self, answer: Callable[[int, str, int], str | Reply | None] | None = None
                 ) -> None:
        self.answer = answer
        self.calls: Counter[int] = Counter()  # requests per task id
        self.kinds: Counter[str] = Counter()
        self._lock = threading.Lock()

    def task_of(self, body: dict[str, Any]) -> int:
        text = " ".join(str(m.get("content", "")) for m in body.get("messages") or [])
        found = [t["task_id"] for t in TASKS if t["task_desc"] in text]
        if not found:  # the usefulness prompt and others quote only part; match on paths
            found = [t["task_id"] for t in TASKS if t["task_desc"][:40] in text]
        return int(found[-1]) if found else -1

    @staticmethod
    def kind_of(body: dict[str, Any]) -> str:
        messages = body.get("messages") or []
        text = last_user(body)
        if len(messages) > 1 and "found problems" in text:
            return "repair"
        if "previous answer does not contain a plan" in text:
            return "format"
        if "Is the question useful?" in text.rstrip()[-40:]:
            return "rap-useful"
        if "The best choice is:" in text and "Choice 1:" in text:
            return "vote"
        stripped = text.rstrip()
        if re.search(r"Question \d+\.\d+:\s*(Now we can answer the question:)?$", stripped):
            return "rap-question"
        if re.search(r"Answer \d+\.\d+:$", stripped):
            return "rap-answer"
        if stripped.endswith(MARKER) and "Let's think step by step." in text:
            return "tot-plan"
        if stripped.endswith("Let's think step by step.") and body.get("stop"):
            return "tot-reason"
        return "plan"

    def __call__(self, body: dict[str, Any]) -> Reply:
        task, kind = self.task_of(body), self.kind_of(body)
        with self._lock:
            self.calls[task] += 1
            self.kinds[kind] += 1
            round_ = self.calls[task]
        if self.answer is not None:
            custom = self.answer(task, kind, round_)
            if isinstance(custom, Reply):
                return custom
            if custom is not None:
                return Reply(content=custom)
        plan = GOLD.get(task, [])
        texts = {
            "vote": "Choice 1 has the right tools.\nThe best choice is: 1",
            "rap-useful": "Yes. It is the next result the plan needs.",
            "rap-question": "Now we can answer the question: which tools make the plan?",
            "tot-reason": " The instruction needs the tools named in it, in order.",
            "tot-plan": " " + json.dumps(plan),
        }
        return Reply(content=texts.get(kind, "The tools follow the instruction.\n"
                                             + plan_text(plan)))
