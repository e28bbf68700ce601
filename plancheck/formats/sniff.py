"""What an input is: the one recogniser of input kinds, consulted by every reader.

Every question "is this value a ...?" a reader asks before it reads is answered here, by the
predicates below, and :func:`sniff` puts them together:

==================== =====================================================================
kind                 a JSON value that is
==================== =====================================================================
``tools``            tool definitions, not calls: a bare OpenAI/MCP ``tools`` array or an
                     object holding one (:func:`is_tool_definitions`)
``plan``             DisasterBench plan steps, bare or wrapped (:func:`is_plan_steps`;
                     :func:`is_plain_plan`: steps and nothing else)
``dora``             one of DORA's own documents: a trajectory of ``{"call", "args", "obs"}``
                     steps, a task, a sample, a task file, a run record
                     (:func:`is_dora_document` and the predicates it is made of)
``trajectory``       a list of calls in another shape that may use DORA-style references
                     (:func:`is_call_trajectory`; once its calls are read, whether they are
                     read as one: :func:`reads_as_trajectory`)
``calls:SHAPE``      tool calls, by the shape of the first (:mod:`plancheck.formats.shapes`)
``gold record``      a DisasterBench gold record (:func:`is_gold_record`; a list of them:
                     :func:`is_gold_record_list`)
``plan record``      a record holding a plan to check (:func:`is_plan_record`; a list of
                     them: :func:`is_plan_record_list`)
``no plan``          a record of something else: a per-item line of ``plancheck score``
                     (:func:`is_scored_record`, :func:`is_scored_line`), the configuration
                     of a run (:func:`is_run_config`), a benchmark's task
                     (:func:`is_task_record`)
==================== =====================================================================

A file's text is told apart by its name and its first lines (:func:`file_kind`: a JSONL batch,
:func:`is_jsonl_batch`; workflow DSL; JSON; a raw completion), a gold file written one record
a line by :func:`is_jsonl_gold`. Files are told apart here too where their names or layout
decide it: DORA's gold for ``plancheck score`` (its task files, a directory of them:
:func:`is_dora_gold`), a DORA tasks directory (:func:`is_dora_task_dir`), a run directory
(:func:`is_dora_run_dir`) and the per-item files ``plancheck score`` writes for a DORA run
(:func:`dora_per_item_files`).

DORA's formats are known here as data (their keys); how DORA's documents are lowered and scored
stays in :mod:`plancheck.dora` and :mod:`plancheck.compiler.dora_native`. The checker asks
:func:`sniff` first, so a pool checked by mistake is one ``PC117``, not a plan's errors.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence, Set
from pathlib import Path
from typing import Any, Final

from plancheck.fast_json import loads_or_invalid
from plancheck.fileio import read_limit, read_text_limited
from plancheck.formats.found import FoundCall, is_definition
from plancheck.formats.records import (
    ANSWER_KEYS,
    DORA_RUN_RECORDS,
    DORA_TASK_FILES,
    DSL_SUFFIXES,
    GOLD_PLAN_FIELDS,
    JSONL_SUFFIXES,
    PLAN_WRAPPER_KEYS,
    RECORD_PLAN_FIELDS,
    RECORD_TOOL_KEYS,
    RUN_CONFIG_FIELDS,
    SCORED_FIELDS,
    TRAJECTORY_ARGUMENT_KEYS,
    TRAJECTORY_NAME_KEYS,
    TRAJECTORY_SYNTAXES,
    TRAJECTORY_WRAPPER_KEYS,
)
from plancheck.ir.schema import PLAN_STEP_KEYS

__all__ = [
    "DORA_TASK_KEYS", "call_object", "dora_per_item_files", "file_kind", "is_call_trajectory",
    "is_dora_document", "is_dora_gold", "is_dora_per_item_line", "is_dora_run_dir",
    "is_dora_sample", "is_dora_step", "is_dora_task", "is_dora_task_dir", "is_dora_task_file",
    "is_dora_trajectory", "is_gold_record", "is_gold_record_list", "is_jsonl_batch",
    "is_jsonl_gold", "is_plain_plan", "is_plan_record", "is_plan_record_list", "is_plan_steps",
    "is_run_config", "is_scored_line", "is_scored_record", "is_task_record",
    "is_tool_definitions", "is_trajectory_document", "reads_as_trajectory", "sniff",
    "unwrap_trajectory",
]


# -- files by their text ------------------------------------------------------------------------

def file_kind(path: str, text: str) -> str:
    """How a file (or standard input read under the name ``path``) is read: ``jsonl`` (one
    record a line), ``dsl``, ``json`` or ``text`` (a raw completion), by its suffix, else by
    its text."""
    lowered = path.lower()
    if lowered.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if lowered.endswith(DSL_SUFFIXES):
        return "dsl"
    if lowered.endswith(".json"):
        return "json"
    head = text.lstrip()
    while head.startswith(("#", "//")):
        head = head.split("\n", 1)[1].lstrip() if "\n" in head else ""
    if head.startswith(("plan ", "plan{", "plan\"", "toolset ")):
        return "dsl"
    if is_jsonl_batch(text):
        return "jsonl"  # e.g. a batch piped to `plancheck -`: every record, not the first
    return "text"


def is_jsonl_batch(text: str) -> bool:
    """Two or more lines, each one whole JSON object or array, the first a record (an object
    with a plan field, with or without an id) or a bare plan (an array): a batch, as a
    ``.jsonl`` file would be read, not one completion that happens to hold two objects.
    Comment lines (``#``, ``//``) do not make it something else: they are read as the lines of
    a ``.jsonl`` file are (standard input is read by the rules of a file)."""
    lines = [line for line in (raw.strip() for raw in text.splitlines())
             if line and not line.startswith(("#", "//"))]
    if len(lines) < 2 or not all(
            (line[0], line[-1]) in (("{", "}"), ("[", "]")) for line in lines):
        return False
    try:
        first = json.loads(lines[0])
    except (ValueError, RecursionError):
        return False
    return (isinstance(first, dict) and any(key in first for key in RECORD_PLAN_FIELDS)) or (
        isinstance(first, list) and all(isinstance(step, (dict, list)) for step in first))


def is_jsonl_gold(path: str, text: str) -> bool:
    """Whether a gold file is written one record a line: by its suffix, or its first line
    closes an object and the next opens one (gold records hold their plans under fields a
    batch of predictions does not, so :func:`is_jsonl_batch` does not tell them)."""
    if path.lower().endswith(JSONL_SUFFIXES):
        return True
    first = text.lstrip().split("\n", 1)
    return len(first) == 2 and first[0].rstrip().endswith("}") and first[1].lstrip()[:1] == "{"


# -- tool pools ----------------------------------------------------------------------------------

def _defines_a_tool(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    function = item.get("function")  # OpenAI chat: {"type": "function", "function": {...}}
    return is_definition(item) or (isinstance(function, dict) and is_definition(function))


def is_tool_definitions(value: Any) -> bool:
    """A non-empty list of tool definitions, bare or under ``tools``, and nothing else."""
    if isinstance(value, dict) and isinstance(value.get("tools"), list):
        value = value["tools"]
    return isinstance(value, list) and bool(value) and all(_defines_a_tool(i) for i in value)


# -- DisasterBench plans and gold records --------------------------------------------------------

def is_plan_steps(value: Any) -> bool:
    """DisasterBench plan steps, bare or under a wrapper key: some item holds a step field."""
    if isinstance(value, dict):
        value = next((value[k] for k in PLAN_WRAPPER_KEYS if isinstance(value.get(k), list)),
                     value)
    return isinstance(value, list) and any(
        isinstance(item, dict) and PLAN_STEP_KEYS.intersection(item) for item in value)


def is_plain_plan(value: Any) -> bool:
    """A list of DisasterBench plan steps and nothing else: every item holds a step field and
    none a DORA sample's ``tasks`` (no reader of calls or of DORA's documents takes it)."""
    return isinstance(value, list) and bool(value) and all(
        isinstance(item, dict) and not PLAN_STEP_KEYS.isdisjoint(item) and "tasks" not in item
        for item in value)


def is_gold_record(value: Any) -> bool:
    """A gold record: a ``task_id`` and a plan under one of the gold plan fields."""
    return isinstance(value, dict) and "task_id" in value and any(
        key in value for key in GOLD_PLAN_FIELDS)


def is_gold_record_list(value: Any) -> bool:
    """A non-empty list of gold records (:func:`is_gold_record`)."""
    return isinstance(value, list) and bool(value) and all(is_gold_record(v) for v in value)


def is_plan_record(value: Any) -> bool:
    """A record holding a plan to check: a ``task_id`` and a plan under one of the record plan
    fields (a line of a predictions file, a task with its answer)."""
    return isinstance(value, dict) and "task_id" in value and any(
        key in value for key in RECORD_PLAN_FIELDS)


def is_plan_record_list(value: Any) -> bool:
    """A non-empty list of records holding plans (:func:`is_plan_record`)."""
    return isinstance(value, list) and bool(value) and all(is_plan_record(v) for v in value)


# -- DORA's documents ----------------------------------------------------------------------------

# The members of a DORA task (or run record) beside its trajectory.
DORA_TASK_KEYS: Final = frozenset({
    "task_category", "task_category_code", "question", "tools", "final_answer", "eval_spec",
    "answer_format", "question_id", "predicted_answer", "task_scoped_question_id"})


def is_dora_step(item: Any) -> bool:
    return isinstance(item, dict) and "call" in item and not PLAN_STEP_KEYS.intersection(item)


def is_dora_trajectory(value: Any) -> bool:
    """A list of DORA steps: some item has a ``call``, none is a DisasterBench plan step."""
    return isinstance(value, list) and any(is_dora_step(i) for i in value) and not any(
        isinstance(i, dict) and PLAN_STEP_KEYS.intersection(i) for i in value)


def is_dora_task(value: Any) -> bool:
    return isinstance(value, dict) and "trajectory" in value and bool(
        DORA_TASK_KEYS.intersection(value))


def is_dora_sample(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("tasks"), list) and (
        "sample_id" in value or any(is_dora_task(t) for t in value["tasks"]))


def is_dora_task_file(value: Any) -> bool:
    """What DORA can read as a task file: a list of samples, each with a list of task objects
    under ``tasks`` (or none)."""
    return isinstance(value, list) and all(
        isinstance(sample, dict) and isinstance(sample.get("tasks", []), list)
        and all(isinstance(task, dict) for task in sample.get("tasks", []))
        for sample in value)


def is_dora_document(value: Any) -> bool:
    """One of DORA's documents holding a trajectory: a task file (a list of samples), a sample,
    a list of tasks, a task or run record (or an object holding DORA steps under
    ``trajectory``), a bare trajectory."""
    if isinstance(value, list) and value and all(is_dora_sample(v) for v in value):
        return any(v["tasks"] for v in value)
    if is_dora_sample(value):
        return bool(value["tasks"])
    if isinstance(value, list) and value and all(is_dora_task(v) for v in value):
        return True
    if is_dora_task(value) or (isinstance(value, dict)
                               and is_dora_trajectory(value.get("trajectory"))):
        return True
    return is_dora_trajectory(value)


def is_dora_task_dir(path: Path) -> bool:
    """A directory holding one of DORA's five task files."""
    return any((path / f"{task}.json").is_file() for task in DORA_TASK_FILES.values())


def is_dora_run_dir(path: Path) -> bool:
    """A run directory of DORA's runner: ``<task>/benchmark.jsonl`` for one of its tasks."""
    return path.is_dir() and any((path / task / DORA_RUN_RECORDS).is_file()
                                 for task in DORA_TASK_FILES.values())


def is_dora_gold(paths: Sequence[str]) -> bool:
    """Whether ``plancheck score``'s inputs (the gold paths, then the predictions) start with
    DORA's task files: a directory holding one of DORA's five, or a JSON list of samples
    (named as one of DORA's task files, or some sample with ``tasks``). A directory without
    DORA's task files, scored against a DORA run (the last input), is DORA's ``--tasks-dir``
    holding none: DORA scores it (0), and so it is DORA's."""
    for name in paths[:1]:
        path = Path(name)
        if path.is_dir():
            return is_dora_task_dir(path) or (len(paths) > 1 and is_dora_run_dir(Path(paths[-1])))
        if path.suffix.lower() != ".json":
            return False
        try:
            value = json.loads(read_text_limited(path, "utf-8-sig"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            return False
        return bool(value) and is_dora_task_file(value) and (
            path.stem in DORA_TASK_FILES.values() or any("tasks" in s for s in value))
    return False


# -- records that hold no plan -------------------------------------------------------------------

def _holds_no_plan(value: Any) -> bool:
    return isinstance(value, dict) and not any(key in value for key in RECORD_PLAN_FIELDS)


def is_scored_record(value: Any) -> bool:
    """A per-item line ``plancheck score`` writes (scores, not a plan), for any benchmark."""
    return _holds_no_plan(value) and any(fields <= value.keys() for fields in SCORED_FIELDS)


def is_scored_line(line: str) -> bool:
    """Whether a JSONL line (a file's first record) is a per-item line of ``plancheck score``:
    such files lie beside the predictions they score."""
    if '"diagnostics"' not in line and '"question_id"' not in line:
        return False  # (the common case, settled without parsing)
    return is_scored_record(loads_or_invalid(line))


def is_run_config(value: Any) -> bool:
    """The ``config.json`` that ``plancheck plan --out DIR`` writes beside its predictions."""
    return _holds_no_plan(value) and value.keys() >= RUN_CONFIG_FIELDS


def is_task_record(value: Any) -> bool:
    """A benchmark's task: a question and the tools for it, without an answer (BFCL's
    question files)."""
    return (_holds_no_plan(value) and "question" in value
            and any(key in value for key in RECORD_TOOL_KEYS)
            and not any(key in value for key in ANSWER_KEYS))


def is_dora_per_item_line(value: Any) -> bool:
    """A per-item line ``plancheck score`` writes for a DORA run (``"benchmark": "dora"``)."""
    return isinstance(value, dict) and value.get("benchmark") == "dora"


def dora_per_item_files(path: str) -> list[Path] | None:
    """The per-item files of DORA scores at ``path`` (a file, or the ``.jsonl`` files under a
    directory); ``None``: none is DORA's. Among DORA's, an empty ``.jsonl`` is the per-item
    file of a run in which nothing was scored (``score`` writes no line then): it is one of
    them, never left out."""
    root = Path(path)
    files = [root] if root.is_file() else sorted(root.rglob("*.jsonl")) if root.is_dir() else []
    found = []
    empty = []
    for file in files:
        try:
            with file.open(encoding="utf-8") as handle:
                first = handle.readline(read_limit() + 1)  # (a file without line breaks)
            if not first.strip():
                empty.append(file)
            elif is_dora_per_item_line(json.loads(first)):
                found.append(file)
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            continue
    return sorted([*found, *empty]) if found else None


def is_trajectory_document(value: Any) -> bool:
    """A document of trajectories in a format of its own, which the readers of calls in the
    common shapes leave to its own reader: DORA's (:func:`is_dora_document`)."""
    return is_dora_document(value)


# What makes an object a model's message or response (OpenAI chat and Responses, Anthropic,
# Gemini), whose calls the call shapes read: a role, choices or candidates, or its type.
_MESSAGE_KEYS: Final = ("role", "choices", "candidates")
_MESSAGE_TYPES: Final = frozenset({"message", "response"})


def message_kind(value: Any) -> str | None:
    """``"transcript"`` for a chat transcript (``messages``), ``"message"`` for one model
    message or response, None for any other value."""
    if not isinstance(value, dict):
        return None
    if "messages" in value:
        return "transcript"
    if any(key in value for key in _MESSAGE_KEYS) or value.get("type") in _MESSAGE_TYPES \
            or value.get("object") in _MESSAGE_TYPES:
        return "message"
    return None


# -- trajectories of calls in other shapes -------------------------------------------------------

# Members that make an object something else: a DisasterBench plan step, or a tool definition.
_FOREIGN_KEYS = PLAN_STEP_KEYS | {"inputSchema", "input_schema"}


def unwrap_trajectory(value: Any) -> tuple[Any, str]:
    """The call list and its JSON pointer (an object holding it under a wrapper key)."""
    if isinstance(value, dict):
        for key in TRAJECTORY_WRAPPER_KEYS:
            if isinstance(value.get(key), list):
                return value[key], "/" + key
    return value, ""


def call_object(item: Any) -> dict[str, Any] | None:
    """The object of a trajectory's item that holds its call (OpenAI's ``function``)."""
    if not isinstance(item, dict):
        return None
    inner = item.get("function")
    return inner if isinstance(inner, dict) else item


def is_call_trajectory(value: Any) -> bool:
    """Whether a JSON document is a trajectory rather than a plan, a record or a tool pool.

    An object holding a list under ``trajectory`` or ``gold_trajectory`` is one. Otherwise (a
    bare list, or one under ``tool_calls`` or ``calls``): a non-empty list of objects, none
    with a DisasterBench step field (``agent``, ``dependence``, ...) or a tool-definition field
    (``inputSchema``, a ``parameters`` schema), at least one of which names a tool and passes
    arguments.
    """
    calls, pointer = unwrap_trajectory(value)
    if not isinstance(calls, list):
        return False
    if pointer in ("/trajectory", "/gold_trajectory"):
        return True
    found_call = False
    for item in calls:
        call = call_object(item)
        if call is None or _FOREIGN_KEYS.intersection(call) or _FOREIGN_KEYS.intersection(item):
            return False
        if is_definition(item) or is_definition(call):
            return False
        found_call = found_call or (
            any(isinstance(call.get(k), str) for k in TRAJECTORY_NAME_KEYS)
            and any(k in call for k in TRAJECTORY_ARGUMENT_KEYS))
    return found_call


def reads_as_trajectory(value: Any, calls: Iterable[FoundCall], references: Set[str], *,
                        placeholders: bool, positional: bool) -> bool:
    """Whether a document whose calls have been read is a DORA-style trajectory, read as DORA
    reads it: its ``calls`` are in shapes whose lists may be one (``CallShape.trajectories``)
    and bind no labels, the references found in their arguments are DORA's or
    DisasterBench's (``references``: their syntaxes; no ``placeholders``), their arguments
    are named ones (or any, under DORA's own ``trajectory`` wrapper, where the others are
    reported: ``positional``), and the document is one (:func:`is_call_trajectory`)."""
    from plancheck.formats.shapes import call_shapes  # (a plain plan never loads the shapes)

    shapes = call_shapes()
    if any(c.labels or c.shape not in shapes or not shapes[c.shape].trajectories
           for c in calls):
        return False
    if placeholders or not TRAJECTORY_SYNTAXES.issuperset(references):
        return False
    explicit = unwrap_trajectory(value)[1] in ("/trajectory", "/gold_trajectory")
    if positional and not explicit:
        return False
    return is_call_trajectory(value)


# -- all together --------------------------------------------------------------------------------

def sniff(value: Any) -> str | None:
    """What ``value`` is (see the module docstring): ``tools``, ``plan``, ``dora``,
    ``calls:SHAPE``, ``trajectory`` or None (something else)."""
    if is_tool_definitions(value):
        return "tools"
    if is_plan_steps(value):
        return "plan"
    if is_dora_document(value):
        return "dora"
    from plancheck.formats.shapes import find_calls  # (a plain plan never loads the shapes)

    calls = find_calls(value)
    if calls:
        return f"calls:{calls[0].shape}"
    return "trajectory" if is_call_trajectory(value) else None
