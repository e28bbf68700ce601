"""The documents DORA writes, and where their trajectories are.

DORA (``dora/benchmark.py``, ``dora/agent/runner.py``) records a trajectory as a JSON list of
steps ``{"call": NAME, "args": {...}, "obs": ...}``. Gold trajectories name the tool as DORA
does (``"seg.flood"``); the agent runner writes ``"seg_flood(pre_image_path,
post_image_path)"``: the name as the model called it, then the argument names. Both are one tool
(:func:`tool_name`, DORA's own normalisation). A ``tool.loop`` step is followed by the calls it
expanded to; the calls of its ``calls`` argument are ``{"tool", "args"}`` objects whose
arguments may say ``"<key> from step[N].obs"`` (call ``N`` of the same iteration) and
``"<item.field>"`` (the current item of ``loop_over``).

Trajectories are found in:

* a bare trajectory (a list of steps);
* a task ``{task_category, question, tools, trajectory, final_answer, eval_spec, ...}``;
* a sample ``{sample_id, input_data, tasks: [task, ...]}`` and a task file (a list of samples):
  each task is named ``<sample_id>_task<i>``, DORA's ``question_id``;
* a run record (a ``benchmark.jsonl`` line) and a ``trajectories/<category>__<qid>_trajectory
  .json`` file: ``{question_id, task_category_code, sample_id, error, trajectory, ...}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from plancheck.dora.normalize import normalize_tool_name
from plancheck.formats.sniff import (
    is_dora_sample,
    is_dora_task,
    is_dora_trajectory,
)

LOOP_TOOLS = frozenset({"tool.loop"})
WRAPPER_TOOLS = frozenset({"tool.loop", "tool.reduce"})  # dropped by DORA's metrics
STEP_REFERENCE = re.compile(r"^\s*<(?P<key>[\w.]+)>\s*from\s*step\[(?P<step>\d+)\]\.obs\s*$",
                            re.IGNORECASE)
ITEM_REFERENCE = re.compile(r"^\s*<item\.(?P<path>[\w.]+)>\s*$", re.IGNORECASE)
_ANY_ITEM = re.compile(r"<item\.", re.IGNORECASE)
_ANY_STEP = re.compile(r"\bstep\s*\[\s*\d+\s*\]\s*\.\s*obs", re.IGNORECASE)


def tool_name(call: Any) -> str:
    """The tool a step's ``call`` names, as DORA's scorer reads it (``""``: none)."""
    if not isinstance(call, str):
        return ""
    return normalize_tool_name(call)


@dataclass(frozen=True, slots=True)
class Found:
    """A trajectory in a document: the JSON pointer of its list (of the member that should hold
    one, when it is not a list), its name, and the object holding it (task or record)."""

    pointer: str
    name: str | None
    holder: dict[str, Any] | None
    value: Any


def find_trajectories(value: Any) -> list[Found] | None:
    """Every trajectory of a DORA document, or ``None`` when it is not one."""
    found = list(_find(value))
    return found or None


def _find(value: Any) -> Iterator[Found]:
    # (which documents these are, the recogniser says: plancheck.formats.sniff)
    if isinstance(value, list) and value and all(is_dora_sample(v) for v in value):
        for i, sample in enumerate(value):
            yield from _sample(sample, f"/{i}")
    elif is_dora_sample(value):
        yield from _sample(value, "")
    elif isinstance(value, list) and value and all(is_dora_task(v) for v in value):
        for i, task in enumerate(value):
            yield _task(task, f"/{i}", None)
    elif is_dora_task(value) or (isinstance(value, dict)
                                 and is_dora_trajectory(value.get("trajectory"))):
        # (an object holding DORA's steps under `trajectory` and nothing DORA names besides)
        yield _task(value, "", None)
    elif is_dora_trajectory(value):
        yield Found("", None, None, value)


def _sample(sample: dict[str, Any], pointer: str) -> Iterator[Found]:
    sample_id = sample.get("sample_id")
    for i, task in enumerate(sample["tasks"]):
        name = f"{sample_id}_task{i}" if sample_id is not None else f"task {i}"
        if isinstance(task, dict):
            yield _task(task, f"{pointer}/tasks/{i}", name)
        else:
            yield Found(f"{pointer}/tasks/{i}", name, None, task)


def _task(task: dict[str, Any], pointer: str, name: str | None) -> Found:
    own = task.get("question_id")
    return Found(f"{pointer}/trajectory", str(own) if own is not None else name, task,
                 task.get("trajectory"))


def mentions_item(text: str) -> bool:
    return bool(_ANY_ITEM.search(text))


def mentions_step(text: str) -> bool:
    return bool(_ANY_STEP.search(text))
