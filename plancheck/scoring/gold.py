"""Gold plans: a :class:`GoldIndex` holds the gold plans a prediction is compared with, one
plan (a ``.json`` file; every prediction is compared with it) or a benchmark JSONL whose records
are matched by ``task_id``, each a :class:`GoldTask` that knows where it lies in its file.

What is done with them lives beside: the first point of failure as diagnostics
(:mod:`plancheck.scoring.fpof`), the compact per-item entries (:mod:`plancheck.scoring.compact`)
and ``plancheck check --gold`` (:mod:`plancheck.scoring.check_gold`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.positions import LineIndex, Positions
from plancheck.diagnostics.span import Span, escape_pointer
from plancheck.formats.records import GOLD_PLAN_FIELDS
from plancheck.formats.sniff import file_kind, is_gold_record, is_gold_record_list, is_jsonl_gold
from plancheck.scoring.gold_steps import StepFacts, dependence_members
from plancheck.scoring.reference import GoldPlan, prepare_gold

__all__ = [
    "COMPOSITIONS",
    "GOLD_PLAN_FIELDS",
    "GoldError",
    "GoldIndex",
    "GoldTask",
    "composition_of",
    "task_key",
]

COMPOSITIONS: Final = ("Node", "Chain", "Branching")


def task_key(task_id: Any) -> str | None:
    """How task ids are matched: ``1``, ``1.0`` and ``"1"`` name the same task."""
    if task_id is None or isinstance(task_id, bool):
        return None
    if isinstance(task_id, float) and task_id.is_integer():
        return str(int(task_id))
    if isinstance(task_id, int | float):
        return str(task_id)
    if isinstance(task_id, str):
        text = task_id.strip()
        return text or None
    return json.dumps(task_id, sort_keys=True)


def composition_of(plan: Any) -> str:
    """Node (one step), Branching (some step's results feed two or more steps) or Chain,
    the paper's Section 3 definition (the release has 35 / 32 / 166 of them)."""
    if not isinstance(plan, list) or len(plan) <= 1:
        return "Node"
    consumers: dict[Any, int] = {}
    for item in plan:
        if not isinstance(item, dict):
            continue
        for member in dependence_members(item.get("dependence")):
            if isinstance(member, int) and not isinstance(member, bool) and member >= 0:
                consumers[member] = consumers.get(member, 0) + 1
    return "Branching" if any(count >= 2 for count in consumers.values()) else "Chain"


# --------------------------------------------------------------------------- gold files


class GoldError(Exception):
    """The gold file cannot be used; ``diagnostics`` says why (``PC001`` or ``PC004``)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


@dataclass(slots=True, eq=False)
class GoldTask:
    """One gold plan and where it lies in its file."""

    task_id: Any
    plan: Any
    file: str
    pointer: str  # the JSON pointer of the plan inside its document
    positions: Positions | None
    _prepared: GoldPlan | None = field(default=None, repr=False)
    key: str | None = field(default=None, init=False)  # task_key(task_id), how it is matched
    _facts: tuple[StepFacts | None, ...] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.key = task_key(self.task_id)

    @property
    def prepared(self) -> GoldPlan:
        """The plan prepared for the reference scorer (once)."""
        if self._prepared is None:
            self._prepared = prepare_gold(self.plan)
        return self._prepared

    @property
    def step_facts(self) -> tuple[StepFacts | None, ...]:
        """What the FPoF diagnostic compares of each gold step (once; None: not an object,
        and nothing when the plan is not a list)."""
        if self._facts is None:
            plan = self.plan if isinstance(self.plan, list) else []
            self._facts = tuple(StepFacts.of(item) for item in plan)
        return self._facts

    @property
    def depth(self) -> int:
        """The number of steps (the paper's workflow depth)."""
        return len(self.plan) if isinstance(self.plan, list) else 0

    @property
    def composition(self) -> str:
        return composition_of(self.plan)

    def span(self, position: int | None = None, path: str | None = None) -> Span | None:
        """The resolved span, in the gold file, of the plan, a step or a step field."""
        if self.positions is None:
            return None
        pointer = self.pointer
        if position is not None:
            pointer += f"/{position}"
            if path:
                pointer += "/" + "/".join(escape_pointer(part) for part in path.split("/"))
        return self.positions.resolve(Span(self.file, pointer=pointer))


@dataclass(slots=True, eq=False)
class GoldIndex:
    """Gold plans by task id, or one gold plan for every prediction (``single``)."""

    file: str
    tasks: dict[str, GoldTask]
    single: GoldTask | None = None
    # The tasks whose key is an integer's, by that integer: the common lookup, without
    # task_key's normalisation (built on first use).
    _by_int: dict[int, GoldTask] | None = field(default=None, init=False, repr=False)

    def get(self, task_id: Any) -> GoldTask | None:
        if self.single is not None:
            return self.single
        if type(task_id) is int:
            by_int = self._by_int
            if by_int is None:
                by_int = self._by_int = {
                    int(key): task for key, task in self.tasks.items() if _is_int_key(key)
                }
            return by_int.get(task_id)
        key = task_key(task_id)
        return None if key is None else self.tasks.get(key)

    def __iter__(self) -> Iterator[GoldTask]:
        if self.single is not None:
            return iter([self.single])
        return iter(self.tasks.values())

    def __len__(self) -> int:
        return 1 if self.single is not None else len(self.tasks)

    @classmethod
    def load(cls, path: str) -> GoldIndex:
        """Read a gold file; raises :class:`GoldError` when it cannot be used."""
        from plancheck.compiler.frontends import read_text

        text, error = read_text(path)
        if text is None:
            assert error is not None
            raise GoldError([error.with_context(file=path, record=None)])
        return cls.parse(text, path)

    @classmethod
    def parse(cls, text: str, file: str) -> GoldIndex:
        if not text.strip():
            raise GoldError([_unusable(file, "the gold file is empty: it holds no gold plan")])
        lines = LineIndex(text)
        if is_jsonl_gold(file, text):
            return cls(file, _jsonl_tasks(text, file, lines))
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as error:
            if file_kind(file, text) == "dsl":
                raise GoldError([_unusable(
                    file, "the gold file is workflow DSL; gold plans are read from JSON or "
                    "JSONL (convert it: plancheck fmt --to json FILE --tools POOL)")]) from None
            reason = "nested too deeply" if isinstance(error, RecursionError) else error
            raise GoldError([_unusable(file, f"the gold file is not JSON: {reason}")]) from None
        start = len(text) - len(text.lstrip())
        positions = Positions(file, lines, json_region=(start, len(text.rstrip())))
        if is_gold_record_list(value):
            tasks: dict[str, GoldTask] = {}
            for index, record in enumerate(value):
                _add_task(tasks, record, file, f"/{index}", positions, f"element {index}")
            return cls(file, tasks)
        if is_gold_record(value):
            key = _gold_field(value)
            return cls(
                file, {}, GoldTask(value.get("task_id"), value[key], file, f"/{key}", positions)
            )
        if isinstance(value, list):
            return cls(file, {}, GoldTask(None, value, file, "", positions))
        raise GoldError(
            [
                _unusable(
                    file,
                    "the gold file holds neither a plan (a JSON array of steps) nor benchmark "
                    "records with `task_id` and `structured_plan`",
                )
            ]
        )


def _is_int_key(key: str) -> bool:
    """Whether ``key`` is ``task_key`` of an integer (``str(n)`` for some int ``n``)."""
    try:
        return str(int(key)) == key
    except ValueError:
        return False


def _gold_field(record: dict[str, Any]) -> str:
    return next(key for key in GOLD_PLAN_FIELDS if key in record)


def _unusable(file: str, message: str) -> Diagnostic:
    return make("PC004", message, data={"path": file}).with_context(file=file, record=None)


def _add_task(
    tasks: dict[str, GoldTask],
    record: dict[str, Any],
    file: str,
    pointer: str,
    positions: Positions,
    where: str,
) -> None:
    key = task_key(record.get("task_id"))
    if key is None:
        raise GoldError([_unusable(file, f"{where} of the gold file has no usable `task_id`")])
    if key in tasks:
        raise GoldError([_unusable(file, f"{where} of the gold file repeats task id {key}")])
    name = _gold_field(record)
    tasks[key] = GoldTask(record["task_id"], record[name], file, f"{pointer}/{name}", positions)


def _jsonl_tasks(text: str, file: str, lines: LineIndex) -> dict[str, GoldTask]:
    tasks: dict[str, GoldTask] = {}
    offset = 0
    for number, line in enumerate(text.split("\n"), start=1):
        start = offset
        offset += len(line) + 1
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            raise GoldError(
                [_unusable(file, f"line {number} of the gold file is not JSON")]
            ) from None
        if not is_gold_record(record):
            raise GoldError(
                [
                    _unusable(
                        file,
                        f"line {number} of the gold file is not a benchmark record (an object "
                        "with `task_id` and `structured_plan`)",
                    )
                ]
            )
        positions = Positions(file, lines, json_region=(start, start + len(line.rstrip())))
        _add_task(tasks, record, file, "", positions, f"line {number}")
    if not tasks:
        raise GoldError([_unusable(file, "the gold file holds no gold plans")])
    return tasks
