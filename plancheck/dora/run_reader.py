"""Reading DORA's task files and run directories as DORA's ``scripts/evaluate.py`` reads them
(``load_gold``, ``load_predictions``), rule for rule; what DORA stops on is read too, and said.

DORA's rules, kept:

* Gold is ``<tasks>/<task>.json`` for each of the five task names (:data:`DIMENSIONS`) that
  exists; no other file of the directory is read. A sample needs no ``tasks``.
* A run is ``<run>/<task>/benchmark.jsonl`` for each dimension with gold. A missing file: the
  dimension is not scored (DORA warns, and so does plancheck); an empty one: it is scored, each
  task unanswered. Records keep file order (the merge lets a later one replace an earlier
  answer); blank lines are skipped.
* DORA splits a file at every line break Python knows (``str.splitlines``). Its runner writes
  U+2028, U+2029 and U+0085 raw inside records (``ensure_ascii=False``), which makes DORA stop.
  Here a line ends at ``\\n``; a line that is not JSON whole is read as DORA reads it, in its
  pieces, when each piece is JSON. So every file DORA reads gives the same records, in order.

Read here where DORA stops, each with a warning: a UTF-8 byte order mark, a line broken inside
a record by one of those characters, a ``question_id`` that is not a string (read as its text).
Skipped with an error (DORA stops too): a line that is not UTF-8, not JSON, not a JSON object,
or whose ``sample_id`` is an array or object (no task can have it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plancheck.dora.dimensions import DIMENSIONS, RECORDS, task_file_name
from plancheck.dora.errors import DoraRunError
from plancheck.fileio import reason
from plancheck.formats.sniff import is_dora_task_file

_BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class RunRecords:
    """What was read of a run: the records of each dimension in order, and what was said."""

    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # read, where DORA would stop or warn
    malformed: list[str] = field(default_factory=list)  # "file:line: why", skipped


def _why(error: OSError | UnicodeDecodeError) -> str:
    return reason(error) if isinstance(error, OSError) else f"not UTF-8 ({error.reason})"


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise DoraRunError(f"cannot read {path}: {_why(error)}") from None


def _line_values(line: str) -> list[Any] | None:
    """The JSON values of one line: the line whole, else DORA's pieces when each is JSON."""
    try:
        return [json.loads(line)]
    except (ValueError, RecursionError):
        pass
    pieces = [piece for piece in line.splitlines() if piece.strip()]
    if pieces == [line]:
        return None
    try:
        return [json.loads(piece) for piece in pieces]
    except (ValueError, RecursionError):
        return None


def read_records(path: Path, found: RunRecords) -> list[dict[str, Any]]:
    """The records of one ``benchmark.jsonl``, in order; problems go to ``found``. The file
    is read a line at a time: holding its bytes and their lines beside the records took twice
    its size more (a 121 MB run directory peaked at 0.98 GB)."""
    records: list[dict[str, Any]] = []
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                _read_line(raw, number, path, found, records)
    except OSError as error:
        raise DoraRunError(f"cannot read {path}: {_why(error)}") from None
    return records


def _read_line(raw: bytes, number: int, path: Path, found: RunRecords,
               records: list[dict[str, Any]]) -> None:
    raw = raw.removesuffix(b"\n")
    if number == 1 and raw.startswith(_BOM):
        raw = raw[len(_BOM):]
        found.warnings.append(f"{path} starts with a UTF-8 byte order mark, on which DORA's "
                              "evaluator stops; read without it")
    where = f"{path}:{number}"
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        found.malformed.append(f"{where}: the line is not UTF-8")
        return
    if not line.strip():
        return
    values = _line_values(line)
    if values is None:
        found.malformed.append(f"{where}: the line is not JSON")
        return
    if len(values) == 1 and len([p for p in line.splitlines() if p.strip()]) > 1:
        found.warnings.append(f"{where}: the record holds a line break other than \\n "
                              "(U+2028, U+2029 or U+0085), at which DORA's evaluator "
                              "splits it and stops; read whole")
    for value in values:
        record = _record(value, where, found)
        if record is not None:
            records.append(record)


def _record(value: Any, where: str, found: RunRecords) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        found.malformed.append(f"{where}: the line is not a JSON object")
        return None
    question = value.get("question_id", "")
    if not isinstance(question, str):
        found.warnings.append(f"{where}: question_id {json.dumps(question)} is not a string, "
                              "on which DORA's evaluator stops; read as its text")
    sample = value.get("sample_id", "")
    if sample and isinstance(sample, (list, dict)):
        found.malformed.append(f"{where}: sample_id is a JSON {type(sample).__name__}, "
                               "which names no task (DORA's evaluator stops on it)")
        return None
    return value


def read_run(run_dir: Path, dimensions: Iterable[str], found: RunRecords) -> None:
    """Add the records of ``<run_dir>/<task>/benchmark.jsonl`` of each DORA dimension in
    ``dimensions`` to ``found`` (a dimension whose file is missing gets none, and a warning)."""
    wanted = set(dimensions)
    for dimension, task in DIMENSIONS.items():
        if dimension not in wanted:
            continue
        path = run_dir / task / RECORDS
        if not path.exists():
            found.warnings.append(f"{path} not found: {dimension} is not scored (as DORA "
                                  "skips it)")
            continue
        found.records.setdefault(dimension, []).extend(read_records(path, found))
    if (run_dir / RECORDS).is_file():
        found.warnings.append(f"{run_dir / RECORDS} is not read: DORA reads <run>/<task>/"
                              f"{RECORDS} only (name the file itself to score it)")


def read_task_file(path: Path, warnings: list[str]) -> list[Any]:
    """The samples of one DORA task file (a JSON list of objects, each task an object)."""
    data = _read_bytes(path)
    if data.startswith(_BOM):
        data = data[len(_BOM):]
        warnings.append(f"{path} starts with a UTF-8 byte order mark, on which DORA's "
                        "evaluator stops; read without it")
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise DoraRunError(f"cannot read {path}: {_why(error)}") from None
    except (ValueError, RecursionError) as error:
        raise DoraRunError(f"{path} is not valid JSON: {error}") from None
    if not is_dora_task_file(value):
        raise DoraRunError(f"{path} is not a DORA task file (a list of samples, each an "
                           "object whose tasks, if any, are a list of objects)")
    samples: list[Any] = value
    return samples


def read_task_dir(tasks_dir: Path, warnings: list[str]) -> dict[str, list[Any]]:
    """DORA's gold: the samples of each of the five task files ``tasks_dir`` holds."""
    return {dimension: read_task_file(tasks_dir / task_file_name(dimension), warnings)
            for dimension in DIMENSIONS if (tasks_dir / task_file_name(dimension)).exists()}
