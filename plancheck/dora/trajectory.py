"""Trajectories of tool calls in shapes other than DORA's own, with DORA-style references.

DORA's own documents (steps ``{"call", "args", "obs"}``, tasks, samples, run records) are read
by :mod:`plancheck.dora.formats` and :mod:`plancheck.compiler.dora_native`. This module reads
the other common spellings of a call, which some agent frameworks write with DORA's
``"<key> from trajectory[N].obs"`` references:

* the tool's name under ``tool``, ``name``, ``tool_name``, ``function`` or ``action``;
* its arguments (an object, or a JSON string holding one, as OpenAI ``tool_calls`` write them)
  under ``arguments``, ``args``, ``input``, ``inputs``, ``parameters``, ``params`` or
  ``action_input``; a call without arguments passes none;
* an OpenAI tool call ``{"type": "function", "function": {"name", "arguments"}}``;
* other members (``purpose``, ``thought``, ``obs``, ``id``, ...) are ignored.

The list may stand alone or under ``trajectory``, ``gold_trajectory``, ``tool_calls`` or
``calls`` of an object (a DORA task file holds query, data, trajectory and answer).

Calls are numbered by their place in the list from 0, as ``trajectory[N]`` indexes it; when
every call carries an integer ``step`` (or ``index``) and these are 1, 2, ..., K, references
count from 1 instead.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plancheck.diagnostics.span import escape_pointer
from plancheck.formats.records import TRAJECTORY_ARGUMENT_KEYS as ARGUMENT_KEYS
from plancheck.formats.records import TRAJECTORY_NAME_KEYS as NAME_KEYS
from plancheck.formats.sniff import call_object as _call_object

NUMBER_KEYS = ("step", "index")
# (Whether a document is such a trajectory, and where its list is, the recogniser says:
# plancheck.formats.sniff.is_call_trajectory and unwrap_trajectory.)

@dataclass(frozen=True, slots=True)
class RawCall:
    """One call as written, with the JSON pointers of its parts."""

    position: int
    pointer: str  # the item in the list
    name: Any
    name_pointer: str | None  # None: no name member
    arguments: Any
    arguments_pointer: str | None  # None: no arguments member
    is_object: bool = True


def read_calls(calls: Sequence[Any], pointer: str = "") -> list[RawCall]:
    """Locate the name and arguments of each call (nothing is validated here)."""
    found = []
    for position, item in enumerate(calls):
        item_pointer = f"{pointer}/{position}"
        call = _call_object(item)
        if call is None:
            found.append(RawCall(position, item_pointer, None, None, None, None, False))
            continue
        base = f"{item_pointer}/function" if call is not item else item_pointer
        name_key = next((k for k in NAME_KEYS if isinstance(call.get(k), str)), None) or next(
            (k for k in NAME_KEYS if k in call and not isinstance(call.get(k), dict)), None)
        arguments_key = next((k for k in ARGUMENT_KEYS if k in call), None)
        found.append(RawCall(
            position, item_pointer,
            call.get(name_key) if name_key else None,
            f"{base}/{escape_pointer(name_key)}" if name_key else None,
            call.get(arguments_key) if arguments_key else None,
            f"{base}/{escape_pointer(arguments_key)}" if arguments_key else None,
        ))
    return found


def decode_arguments(arguments: Any) -> Any:
    """Arguments written as a JSON string (OpenAI ``tool_calls``) decoded; others unchanged."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except (ValueError, RecursionError):  # also an integer of 4,301+ digits
            return arguments
    return arguments


def reference_base(calls: Sequence[Any]) -> int:
    """0, or 1 when every call is numbered and the numbers are exactly 1, 2, ..., K."""
    numbers = []
    for item in calls:
        call = _call_object(item)
        source = item if isinstance(item, dict) else {}
        number = next((source.get(k) for k in NUMBER_KEYS if k in source), None)
        if number is None and call is not None:
            number = next((call.get(k) for k in NUMBER_KEYS if k in call), None)
        if not isinstance(number, int) or isinstance(number, bool):
            return 0
        numbers.append(number)
    return 1 if numbers and numbers == list(range(1, len(numbers) + 1)) else 0
