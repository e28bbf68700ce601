"""Turn a suggestion's JSON-pointer edits into text replacements in the file they came from.

A :class:`~plancheck.diagnostics.model.Edit` says "set /1/dependence to [0]" or "delete
/0/inputs/foo"; a SARIF fix (or an editor) needs "replace lines 5:19-5:23 with ``[0]``". The
mapping uses the source map of the JSON text the plan was parsed from verbatim, and is checked
before it is returned: the replacements are applied to the text of the value that holds every
edit (the rest of the file is left as it is), the result is parsed, and it must equal that
value with the edits applied as JSON operations. Anything that cannot be
mapped (repaired JSON, a DSL file, a pointer whose parent does not exist, overlapping edits) gives
``None`` rather than a replacement that would corrupt the file.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plancheck.diagnostics.model import Edit
from plancheck.diagnostics.positions import Positions
from plancheck.diagnostics.source_map import Offsets, source_map
from plancheck.diagnostics.span import pointer_tokens


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace ``[start, end)`` of the file's text (offsets) with ``text``."""

    start: int
    end: int
    text: str


_MISSING = object()


def text_edits(edits: Sequence[Edit], positions: Positions) -> list[TextEdit] | None:
    """File replacements that realise ``edits``, sorted by position; None if not mappable.

    The work is local to the smallest value that holds every edit (a step, for a step's
    fixes): its text is found by the plan's source map (built once per plan), parsed, mapped
    and patched on its own, so a plan of 10,000 steps with a fix per step costs what its
    steps do, not 10,000 passes over the whole plan."""
    if not edits or positions.json_region is None:
        return None
    relative: list[Edit] = []
    for edit in edits:
        if not edit.pointer.startswith(positions.prefix):
            return None
        relative.append(Edit(edit.pointer[len(positions.prefix):], edit.value, edit.delete))
    holder = _holder(relative)
    located = positions.value_offsets(positions.prefix + holder)
    if located is None:
        return None
    start, end = located
    source = positions.lines.text[start:end]
    try:
        document = json.loads(source)
        entries = source_map(source)
    except (ValueError, RecursionError):  # not verbatim JSON after all: nothing to map onto
        return None
    local = [Edit(edit.pointer[len(holder):], edit.value, edit.delete) for edit in relative]
    expected = _apply(document, local)
    if expected is _MISSING:
        return None
    planned = _plan(local, source, document, entries)
    if planned is None or _overlap(planned):
        return None
    patched = _splice(source, planned)
    try:
        if json.loads(patched) != expected:
            return None
    except (ValueError, RecursionError):
        return None
    return [TextEdit(start + e.start, start + e.end, e.text) for e in planned]


def _holder(edits: Sequence[Edit]) -> str:
    """The pointer of the deepest value that holds the parent of every edited pointer (the
    parent: an insertion, a deletion or a rename writes into it)."""
    common: list[str] | None = None
    for edit in edits:
        tokens = edit.pointer.split("/")[1:-1]  # (escaped tokens: none holds a "/")
        if common is None:
            common = tokens
            continue
        same = 0
        while same < min(len(common), len(tokens)) and common[same] == tokens[same]:
            same += 1
        common = common[:same]
    return "".join("/" + token for token in common or [])


# --------------------------------------------------------------------------- JSON semantics


def _parent(pointer: str) -> str:
    return pointer.rsplit("/", 1)[0]


def _leaf(pointer: str) -> str:
    return pointer_tokens(pointer)[-1]


def _lookup(document: Any, pointer: str) -> Any:
    value = document
    for token in pointer_tokens(pointer):
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return _MISSING
    return value


def _apply(document: Any, edits: Sequence[Edit]) -> Any:
    """The document after the edits, as JSON operations; _MISSING if one does not apply."""
    result = copy.deepcopy(document)
    for edit in edits:
        if edit.pointer == "":
            if edit.delete:
                return _MISSING
            result = copy.deepcopy(edit.value)
            continue
        holder = _lookup(result, _parent(edit.pointer))
        token = _leaf(edit.pointer)
        if isinstance(holder, dict):
            if edit.delete:
                if token not in holder:
                    return _MISSING
                del holder[token]
            else:
                holder[token] = copy.deepcopy(edit.value)
        elif isinstance(holder, list) and token.isdigit() and int(token) < len(holder):
            if edit.delete:
                del holder[int(token)]
            else:
                holder[int(token)] = copy.deepcopy(edit.value)
        else:
            return _MISSING
    return result


# --------------------------------------------------------------------------- text


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _plan(edits: Sequence[Edit], source: str, document: Any,
          entries: dict[str, Offsets]) -> list[TextEdit] | None:
    deletions: dict[str, set[str]] = {}  # parent pointer -> deleted child pointers
    insertions: dict[str, list[Edit]] = {}  # parent pointer -> members to add
    planned: list[TextEdit] = []
    for edit in edits:
        if edit.delete:
            if edit.pointer not in entries or edit.pointer == "":
                return None
            deletions.setdefault(_parent(edit.pointer), set()).add(edit.pointer)
        elif edit.pointer in entries:
            value_start, value_end, _, _ = entries[edit.pointer]
            planned.append(TextEdit(value_start, value_end, _dump(edit.value)))
        else:
            parent = _parent(edit.pointer)
            if not isinstance(_lookup(document, parent), dict) or parent not in entries:
                return None
            insertions.setdefault(parent, []).append(edit)
    for parent, added in insertions.items():
        renamed = deletions.get(parent, set())
        remaining: list[Edit] = []
        for edit in added:
            # A member renamed in place: delete /p/old + set /p/new to old's value keeps the
            # member where it was and rewrites only its key.
            old = next((p for p in sorted(renamed)
                        if _lookup(document, p) == edit.value), None)
            if old is None:
                remaining.append(edit)
                continue
            renamed.discard(old)
            _, _, key_start, key_end = entries[old]
            if key_start is None or key_end is None:
                return None
            planned.append(TextEdit(key_start, key_end, _dump(_leaf(edit.pointer))))
        if remaining:
            insertion = _insertion(source, entries[parent], remaining)
            if insertion is None:
                return None
            planned.append(insertion)
    for parent, deleted in deletions.items():
        if deleted:
            planned.extend(_deletions(parent, deleted, entries))
    planned.sort(key=lambda e: (e.start, e.end))
    return planned


def _insertion(source: str, parent: Offsets, added: Sequence[Edit]) -> TextEdit | None:
    """Add members before the closing brace of an object, after its last member if any."""
    close = parent[1] - 1
    if source[close] != "}":
        return None
    at = close
    while at > 0 and source[at - 1].isspace():
        at -= 1
    members = ", ".join(f"{_dump(_leaf(e.pointer))}: {_dump(e.value)}" for e in added)
    if source[at - 1] == "{":
        return TextEdit(at, at, members)
    return TextEdit(at, at, ", " + members)


def _deletions(parent: str, deleted: set[str], entries: dict[str, Offsets]) -> list[TextEdit]:
    """Remove runs of adjacent members (or elements) together with one separating comma."""
    depth = parent.count("/") + 1
    siblings = sorted(
        (p for p in entries if p.startswith(parent + "/") and p.count("/") == depth),
        key=lambda p: entries[p][0],
    )

    def start(p: str) -> int:
        value_start, _, key_start, _ = entries[p]
        return value_start if key_start is None else key_start

    def end(p: str) -> int:
        return entries[p][1]

    out: list[TextEdit] = []
    index = 0
    while index < len(siblings):
        if siblings[index] not in deleted:
            index += 1
            continue
        first = index
        while index < len(siblings) and siblings[index] in deleted:
            index += 1
        last = index - 1
        if index < len(siblings):  # a kept member follows: delete up to its start
            out.append(TextEdit(start(siblings[first]), start(siblings[index]), ""))
        elif first > 0:  # the run ends the container: delete from the previous member's end
            out.append(TextEdit(end(siblings[first - 1]), end(siblings[last]), ""))
        else:  # every member goes
            out.append(TextEdit(start(siblings[first]), end(siblings[last]), ""))
    return out


def _overlap(edits: Sequence[TextEdit]) -> bool:
    return any(b.start < a.end for a, b in itertools.pairwise(edits))


def _splice(text: str, edits: Sequence[TextEdit]) -> str:
    out, cursor = [], 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        out.append(text[cursor:edit.start])
        out.append(edit.text)
        cursor = edit.end
    out.append(text[cursor:])
    return "".join(out)
