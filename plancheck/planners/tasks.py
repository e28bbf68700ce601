"""Read the tasks to plan: a benchmark JSONL of ``{task_id, task_desc[, structured_plan]}``.

Planners see only ``task_id`` and ``task_desc``; the gold plans are returned separately, for the
structural baselines (oracles by design) and nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plancheck.fileio import read_text_limited
from plancheck.planners.base import PlanningTask


class TaskFileError(Exception):
    """The tasks file cannot be read; the message says where and why."""


def load_tasks(path: Path, *, limit: int | None = None
               ) -> tuple[list[PlanningTask], dict[str, list[Any]]]:
    """The first ``limit`` tasks of ``path`` (a file, or a release directory) and their gold."""
    from plancheck.fileio import is_dir

    if is_dir(path):
        path = path / "benchmark.jsonl"
    try:
        text = read_text_limited(path, "utf-8-sig")
    except OSError as error:
        raise TaskFileError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise TaskFileError(f"cannot read {path}: not UTF-8 text") from None
    tasks: list[PlanningTask] = []
    gold: dict[str, list[Any]] = {}
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if limit is not None and len(tasks) >= limit:
            break
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise TaskFileError(f"{path}:{number}: not JSON ({error.msg})") from None
        except (ValueError, RecursionError) as error:  # e.g. an integer of 4,301+ digits
            raise TaskFileError(f"{path}:{number}: not usable JSON ({error})") from None
        if not isinstance(record, dict) or "task_id" not in record:
            raise TaskFileError(f"{path}:{number}: a task is an object with a `task_id`")
        description = record.get("task_desc")
        if not isinstance(description, str) or not description.strip():
            raise TaskFileError(f"{path}:{number}: task {record['task_id']!r} has no `task_desc`")
        key = str(record["task_id"])
        if key in seen:
            raise TaskFileError(f"{path}:{number}: task id {key} appears twice")
        seen.add(key)
        tasks.append(PlanningTask(record["task_id"], description))
        plan = record.get("structured_plan")
        if isinstance(plan, str):
            try:
                plan = json.loads(plan)
            except (ValueError, RecursionError):
                plan = None
        if isinstance(plan, list):
            gold[key] = plan
    if not tasks and limit != 0:
        raise TaskFileError(f"{path} holds no task")
    return tasks, gold
